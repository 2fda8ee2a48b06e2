// Reference VJPs (SEMANTICS §13.8): the operands broadcast over the global axis space and the
// cotangent spread over it, then one sequential scatter-add per operand in row-major order of the
// global axes; reductions through the same permuted fibre rows the forward reference folds.
// Deliberately naive, like the forward reference: nothing is shared with fused/.
#include "einfuzz/reference/vjp.hpp"

#include <cmath>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "einfuzz/core/harness_bug.hpp"
#include "einfuzz/core/scalar.hpp"
#include "einfuzz/reference/reduce.hpp"
#include "materialise.hpp"

namespace einfuzz::reference {
namespace {

[[noreturn]] void precondition_violated(const char* where, const std::string& what) {
  harness_bug(std::string("reference::") + where + ": precondition violated: " + what);
}

template <class T>
std::vector<Tensor> einsum_vjp(const CheckedEinsum& e, std::span<const Tensor> inputs, const Tensor& cotangent) {
  const std::vector<std::vector<T>> broadcast = detail::broadcast_operands<T>(e, inputs);
  const std::vector<std::int64_t> out_index = detail::output_indices(e);
  const auto g = cotangent.values<T>();
  std::vector<Tensor> grads;
  grads.reserve(e.operands.size());
  for (std::size_t m = 0; m < e.operands.size(); ++m) {
    const std::vector<std::int64_t> target = detail::physical_indices(e, m);
    std::vector<T> grad(static_cast<std::size_t>(inputs[m].size()), T(0));
    for (std::size_t a = 0; a < target.size(); ++a) {
      T product = T(1);
      for (std::size_t q = 0; q < broadcast.size(); ++q) {
        if (q != m) product = scalar_mul(product, broadcast[q][a]);
      }
      const T term = scalar_mul(g[static_cast<std::size_t>(out_index[a])], product);
      T& acc = grad[static_cast<std::size_t>(target[a])];
      acc = scalar_add(acc, term);
    }
    grads.emplace_back(inputs[m].shape(), std::move(grad));
  }
  return grads;
}

template <class T>
bool in_tie_set(T x, T result) {
  return x == result || (std::isnan(x) && std::isnan(result));
}

template <class T>
Tensor reduce_vjp(const CheckedReduce& r, const Tensor& input, const Tensor& cotangent) {
  const std::vector<T> rows = detail::fibre_rows<T>(r, input.values<T>());
  const std::vector<std::int64_t> source = detail::fibre_row_sources(r);
  const auto g = cotangent.values<T>();
  const auto n = static_cast<std::size_t>(r.fibre_size);
  std::vector<T> forward;
  if (r.kind == Reduction::min || r.kind == Reduction::max) {
    const Tensor f = evaluate_reduce(r, input);
    const auto values = f.values<T>();
    forward.assign(values.begin(), values.end());
  }
  std::vector<T> grad(static_cast<std::size_t>(input.size()), T(0));
  for (std::size_t o = 0; o < static_cast<std::size_t>(r.output_size); ++o) {
    const std::span<const T> fibre = std::span<const T>(rows).subspan(n == 0 ? 0 : o * n, n);
    const T go = g[o];
    std::size_t ties = 0;
    if (!forward.empty()) {
      for (const T x : fibre) ties += in_tie_set(x, forward[o]) ? 1 : 0;
      if (ties == 0) precondition_violated("vjp_reduce", "a min/max result that is no element of its fibre");
    }
    for (std::size_t j = 0; j < n; ++j) {
      T value = T(0);
      switch (r.kind) {
        case Reduction::sum: value = go; break;
        case Reduction::mean: value = go / static_cast<T>(n); break;
        case Reduction::prod: {
          T product = T(1);
          for (std::size_t i = 0; i < n; ++i) {
            if (i != j) product = scalar_mul(product, fibre[i]);
          }
          value = scalar_mul(product, go);
          break;
        }
        case Reduction::min:
        case Reduction::max:
          value = in_tie_set(fibre[j], forward[o]) ? go / static_cast<T>(ties) : T(0);
          break;
        case Reduction::any:
        case Reduction::all: precondition_violated("vjp_reduce", "any/all have no VJP");
      }
      grad[static_cast<std::size_t>(source[o * n + j])] = value;
    }
  }
  return Tensor(r.input_shape, std::move(grad));
}

}  // namespace

std::vector<Tensor> vjp_einsum(const CheckedEinsum& einsum, std::span<const Tensor> inputs, const Tensor& cotangent) {
  if (inputs.size() != einsum.operands.size()) precondition_violated("vjp_einsum", "operand count");
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    if (inputs[k].shape() != einsum.operands[k].shape) precondition_violated("vjp_einsum", "an input's shape");
  }
  if (cotangent.shape() != einsum.output_shape) precondition_violated("vjp_einsum", "the cotangent's shape");
  const DType dtype = cotangent.dtype();
  for (const Tensor& t : inputs) {
    if (t.dtype() != dtype) precondition_violated("vjp_einsum", "mixed dtypes");
  }
  switch (dtype) {
    case DType::f32: return einsum_vjp<float>(einsum, inputs, cotangent);
    case DType::f64: return einsum_vjp<double>(einsum, inputs, cotangent);
    default: break;
  }
  precondition_violated("vjp_einsum", "a non-floating dtype (the checker says notDifferentiable first)");
}

Tensor vjp_reduce(const CheckedReduce& reduce, const Tensor& input, const Tensor& cotangent) {
  if (input.dtype() != reduce.dtype || cotangent.dtype() != reduce.dtype) precondition_violated("vjp_reduce", "dtype");
  if (input.shape() != reduce.input_shape) precondition_violated("vjp_reduce", "the input's shape");
  if (cotangent.shape() != reduce.output_shape) precondition_violated("vjp_reduce", "the cotangent's shape");
  switch (reduce.dtype) {
    case DType::f32: return reduce_vjp<float>(reduce, input, cotangent);
    case DType::f64: return reduce_vjp<double>(reduce, input, cotangent);
    default: break;
  }
  precondition_violated("vjp_reduce", "a non-floating dtype (the checker says notDifferentiable first)");
}

}  // namespace einfuzz::reference
