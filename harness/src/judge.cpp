// The ordered judge and the verdict names.
#include "einfuzz/harness/judge.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "einfuzz/core/case.hpp"

namespace einfuzz {

std::string verdict_name(VerdictKind kind) {
  switch (kind) {
    case VerdictKind::pass: return "pass";
    case VerdictKind::pass_bitwise: return "pass(bitwise)";
    case VerdictKind::indeterminate: return "indeterminate";
    case VerdictKind::note_signed_zero: return "note(signed-zero)";
    case VerdictKind::mismatch_value: return "mismatch(value)";
    case VerdictKind::mismatch_special: return "mismatch(special)";
    case VerdictKind::mismatch_shape: return "mismatch(shape)";
    case VerdictKind::reject_disagree: return "reject-disagree";
    case VerdictKind::crash: return "crash";
    case VerdictKind::timeout: return "timeout";
    case VerdictKind::input_modified: return "input-modified";
    case VerdictKind::unsupported: return "unsupported";
  }
  return "?";
}

bool is_failure(VerdictKind kind) noexcept {
  switch (kind) {
    case VerdictKind::pass:
    case VerdictKind::pass_bitwise:
    case VerdictKind::indeterminate:
    case VerdictKind::note_signed_zero:
    case VerdictKind::unsupported:
      return false;
    default:
      return true;
  }
}

std::string describe_value(const Tensor& t, std::int64_t flat_index) {
  std::string out = format_value(t, flat_index);
  char buf[64] = {};
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T v = t.values<T>()[static_cast<std::size_t>(flat_index)];
    if constexpr (std::is_same_v<T, float>) {
      if (std::isfinite(v)) std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
    } else if constexpr (std::is_same_v<T, double>) {
      if (std::isfinite(v)) std::snprintf(buf, sizeof buf, "%.17g", v);
    }
  });
  if (buf[0] != '\0') out += std::string(" (") + buf + ")";
  return out;
}

namespace {

template <class T>
bool same_element(T a, T b, bool strict_nan);

}  // namespace

static std::vector<std::int64_t> coordinates(std::int64_t flat, const Shape& shape) {
  std::vector<std::int64_t> c(shape.size());
  for (std::size_t i = shape.size(); i-- > 0;) {
    c[i] = flat % shape[i];
    flat /= shape[i];
  }
  return c;
}

namespace {

template <class T>
bool same_element(T a, T b, bool strict_nan) {
  if constexpr (std::is_floating_point_v<T>) {
    if (!strict_nan && std::isnan(a) && std::isnan(b)) return true;
    return std::memcmp(&a, &b, sizeof(T)) == 0;
  } else {
    return a == b;
  }
}

}  // namespace

Verdict judge_ordered(const Tensor& expected, const Tensor& actual, const OrderedJudgeOptions& options) {
  Verdict v;
  if (expected.dtype() != actual.dtype() || expected.shape() != actual.shape()) {
    v.kind = VerdictKind::mismatch_shape;
    v.detail = "expected " + std::string(dtype_name(expected.dtype())) + " " + format_shape(expected.shape()) +
               ", got " + std::string(dtype_name(actual.dtype())) + " " + format_shape(actual.shape());
    return v;
  }
  visit_dtype(expected.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const auto e = expected.values<T>();
    const auto a = actual.values<T>();
    for (std::size_t i = 0; i < e.size(); ++i) {
      if (same_element(e[i], a[i], options.strict_nan_payload)) continue;
      if (v.differing++ == 0) {
        const auto flat = static_cast<std::int64_t>(i);
        ElementEvidence evidence;
        evidence.flat_index = flat;
        evidence.coords = coordinates(flat, expected.shape());
        evidence.expected = describe_value(expected, flat);
        evidence.actual = describe_value(actual, flat);
        v.first = std::move(evidence);
      }
    }
  });
  v.kind = v.differing == 0 ? VerdictKind::pass_bitwise : VerdictKind::mismatch_value;
  if (v.differing) v.detail = std::to_string(v.differing) + " of " + std::to_string(expected.size()) + " elements differ";
  return v;
}

}  // namespace einfuzz

namespace einfuzz {

std::string Verdict::label() const {
  std::string name = verdict_name(kind);
  if (reason.empty()) return name;
  if (kind == VerdictKind::indeterminate) return "indeterminate(" + reason + ")";
  if (kind == VerdictKind::mismatch_special) return "mismatch(special: " + reason + ")";
  return name;
}

namespace {

using reference::Dyadic;
using reference::ElementTruth;
using reference::ValueClass;

struct ElementJudgement {
  VerdictKind kind;
  std::string reason;
};

/// Severity for aggregation: the case verdict is its worst element's.
int severity(VerdictKind k) {
  switch (k) {
    case VerdictKind::mismatch_special: return 5;
    case VerdictKind::mismatch_value: return 4;
    case VerdictKind::note_signed_zero: return 2;
    case VerdictKind::indeterminate: return 1;
    default: return 0;
  }
}

template <class T>
ElementJudgement judge_element(const ElementTruth& t, T r, const AnyOrderJudgeOptions& o) {
  const auto zero_sign = [&]() -> ElementJudgement {
    if (std::signbit(r) == t.zero_negative) return {VerdictKind::pass, ""};
    return {o.strict_signed_zero ? VerdictKind::mismatch_value : VerdictKind::note_signed_zero, "signed-zero"};
  };
  if (t.terms == 0) {  // no term exists: the value is +0 on every path, factored or not (§1, §3)
    if (r == 0) return zero_sign();
    return {VerdictKind::mismatch_special, "empty-contraction"};
  }
  if (t.nan_input) {  // NaN absorbs through + and ·: certain whatever the certificates say
    return std::isnan(r) ? ElementJudgement{VerdictKind::pass, ""}
                         : ElementJudgement{VerdictKind::mismatch_special, "NaN input, non-NaN result"};
  }
  if (t.value_class != ValueClass::finite) {
    if (!t.certain()) return {VerdictKind::indeterminate, "special-order-dependent"};
    if (t.value_class == ValueClass::nan) {
      if (o.factoring && (t.zero_times_inf || t.mixed_inf)) {
        return std::isfinite(r) ? ElementJudgement{VerdictKind::mismatch_special, "finite result where NaN or Inf"}
                                : ElementJudgement{VerdictKind::indeterminate, "special-path-dependent"};
      }
      return std::isnan(r) ? ElementJudgement{VerdictKind::pass, ""}
                           : ElementJudgement{VerdictKind::mismatch_special, "NaN expected"};
    }
    const T inf = t.value_class == ValueClass::pos_inf ? std::numeric_limits<T>::infinity()
                                                       : -std::numeric_limits<T>::infinity();
    return r == inf ? ElementJudgement{VerdictKind::pass, ""}
                    : ElementJudgement{VerdictKind::mismatch_special, std::string(inf > 0 ? "+" : "-") + "Inf expected"};
  }
  if (!std::isfinite(r)) {
    if (!t.no_overflow) return {VerdictKind::indeterminate, "overflow-possible"};
    if (!t.no_inf_underflow) return {VerdictKind::indeterminate, "underflow-possible"};
    return {VerdictKind::mismatch_special, "non-finite result where the value is finite"};
  }
  // A product whose sub-products may underflow has no enclosure (ORACLE.md §4).
  if (!t.no_inf_underflow) return {VerdictKind::indeterminate, "underflow-possible"};
  // A finite result saw no overflow, so the enclosure holds even when overflow was possible.
  if (!std::isinf(t.bound)) {
    const Dyadic d(t.divisor, 0);  // compare |r·d − exact| with B·d: exact for mean's Σ/n
    const Dyadic diff = (Dyadic::of(r) * d - t.exact).abs();
    if (compare(diff, Dyadic::of(t.bound) * d) > 0) return {VerdictKind::mismatch_value, ""};
  }
  if (!t.no_overflow) return {VerdictKind::indeterminate, "overflow-possible"};
  if (t.exact.is_zero() && r == 0) return zero_sign();
  return {VerdictKind::pass, ""};
}

template <class T>
ElementJudgement judge_extreme(const reference::ExtremeTruth& t, T r, bool is_max, NanProfile profile,
                               bool strict_signed_zero) {
  const bool nan_expected = profile == NanProfile::ignore ? t.all_nan : t.any_nan;
  if (nan_expected) {
    return std::isnan(r) ? ElementJudgement{VerdictKind::pass, ""}
                         : ElementJudgement{VerdictKind::mismatch_special, "NaN expected"};
  }
  if (std::isnan(r)) return {VerdictKind::mismatch_special, "NaN where the fibre has a non-NaN extreme"};
  if (r != static_cast<T>(t.extreme)) return {VerdictKind::mismatch_value, "not the fibre's extreme"};
  if (r == 0) {
    // Under a zero tie either sign is a fibre element; the strict answer orders -0 < +0.
    const bool strict_negative = t.zero_tie ? !is_max : std::signbit(t.extreme);
    if (std::signbit(r) != strict_negative) {
      if (!t.zero_tie || strict_signed_zero) return {VerdictKind::mismatch_value, "signed-zero"};
      return {VerdictKind::note_signed_zero, "signed-zero"};
    }
  }
  return {VerdictKind::pass, ""};
}

template <class T>
ElementEvidence any_order_evidence(const Tensor& rounded, const ElementTruth* t, const Tensor& actual, std::int64_t i) {
  ElementEvidence e;
  e.flat_index = i;
  e.coords = coordinates(i, actual.shape());
  e.expected = describe_value(rounded, i);
  e.actual = describe_value(actual, i);
  if (t == nullptr) return e;  // min/max: the fibre's extreme is exact, no bound
  e.bound = t->bound;
  const double divisor = static_cast<double>(t->divisor);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", t->exact.approx() / divisor);
  e.exact = buf;
  const T r = actual.values<T>()[static_cast<std::size_t>(i)];
  if (std::isfinite(r) && t->value_class == ValueClass::finite) {
    const double diff = (Dyadic::of(r) * Dyadic(t->divisor, 0) - t->exact).abs().approx() / divisor;
    const T mag = std::fabs(rounded.values<T>()[static_cast<std::size_t>(i)]);
    const double ulp = static_cast<double>(mag == std::numeric_limits<T>::max()
                                               ? mag - std::nextafter(mag, T(0))
                                               : std::nextafter(mag, std::numeric_limits<T>::infinity()) - mag);
    e.ulps = diff / ulp;
    e.bound_multiples = t->bound > 0 ? diff / t->bound : std::numeric_limits<double>::infinity();
  }
  return e;
}

/// Judges every element with `judge(i, r)`, aggregating into one verdict (the worst element's).
template <class Judge>
Verdict aggregate(const Tensor& rounded, const std::vector<ElementTruth>* elements, const Tensor& actual, Judge&& judge) {
  Verdict v;
  v.kind = VerdictKind::pass;
  if (rounded.dtype() != actual.dtype() || rounded.shape() != actual.shape()) {
    v.kind = VerdictKind::mismatch_shape;
    v.detail = "expected " + std::string(dtype_name(rounded.dtype())) + " " + format_shape(rounded.shape()) +
               ", got " + std::string(dtype_name(actual.dtype())) + " " + format_shape(actual.shape());
    return v;
  }
  visit_dtype(actual.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const auto r = actual.values<T>();
      for (std::size_t i = 0; i < r.size(); ++i) {
        const ElementJudgement j = judge(i, r[i]);
        if (j.kind == VerdictKind::indeterminate) ++v.indeterminate;
        if (j.kind == VerdictKind::note_signed_zero) ++v.notes;
        if (is_failure(j.kind)) ++v.differing;
        if (severity(j.kind) > severity(v.kind)) {
          v.kind = j.kind;
          v.reason = j.reason;
          v.first = any_order_evidence<T>(rounded, elements ? &(*elements)[i] : nullptr, actual,
                                          static_cast<std::int64_t>(i));
        }
      }
    }
  });
  if (v.differing || v.indeterminate || v.notes) {
    v.detail = std::to_string(v.differing) + " failing, " + std::to_string(v.indeterminate) + " indeterminate, " +
               std::to_string(v.notes) + " noted of " + std::to_string(actual.size()) + " elements";
  }
  return v;
}

}  // namespace

Verdict judge_any_order(const reference::MultisetEinsum& truth, const Tensor& actual,
                        const AnyOrderJudgeOptions& options) {
  return aggregate(truth.rounded, &truth.elements, actual,
                   [&](std::size_t i, auto r) { return judge_element(truth.elements[i], r, options); });
}

Verdict judge_any_order(const reference::MultisetReduce& truth, const Tensor& actual, NanProfile profile,
                        bool strict_signed_zero) {
  if (truth.kind == Reduction::min || truth.kind == Reduction::max) {
    return aggregate(truth.rounded, nullptr, actual, [&](std::size_t i, auto r) {
      return judge_extreme(truth.extremes[i], r, truth.kind == Reduction::max, profile, strict_signed_zero);
    });
  }
  // Reductions never factor: one operand, so a sum of Infs of both signs is a certain NaN.
  const AnyOrderJudgeOptions options{false, strict_signed_zero};
  return aggregate(truth.rounded, &truth.elements, actual,
                   [&](std::size_t i, auto r) { return judge_element(truth.elements[i], r, options); });
}

}  // namespace einfuzz
