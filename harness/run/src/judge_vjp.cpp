// The VJP judges (ORACLE §7): the ordered one tensor by tensor against the reference's ordered
// VJP, the any-order one tensor by tensor against the multiset VJP truth, and the combination of
// per-tensor verdicts into the case's.
#include "einfuzz/harness/judge_vjp.hpp"

#include <string>
#include <utility>

#include "judge_vjp_ties.hpp"

namespace einfuzz {

Verdict combine_gradient_verdicts(std::vector<Verdict> verdicts) {
  if (verdicts.empty()) return make_verdict(VerdictKind::pass_bitwise, "no forward inputs");
  std::size_t worst = 0;
  for (std::size_t m = 1; m < verdicts.size(); ++m) {
    if (verdict_severity(verdicts[m].kind) > verdict_severity(verdicts[worst].kind)) worst = m;
  }
  Verdict v = std::move(verdicts[worst]);
  if (v.first) v.first->gradient_of = static_cast<int>(worst);
  if (verdicts.size() > 1 || !v.detail.empty()) {
    v.detail = "cotangent of input " + std::to_string(worst) + (v.detail.empty() ? "" : ": " + v.detail);
  }
  for (std::size_t m = 0; m < verdicts.size(); ++m) {
    if (m == worst) continue;
    v.differing += verdicts[m].differing;
    v.indeterminate += verdicts[m].indeterminate;
    v.notes += verdicts[m].notes;
    for (std::size_t b = 0; b < kErrorBins; ++b) v.error_bins[b] += verdicts[m].error_bins[b];
  }
  return v;
}

Verdict judge_vjp_ordered(const std::vector<Tensor>& expected, const Gradients& actual,
                          const OrderedJudgeOptions& options) {
  if (actual.tensors.size() != expected.size()) {
    return make_verdict(VerdictKind::mismatch_shape, "expected " + std::to_string(expected.size()) +
                                                         " cotangents (one per forward input), got " +
                                                         std::to_string(actual.tensors.size()));
  }
  std::vector<Verdict> verdicts;
  verdicts.reserve(expected.size());
  for (std::size_t m = 0; m < expected.size(); ++m) verdicts.push_back(judge_ordered(expected[m], actual.tensors[m], options));
  return combine_gradient_verdicts(std::move(verdicts));
}

Verdict judge_vjp_any_order(const reference::MultisetVjp& truth, const Gradients& actual,
                            const VjpJudgeOptions& options) {
  const std::size_t expected = truth.ties ? 1 : truth.inputs.size();
  if (actual.tensors.size() != expected) {
    return make_verdict(VerdictKind::mismatch_shape, "expected " + std::to_string(expected) +
                                                         " cotangents (one per forward input), got " +
                                                         std::to_string(actual.tensors.size()));
  }
  std::vector<Verdict> verdicts;
  verdicts.reserve(expected);
  if (truth.ties) {
    // The tie sets under the backend's NaN profile; they differ from propagate's only on a fibre
    // holding both a NaN and a number.
    const std::optional<reference::VjpTies>& view = options.nan_profile == NanProfile::ignore    ? truth.ties_ignoring_nan
                                                    : options.nan_profile == NanProfile::ordered ? truth.ties_ordered
                                                                                                 : truth.ties;
    verdicts.push_back(detail::judge_vjp_ties(view ? *view : *truth.ties, actual.tensors[0], options));
  } else {
    // Reductions never factor (one operand); an einsum VJP is judged as factoring, whatever the
    // backend's forward declaration says (§7 table: "factoring assumed").
    const AnyOrderJudgeOptions element{truth.einsum, options.strict_signed_zero};
    for (std::size_t m = 0; m < expected; ++m) verdicts.push_back(judge_any_order(truth.inputs[m], actual.tensors[m], element));
  }
  return combine_gradient_verdicts(std::move(verdicts));
}

}  // namespace einfuzz
