// Executes a compiled reduce plan in place (the plan comes from reduce_plan.cpp): one sequential
// row-major fold per fibre, contiguous output chunks run by run_tasks (parallel.hpp).
#include "einfuzz/fused/reduce.hpp"
#include "einfuzz/core/harness_bug.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <type_traits>
#include <vector>

#include "einfuzz/core/scalar.hpp"
#include "half_arith.hpp"
#include "parallel.hpp"

namespace einfuzz::fused {
namespace {

// A violated precondition is a harness bug (STYLE: print and abort), never a backend verdict.
[[noreturn]] void precondition_violated(const char* what) {
  harness_bug(std::string("fused::execute (reduce): precondition violated: ") + what);
}

// The §8.3 kinds: accumulator always on the left (§13.10).
template <class T> struct SumOp {
  static constexpr bool kFromFirst = false;
  static T init() { return T(0); }
  static T step(T acc, T v) { return scalar_add(acc, v); }
  static T finish(T acc, std::int64_t) { return acc; }
};
template <class T> struct ProdOp {
  static constexpr bool kFromFirst = false;
  static T init() { return T(1); }
  static T step(T acc, T v) { return scalar_mul(acc, v); }
  static T finish(T acc, std::int64_t) { return acc; }
};
template <class T> struct MeanOp {
  static constexpr bool kFromFirst = false;
  static T init() { return T(0); }
  static T step(T acc, T v) { return scalar_add(acc, v); }
  static T finish(T acc, std::int64_t n) { return acc / static_cast<T>(n); }  // one division (§13.6)
};
template <class T> struct MinOp {  // Lean's min-of-≤ (§8.4): NaN values replace, ties keep the earlier
  static constexpr bool kFromFirst = true;
  static T step(T acc, T v) { return (acc <= v) ? acc : v; }
  static T finish(T acc, std::int64_t) { return acc; }
};
template <class T> struct MaxOp {  // Lean's max-of-≤ (§8.4): a NaN accumulator sticks, ties take the later
  static constexpr bool kFromFirst = true;
  static T step(T acc, T v) { return (acc <= v) ? v : acc; }
  static T finish(T acc, std::int64_t) { return acc; }
};
struct AnyOp {
  static constexpr bool kFromFirst = false;
  static Bool8 init() { return 0; }
  static Bool8 step(Bool8 acc, Bool8 v) { return (acc != 0 || v != 0) ? 1 : 0; }
  static Bool8 finish(Bool8 acc, std::int64_t) { return acc; }
};
struct AllOp {
  static constexpr bool kFromFirst = false;
  static Bool8 init() { return 1; }
  static Bool8 step(Bool8 acc, Bool8 v) { return (acc != 0 && v != 0) ? 1 : 0; }
  static Bool8 finish(Bool8 acc, std::int64_t) { return acc; }
};

/// Output elements [begin, end) of one chunk.
template <class T> struct Chunk {
  const ReducePlan* plan;
  const T* x;
  T* y;
  std::int64_t begin;
  std::int64_t end;
};

/// One fibre, sequentially, row-major over the reduced axes (the innermost loop walks `inner`).
template <class T, class Op>
T fold_fibre(const T* x, const ReducePlan& plan, std::vector<std::int64_t>& idx) {
  const std::vector<ReduceLoop>& outer = plan.fibre_loops;
  const std::size_t depth = outer.empty() ? 0 : outer.size() - 1;
  const ReduceLoop inner = outer.empty() ? ReduceLoop{1, 0} : outer.back();
  T acc;
  std::int64_t start = 0;
  if constexpr (Op::kFromFirst) {
    acc = x[0];  // the fibre's first value in row-major order sits at offset 0
    start = 1;
  } else {
    acc = Op::init();
  }
  std::fill(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(depth), 0);
  std::int64_t offset = 0;
  for (;;) {
    const T* p = x + offset;
    for (std::int64_t j = start; j < inner.length; ++j) acc = Op::step(acc, p[j * inner.stride]);
    start = 0;
    std::size_t d = depth;
    for (; d-- > 0;) {
      offset += outer[d].stride;
      if (++idx[d] < outer[d].length) break;
      offset -= outer[d].stride * outer[d].length;
      idx[d] = 0;
    }
    if (d == static_cast<std::size_t>(-1)) break;
  }
  return Op::finish(acc, plan.fibre_size);
}

template <class T, class Op>
void run_chunk(const Chunk<T>& c) {
  const std::vector<ReduceLoop>& loops = c.plan->output_loops;
  std::vector<std::int64_t> fibre_idx(c.plan->fibre_loops.size());
  std::vector<std::int64_t> idx(loops.size());
  // Coordinates and input offset of the chunk's first output element.
  std::int64_t offset = 0;
  std::int64_t rest = c.begin;
  for (std::size_t i = loops.size(); i-- > 0;) {
    idx[i] = rest % loops[i].length;
    rest /= loops[i].length;
    offset += idx[i] * loops[i].stride;
  }
  for (std::int64_t o = c.begin; o < c.end; ++o) {
    c.y[o] = fold_fibre<T, Op>(c.x + offset, *c.plan, fibre_idx);
    for (std::size_t i = loops.size(); i-- > 0;) {
      offset += loops[i].stride;
      if (++idx[i] < loops[i].length) break;
      offset -= loops[i].stride * loops[i].length;
      idx[i] = 0;
    }
  }
}

unsigned resolve_threads(unsigned requested) {
  if (requested != 0) return requested;
  return std::max(1u, std::thread::hardware_concurrency());
}

template <class T, class Op>
void run(const ReducePlan& plan, const T* x, T* y, const ExecOptions& options) {
  const unsigned threads = resolve_threads(options.threads);
  std::int64_t work = 0;
  if (__builtin_mul_overflow(plan.output_size, plan.fibre_size, &work)) work = INT64_MAX;
  unsigned tasks = task_count(plan.output_size, work, threads);
  if (options.tasks != 0) {
    tasks = static_cast<unsigned>(std::min<std::int64_t>({options.tasks, plan.output_size, threads}));
  }
  if (tasks <= 1) {
    run_chunk<T, Op>({&plan, x, y, 0, plan.output_size});
    return;
  }
  // Contiguous balanced chunks: the first output_size % tasks chunks get one more element.
  const std::int64_t base = plan.output_size / tasks;
  const std::int64_t extra = plan.output_size % tasks;
  std::vector<Chunk<T>> chunks;
  chunks.reserve(tasks);
  std::int64_t lo = 0;
  for (unsigned t = 0; t < tasks; ++t) {
    const std::int64_t hi = lo + base + (t < extra ? 1 : 0);
    chunks.push_back({&plan, x, y, lo, hi});
    lo = hi;
  }
  auto task = [&](unsigned t) { run_chunk<T, Op>(chunks[t]); };
  detail::run_tasks(tasks, task);
}

/// The kind's value on an empty fibre (mean/min/max never get here: the checker rejects them).
template <class T>
T identity(Reduction kind) {
  return (kind == Reduction::prod || kind == Reduction::all) ? T(1) : T(0);
}

/// f16/bf16 sum, prod and mean: the input widened once to binary32 (exact), the folds on Rounded
/// values (each step one binary32 operation rounded to the format, ORACLE §8; mean's n is rounded
/// to the format, as H(n) is), the output narrowed back (exact). min/max fold H itself: they only
/// compare and copy, so every bit of the chosen element (a signalling NaN too) is kept.
template <class H, class Op>
void run_half(const ReducePlan& plan, const H* x, H* y, const ExecOptions& options) {
  using R = fused::detail::Rounded<H::kDigits>;
  std::vector<R> wide(static_cast<std::size_t>(plan.max_offset) + 1);
  for (std::size_t i = 0; i < wide.size(); ++i) wide[i] = R::of(x[i]);
  std::vector<R> out(static_cast<std::size_t>(plan.output_size));
  run<R, Op>(plan, wide.data(), out.data(), options);
  for (std::size_t i = 0; i < out.size(); ++i) y[i] = fused::detail::narrow_exact<H::kDigits>(out[i].v);
}

template <class T>
void dispatch(Reduction kind, const ReducePlan& plan, const T* x, T* y, const ExecOptions& options) {
  if constexpr (is_half_type_v<T>) {
    using R = fused::detail::Rounded<T::kDigits>;
    switch (kind) {
      case Reduction::sum: return run_half<T, SumOp<R>>(plan, x, y, options);
      case Reduction::prod: return run_half<T, ProdOp<R>>(plan, x, y, options);
      case Reduction::mean: return run_half<T, MeanOp<R>>(plan, x, y, options);
      case Reduction::min: return run<T, MinOp<T>>(plan, x, y, options);
      case Reduction::max: return run<T, MaxOp<T>>(plan, x, y, options);
      case Reduction::any:
      case Reduction::all: break;
    }
    precondition_violated("any/all need a bool tensor");
  } else if constexpr (std::is_same_v<T, Bool8>) {
    if (kind == Reduction::any) return run<T, AnyOp>(plan, x, y, options);
    if (kind == Reduction::all) return run<T, AllOp>(plan, x, y, options);
    precondition_violated("a bool tensor supports only any/all");
  } else {
    switch (kind) {
      case Reduction::sum: return run<T, SumOp<T>>(plan, x, y, options);
      case Reduction::prod: return run<T, ProdOp<T>>(plan, x, y, options);
      case Reduction::min: return run<T, MinOp<T>>(plan, x, y, options);
      case Reduction::max: return run<T, MaxOp<T>>(plan, x, y, options);
      case Reduction::mean:
        if constexpr (is_float_type_v<T>) return run<T, MeanOp<T>>(plan, x, y, options);
        precondition_violated("mean needs a floating-point tensor");
      case Reduction::any:
      case Reduction::all: break;
    }
    precondition_violated("any/all need a bool tensor");
  }
}

}  // namespace

Tensor execute(const ReducePlan& plan, const Tensor& input, const ExecOptions& options) {
  if (input.dtype() != plan.dtype) precondition_violated("the input's dtype differs from the checked dtype");
  if (input.shape() != plan.input_shape) precondition_violated("the input's shape differs from the checked shape");
  Tensor result(plan.dtype, plan.output_shape);
  if (plan.output_size == 0) return result;
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    std::span<T> y = result.values<T>();
    if (plan.fibre_size == 0) {  // empty fibres: the identity, and no read of the (empty) input
      std::fill(y.begin(), y.end(), identity<T>(plan.kind));
      if (plan.kind == Reduction::mean || plan.kind == Reduction::min || plan.kind == Reduction::max)
        precondition_violated("mean/min/max of an empty fibre");
      return;
    }
    if (plan.max_offset >= input.size()) precondition_violated("the plan reads beyond the input");
    dispatch<T>(plan.kind, plan, input.values<T>().data(), y.data(), options);
  });
  return result;
}

Tensor execute_reduce(const CheckedReduce& reduce, const Tensor& input, const ExecOptions& options) {
  return execute(compile(reduce), input, options);
}

}  // namespace einfuzz::fused
