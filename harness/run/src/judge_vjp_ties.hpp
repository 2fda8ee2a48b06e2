// The any-order judge of min/max VJPs (ORACLE §7 tie rules), used by judge_vjp_any_order.
#pragma once

#include "einfuzz/core/tensor.hpp"
#include "einfuzz/harness/judge_vjp.hpp"
#include "einfuzz/reference/multiset_vjp.hpp"

namespace einfuzz::detail {

/// The input's cotangent of a min/max VJP against its tie sets under `options.tie_rule`: shares
/// (equal-share) or copies (all) of g within their bounds, exactly one copy per tie set (one), ±0
/// outside the tie sets, `indeterminate(nan-tie)` in NaN fibres.
Verdict judge_vjp_ties(const reference::VjpTies& ties, const Tensor& actual, const VjpJudgeOptions& options);

}  // namespace einfuzz::detail
