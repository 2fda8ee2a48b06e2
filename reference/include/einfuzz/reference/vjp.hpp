// The reference's ordered VJPs (SEMANTICS §13.8): by materialising, like the forward reference, the
// cotangent of every forward input, bit for bit what `fused` must produce.
#pragma once

#include <span>
#include <vector>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/core/tensor.hpp"

namespace einfuzz::reference {

/// The ordered VJP of a checked float einsum: one tensor per operand m, with operand m's shape and
/// dtype. Element p of operand m's cotangent is S := +0, then for every global assignment a in
/// row-major order of the global axis list whose operand-m coordinate is p:
/// S := S + g[out(a)] · P, where P := ((1 · x_q0) · x_q1) · … over the other operands in source
/// order (m skipped). Elements no assignment reaches (off a diagonal, or an empty axis elsewhere)
/// are +0. Preconditions (else a harness bug): inputs and `cotangent` have the checked shapes and
/// one floating dtype.
std::vector<Tensor> vjp_einsum(const CheckedEinsum& einsum, std::span<const Tensor> inputs, const Tensor& cotangent);

/// The ordered VJP of a checked float reduce of a differentiable kind: the input's cotangent
/// (input shape and dtype). For the input element at position j of the fibre of output o, with
/// g = cotangent[o] and n the fibre size: sum g; mean g / n (n in the element type, one division);
/// prod P · g with P := ((1 · x_0) · x_1) · … over the fibre's other elements in row-major order;
/// min/max g / |T| (one division) when x_j is in the tie set T — the fibre elements equal (IEEE
/// ==, NaN equal to NaN) to the ordered forward result — and +0 otherwise. Preconditions as above;
/// any/all are a harness bug (the checker says notDifferentiable first).
Tensor vjp_reduce(const CheckedReduce& reduce, const Tensor& input, const Tensor& cotangent);

}  // namespace einfuzz::reference
