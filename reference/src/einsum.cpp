// Reference einsum: broadcast every operand over the global axis space, materialise the product
// tensor, fold each contraction fibre row-major (SEMANTICS §3, §4, §6). Deliberately naive: it
// walks coordinates one element at a time (a row-major step, then ravel) and never uses stride plans,
// so it shares nothing with fused/.
#include "einfuzz/reference/einsum.hpp"
#include "einfuzz/core/harness_bug.hpp"

#include <cstdlib>
#include <vector>

#include "einfuzz/core/scalar.hpp"
#include "materialise.hpp"

namespace einfuzz::reference {
namespace {

template <class T>
Tensor evaluate(const CheckedEinsum& e, std::span<const Tensor> inputs) {
  const Shape gshape = detail::global_shape(e);
  const std::vector<std::vector<T>> broadcast = detail::broadcast_operands<T>(e, inputs);
  const std::size_t global_size = broadcast.empty() ? 0 : broadcast.front().size();

  // The product tensor: P = ((1 · x_0) · x_1) · … in source order.
  std::vector<T> product(global_size, T(1));
  for (const auto& operand : broadcast) {
    for (std::size_t g = 0; g < global_size; ++g) product[g] = scalar_mul(product[g], operand[g]);
  }

  // Fold each fibre: S = ((0 + P_0) + P_1) + … over the contraction space, row-major.
  std::vector<T> out(static_cast<std::size_t>(e.output_size));
  for (std::int64_t o = 0; o < e.output_size; ++o) {
    T sum = T(0);
    detail::for_each_term(e, gshape, o, [&](std::int64_t g) { sum = scalar_add(sum, product[static_cast<std::size_t>(g)]); });
    out[static_cast<std::size_t>(o)] = sum;
  }
  return Tensor(e.output_shape, std::move(out));
}

}  // namespace

Tensor evaluate_einsum(const CheckedEinsum& einsum, std::span<const Tensor> inputs) {
  switch (inputs.empty() ? DType::f64 : inputs.front().dtype()) {
    case DType::f32: return evaluate<float>(einsum, inputs);
    case DType::f64: return evaluate<double>(einsum, inputs);
    case DType::i32: return evaluate<std::int32_t>(einsum, inputs);
    case DType::i64: return evaluate<std::int64_t>(einsum, inputs);
    case DType::f16: return evaluate<Float16>(einsum, inputs);
    case DType::bf16: return evaluate<BFloat16>(einsum, inputs);
    case DType::boolean: break;
  }
  harness_bug("reference::evaluate_einsum on bool: the caller rejects it (unsupportedDtype) first");
}

}  // namespace einfuzz::reference
