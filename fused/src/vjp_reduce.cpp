// The fused reduce VJPs (SEMANTICS §13.8): the forward reduce's stride plan walked once per output
// element, its fibre's offsets gathered in row-major fibre order, every fibre element written once.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "einfuzz/core/harness_bug.hpp"
#include "einfuzz/core/scalar.hpp"
#include "einfuzz/fused/reduce.hpp"
#include "einfuzz/fused/vjp.hpp"

namespace einfuzz::fused {
namespace {

[[noreturn]] void precondition_violated(const std::string& what) {
  harness_bug("fused::vjp_reduce: precondition violated: " + what);
}

/// Offsets (from the fibre's first element) of one fibre's elements in row-major fibre order.
std::vector<std::int64_t> fibre_offsets(const ReducePlan& plan) {
  std::vector<std::int64_t> out{0};
  for (const ReduceLoop& l : plan.fibre_loops) {
    std::vector<std::int64_t> next;
    next.reserve(out.size() * static_cast<std::size_t>(l.length));
    for (const std::int64_t base : out) {
      for (std::int64_t j = 0; j < l.length; ++j) next.push_back(base + j * l.stride);
    }
    out = std::move(next);
  }
  return out;
}

template <class T>
bool in_tie_set(T x, T result) {
  return x == result || (std::isnan(x) && std::isnan(result));
}

/// One fibre's cotangent: `x`, `y` point at its first element in the input and the result.
template <class T>
void fibre_vjp(Reduction kind, const T* x, T* y, const std::vector<std::int64_t>& at, T g, T forward) {
  const std::size_t n = at.size();
  switch (kind) {
    case Reduction::sum:
      for (const std::int64_t o : at) y[o] = g;
      return;
    case Reduction::mean: {
      const T value = g / static_cast<T>(n);  // one division, like the forward mean (§13.6)
      for (const std::int64_t o : at) y[o] = value;
      return;
    }
    case Reduction::prod: {
      // P_j := ((1 · x_0) · x_1) · … without x_j, left to right in fibre order: the prefix up to j
      // is shared, the rest is folded afresh from it (no division: zeros need no special case).
      T prefix = T(1);
      for (std::size_t j = 0; j < n; ++j) {
        T product = prefix;
        for (std::size_t i = j + 1; i < n; ++i) product = scalar_mul(product, x[at[i]]);
        y[at[j]] = scalar_mul(product, g);
        prefix = scalar_mul(prefix, x[at[j]]);
      }
      return;
    }
    case Reduction::min:
    case Reduction::max: {
      std::size_t ties = 0;
      for (const std::int64_t o : at) ties += in_tie_set(x[o], forward) ? 1 : 0;
      if (ties == 0) precondition_violated("a min/max result that is no element of its fibre");
      const T share = g / static_cast<T>(ties);
      for (const std::int64_t o : at) y[o] = in_tie_set(x[o], forward) ? share : T(0);
      return;
    }
    case Reduction::any:
    case Reduction::all: break;
  }
  precondition_violated("any/all have no VJP");
}

template <class T>
Tensor run(const CheckedReduce& reduce, const ReducePlan& plan, const Tensor& input, const Tensor& cotangent,
           const ExecOptions& options) {
  Tensor result(plan.dtype, plan.input_shape);
  // An empty output or empty fibres: the input has no element (every input axis is an output or a
  // fibre axis), so there is nothing to write.
  if (plan.output_size == 0 || plan.fibre_size == 0) return result;
  if (plan.max_offset >= input.size()) precondition_violated("the plan reaches beyond the input");
  Tensor forward_result;
  std::span<const T> forward;
  if (reduce.kind == Reduction::min || reduce.kind == Reduction::max) {
    forward_result = execute(plan, input, options);  // bitwise the reference's ordered forward fold
    forward = forward_result.values<T>();
  }
  const std::vector<std::int64_t> at = fibre_offsets(plan);
  const T* x = input.values<T>().data();
  T* y = result.values<T>().data();
  const auto g = cotangent.values<T>();
  const std::vector<ReduceLoop>& loops = plan.output_loops;
  std::vector<std::int64_t> idx(loops.size(), 0);
  std::int64_t offset = 0;
  for (std::int64_t o = 0; o < plan.output_size; ++o) {
    const auto oi = static_cast<std::size_t>(o);
    fibre_vjp<T>(reduce.kind, x + offset, y + offset, at, g[oi], forward.empty() ? T(0) : forward[oi]);
    for (std::size_t i = loops.size(); i-- > 0;) {
      offset += loops[i].stride;
      if (++idx[i] < loops[i].length) break;
      offset -= loops[i].stride * loops[i].length;
      idx[i] = 0;
    }
  }
  return result;
}

}  // namespace

Tensor vjp_reduce(const CheckedReduce& reduce, const Tensor& input, const Tensor& cotangent, const ExecOptions& options) {
  if (input.dtype() != reduce.dtype || cotangent.dtype() != reduce.dtype) precondition_violated("dtype");
  if (input.shape() != reduce.input_shape) precondition_violated("the input's shape");
  if (cotangent.shape() != reduce.output_shape) precondition_violated("the cotangent's shape");
  if (reduce.kind == Reduction::any || reduce.kind == Reduction::all) precondition_violated("any/all have no VJP");
  const ReducePlan plan = compile(reduce);
  switch (reduce.dtype) {
    case DType::f32: return run<float>(reduce, plan, input, cotangent, options);
    case DType::f64: return run<double>(reduce, plan, input, cotangent, options);
    default: break;
  }
  precondition_violated("a non-floating dtype (the checker says notDifferentiable first)");
}

}  // namespace einfuzz::fused
