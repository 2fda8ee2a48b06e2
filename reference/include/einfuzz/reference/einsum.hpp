// The reference einsum: materialise broadcast operands and the product tensor over the global axis
// space, then fold each contraction fibre in row-major order (SEMANTICS §6). Shares no evaluation
// code with fused/ — only core.
#pragma once

#include <span>
#include <vector>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/tensor.hpp"

namespace einfuzz::reference {

/// The ordered (bit-exact) value of a checked einsum. Preconditions: inputs have the checked shapes
/// and one numeric dtype. Empty contractions give +0 everywhere; empty outputs give an empty tensor.
Tensor evaluate_einsum(const CheckedEinsum& einsum, std::span<const Tensor> inputs);

/// Every operand of a checked einsum broadcast over its global axis space G (SEMANTICS §3.7, §4):
/// `operands[k]` is a rank-1 tensor of |G| elements in the inputs' dtype, element g (row-major over
/// G) the value operand k reads there. The ordered fold and the multiset oracle each start from it;
/// a caller that needs both for the same inputs materialises it once and gives it to both.
struct BroadcastOperands {
  std::vector<Tensor> operands;
};

/// The broadcast operands of `einsum` on `inputs` (preconditions as evaluate_einsum's; any dtype).
BroadcastOperands broadcast_einsum(const CheckedEinsum& einsum, std::span<const Tensor> inputs);

/// evaluate_einsum(einsum, inputs) from broadcast_einsum(einsum, inputs).
Tensor evaluate_einsum(const CheckedEinsum& einsum, const BroadcastOperands& broadcast);

}  // namespace einfuzz::reference
