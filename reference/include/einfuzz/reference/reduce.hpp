// The reference reduce: split the input into its elementary axes, materialise the permutation to
// (output axes…, reduced axes…), fold each fibre row-major (SEMANTICS §8). Shares no evaluation
// code with fused/ — only core.
#pragma once

#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/core/tensor.hpp"

namespace einfuzz::reference {

/// The ordered (bit-exact) value of a checked reduce, in the input's dtype (bool for any/all).
/// Precondition: `input` has the checked dtype and shape (else a harness bug: abort). Empty fibres
/// give the kind's identity (sum +0, prod 1, any false, all true); empty outputs read nothing;
/// min/max follow the Lean ≤-folds of §8.4 (NaN and ±0 included); mean is one division by n.
Tensor evaluate_reduce(const CheckedReduce& reduce, const Tensor& input);

}  // namespace einfuzz::reference
