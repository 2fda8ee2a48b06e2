// The multiset oracle for reductions (ORACLE.md §4): exact sums, means and products rounded once,
// their enclosures and certificates, and the admissible answers of min/max per NaN profile.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <utility>

#include "einfuzz/reference/multiset.hpp"
#include "einfuzz/core/harness_bug.hpp"
#include "einfuzz/reference/exact_fixed.hpp"
#include "element_truth.hpp"
#include "exact_bounds.hpp"
#include "exact_sum.hpp"
#include "materialise.hpp"

namespace einfuzz::reference {
namespace {

/// γ·x as an exact dyadic (γ a double upper bound, x exact): a zero x gives a zero bound, also
/// where γ is beyond a double (ORACLE §2: γ is finite, only its double is not). Sets `bounded`
/// false when γ is unbounded and x is not 0.
Dyadic times_gamma(double gamma, const Dyadic& x, bool& bounded) {
  bounded = !std::isinf(gamma) || x.is_zero();
  return std::isinf(gamma) || x.is_zero() ? Dyadic() : Dyadic::of(gamma) * x;
}

/// The report's double B = scaled / divisor, rounded up.
double bound_for_report(const ElementTruth& t) {
  if (!t.bounded) return std::numeric_limits<double>::infinity();
  return t.scaled_bound.round_quotient<double>(t.divisor, Rounding::up);
}

/// e + u_o·(|s| + e) + η_o with everything scaled by `scale` (mean's n), exactly (ORACLE §8's final
/// conversion to the output dtype); `reach` = |s| + e, scaled.
Dyadic with_conversion(const Dyadic& e, const Dyadic& reach, std::int64_t scale, const FormatConstants& out) {
  return e + Dyadic(reach.mantissa(), reach.exponent() - out.digits) +
         Dyadic(mpz_class(static_cast<long>(scale)), out.eta_exponent);
}

/// ORACLE §8's final-value certificate |s| + E < Ω_o, all scaled by `scale`.
bool below_output_omega(const Dyadic& reach, std::int64_t scale, const FormatConstants& out) {
  return compare(reach, Dyadic::of(out.omega) * Dyadic(mpz_class(static_cast<long>(scale)), 0)) < 0;
}

/// Σx and Σ|x| over the finite values of `fibre`, exactly; zero as Dyadic().
template <class T>
void exact_sums(std::span<const T> fibre, Dyadic& sum, Dyadic& abs_sum) {
  long lo = 0, hi = 0;
  bool any = false;
  for (const T x : fibre) {
    if (!std::isfinite(x) || x == 0) continue;
    const long e = detail::decompose(x).exponent;
    lo = any ? std::min(lo, e) : e;
    hi = any ? std::max(hi, e) : e;
    any = true;
  }
  if (!any) {
    sum = Dyadic();
    abs_sum = Dyadic();
    return;
  }
  // Reused by every fibre of the thread: their digits keep their capacity.
  thread_local detail::DigitAccumulator positive, negative;
  const long bits = hi - lo + 64;  // every mantissa is below 2^53
  positive.reset(lo, bits);
  negative.reset(lo, bits);
  for (const T x : fibre) {
    if (!std::isfinite(x) || x == 0) continue;
    const detail::Decomposed d = detail::decompose(x);
    (std::signbit(x) ? negative : positive).add(d.mantissa, d.exponent);
  }
  const Dyadic p = positive.value(), n = negative.value();
  sum = p - n;
  abs_sum = p + n;
}

/// sum and mean under a profile (ORACLE §8): the einsum rule with k = 1 (N = n − 1) in the
/// accumulator, E_a = ((1 + u_a)^(n−1) − 1)·S; then for a mean the quotient's roundings in the
/// accumulator, relative to what is divided (|σ| ≤ |s| + E_a): n itself, 1/n or the division, the
/// product, at most γ_3·(|s| + E_a)/n, and η_a for each of the two that can underflow; then the
/// final conversion. ORACLE §8 counts one accumulator rounding, u_a·(|s| + E_a)/n + η_a, which does
/// not cover multiply-by-reciprocal; this differs from it by 2u_a·(|s| + E_a)/n + η_a.
void profile_additive(ElementTruth& t, const Dyadic& abs_exact, std::int64_t n, bool mean, const detail::ProfileBound& p) {
  const std::int64_t N = std::max<std::int64_t>(n - 1, 0);
  const double g = detail::expm1_up(static_cast<double>(N) * p.acc.u);
  t.no_overflow = detail::OverflowCertificate(n, p.acc).below_omega(abs_exact);
  t.bounded = !std::isinf(g) || abs_exact.is_zero();  // γ·0 = 0 whatever γ's double (times_gamma)
  const std::int64_t scale = mean ? t.divisor : 1;
  if (t.bounded) {
    // Scaled by n for a mean: n·E_q = E_a + γ_3·(|s| + E_a) + 2n·η_a.
    Dyadic e = abs_exact.is_zero() ? Dyadic() : Dyadic::of(g) * abs_exact;
    if (mean) {
      e = e + Dyadic::of(gamma_up(3, p.acc.u)) * (t.exact.abs() + e) +
          Dyadic(mpz_class(static_cast<long>(2 * scale)), p.acc.eta_exponent);
    }
    const Dyadic reach = t.exact.abs() + e;
    t.scaled_bound = with_conversion(e, reach, scale, p.out);
    if (t.value_class == ValueClass::finite) t.no_overflow = t.no_overflow && below_output_omega(reach, scale, p.out);
  } else if (t.value_class == ValueClass::finite) {
    t.no_overflow = false;
  }
  t.no_overflow_nonfactoring = t.no_overflow;
}

/// The finite values' two signed sums in 192-bit integers (units of 2^lo), when their window with
/// its carries spans at most `limit` bits; false otherwise.
template <class T>
bool fixed_fibre_sum(std::span<const T> fibre, int limit, U192& pos, U192& neg, long& lo) {
  long hi = 0;
  std::uint64_t count = 0;
  lo = 0;
  for (T x : fibre) {
    if (!std::isfinite(x) || x == 0) continue;
    const detail::Decomposed d = detail::decompose(x);
    const long top = d.exponent + 64 - __builtin_clzll(d.mantissa);
    lo = count ? std::min(lo, d.exponent) : d.exponent;
    hi = count ? std::max(hi, top) : top;
    ++count;
  }
  pos = neg = U192{};
  if (count == 0) return true;
  if (hi - lo + (64 - __builtin_clzll(count)) > limit) return false;
  for (T x : fibre) {
    if (!std::isfinite(x) || x == 0) continue;
    const detail::Decomposed d = detail::decompose(x);
    U192& side = std::signbit(x) ? neg : pos;
    side = side + U192::of(d.mantissa).shifted_left(static_cast<int>(d.exponent - lo));
  }
  return true;
}

/// additive_truth's exact values, certificates and bound (§4, or §8's under `profile`, as
/// profile_additive computes it) in 192-bit integers: false, with nothing written, when the fibre's
/// window or the bound's parts do not fit. The same values as the Dyadic path; t.value_class is set.
template <class T>
bool fixed_additive(std::span<const T> fibre, bool mean, const FormatConstants& fc,
                    const std::optional<detail::ProfileBound>& profile, ElementTruth& t) {
  // A mean under a profile bounds its quotient's roundings by |s| + E_a (profile_additive): the
  // general path.
  if (mean && profile) return false;
  const auto n = static_cast<std::int64_t>(fibre.size());
  U192 pos, neg;
  long lo = 0;
  // γ's mantissa has at most 53 bits: γ·S must fit 192.
  if (!fixed_fibre_sum(fibre, 192 - 53, pos, neg, lo)) return false;
  const FormatConstants& acc = profile ? profile->acc : fc;  // where the partial sums are held
  const std::int64_t divisor = mean ? std::max<std::int64_t>(n, 1) : 1;
  const double gamma = profile ? detail::expm1_up(static_cast<double>(std::max<std::int64_t>(n - 1, 0)) * acc.u)
                               : mean ? gamma_up(n + 2, fc.u) : gamma_up(n >= 2 ? n : 0, fc.u);
  const U192 abs = pos + neg;
  const bool bounded = !std::isinf(gamma) || abs.is_zero();  // γ·0 = 0 whatever γ's double (times_gamma)
  const bool negative = compare(neg, pos) > 0;
  const FixedDyadic magnitude{negative ? neg - pos : pos - neg, lo};  // |s|
  // B·n = γ·S (+ n·η for a mean); under a profile E_a·n likewise, then the final conversion
  // E_a + u_o·(|s| + E_a) + η_o (all scaled by n), one part.
  FixedDyadic high, low;
  if (bounded && gamma != 0 && !abs.is_zero()) {
    const detail::Decomposed g = detail::decompose(gamma);
    high = {U192::product(g.mantissa, abs), g.exponent + lo};
  }
  if (mean && (bounded || !profile)) low = {U192::of(static_cast<u128>(divisor)), acc.eta_exponent};
  bool final_ok = true;  // §8's |s| + E_a < Ω_o (scaled)
  if (!profile) {
    if (!order_parts(high, low)) return false;
  } else if (bounded) {
    FixedDyadic e;
    if (!fixed_add(high, low, e) || !detail::fixed_conversion(e, magnitude, divisor, profile->out, high, final_ok)) {
      return false;
    }
    low = FixedDyadic{};
  } else {
    final_ok = false;
  }
  if (t.value_class != ValueClass::finite) final_ok = true;
  t.exact.set_fixed({magnitude}, negative);
  Exact s;
  s.set_fixed({FixedDyadic{abs, lo}}, false);
  t.abs_sum = s.round<double>(Rounding::up);
  t.magnitude = t.abs_sum;
  // Σ|x|·(1+u)^n < Ω (the accumulator's under a profile), as OverflowCertificate::below_omega
  // decides it.
  bool partial = true;
  if (!abs.is_zero()) {
    detail::OverflowCertificate certificate(n, acc);
    const double down = s.round<double>(Rounding::down);
    const std::optional<bool> quick = certificate.decide(t.abs_sum, down);
    partial = quick ? *quick : certificate.below_omega(s.dyadic(), t.abs_sum, down);
  }
  t.no_overflow = partial && final_ok;
  t.no_overflow_nonfactoring = t.no_overflow;
  t.divisor = divisor;
  t.bounded = bounded;
  if (!profile || bounded) t.scaled_bound.set_fixed({high, low}, false);
  return true;
}

/// sum and mean: the einsum rules with one factor per term (k = 1, K = n, so N' = n for n >= 2).
template <class T>
ElementTruth additive_truth(std::span<const T> fibre, bool mean, const FormatConstants& fc,
                            const std::optional<detail::ProfileBound>& profile, ExactPath path) {
  ElementTruth t;
  const auto n = static_cast<std::int64_t>(fibre.size());
  t.terms = n;
  t.factors = 1;
  // The special class from the non-finite values (§3 with k = 1).
  bool pos_inf = false, neg_inf = false;
  for (T x : fibre) {
    if (std::isnan(x)) {
      t.nan_input = true;
    } else if (std::isinf(x)) {
      (x < 0 ? neg_inf : pos_inf) = true;
    }
  }
  t.mixed_inf = pos_inf && neg_inf;
  t.value_class = (t.nan_input || t.mixed_inf) ? ValueClass::nan
                  : pos_inf                    ? ValueClass::pos_inf
                  : neg_inf                    ? ValueClass::neg_inf
                                               : ValueClass::finite;
  if (path == ExactPath::fixed && fixed_additive(fibre, mean, fc, profile, t)) {
    t.bound = bound_for_report(t);
    return t;
  }
  // The finite values' exact sums, one digit accumulator per sign over the window of their
  // exponents (exact_sum.hpp, as the einsum oracle's general path): Σx = P − N, Σ|x| = P + N.
  Dyadic exact, abs_exact;
  exact_sums(fibre, exact, abs_exact);
  t.exact = std::move(exact);
  t.abs_sum = abs_exact.round<double>(Rounding::up);
  t.magnitude = t.abs_sum;
  const std::int64_t rounds = n >= 2 ? n : 0;
  // Certificate Σ|x|·(1+u)^n < Ω (§4), over the finite values, decided exactly. One operand: no
  // backend can factor a reduction, so the non-factoring certificate is the same.
  if (mean) t.divisor = std::max<std::int64_t>(n, 1);
  if (profile) {
    profile_additive(t, abs_exact, n, mean, *profile);
    t.bound = bound_for_report(t);
    return t;
  }
  t.no_overflow = detail::OverflowCertificate(n, fc).below_omega(abs_exact);
  t.no_overflow_nonfactoring = t.no_overflow;
  if (mean) {
    t.divisor = std::max<std::int64_t>(n, 1);
    // B·n = γ_{n+2}·Σ|x| + n·η (sum-then-divide, reciprocal multiply, n itself rounded; η pays for
    // the division's underflow), exact: η = 2^(emin−p) even where it is not a double (f64).
    t.scaled_bound = times_gamma(gamma_up(n + 2, fc.u), abs_exact, t.bounded) +
                     Dyadic(mpz_class(static_cast<long>(t.divisor)), fc.eta_exponent);
  } else {
    t.scaled_bound = times_gamma(gamma_up(rounds, fc.u), abs_exact, t.bounded);
  }
  t.bound = bound_for_report(t);
  return t;
}

/// The exact product of `factors` (1 for none), multiplied as a balanced tree: every product is of
/// two halves of about equal length, so the work is that of a few multiplications of the result's
/// length per level. `factors` is consumed.
Dyadic product_of(std::vector<Dyadic>& factors) {
  if (factors.empty()) return Dyadic(1, 0);
  for (std::size_t width = factors.size(); width > 1;) {
    const std::size_t half = (width + 1) / 2;
    for (std::size_t i = 0; i + half < width; ++i) factors[i] = factors[i] * factors[i + half];
    width = half;
  }
  return factors.front();
}

/// prod: the exact product, γ_n·|Π| when every sub-product is certified (§4).
template <class T>
ElementTruth product_truth(std::span<const T> fibre, const FormatConstants& storage,
                           const std::optional<detail::ProfileBound>& profile) {
  // Under a profile (ORACLE §8) the sub-products live in the accumulator: its certificates.
  const FormatConstants& fc = profile ? profile->acc : storage;
  ElementTruth t;
  const auto n = static_cast<std::int64_t>(fibre.size());
  t.terms = std::max<std::int64_t>(n, 1);  // the empty product is the one term 1, never "empty"
  t.factors = static_cast<int>(std::min<std::int64_t>(n, std::numeric_limits<int>::max()));
  const Dyadic one(1, 0);
  bool has_zero = false, has_inf = false, negative = false;
  // The factors, then their products as balanced trees: one factor at a time made each step as long
  // as the product so far (quadratic: 40,000 f64 factors took 1.4 s, a million about 15 minutes).
  std::vector<Dyadic> factors, above, below;
  for (T x : fibre) {
    if (std::isnan(x)) { t.nan_input = true; continue; }
    negative ^= std::signbit(x);
    if (std::isinf(x)) { has_inf = true; continue; }
    if (x == 0) has_zero = true;
    const Dyadic d = Dyadic::of(x);
    const Dyadic a = d.abs();
    if (compare(a, one) > 0) above.push_back(a);
    if (compare(a, one) < 0) below.push_back(a);
    factors.push_back(d);
  }
  const Dyadic product = product_of(factors), grow = product_of(above), shrink = product_of(below);
  t.zero_times_inf = has_zero && has_inf;
  t.value_class = (t.nan_input || t.zero_times_inf) ? ValueClass::nan
                  : has_inf ? (negative ? ValueClass::neg_inf : ValueClass::pos_inf)
                            : ValueClass::finite;
  t.exact = product;
  t.zero_negative = negative;  // the sign of a zero product is the same on every association
  t.no_overflow = detail::OverflowCertificate(n, fc).below_omega(grow);  // Π max(1,|x|)·(1+u)^n < Ω
  t.no_overflow_nonfactoring = t.no_overflow;
  if (!has_zero) {
    // Π min(1,|x|) >= 2^emin·(1+u)^n, exactly: no sub-product can underflow. (1 + u)^n =
    // (2^d + 1)^n · 2^(−d·n), the power by squaring.
    mpz_class power;
    const mpz_class base = (mpz_class(1) << fc.digits) + 1;
    mpz_pow_ui(power.get_mpz_t(), base.get_mpz_t(), static_cast<unsigned long>(n));
    const Dyadic floor = Dyadic(1, fc.min_exponent) * Dyadic(power, -static_cast<long>(fc.digits) * static_cast<long>(n));
    t.no_inf_underflow = compare(shrink, floor) >= 0;  // for a finite class: no sub-product underflows
  }
  t.abs_sum = product.abs().round<double>(Rounding::up);
  t.magnitude = t.abs_sum;
  if (profile) {
    // One term of n factors (N = n − 1) in the accumulator, then the final conversion. §8's U_a,
    // (n − 1)·η_a·(1 + u_a)^N'·Π max(1,|x|) with N' = n, pays for a sub-product's underflow: no
    // underflow certificate (§4's, for the profile-free bound) is needed for a finite product.
    const double g = n >= 2 ? detail::expm1_up(static_cast<double>(n - 1) * fc.u) : 0.0;
    const double growth = n >= 2 ? one_plus_u_pow_up(n, fc.u) : 1.0;
    t.bounded = !std::isinf(g) && !std::isinf(growth);
    if (t.bounded) {
      Dyadic e = g == 0 ? Dyadic() : Dyadic::of(g) * product.abs();
      if (n >= 2) e = e + Dyadic(mpz_class(static_cast<long>(n - 1)), fc.eta_exponent) * Dyadic::of(growth) * grow;
      if (t.value_class == ValueClass::finite) t.no_inf_underflow = true;
      const Dyadic reach = product.abs() + e;
      t.scaled_bound = with_conversion(e, reach, 1, profile->out);
      if (t.value_class == ValueClass::finite) t.no_overflow = t.no_overflow && below_output_omega(reach, 1, profile->out);
    } else if (t.value_class == ValueClass::finite) {
      t.no_overflow = false;
    }
    t.no_overflow_nonfactoring = t.no_overflow;
  } else if (n >= 2) {
    // γ_n·|Π| (exact for n <= 1), with |Π| exact: a zero product has a zero bound.
    t.scaled_bound = times_gamma(gamma_up(n, fc.u), product.abs(), t.bounded);
  }
  t.bound = bound_for_report(t);
  return t;
}

template <class T>
ExtremeTruth extreme_truth(std::span<const T> fibre, bool is_max) {
  ExtremeTruth t;
  t.all_nan = true;
  bool first = true, neg_zero = false, pos_zero = false;
  T best{};
  for (T x : fibre) {
    if (std::isnan(x)) { t.any_nan = true; continue; }
    t.all_nan = false;
    if (x == 0) (std::signbit(x) ? neg_zero : pos_zero) = true;
    if (first || (is_max ? x > best : x < best)) best = x;
    first = false;
  }
  t.extreme = static_cast<double>(best);
  t.zero_tie = best == 0 && neg_zero && pos_zero;
  return t;
}

template <class T>
MultisetReduce multiset(const CheckedReduce& r, const Tensor& input, const std::optional<detail::ProfileBound>& profile,
                        ExactPath path) {
  const FormatConstants fc = format_constants<T>();
  const std::vector<T> rows = detail::fibre_rows<T>(r, input.values<T>());
  const auto n = static_cast<std::size_t>(r.fibre_size);
  MultisetReduce out;
  out.kind = r.kind;
  out.rounded = Tensor(dtype_of_v<T>, r.output_shape);
  auto rounded = out.rounded.values<T>();
  if (r.kind == Reduction::min || r.kind == Reduction::max) {
    out.extremes.reserve(rounded.size());
  } else {
    out.elements.reserve(rounded.size());
  }
  for (std::size_t o = 0; o < rounded.size(); ++o) {
    const std::span<const T> fibre = std::span<const T>(rows).subspan(n == 0 ? 0 : o * n, n);
    if (r.kind == Reduction::min || r.kind == Reduction::max) {
      const ExtremeTruth t = extreme_truth(fibre, r.kind == Reduction::max);
      rounded[o] = t.any_nan ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(t.extreme);
      out.extremes.push_back(t);
      continue;
    }
    ElementTruth t = r.kind == Reduction::prod ? product_truth(fibre, fc, profile)
                                               : additive_truth(fibre, r.kind == Reduction::mean, fc, profile, path);
    switch (t.value_class) {
      case ValueClass::nan: rounded[o] = std::numeric_limits<T>::quiet_NaN(); break;
      case ValueClass::pos_inf: rounded[o] = std::numeric_limits<T>::infinity(); break;
      case ValueClass::neg_inf: rounded[o] = -std::numeric_limits<T>::infinity(); break;
      case ValueClass::finite: {
        const T v = t.exact.round_quotient<T>(t.divisor, Rounding::nearest_even);
        rounded[o] = (v == 0 && t.zero_negative) ? -T(0) : v;
        break;
      }
    }
    out.elements.push_back(std::move(t));
  }
  return out;
}

/// multiset_reduce under `profile` along `path`.
MultisetReduce multiset_of(const CheckedReduce& reduce, const Tensor& input, const PrecisionProfile& profile, ExactPath path) {
  const bool supported = reduce.kind != Reduction::any && reduce.kind != Reduction::all && is_float(input.dtype());
  if (!supported) harness_bug("multiset_reduce called on an exact (integer/bool/any/all) reduce");
  // round_inputs is an einsum (matrix unit) matter, never a reduction's (ORACLE §8).
  const PrecisionProfile effective{profile.accumulate, InputRounding::none};
  const std::optional<detail::ProfileBound> bound = detail::profile_bound(input.dtype(), effective);
  MultisetReduce out = visit_dtype(input.dtype(), [&](auto tag) -> MultisetReduce {
    using T = decltype(tag);
    if constexpr (is_float_type_v<T>) {
      return multiset<T>(reduce, input, bound, path);
    } else {
      harness_bug("multiset_reduce called on a non-float reduce");
    }
  });
  if (bound) out.profile = effective;
  return out;
}

}  // namespace

MultisetReduce multiset_reduce(const CheckedReduce& reduce, const Tensor& input) {
  return multiset_reduce(reduce, input, storage_profile(input.dtype()));
}

MultisetReduce multiset_reduce(const CheckedReduce& reduce, const Tensor& input, ExactPath path) {
  return multiset_of(reduce, input, storage_profile(input.dtype()), path);
}

MultisetReduce multiset_reduce(const CheckedReduce& reduce, const Tensor& input, const PrecisionProfile& profile) {
  return multiset_of(reduce, input, profile, ExactPath::fixed);
}

MultisetReduce multiset_reduce(const CheckedReduce& reduce, const Tensor& input, const PrecisionProfile& profile,
                               ExactPath path) {
  return multiset_of(reduce, input, profile, path);
}

}  // namespace einfuzz::reference
