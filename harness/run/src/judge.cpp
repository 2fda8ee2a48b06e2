// The ordered and the any-order judges (ORACLE.md), element by element.
#include "einfuzz/harness/judge.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>

#include "einfuzz/core/case.hpp"
#include "einfuzz/core/coords.hpp"

namespace einfuzz {

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

namespace {

/// `mismatch(shape)` when `actual` has another dtype or shape than `expected`, else nullopt.
std::optional<Verdict> shape_mismatch(const Tensor& expected, const Tensor& actual) {
  if (expected.dtype() == actual.dtype() && expected.shape() == actual.shape()) return std::nullopt;
  return make_verdict(VerdictKind::mismatch_shape, "expected " + std::string(dtype_name(expected.dtype())) + " " +
                                                       format_shape(expected.shape()) + ", got " +
                                                       std::string(dtype_name(actual.dtype())) + " " +
                                                       format_shape(actual.shape()));
}

template <class T>
bool same_element(T a, T b, bool strict_nan) {
  if constexpr (is_float_type_v<T>) {
    if (!strict_nan && std::isnan(a) && std::isnan(b)) return true;
    return std::memcmp(&a, &b, sizeof(T)) == 0;
  } else {
    return a == b;
  }
}

}  // namespace

Verdict judge_ordered(const Tensor& expected, const Tensor& actual, const OrderedJudgeOptions& options) {
  if (auto shape = shape_mismatch(expected, actual)) return *shape;
  Verdict v;
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
        evidence.coords = unravel(flat, expected.shape());
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

namespace {

using reference::Dyadic;
using reference::ElementTruth;
using reference::ValueClass;

struct ElementJudgement {
  VerdictKind kind;
  const char* reason = "";  ///< a literal: no string built per judged element
  int error_bin = -1;  ///< the kErrorBins bin of |r - s| / B, when the element had a finite bound
};

/// floor(log2 |x|) for a nonzero x, exactly.
long floor_log2(const Dyadic& x) {
  return static_cast<long>(mpz_sizeinbase(x.mantissa().get_mpz_t(), 2)) - 1 + x.exponent();
}

/// Three-way comparison of |a|·2^shift with |b|, exactly. The shifted mantissa goes into a
/// thread-local scratch integer, so a judged element costs no allocation once it has grown.
int compare_shifted(const Dyadic& a, long shift, const Dyadic& b) {
  thread_local mpz_class scratch;
  const long ea = a.exponent() + shift;
  const long eb = b.exponent();
  if (ea >= eb) {
    mpz_mul_2exp(scratch.get_mpz_t(), a.mantissa().get_mpz_t(), static_cast<mp_bitcnt_t>(ea - eb));
    return mpz_cmpabs(scratch.get_mpz_t(), b.mantissa().get_mpz_t());
  }
  mpz_mul_2exp(scratch.get_mpz_t(), b.mantissa().get_mpz_t(), static_cast<mp_bitcnt_t>(eb - ea));
  return mpz_cmpabs(a.mantissa().get_mpz_t(), scratch.get_mpz_t());
}

/// The kErrorBins bin of q = d / bound (verdict.hpp), exactly: d and bound are |r − s| and B, both
/// scaled by mean's n. floor(log2) of both pins k = max{k : q <= 2^-k} to two neighbours, and one
/// exact comparison picks between them.
int error_bin(const Dyadic& d, const Dyadic& bound) {
  if (d.is_zero()) return 0;
  constexpr int over = static_cast<int>(kErrorBins) - 1;
  if (bound.is_zero() || compare(d, bound) > 0) return over;
  // q is in (2^(ld-lb-1), 2^(ld-lb+1)), so k is lb - ld or lb - ld - 1.
  const long k0 = floor_log2(bound) - floor_log2(d);
  const long k = compare_shifted(d, k0, bound) <= 0 ? k0 : k0 - 1;
  if (k >= 20) return 1;
  return over - 1 - static_cast<int>(k);
}

/// |r·divisor − exact|: the distance of a finite result from s(o), scaled by mean's n.
template <class T>
Dyadic distance(const ElementTruth& t, T r) {
  Dyadic scratch;
  return (Dyadic::of(r) * Dyadic(t.divisor, 0) - t.exact.as_dyadic(scratch)).abs();
}

/// error_bin(distance(t, r), t.scaled_bound) without GMP, for a fixed-width truth (few-term
/// elements: exact_fixed.hpp), or nullopt where the machine integers cannot decide it. The same
/// decisions as error_bin, step for step.
template <class T>
std::optional<int> fixed_error_bin(const ElementTruth& t, T r) {
  if (t.divisor != 1 || !t.exact.is_fixed() || !t.scaled_bound.is_fixed()) return std::nullopt;
  const std::optional<reference::FixedDyadic> d = reference::fixed_distance(t.exact, r);
  if (!d) return std::nullopt;
  if (d->is_zero()) return 0;
  constexpr int over = static_cast<int>(kErrorBins) - 1;
  if (t.scaled_bound.is_zero()) return over;
  const std::optional<bool> within = reference::fixed_at_most(*d, t.scaled_bound);
  if (!within) return std::nullopt;
  if (!*within) return over;
  const long k0 = reference::fixed_floor_log2(t.scaled_bound) - (d->top() - 1);
  const std::optional<bool> shifted = reference::fixed_at_most({d->m, d->e + k0}, t.scaled_bound);
  if (!shifted) return std::nullopt;
  const long k = *shifted ? k0 : k0 - 1;
  if (k >= 20) return 1;
  return over - 1 - static_cast<int>(k);
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
  if (t.value_class == ValueClass::nan) {
    // A 0·Inf term or both Inf signs (K >= 1): never finite on any path (§3). Per-term evaluation
    // gives NaN on every path whatever the certificates say; a factoring one may give ±Inf.
    if (o.factoring) {
      return std::isfinite(r) ? ElementJudgement{VerdictKind::mismatch_special, "finite result where NaN or Inf"}
                              : ElementJudgement{VerdictKind::indeterminate, "special-path-dependent"};
    }
    return std::isnan(r) ? ElementJudgement{VerdictKind::pass, ""}
                         : ElementJudgement{VerdictKind::mismatch_special, "NaN expected"};
  }
  if (t.value_class != ValueClass::finite) {
    // ±Inf: the Inf terms keep their sign on every path; a failed certificate can add NaN only.
    const T inf = t.value_class == ValueClass::pos_inf ? std::numeric_limits<T>::infinity()
                                                       : -std::numeric_limits<T>::infinity();
    if (r == inf) return {VerdictKind::pass, ""};
    if (t.certain()) return {VerdictKind::mismatch_special, inf > 0 ? "+Inf expected" : "-Inf expected"};
    if (std::isnan(r)) return {VerdictKind::indeterminate, "special-order-dependent"};
    return {VerdictKind::mismatch_special, inf > 0 ? "+Inf or NaN expected" : "-Inf or NaN expected"};
  }
  const bool no_overflow = t.no_overflow_for(o.factoring);
  if (!std::isfinite(r)) {
    // No Inf or NaN input reaches this element: only an overflow makes Inf or NaN on some path. A
    // sub-product that underflows is 0 or subnormal there, never Inf or NaN (ORACLE.md §3).
    if (!no_overflow) return {VerdictKind::indeterminate, "overflow-possible"};
    return {VerdictKind::mismatch_special, "non-finite result where the value is finite"};
  }
  // A product whose sub-products may underflow has no enclosure for its finite value (ORACLE.md §4).
  if (!t.no_inf_underflow) return {VerdictKind::indeterminate, "underflow-possible"};
  // A finite result saw no overflow, so the enclosure holds even when overflow was possible.
  // |r·d − exact| <= B·d, exactly (d: mean's n, else 1).
  int bin = -1;
  if (t.bounded) {
    const std::optional<int> fast = fixed_error_bin(t, r);
    Dyadic scratch;
    bin = fast ? *fast : error_bin(distance(t, r), t.scaled_bound.as_dyadic(scratch));
    if (bin == static_cast<int>(kErrorBins) - 1) return {VerdictKind::mismatch_value, "", bin};
  }
  if (!no_overflow) return {VerdictKind::indeterminate, "overflow-possible", bin};
  if (t.exact.is_zero() && r == 0) {
    ElementJudgement z = zero_sign();
    z.error_bin = bin;
    return z;
  }
  return {VerdictKind::pass, "", bin};
}

/// The results some valid evaluation can return for this element (ORACLE.md §2–§3), as the report
/// prints them.
std::string reachable_set(const ElementTruth& t, bool factoring) {
  if (t.terms == 0) return "{+0}";
  if (t.nan_input) return "{NaN}";
  switch (t.value_class) {
    case ValueClass::nan: return factoring ? "{NaN, +Inf, -Inf}" : "{NaN}";
    case ValueClass::pos_inf: return t.certain() ? "{+Inf}" : "{+Inf, NaN}";
    case ValueClass::neg_inf: return t.certain() ? "{-Inf}" : "{-Inf, NaN}";
    case ValueClass::finite: break;
  }
  const std::string finite = t.bounded && t.no_inf_underflow ? "finite within B" : "any finite";
  if (!t.no_overflow_for(factoring)) return "{" + finite + ", +Inf, -Inf, NaN}";
  return "{" + finite + "}";
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

/// x exactly as a GMP float, for the report's decimal digits and ratios.
mpf_class to_mpf(const Dyadic& x) {
  mpf_class f(0, static_cast<mp_bitcnt_t>(mpz_sizeinbase(x.mantissa().get_mpz_t(), 2)) + 128);
  mpf_set_z(f.get_mpf_t(), x.mantissa().get_mpz_t());
  const long e = x.exponent();
  if (e >= 0) {
    mpf_mul_2exp(f.get_mpf_t(), f.get_mpf_t(), static_cast<mp_bitcnt_t>(e));
  } else {
    mpf_div_2exp(f.get_mpf_t(), f.get_mpf_t(), static_cast<mp_bitcnt_t>(-e));
  }
  return f;
}

/// a / b as a double (reports only); +inf when b is 0 and a is not.
double ratio(const Dyadic& a, const Dyadic& b) {
  if (a.is_zero()) return 0;
  if (b.is_zero()) return std::numeric_limits<double>::infinity();
  mpf_class q = to_mpf(a);
  q /= to_mpf(b);
  return q.get_d();
}

}  // namespace

std::string dyadic_hex(const Dyadic& x) {
  if (x.is_zero()) return "0x0p+0";
  mpz_class m = ::abs(x.mantissa());
  const auto bits = static_cast<long>(mpz_sizeinbase(m.get_mpz_t(), 2));
  const long exponent = x.exponent() + bits - 1;  // x = ±1.f · 2^exponent
  const long fraction_bits = bits - 1;
  const long hex_digits = (fraction_bits + 3) / 4;
  mpz_mul_2exp(m.get_mpz_t(), m.get_mpz_t(), static_cast<mp_bitcnt_t>(4 * hex_digits - fraction_bits));
  std::string fraction = m.get_str(16).substr(1);  // after the leading "1": hex_digits digits
  while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
  return std::string(x.sign() < 0 ? "-" : "") + "0x1" + (fraction.empty() ? "" : "." + fraction) + "p" +
         (exponent >= 0 ? "+" : "") + std::to_string(exponent);
}

std::string exact_text(const Dyadic& x, std::int64_t divisor) {
  // The report's exact value: its first 256 hex digits (a product of a million f64 factors has
  // 13 million, printed whole on one line of every report), then how many it leaves out.
  constexpr std::size_t kShownDigits = 256;
  std::string out = dyadic_hex(x);
  if (const std::size_t dot = out.find('.'), p = out.rfind('p');
      dot != std::string::npos && p != std::string::npos && p - dot - 1 > kShownDigits) {
    out = out.substr(0, dot + 1 + kShownDigits) + "...(" + std::to_string(p - dot - 1 - kShownDigits) +
          " more hex digits)" + out.substr(p);
  }
  if (divisor != 1) out += " / " + std::to_string(divisor);
  mpf_class q = to_mpf(x);
  if (divisor != 1) q /= mpf_class(static_cast<double>(divisor), q.get_prec());
  char buf[96];
  gmp_snprintf(buf, sizeof buf, "%.20Fe", q.get_mpf_t());
  return out + " (" + buf + ")";
}

namespace {

template <class T>
ElementEvidence any_order_evidence(const Tensor& expected, const ElementTruth* t, const Tensor& actual, std::int64_t i,
                                   bool factoring, const std::string& expected_label) {
  ElementEvidence e;
  e.flat_index = i;
  e.coords = unravel(i, actual.shape());
  e.expected = describe_value(expected, i);
  e.expected_label = expected_label;
  e.actual = describe_value(actual, i);
  if (t == nullptr) return e;  // min/max: the fibre's extreme is exact, no bound
  e.reachable = reachable_set(*t, factoring);
  e.bound = t->bound;
  const bool special = t->terms != 0 && (t->nan_input || t->value_class != ValueClass::finite);
  if (special) {  // judged by its class (§3): no enclosure applies
    e.exact = t->nan_input || t->value_class == ValueClass::nan ? "NaN"
              : t->value_class == ValueClass::pos_inf          ? "+Inf"
                                                               : "-Inf";
    e.bound_text = "none (special class)";
  } else {
    e.exact = exact_text(t->exact, t->divisor);
    e.bound_text = t->bounded ? exact_text(t->scaled_bound, t->divisor) : "unbounded (N'·u >= 1)";
  }
  const T r = actual.values<T>()[static_cast<std::size_t>(i)];
  if (std::isfinite(r) && t->value_class == ValueClass::finite && !t->nan_input) {
    const Dyadic diff = distance(*t, r);  // |r − s|·divisor
    // ŝ* of a finite class can round to ±Inf (|s| near Ω): measure ulps at the largest finite then.
    const T rounded_mag = static_cast<T>(std::fabs(expected.values<T>()[static_cast<std::size_t>(i)]));
    const T mag = std::isfinite(rounded_mag) ? rounded_mag : std::numeric_limits<T>::max();
    const T ulp = mag == std::numeric_limits<T>::max() ? mag - next_toward(mag, T(0))
                                                       : next_toward(mag, std::numeric_limits<T>::infinity()) - mag;
    e.ulps = ratio(diff, Dyadic::of(ulp) * Dyadic(t->divisor, 0));
    e.bound_multiples = t->bounded ? ratio(diff, t->scaled_bound.dyadic()) : 0.0;
  }
  return e;
}

/// Judges every element with `judge(i, r)`, aggregating into one verdict (the worst element's).
/// `rounded` is what a correct backend is expected to return (for the report), `label` says what it is.
template <class Judge>
Verdict aggregate(const Tensor& rounded, const std::vector<ElementTruth>* elements, const Tensor& actual,
                  bool factoring, const std::string& label, Judge&& judge) {
  if (auto shape = shape_mismatch(rounded, actual)) return *shape;
  Verdict v;
  v.kind = VerdictKind::pass;
  visit_dtype(actual.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_type_v<T>) {
      const auto r = actual.values<T>();
      for (std::size_t i = 0; i < r.size(); ++i) {
        const ElementJudgement j = judge(i, r[i]);
        if (j.kind == VerdictKind::indeterminate) ++v.indeterminate;
        if (j.kind == VerdictKind::note_signed_zero) ++v.notes;
        if (is_failure(j.kind)) ++v.differing;
        if (j.error_bin >= 0) ++v.error_bins[static_cast<std::size_t>(j.error_bin)];
        if (verdict_severity(j.kind) > verdict_severity(v.kind)) {
          v.kind = j.kind;
          v.reason = j.reason;
          v.first = any_order_evidence<T>(rounded, elements ? &(*elements)[i] : nullptr, actual,
                                          static_cast<std::int64_t>(i), factoring, label);
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

/// What the any-order judge compared with, naming the precision profile when ORACLE §8's bound
/// applied (the dtype's default profile is §2's plain "multiset value").
std::string multiset_label(const std::optional<PrecisionProfile>& profile) {
  if (!profile) return "multiset value";
  std::string s = "multiset value; bound of ORACLE §8 for accumulate " + std::string(dtype_name(profile->accumulate));
  if (profile->round_inputs != InputRounding::none) {
    s += ", round_inputs " + std::string(input_rounding_name(profile->round_inputs));
  }
  return s;
}

}  // namespace

Verdict judge_any_order(const reference::MultisetEinsum& truth, const Tensor& actual,
                        const AnyOrderJudgeOptions& options) {
  return aggregate(truth.rounded, &truth.elements, actual, options.factoring, multiset_label(truth.profile),
                   [&](std::size_t i, auto r) { return judge_element(truth.elements[i], r, options); });
}

Verdict judge_any_order(const reference::MultisetReduce& truth, const Tensor& actual, NanProfile profile,
                        bool strict_signed_zero) {
  if (truth.kind == Reduction::min || truth.kind == Reduction::max) {
    // The report shows what this backend's profile requires (truth.rounded is the `propagate` one).
    Tensor required = truth.rounded;
    if (profile == NanProfile::ignore) {
      visit_dtype(required.dtype(), [&](auto tag) {
        using T = decltype(tag);
        if constexpr (is_float_type_v<T>) {
          auto values = required.values<T>();
          for (std::size_t i = 0; i < values.size(); ++i) {
            const reference::ExtremeTruth& x = truth.extremes[i];
            values[i] = x.all_nan ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(x.extreme);
          }
        }
      });
    }
    const std::string label = profile == NanProfile::ignore ? "required by the ignore NaN profile"
                                                            : "required by the propagate NaN profile";
    return aggregate(required, nullptr, actual, false, label, [&](std::size_t i, auto r) {
      return judge_extreme(truth.extremes[i], r, truth.kind == Reduction::max, profile, strict_signed_zero);
    });
  }
  // Reductions never factor: one operand, so a sum of Infs of both signs is a certain NaN.
  const AnyOrderJudgeOptions options{false, strict_signed_zero};
  return aggregate(truth.rounded, &truth.elements, actual, false, multiset_label(truth.profile),
                   [&](std::size_t i, auto r) { return judge_element(truth.elements[i], r, options); });
}

}  // namespace einfuzz
