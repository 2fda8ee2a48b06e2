// The reference einsum: materialise broadcast operands and the product tensor over the global axis
// space, then fold each contraction fibre in row-major order (SEMANTICS §6). Shares no evaluation
// code with fused/ — only core.
#pragma once

#include <span>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/tensor.hpp"

namespace einfuzz::reference {

/// The ordered (bit-exact) value of a checked einsum. Preconditions: inputs have the checked shapes
/// and one numeric dtype. Empty contractions give +0 everywhere; empty outputs give an empty tensor.
Tensor evaluate_einsum(const CheckedEinsum& einsum, std::span<const Tensor> inputs);

}  // namespace einfuzz::reference
