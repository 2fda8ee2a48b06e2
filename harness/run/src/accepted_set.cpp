// Accepted sets (judge.hpp): judge_element and judge_extreme of judge.cpp read as sets, for
// reproducers. Each branch follows the judge's own order of decisions; tests/harness/accepted_set_test.cpp checks
// AcceptedSet::contains against judge_any_order on generated cases and results.
#include "einfuzz/harness/judge.hpp"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace einfuzz {

using reference::Dyadic;
using reference::ElementTruth;
using reference::ValueClass;

bool AcceptedSet::contains(double r) const {
  if (std::isnan(r)) return nan;
  if (std::isinf(r)) return r > 0 ? pos_inf : neg_inf;
  if (finite == Finite::none) return false;
  if (finite == Finite::interval) {
    const Dyadic scaled = Dyadic::of(r) * Dyadic(divisor, 0);
    if (compare(scaled, low) < 0 || compare(scaled, high) > 0) return false;
  }
  if (r == 0 && zero_negative && std::signbit(r) != *zero_negative) return false;
  return true;
}

namespace {

AcceptedSet specials(bool nan, bool pos_inf, bool neg_inf, std::string why) {
  AcceptedSet a;
  a.nan = nan;
  a.pos_inf = pos_inf;
  a.neg_inf = neg_inf;
  a.why = std::move(why);
  return a;
}

AcceptedSet accepted_element(const ElementTruth& t, const AnyOrderJudgeOptions& o) {
  if (t.terms == 0) {
    AcceptedSet a = specials(false, false, false, "empty contraction: no term, the value is +0 on every path");
    a.finite = AcceptedSet::Finite::interval;
    if (o.strict_signed_zero) a.zero_negative = t.zero_negative;
    return a;
  }
  if (t.nan_input) return specials(true, false, false, "a NaN input reaches a term: NaN on every path");
  if (t.value_class == ValueClass::nan) {
    if (o.factoring) {
      return specials(true, true, true, "NaN class (0*Inf or both Inf signs); a factoring path may give +-Inf");
    }
    return specials(true, false, false, "NaN class (0*Inf or both Inf signs), certain without factoring");
  }
  if (t.value_class != ValueClass::finite) {
    const bool pos = t.value_class == ValueClass::pos_inf;
    return specials(!t.certain(), pos, !pos,
                    t.certain() ? "Inf class, certain" : "Inf class; a failed certificate can add NaN");
  }
  const bool no_overflow = t.no_overflow_for(o.factoring);
  AcceptedSet a;
  // Only an overflow makes Inf or NaN from finite inputs (an underflowing sub-product is 0 or subnormal).
  a.nan = a.pos_inf = a.neg_inf = !no_overflow;
  a.divisor = t.divisor;
  if (!t.no_inf_underflow) {
    a.finite = AcceptedSet::Finite::any;
    a.why = "finite; a sub-product may underflow: no enclosure";
    if (!no_overflow) a.why += "; overflow possible";
    return a;
  }
  if (t.bounded) {
    a.finite = AcceptedSet::Finite::interval;
    a.low = t.exact.dyadic() - t.scaled_bound.dyadic();
    a.high = t.exact.dyadic() + t.scaled_bound.dyadic();
    a.why = "finite: |r - s| <= B (ORACLE.md section 2)";
  } else {
    a.finite = AcceptedSet::Finite::any;
    a.why = "finite; the bound is unbounded (N'u >= 1)";
  }
  if (!no_overflow) {
    a.why += "; overflow possible";
    return a;
  }
  if (t.exact.is_zero() && o.strict_signed_zero) a.zero_negative = t.zero_negative;
  return a;
}

AcceptedSet accepted_extreme(const reference::ExtremeTruth& t, bool is_max, NanProfile profile, bool strict) {
  const bool nan_expected = profile == NanProfile::ignore ? t.all_nan : t.any_nan;
  if (nan_expected) {
    return specials(true, false, false,
                    profile == NanProfile::ignore ? "every fibre value is NaN" : "the fibre holds a NaN (propagate)");
  }
  if (std::isinf(t.extreme)) {
    return specials(false, t.extreme > 0, t.extreme < 0, "the fibre's extreme");
  }
  AcceptedSet a;
  a.finite = AcceptedSet::Finite::interval;
  a.low = a.high = Dyadic::of(t.extreme);
  a.why = "the fibre's extreme";
  if (t.extreme == 0) {
    const bool strict_negative = t.zero_tie ? !is_max : std::signbit(t.extreme);
    if (!t.zero_tie || strict) a.zero_negative = strict_negative;
  }
  return a;
}

}  // namespace

std::vector<AcceptedSet> accepted_sets(const reference::MultisetEinsum& truth, const AnyOrderJudgeOptions& options) {
  std::vector<AcceptedSet> out;
  out.reserve(truth.elements.size());
  for (const ElementTruth& t : truth.elements) out.push_back(accepted_element(t, options));
  return out;
}

std::vector<AcceptedSet> accepted_sets(const reference::MultisetReduce& truth, NanProfile profile,
                                       bool strict_signed_zero) {
  std::vector<AcceptedSet> out;
  if (truth.kind == Reduction::min || truth.kind == Reduction::max) {
    for (const reference::ExtremeTruth& t : truth.extremes) {
      out.push_back(accepted_extreme(t, truth.kind == Reduction::max, profile, strict_signed_zero));
    }
    return out;
  }
  const AnyOrderJudgeOptions options{false, strict_signed_zero};
  for (const ElementTruth& t : truth.elements) out.push_back(accepted_element(t, options));
  return out;
}

}  // namespace einfuzz
