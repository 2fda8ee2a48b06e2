// Judges a backend's answer to a VJP case (ORACLE §7): one cotangent per forward input, each judged
// element by element, the case's verdict the worst tensor's.
#pragma once

#include <vector>

#include "einfuzz/backends/backend.hpp"
#include "einfuzz/core/tensor.hpp"
#include "einfuzz/harness/judge.hpp"
#include "einfuzz/harness/verdict.hpp"
#include "einfuzz/reference/multiset_vjp.hpp"

namespace einfuzz {

/// The verdicts of a VJP answer's tensors (verdicts[m]: the cotangent of input m) as one: the
/// worst, its evidence marked with `gradient_of`, its detail naming the input; counts and error
/// bins summed.
Verdict combine_gradient_verdicts(std::vector<Verdict> verdicts);

/// Ordered oracle for a VJP case: as many tensors as `expected`, each judged by judge_ordered
/// (a different count is `mismatch(shape)`).
Verdict judge_vjp_ordered(const std::vector<Tensor>& expected, const Gradients& actual,
                          const OrderedJudgeOptions& options = {});

/// An einsum VJP is judged as factoring whatever the backend declares for its forward einsum
/// (ORACLE §7 table: "factoring assumed"): a backward pass is free to sum before it multiplies.
struct VjpJudgeOptions {
  bool strict_signed_zero = false;  ///< a wrong zero sign is a mismatch, not a note
  TieRule tie_rule = TieRule::equal_share;  ///< min/max: which tie-set elements receive g
  /// min/max: under `ignore` a fibre's result is the extreme of its numbers (ORACLE §5), so a fibre
  /// holding NaN and numbers has a tie set to judge; otherwise it is `indeterminate(nan-tie)`.
  NanProfile nan_profile = NanProfile::propagate;
};

/// Any-order oracle for a VJP case (ORACLE §7): each returned tensor against the multiset VJP
/// truth of its input.
Verdict judge_vjp_any_order(const reference::MultisetVjp& truth, const Gradients& actual,
                            const VjpJudgeOptions& options = {});

}  // namespace einfuzz
