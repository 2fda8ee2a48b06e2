// Executes a checked reduce in place: stride plans over the output and reduced elementary axes,
// one sequential row-major fold per fibre, contiguous output chunks on std::jthreads.
#include "einfuzz/fused/reduce.hpp"
#include "einfuzz/core/harness_bug.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <system_error>
#include <thread>
#include <type_traits>
#include <vector>

#include "einfuzz/core/scalar.hpp"

namespace einfuzz::fused {
namespace {

// A violated precondition is a harness bug (STYLE: print and abort), never a backend verdict.
[[noreturn]] void precondition_violated(const char* what) {
  harness_bug(std::string("fused::execute_reduce: precondition violated: ") + what);
}

/// One loop of a stride plan.
struct Loop {
  std::int64_t length;  ///< trip count (>= 2 after simplification)
  std::int64_t stride;  ///< input elements between consecutive iterations
};

/// What the chunk kernel needs; compiled once per call, independent of values.
struct ReducePlan {
  std::vector<Loop> output_loops;   ///< output elementary axes in row-major order (last fastest)
  std::vector<Loop> fibre_loops;    ///< reduced axes in row-major order (last fastest)
  std::int64_t output_size = 0;     ///< elements of the output
  std::int64_t fibre_size = 0;      ///< elements of each fibre
};

/// Drops length-1 loops and merges a loop into its inner neighbour when together they walk one
/// arithmetic progression: the sequence of offsets, hence every fold, is unchanged.
std::vector<Loop> simplify(const std::vector<Loop>& loops) {
  std::vector<Loop> out;
  for (const Loop& l : loops) {
    if (l.length == 1) continue;
    if (!out.empty() && out.back().stride == l.stride * l.length) {
      out.back() = {out.back().length * l.length, l.stride};
    } else {
      out.push_back(l);
    }
  }
  return out;
}

/// Preconditions: output and fibres nonempty, so every stride is bounded by the input's size.
ReducePlan compile(const CheckedReduce& r) {
  // A composite group (x y z) is row-major: z has the dimension's stride, y that times |z|, ….
  std::vector<std::int64_t> stride(r.axes.size(), 0);
  std::int64_t dim_stride = 1;
  for (std::size_t d = r.input_groups.size(); d-- > 0;) {
    std::int64_t s = dim_stride;
    const std::vector<int>& group = r.input_groups[d];
    for (std::size_t k = group.size(); k-- > 0;) {
      const auto a = static_cast<std::size_t>(group[k]);
      stride[a] = s;
      s *= r.axes[a].length;
    }
    dim_stride *= r.input_shape[d];
  }
  ReducePlan plan;
  std::vector<Loop> out;
  for (const auto& group : r.output_groups) {
    for (int a : group) out.push_back({r.axes[static_cast<std::size_t>(a)].length, stride[static_cast<std::size_t>(a)]});
  }
  std::vector<Loop> fibre;
  for (int a : r.reduced) fibre.push_back({r.axes[static_cast<std::size_t>(a)].length, stride[static_cast<std::size_t>(a)]});
  plan.output_loops = simplify(out);
  plan.fibre_loops = simplify(fibre);
  plan.output_size = r.output_size;
  plan.fibre_size = r.fibre_size;
  return plan;
}

/// Largest offset any loop nest of `plan` reaches from offset 0.
std::int64_t max_offset(const ReducePlan& plan) {
  std::int64_t sum = 0;
  for (const auto* loops : {&plan.output_loops, &plan.fibre_loops}) {
    for (const Loop& l : *loops) sum += (l.length - 1) * l.stride;
  }
  return sum;
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
  const std::vector<Loop>& outer = plan.fibre_loops;
  const std::size_t depth = outer.empty() ? 0 : outer.size() - 1;
  const Loop inner = outer.empty() ? Loop{1, 0} : outer.back();
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
  const std::vector<Loop>& loops = c.plan->output_loops;
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
  std::vector<std::jthread> workers;
  workers.reserve(tasks - 1);
  for (unsigned t = 1; t < tasks; ++t) {
    try {
      workers.emplace_back(run_chunk<T, Op>, std::cref(chunks[t]));
    } catch (const std::system_error&) {
      run_chunk<T, Op>(chunks[t]);  // no thread available: the chunk runs here, same bits
    }
  }
  run_chunk<T, Op>(chunks[0]);
}  // jthreads join here

/// The kind's value on an empty fibre (mean/min/max never get here: the checker rejects them).
template <class T>
T identity(Reduction kind) {
  return (kind == Reduction::prod || kind == Reduction::all) ? T(1) : T(0);
}

template <class T>
void dispatch(Reduction kind, const ReducePlan& plan, const T* x, T* y, const ExecOptions& options) {
  if constexpr (std::is_same_v<T, Bool8>) {
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
        if constexpr (std::is_floating_point_v<T>) return run<T, MeanOp<T>>(plan, x, y, options);
        precondition_violated("mean needs a floating-point tensor");
      case Reduction::any:
      case Reduction::all: break;
    }
    precondition_violated("any/all need a bool tensor");
  }
}

}  // namespace

Tensor execute_reduce(const CheckedReduce& reduce, const Tensor& input, const ExecOptions& options) {
  if (input.dtype() != reduce.dtype) precondition_violated("the input's dtype differs from the checked dtype");
  if (input.shape() != reduce.input_shape) precondition_violated("the input's shape differs from the checked shape");
  Tensor result(reduce.dtype, reduce.output_shape);
  if (reduce.output_size == 0) return result;
  visit_dtype(reduce.dtype, [&](auto tag) {
    using T = decltype(tag);
    std::span<T> y = result.values<T>();
    if (reduce.fibre_size == 0) {  // empty fibres: the identity, and no read of the (empty) input
      std::fill(y.begin(), y.end(), identity<T>(reduce.kind));
      if (reduce.kind == Reduction::mean || reduce.kind == Reduction::min || reduce.kind == Reduction::max)
        precondition_violated("mean/min/max of an empty fibre");
      return;
    }
    const ReducePlan plan = compile(reduce);
    if (max_offset(plan) >= input.size()) precondition_violated("the plan reads beyond the input");
    dispatch<T>(reduce.kind, plan, input.values<T>().data(), y.data(), options);
  });
  return result;
}

}  // namespace einfuzz::fused
