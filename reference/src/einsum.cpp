// Reference einsum: broadcast every operand over the global axis space, materialise the product
// tensor, fold each contraction fibre row-major (SEMANTICS §3, §4, §6). Deliberately naive: it
// walks coordinates one element at a time (a row-major step, then ravel) and never uses stride plans,
// so it shares nothing with fused/.
#include "einfuzz/reference/einsum.hpp"
#include "einfuzz/core/harness_bug.hpp"

#include <cstdlib>
#include <string>
#include <vector>

#include "einfuzz/core/scalar.hpp"
#include "materialise.hpp"

namespace einfuzz::reference {
namespace {

template <class T>
Tensor evaluate(const CheckedEinsum& e, const BroadcastOperands& broadcast) {
  const Shape gshape = detail::global_shape(e);
  const std::size_t global_size = static_cast<std::size_t>(broadcast.operands.front().size());

  // The product tensor: P = ((1 · x_0) · x_1) · … in source order.
  std::vector<T> product(global_size, T(1));
  for (const Tensor& operand : broadcast.operands) {
    const std::span<const T> x = operand.values<T>();
    for (std::size_t g = 0; g < global_size; ++g) product[g] = scalar_mul(product[g], x[g]);
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

BroadcastOperands broadcast_einsum(const CheckedEinsum& einsum, std::span<const Tensor> inputs) {
  if (inputs.size() != einsum.operands.size() || inputs.empty()) {
    harness_bug("reference::broadcast_einsum: " + std::to_string(inputs.size()) + " inputs for " +
                std::to_string(einsum.operands.size()) + " operands");
  }
  BroadcastOperands out;
  out.operands.reserve(inputs.size());
  visit_dtype(inputs.front().dtype(), [&](auto tag) {
    using T = decltype(tag);
    for (std::vector<T>& values : detail::broadcast_operands<T>(einsum, inputs)) {
      const auto n = static_cast<std::int64_t>(values.size());
      out.operands.emplace_back(Shape{n}, std::move(values));
    }
  });
  return out;
}

Tensor evaluate_einsum(const CheckedEinsum& einsum, const BroadcastOperands& broadcast) {
  if (broadcast.operands.size() != einsum.operands.size()) harness_bug("reference::evaluate_einsum: broadcast operands of another einsum");
  switch (broadcast.operands.front().dtype()) {
    case DType::f32: return evaluate<float>(einsum, broadcast);
    case DType::f64: return evaluate<double>(einsum, broadcast);
    case DType::i32: return evaluate<std::int32_t>(einsum, broadcast);
    case DType::i64: return evaluate<std::int64_t>(einsum, broadcast);
    case DType::f16: return evaluate<Float16>(einsum, broadcast);
    case DType::bf16: return evaluate<BFloat16>(einsum, broadcast);
    case DType::boolean: break;
  }
  harness_bug("reference::evaluate_einsum on bool: the caller rejects it (unsupportedDtype) first");
}

Tensor evaluate_einsum(const CheckedEinsum& einsum, std::span<const Tensor> inputs) {
  return evaluate_einsum(einsum, broadcast_einsum(einsum, inputs));
}

}  // namespace einfuzz::reference
