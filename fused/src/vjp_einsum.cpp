// The fused einsum VJP (SEMANTICS §13.8): per operand m, the global axes split once into the ones
// that name an element of m (bound) and the rest (free), with every stream's strides per axis;
// then loops only: target elements outer, the free axes inner in global order.
#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "einfuzz/core/harness_bug.hpp"
#include "einfuzz/core/scalar.hpp"
#include "einfuzz/core/shape_math.hpp"
#include "einfuzz/fused/vjp.hpp"
#include "parallel.hpp"

namespace einfuzz::fused {
namespace {

[[noreturn]] void precondition_violated(const std::string& what) {
  harness_bug("fused::execute_vjp (einsum): precondition violated: " + what);
}

/// Per global axis, the step of one tensor's flat index along it: the sum of the row-major strides
/// of its dimensions holding that axis with a length other than 1 (a repeated label adds; a size-1
/// broadcast dimension always reads coordinate 0). Only called when no axis is empty, so every
/// stride is bounded by the tensor's element count.
std::vector<std::int64_t> axis_strides(const std::vector<int>& dim_axes, const Shape& shape, std::size_t axes) {
  std::vector<std::int64_t> out(axes, 0);
  std::int64_t stride = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1) out[static_cast<std::size_t>(dim_axes[d])] += stride;
    stride *= shape[d];
  }
  return out;
}

/// Largest offset `loops` reach along stream s (s == -1: the target), or -1 on overflow.
std::int64_t max_offset(const std::vector<VjpLoop>& a, const std::vector<VjpLoop>& b, int s) {
  std::int64_t sum = 0;
  for (const auto* loops : {&a, &b}) {
    for (const VjpLoop& l : *loops) {
      const std::int64_t stride = s < 0 ? l.target_stride : l.strides[static_cast<std::size_t>(s)];
      std::int64_t term = 0;
      if (__builtin_mul_overflow(stride, l.length - 1, &term) || __builtin_add_overflow(sum, term, &sum)) return -1;
    }
  }
  return sum;
}

/// S for one target element: S := +0, then S := S + g · P over the free loops in row-major order
/// (the last loop fastest), P := ((1 · x_q0) · x_q1) · … . `x[s]` points at stream s's element of
/// the first assignment (the last stream is g).
template <class T>
T accumulate(const std::vector<VjpLoop>& free, const T* const* x, std::size_t streams, std::int64_t* idx,
             std::int64_t* offset) {
  const std::size_t others = streams - 1;
  const auto term = [&](const std::int64_t* off) {
    T product = T(1);
    for (std::size_t s = 0; s < others; ++s) product = scalar_mul(product, x[s][off[s]]);
    return scalar_mul(x[others][off[others]], product);
  };
  for (std::size_t s = 0; s < streams; ++s) offset[s] = 0;
  T sum = T(0);
  if (free.empty()) return scalar_add(sum, term(offset));
  const std::size_t depth = free.size() - 1;
  const VjpLoop& inner = free.back();
  for (std::size_t d = 0; d < depth; ++d) idx[d] = 0;
  for (;;) {
    for (std::int64_t j = 0; j < inner.length; ++j) {
      sum = scalar_add(sum, term(offset));
      for (std::size_t s = 0; s < streams; ++s) offset[s] += inner.strides[s];
    }
    for (std::size_t s = 0; s < streams; ++s) offset[s] -= inner.strides[s] * inner.length;
    std::size_t d = depth;
    for (; d-- > 0;) {
      const VjpLoop& l = free[d];
      for (std::size_t s = 0; s < streams; ++s) offset[s] += l.strides[s];
      if (++idx[d] < l.length) break;
      for (std::size_t s = 0; s < streams; ++s) offset[s] -= l.strides[s] * l.length;
      idx[d] = 0;
    }
    if (d == static_cast<std::size_t>(-1)) return sum;
  }
}

// Why target elements outer and free axes inner keep §13.8's order. The reference visits every
// global assignment a in row-major order of the global axes and adds its term into the target
// element p = phys_m(a). The sum held by one element p depends only on the subsequence of
// assignments reaching p, in the order they are visited; other elements' additions in between do
// not touch it. The assignments reaching p are exactly those whose bound axes hold p's coordinates
// (for a repeated label, one coordinate for all its dimensions: off-diagonal elements are reached by
// none and stay +0). Fixing the bound coordinates, row-major order over all global axes restricted
// to that subsequence is row-major order over the free axes alone, kept in global order. So running
// each element's free loops in global order, outermost first, adds the same terms in the same order;
// which element runs first is irrelevant. Merging two adjacent free loops that every stream walks
// as one progression, and dropping length-1 axes, leave that sequence unchanged.
/// Reached elements [begin, end) of the bound enumeration (row-major over plan.bound, the last
/// fastest): each one's S written to y. `x[s]` is stream s's data (the last stream is g).
template <class T>
void run_chunk(const EinsumVjpPlan& plan, const T* const* x, T* y, std::int64_t begin, std::int64_t end) {
  const std::size_t streams = plan.others.size() + 1;
  std::vector<const T*> at(streams);
  std::vector<std::int64_t> free_idx(plan.free.size());
  std::vector<std::int64_t> offset(streams);
  std::vector<std::int64_t> bound_idx(plan.bound.size(), 0);
  std::vector<std::int64_t> base(streams, 0);
  std::int64_t target = 0;
  std::int64_t rest = begin;
  for (std::size_t d = plan.bound.size(); d-- > 0;) {
    const VjpLoop& l = plan.bound[d];
    bound_idx[d] = rest % l.length;
    rest /= l.length;
    target += bound_idx[d] * l.target_stride;
    for (std::size_t s = 0; s < streams; ++s) base[s] += bound_idx[d] * l.strides[s];
  }
  for (std::int64_t i = begin; i < end; ++i) {
    for (std::size_t s = 0; s < streams; ++s) at[s] = x[s] + base[s];
    y[target] = accumulate<T>(plan.free, at.data(), streams, free_idx.data(), offset.data());
    for (std::size_t d = plan.bound.size(); d-- > 0;) {
      const VjpLoop& l = plan.bound[d];
      target += l.target_stride;
      for (std::size_t s = 0; s < streams; ++s) base[s] += l.strides[s];
      if (++bound_idx[d] < l.length) break;
      target -= l.target_stride * l.length;
      for (std::size_t s = 0; s < streams; ++s) base[s] -= l.strides[s] * l.length;
      bound_idx[d] = 0;
    }
  }
}

/// Elements reached (product of the bound lengths) and terms summed per element (of the free ones).
std::int64_t loop_product(const std::vector<VjpLoop>& loops) {
  std::int64_t n = 1;
  for (const VjpLoop& l : loops) {
    if (__builtin_mul_overflow(n, l.length, &n)) return INT64_MAX;
  }
  return n;
}

// Parallelism splits only the bound enumeration into contiguous chunks: each element is written by
// exactly one chunk, and its sum runs sequentially inside it, so no chunking changes a bit (§9).
template <class T>
Tensor run(const EinsumVjpPlan& plan, std::span<const Tensor> inputs, const Tensor& cotangent,
           const ExecOptions& options) {
  Tensor result(dtype_of_v<T>, plan.target_shape);
  if (plan.empty || result.size() == 0) return result;  // no assignment: every element stays +0
  const std::size_t streams = plan.others.size() + 1;
  std::vector<const T*> x(streams);
  for (std::size_t s = 0; s + 1 < streams; ++s) x[s] = inputs[plan.others[s]].values<T>().data();
  x[streams - 1] = cotangent.values<T>().data();
  T* y = result.values<T>().data();

  const std::int64_t elements = loop_product(plan.bound);
  std::int64_t work = 0;
  if (__builtin_mul_overflow(elements, loop_product(plan.free), &work)) work = INT64_MAX;
  const unsigned threads = options.threads != 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  unsigned tasks = task_count(elements, work, threads);
  if (options.tasks != 0) tasks = static_cast<unsigned>(std::min<std::int64_t>({options.tasks, elements, threads}));
  if (tasks <= 1) {
    run_chunk<T>(plan, x.data(), y, 0, elements);
    return result;
  }
  const std::int64_t chunk = elements / tasks;
  const std::int64_t extra = elements % tasks;
  // Chunk t covers [lo(t), lo(t + 1)): the first `extra` chunks get one more element.
  const auto lo = [&](unsigned t) { return t * chunk + std::min<std::int64_t>(t, extra); };
  auto task = [&](unsigned t) { run_chunk<T>(plan, x.data(), y, lo(t), lo(t + 1)); };
  detail::run_tasks(tasks, task);
  return result;
}

}  // namespace

EinsumVjpPlan compile_vjp(const CheckedEinsum& e, std::size_t m) {
  if (m >= e.operands.size()) precondition_violated("operand index out of range");
  EinsumVjpPlan plan;
  plan.operand = m;
  plan.target_shape = e.operands[m].shape;
  plan.output_shape = e.output_shape;
  for (std::size_t q = 0; q < e.operands.size(); ++q) {
    if (q != m) plan.others.push_back(q);
  }
  for (const Axis& a : e.axes) {
    if (a.length == 0) plan.empty = true;
  }
  // With an empty axis nothing is read and later lengths' products may overflow: no strides.
  if (plan.empty) return plan;

  const std::size_t n_axes = e.axes.size();
  const std::vector<std::int64_t> target = axis_strides(e.operands[m].axes, e.operands[m].shape, n_axes);
  std::vector<std::vector<std::int64_t>> stream;  // [s][axis]
  for (const std::size_t q : plan.others) stream.push_back(axis_strides(e.operands[q].axes, e.operands[q].shape, n_axes));
  stream.push_back(axis_strides(e.output, e.output_shape, n_axes));  // g: output dims are distinct
  std::vector<bool> in_target(n_axes, false);
  for (std::size_t d = 0; d < e.operands[m].shape.size(); ++d) {
    if (e.operands[m].shape[d] != 1) in_target[static_cast<std::size_t>(e.operands[m].axes[d])] = true;
  }
  for (std::size_t a = 0; a < n_axes; ++a) {
    if (e.axes[a].length == 1) continue;  // one coordinate: no loop, same order
    VjpLoop loop;
    loop.length = e.axes[a].length;
    for (const auto& s : stream) loop.strides.push_back(s[a]);
    if (in_target[a]) {
      loop.target_stride = target[a];
      plan.bound.push_back(std::move(loop));
      continue;
    }
    // Merge into the previous free loop when, for every stream, stepping the outer loop once is
    // stepping the inner one `length` times: the visited offsets and their order are unchanged.
    if (!plan.free.empty()) {
      VjpLoop& outer = plan.free.back();
      bool progression = true;
      for (std::size_t s = 0; s < loop.strides.size(); ++s) {
        if (outer.strides[s] != loop.strides[s] * loop.length) progression = false;
      }
      if (progression) {
        outer.length *= loop.length;
        outer.strides = loop.strides;
        continue;
      }
    }
    plan.free.push_back(std::move(loop));
  }
  return plan;
}

Tensor execute_vjp(const EinsumVjpPlan& plan, std::span<const Tensor> inputs, const Tensor& cotangent,
                   const ExecOptions& options) {
  if (plan.operand >= inputs.size() || inputs.size() != plan.others.size() + 1)
    precondition_violated("operand count differs from the plan's");
  const DType dtype = cotangent.dtype();
  if (dtype != DType::f32 && dtype != DType::f64) precondition_violated("a non-floating dtype");
  for (const Tensor& t : inputs) {
    if (t.dtype() != dtype) precondition_violated("mixed dtypes");
  }
  if (inputs[plan.operand].shape() != plan.target_shape) precondition_violated("operand m's shape");
  if (cotangent.shape() != plan.output_shape) precondition_violated("the cotangent's shape");
  if (!plan.empty && element_count(plan.target_shape) > 0) {
    const auto reads_within = [&](int s, std::int64_t size) {
      const std::int64_t last = max_offset(plan.bound, plan.free, s);
      return last >= 0 && last < size;
    };
    if (!reads_within(-1, inputs[plan.operand].size())) precondition_violated("the plan writes beyond operand m");
    for (std::size_t s = 0; s < plan.others.size(); ++s) {
      if (!reads_within(static_cast<int>(s), inputs[plan.others[s]].size()))
        precondition_violated("an input holds fewer elements than the plan reads");
    }
    if (!reads_within(static_cast<int>(plan.others.size()), cotangent.size()))
      precondition_violated("the cotangent holds fewer elements than the plan reads");
  }
  if (dtype == DType::f32) return run<float>(plan, inputs, cotangent, options);
  return run<double>(plan, inputs, cotangent, options);
}

std::vector<Tensor> vjp_einsum(const CheckedEinsum& einsum, std::span<const Tensor> inputs, const Tensor& cotangent,
                               const ExecOptions& options) {
  std::vector<Tensor> out;
  out.reserve(einsum.operands.size());
  for (std::size_t m = 0; m < einsum.operands.size(); ++m) out.push_back(execute_vjp(compile_vjp(einsum, m), inputs, cotangent, options));
  return out;
}

}  // namespace einfuzz::fused
