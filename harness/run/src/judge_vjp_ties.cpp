// The any-order judge of min/max VJPs (ORACLE §7): which elements receive g is exact per tie rule;
// the value a receiver gets is judged by the any-order element judge against the share g/|T|
// (equal-share) or the copy g (one, all); elements outside T are ±0.
#include "judge_vjp_ties.hpp"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "einfuzz/core/coords.hpp"
#include "einfuzz/harness/judge.hpp"

namespace einfuzz::detail {
namespace {

template <class T>
class TieJudge {
 public:
  TieJudge(const reference::VjpTies& ties, const Tensor& actual, const VjpJudgeOptions& options, Verdict& v)
      : ties_(ties),
        actual_(actual),
        r_(actual.values<T>()),
        g_(ties.cotangent.values<T>()),
        options_(options),
        v_(v),
        counted_(r_.size(), 0) {}

  void run() {
    if (options_.tie_rule != TieRule::one) judge_receivers();
    for (std::size_t i = 0; i < r_.size(); ++i) {
      const auto o = static_cast<std::size_t>(ties_.fibre_of[i]);
      if (ties_.nan_fibre[o]) {
        record(i, VerdictKind::indeterminate, "nan-tie", "no agreed rule (a NaN fibre)");
      } else if (!ties_.in_tie[i]) {
        judge_zero(i, o, "+0 or -0 (outside the tie set)");
      }
    }
    if (options_.tie_rule == TieRule::one) judge_one();
  }

 private:
  /// equal-share and all: every element of T against its share or copy of g, through the
  /// element judge (exact value, bound, error bins), its evidence moved to the input's element.
  void judge_receivers() {
    const reference::MultisetEinsum& truth = options_.tie_rule == TieRule::equal_share ? ties_.share : ties_.whole;
    std::vector<T> gathered;
    gathered.reserve(ties_.tie_elements.size());
    for (const std::int64_t flat : ties_.tie_elements) gathered.push_back(r_[static_cast<std::size_t>(flat)]);
    Verdict s = judge_any_order(truth, Tensor(truth.rounded.shape(), std::move(gathered)),
                                AnyOrderJudgeOptions{false, options_.strict_signed_zero});
    if (s.first) {
      const std::int64_t flat = ties_.tie_elements[static_cast<std::size_t>(s.first->flat_index)];
      s.first->flat_index = flat;
      s.first->coords = unravel(flat, ties_.input_shape);
      s.first->expected_label = std::string(tie_rule_name(options_.tie_rule)) + " share of the cotangent";
    }
    s.detail.clear();
    v_ = std::move(s);
  }

  /// An element that receives nothing: ±0; NaN is a mask-multiplied non-finite g (§7).
  void judge_zero(std::size_t i, std::size_t o, const std::string& expected) {
    const T x = r_[i];
    if (x == 0) return;
    if (std::isnan(x) && !std::isfinite(g_[o])) {
      record(i, VerdictKind::indeterminate, "non-finite-cotangent", expected);
    } else {
      record(i, std::isfinite(x) ? VerdictKind::mismatch_value : VerdictKind::mismatch_special, "tie-rule", expected);
    }
  }

  /// one: per tie set, exactly one element holds g itself (which one is unspecified), the others ±0.
  void judge_one() {
    const auto& members = ties_.tie_elements;
    for (std::size_t begin = 0; begin < members.size();) {
      const auto o = static_cast<std::size_t>(ties_.fibre_of[static_cast<std::size_t>(members[begin])]);
      std::size_t end = begin;
      while (end < members.size() && static_cast<std::size_t>(ties_.fibre_of[static_cast<std::size_t>(members[end])]) == o) ++end;
      const T g = g_[o];
      const std::string copy = "g = " + describe_value(ties_.cotangent, static_cast<std::int64_t>(o));
      std::int64_t receivers = 0;
      std::size_t second = 0;
      for (std::size_t t = begin; t < end; ++t) {
        const auto i = static_cast<std::size_t>(members[t]);
        const T x = r_[i];
        const bool is_copy = g != 0 && (x == g || (std::isnan(x) && std::isnan(g)));
        if (!is_copy) {
          judge_zero(i, o, copy + " (to exactly one tie element) or ±0");
        } else if (++receivers == 2) {
          second = i;
        }
      }
      if (g == 0) {
        // every element is ±0 then: nothing tells the receiver apart
      } else if (receivers == 0) {
        record(static_cast<std::size_t>(members[begin]),
               std::isfinite(g) ? VerdictKind::mismatch_value : VerdictKind::mismatch_special, "tie-rule",
               copy + " to exactly one tie element; none got it");
      } else if (receivers > 1) {
        // A NaN g mask-multiplied over T reaches every element: not a wrong receiver count.
        record(second, std::isnan(g) ? VerdictKind::indeterminate : VerdictKind::mismatch_value,
               std::isnan(g) ? "non-finite-cotangent" : "tie-rule", copy + " to exactly one tie element; several got it");
      }
      begin = end;
    }
  }

  void record(std::size_t i, VerdictKind kind, const std::string& reason, const std::string& expected) {
    // An element is counted once per class: rule `one` can judge an element alone and again as its
    // tie set's (none got g), which had counted "3 failing of 3" for two wrong elements.
    const unsigned char bit = kind == VerdictKind::indeterminate ? 1 : is_failure(kind) ? 2 : 0;
    if ((counted_[i] & bit) == 0) {
      if (bit == 1) ++v_.indeterminate;
      if (bit == 2) ++v_.differing;
      counted_[i] = static_cast<unsigned char>(counted_[i] | bit);
    }
    if (verdict_severity(kind) <= verdict_severity(v_.kind)) return;
    v_.kind = kind;
    v_.reason = reason;
    ElementEvidence e;
    e.flat_index = static_cast<std::int64_t>(i);
    e.coords = unravel(e.flat_index, ties_.input_shape);
    e.expected = expected;
    e.expected_label = "tie rule " + std::string(tie_rule_name(options_.tie_rule));
    e.actual = describe_value(actual_, e.flat_index);
    v_.first = std::move(e);
  }

  const reference::VjpTies& ties_;
  const Tensor& actual_;
  std::span<const T> r_;
  std::span<const T> g_;
  const VjpJudgeOptions& options_;
  Verdict& v_;
  std::vector<unsigned char> counted_;  // per element: 1 counted indeterminate, 2 counted failing
};

}  // namespace

Verdict judge_vjp_ties(const reference::VjpTies& ties, const Tensor& actual, const VjpJudgeOptions& options) {
  if (actual.dtype() != ties.cotangent.dtype() || actual.shape() != ties.input_shape) {
    return make_verdict(VerdictKind::mismatch_shape, "expected " + std::string(dtype_name(ties.cotangent.dtype())) + " " +
                                                         format_shape(ties.input_shape) + ", got " +
                                                         std::string(dtype_name(actual.dtype())) + " " +
                                                         format_shape(actual.shape()));
  }
  Verdict v;
  v.kind = VerdictKind::pass;
  if (actual.dtype() == DType::f32) TieJudge<float>(ties, actual, options, v).run();
  if (actual.dtype() == DType::f64) TieJudge<double>(ties, actual, options, v).run();
  if (v.differing || v.indeterminate || v.notes) {
    v.detail = std::to_string(v.differing) + " failing, " + std::to_string(v.indeterminate) + " indeterminate, " +
               std::to_string(v.notes) + " noted of " + std::to_string(actual.size()) + " elements";
  }
  return v;
}

}  // namespace einfuzz::detail
