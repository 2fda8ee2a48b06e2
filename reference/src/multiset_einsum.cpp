// The multiset oracle for einsum: exact term sums, enclosures and special classes (ORACLE.md §1–§3).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "einfuzz/reference/multiset.hpp"
#include "einfuzz/core/harness_bug.hpp"
#include "einfuzz/core/rounding.hpp"
#include "element_truth.hpp"
#include "exact_bounds.hpp"
#include "exact_sum.hpp"
#include "materialise.hpp"

namespace einfuzz::reference {

FormatConstants format_constants(const FloatFormat& f) {
  // η = 2^-1075 for f64 is not a double (ldexp would round it to 0): round it up to 2^-1074.
  const double eta = std::max(std::ldexp(1.0, f.min_exponent - f.digits), std::numeric_limits<double>::denorm_min());
  // Ω = (2 − 2^(1−p)) · 2^emax, exact in a double for every format up to f64.
  const double omega = std::ldexp(2.0 - std::ldexp(1.0, 1 - f.digits), f.max_exponent);
  return {std::ldexp(1.0, -f.digits), eta, omega, f.digits, f.min_exponent, f.min_exponent - f.digits};
}

template <class T>
FormatConstants format_constants() {
  // The parameters come from the dtype table (core/dtype.hpp); everything else is derived.
  return format_constants(*dtype_info(dtype_of_v<T>).format);
}
template FormatConstants format_constants<float>();
template FormatConstants format_constants<double>();
template FormatConstants format_constants<Float16>();
template FormatConstants format_constants<BFloat16>();

namespace {

int bit_length(u128 m) {
  const auto hi = static_cast<std::uint64_t>(m >> 64);
  const auto lo = static_cast<std::uint64_t>(m);
  return hi ? 128 - __builtin_clzll(hi) : lo ? 64 - __builtin_clzll(lo) : 0;
}

/// a < b for exact terms with non-zero mantissas.
bool term_less(const detail::ExactTerm& a, const detail::ExactTerm& b) {
  const long ta = bit_length(a.m) + a.e, tb = bit_length(b.m) + b.e;
  if (ta != tb) return ta < tb;
  // Same top bit: shifting the one with the larger exponent down to the other's keeps its bit
  // length (<= 128), so the comparison is exact in u128.
  if (a.e >= b.e) return (a.m << (a.e - b.e)) < b.m;
  return a.m < (b.m << (b.e - a.e));
}

/// a + b with the representation Dyadic::operator+ gives (the smaller exponent), built in one
/// allocation: the bound's γ·S and its far smaller η term are ~1100 bits apart for f64.
Dyadic sum_of(const Dyadic& a, const Dyadic& b) {
  if (a.is_zero()) return b;
  if (b.is_zero()) return a;
  const Dyadic& low = a.exponent() <= b.exponent() ? a : b;
  const Dyadic& high = a.exponent() <= b.exponent() ? b : a;
  mpz_class m;
  mpz_mul_2exp(m.get_mpz_t(), high.mantissa().get_mpz_t(), static_cast<mp_bitcnt_t>(high.exponent() - low.exponent()));
  mpz_add(m.get_mpz_t(), m.get_mpz_t(), low.mantissa().get_mpz_t());
  return Dyadic(std::move(m), low.exponent());
}

/// pos − neg (or pos + neg) for two non-negative dyadics of one exponent (digit accumulators reset
/// over the same window), in one integer operation; zero as Dyadic() (exponent 0).
Dyadic signed_sum(const Dyadic& pos, const Dyadic& neg, bool subtract) {
  if (pos.exponent() != neg.exponent()) harness_bug("signed_sum: the two sums have different exponents");
  mpz_class m;
  if (subtract) {
    mpz_sub(m.get_mpz_t(), pos.mantissa().get_mpz_t(), neg.mantissa().get_mpz_t());
  } else {
    mpz_add(m.get_mpz_t(), pos.mantissa().get_mpz_t(), neg.mantissa().get_mpz_t());
  }
  if (m == 0) return Dyadic();
  return Dyadic(std::move(m), pos.exponent());
}

/// m·2^e truncated to U's precision, with what rounding in any direction needs.
template <class U>
struct Truncated {
  U down = 0;          ///< the value rounded toward zero (a normal U)
  bool half = false;   ///< the first dropped bit
  bool sticky = false; ///< any later dropped bit
  bool odd = false;    ///< the last kept bit
  bool inexact() const noexcept { return half || sticky; }
  /// The next U above `down` (+inf above the largest: the IEEE overflow of up and nearest).
  U successor() const noexcept {
    using Bits = std::conditional_t<sizeof(U) == 8, std::uint64_t, std::uint32_t>;
    return std::bit_cast<U>(static_cast<Bits>(std::bit_cast<Bits>(down) + 1));
  }
};

/// m·2^e (0 < m < 2^128) truncated to U when it lies in U's normal range (else false).
template <class U>
bool truncate_normal(u128 m, long e, Truncated<U>& out) {
  using L = std::numeric_limits<U>;
  constexpr int p = L::digits;
  const int bits = bit_length(m);
  const long top = bits - 1 + e;
  if (top < L::min_exponent - 1 || top > L::max_exponent - 1) return false;
  std::uint64_t q = static_cast<std::uint64_t>(m);
  out.half = out.sticky = false;
  if (bits > p) {
    const int drop = bits - p;
    q = static_cast<std::uint64_t>(m >> drop);
    out.half = ((m >> (drop - 1)) & 1) != 0;
    out.sticky = drop > 1 && (m & ((u128(1) << (drop - 1)) - 1)) != 0;
    e += drop;
  }
  out.odd = (q & 1) != 0;
  out.down = static_cast<U>(q) * exact_pow2<U>(static_cast<int>(e));  // q < 2^p, normal: exact
  return true;
}

/// m·2^e (m >= 0) rounded down and up to doubles, with one rounding: up is down when that is
/// exact, else its successor (+inf past the largest double, the smallest subnormal above 0).
void round_down_up(u128 m, long e, double& down, double& up) {
  down = round_binary<double>(m, e, false, Rounding::down);
  if (m == 0) {
    up = 0;
    return;
  }
  const int zeros = m & 1 ? 0 : static_cast<std::uint64_t>(m) ? __builtin_ctzll(static_cast<std::uint64_t>(m))
                                                              : 64 + __builtin_ctzll(static_cast<std::uint64_t>(m >> 64));
  bool exact = false;
  if (down != 0 && std::isfinite(down) && bit_length(m) - zeros <= 53) {
    const detail::Decomposed d = detail::decompose(down);
    exact = d.mantissa == static_cast<std::uint64_t>(m >> zeros) && d.exponent == e + zeros;
  }
  up = exact ? down : std::bit_cast<double>(std::bit_cast<std::uint64_t>(down) + 1);
}

}  // namespace

double gamma_up(std::int64_t n, double u) {
  if (n <= 0) return 0;
  const double nu = static_cast<double>(n) * u;  // exact: n < 2^53 and u a power of two
  if (nu >= 1) return one_plus_u_pow_minus_one_up(n, u);
  return next_up(nu / next_down(1 - nu));
}

double one_plus_u_pow_minus_one_up(std::int64_t n, double u) {
  if (n <= 0) return 0;
  // Square and multiply on dyadics m·2^e whose mantissas are cut to 128 bits rounding up after each
  // product: every partial power bounds the exact one from above, within a relative 2^-120 or so.
  const auto cut_up = [](mpz_class& m, long& e) {
    const auto bits = static_cast<long>(mpz_sizeinbase(m.get_mpz_t(), 2));
    if (bits <= 128) return;
    mpz_cdiv_q_2exp(m.get_mpz_t(), m.get_mpz_t(), static_cast<mp_bitcnt_t>(bits - 128));
    e += bits - 128;
  };
  const int digits = -std::ilogb(u);  // u = 2^-digits
  mpz_class base = (mpz_class(1) << digits) + 1, power = 1;
  long base_e = -digits, power_e = 0;
  for (auto bits = static_cast<std::uint64_t>(n); bits != 0; bits >>= 1) {
    if (bits & 1) {
      power *= base;
      power_e += base_e;
      cut_up(power, power_e);
    }
    if (bits > 1) {
      base *= base;
      base_e *= 2;
      cut_up(base, base_e);
    }
  }
  return (Dyadic(std::move(power), power_e) - Dyadic::of(1.0)).round<double>(Rounding::up);
}

double one_plus_u_pow_up(std::int64_t n, double u) {
  // (1 + u)^n <= exp(n·u); glibc's exp is within one ulp, two steps up make it an upper bound.
  return next_up(next_up(std::exp(static_cast<double>(n) * u)));
}

namespace detail {

std::optional<ProfileBound> profile_bound(DType dtype, const PrecisionProfile& profile) {
  if (!is_valid_profile(dtype, profile)) {
    harness_bug("the multiset oracle was asked for a profile that is not valid for " + std::string(dtype_name(dtype)));
  }
  if (is_storage_profile(dtype, profile)) return std::nullopt;
  ProfileBound b;
  b.acc = format_constants(*dtype_info(profile.accumulate).format);
  b.out = format_constants(*dtype_info(dtype).format);
  if (const auto in = input_rounding_format(profile.round_inputs)) {
    b.rounds_inputs = true;
    b.in = format_constants(*in);
  }
  return b;
}

bool fixed_conversion(const FixedDyadic& e, const FixedDyadic& magnitude, std::int64_t scale,
                      const FormatConstants& out, FixedDyadic& scaled, bool& below_omega) {
  FixedDyadic reach, sum;
  if (!fixed_add(magnitude, e, reach) || !fixed_add(e, FixedDyadic{reach.m, reach.e - out.digits}, sum) ||
      !fixed_add(sum, FixedDyadic{U192::of(static_cast<u128>(scale)), out.eta_exponent}, sum)) {
    return false;
  }
  const Decomposed omega = decompose(out.omega);
  below_omega = compare(reach, FixedDyadic{U192::product(omega.mantissa, static_cast<u128>(scale)), omega.exponent}) < 0;
  scaled = sum;
  return true;
}

double expm1_up(double x) {
  if (x <= 0) return 0;
  // glibc's expm1 is within one ulp; two steps up make it an upper bound.
  return next_up(next_up(std::expm1(x)));
}

template <class T>
TermTruth<T>::TermTruth(const FormatConstants& fc, int k, ExactPath path) : TermTruth(fc, k, path, std::nullopt) {}

template <class T>
TermTruth<T>::TermTruth(const FormatConstants& fc, int k, ExactPath path, const std::optional<ProfileBound>& profile)
    : fc_(fc),
      k_(k),
      path_(path),
      profile_(profile),
      underflow_floor_(1, profile ? std::max(profile->acc.min_exponent, profile->rounds_inputs ? profile->in.min_exponent
                                                                                                : profile->acc.min_exponent)
                                  : fc.min_exponent),
      product_certificate_(std::max(k - 1, 0), profile ? profile->acc : fc,
                           profile && profile->rounds_inputs ? profile->in.digits - 1 : 0, input_roundings()) {
  // The smallest a product of k finite factors of an Inf term may be: 2^emin · (1+u)^k, exactly
  // (under a profile: the accumulator's emin and u, times the input rounding's (1+2u_i)^k, so that
  // no rounded factor of it underflows either).
  const int digits = profile ? profile->acc.digits : fc.digits;
  const Dyadic one_plus_u(mpz_class(1) + (mpz_class(1) << digits), -digits);
  for (int i = 0; i < k; ++i) underflow_floor_ = underflow_floor_ * one_plus_u;
  if (profile && profile->rounds_inputs) {
    const int d = profile->in.digits - 1;
    const Dyadic one_plus_2u(mpz_class(1) + (mpz_class(1) << d), -d);
    for (int i = 0; i < k; ++i) underflow_floor_ = underflow_floor_ * one_plus_2u;
  }
}

template <class T>
std::int64_t TermTruth<T>::input_roundings() const {
  if (!profile_ || !profile_->rounds_inputs) return 0;
  return k_ <= 2 ? k_ : 2 * static_cast<std::int64_t>(k_) - 2;
}

template <class T>
typename TermTruth<T>::KConstants& TermTruth<T>::constants(std::int64_t K) {
  if (K == last_k_) return *last_;
  auto it = by_k_.find(K);
  if (it == by_k_.end() && profile_) {
    // ORACLE §8: E = ((1+u_i)^ni·(1+u_a)^N − 1)·S + [(k−1)·η_a + ni·η_i]·(1+2u_i)^ni·(1+u_a)^N'·M,
    // the bracket's growth bounding every rounded factor's max(1,|x̃|) and partial result.
    const ProfileBound& p = *profile_;
    const std::int64_t N = std::max<std::int64_t>(K + k_ - 2, 0);
    const std::int64_t N1 = N >= 1 ? N + 1 : 0;
    const std::int64_t ni = input_roundings();
    const double ui = p.rounds_inputs ? p.in.u : 0.0;
    // n·u is exact (n < 2^53, u a power of two); the sum rounded up.
    const double gamma = expm1_up(next_up(static_cast<double>(ni) * ui + static_cast<double>(N) * p.acc.u));
    const double growth = next_up(next_up(std::exp(next_up(static_cast<double>(ni) * 2 * ui + static_cast<double>(N1) * p.acc.u))));
    Dyadic underflow_scale;
    if (k_ >= 2) underflow_scale = Dyadic::of(mul_up(static_cast<double>(k_ - 1), growth)) * Dyadic(1, p.acc.eta_exponent);
    if (ni > 0) {
      underflow_scale = underflow_scale + Dyadic::of(mul_up(static_cast<double>(ni), growth)) * Dyadic(1, p.in.eta_exponent);
    }
    // A pairwise path rounds its intermediates (partial results) to the input format as well: with
    // TF32 they must stay below TF32's Ω, not only the accumulator's.
    FormatConstants partial = p.acc;
    if (p.rounds_inputs) partial.omega = std::min(partial.omega, p.in.omega);
    KConstants kc{gamma, std::isinf(gamma) ? Dyadic() : Dyadic::of(gamma), std::move(underflow_scale),
                  OverflowCertificate(N1, partial, p.rounds_inputs ? p.in.digits - 1 : 0, ni)};
    // The few-term fixed path's parts: γ, (k−1)·growth·η_a and ni·growth·η_i as (odd mantissa,
    // exponent).
    if (std::isfinite(gamma) && gamma > 0) kc.gamma_parts = decompose(gamma);
    const double scale = mul_up(static_cast<double>(k_ - 1), growth);
    if (k_ >= 2 && std::isfinite(scale)) {
      kc.underflow_parts = decompose(scale);
      kc.underflow_parts.exponent += p.acc.eta_exponent;
    }
    const double input_scale = mul_up(static_cast<double>(ni), growth);
    if (ni > 0 && std::isfinite(input_scale)) {
      kc.input_underflow_parts = decompose(input_scale);
      kc.input_underflow_parts.exponent += p.in.eta_exponent;
    }
    it = by_k_.emplace(K, std::move(kc)).first;
  }
  if (it == by_k_.end()) {
    const std::int64_t N = K + k_ - 2;
    const std::int64_t N1 = N >= 1 ? N + 1 : 0;
    const double growth = one_plus_u_pow_up(N1, fc_.u);
    // U's constant factor (k−1)·(1+u)^N' (bounded above) times η = 2^(emin−p), exactly.
    Dyadic underflow_scale = k_ >= 2 ? Dyadic::of(mul_up(static_cast<double>(k_ - 1), growth)) * Dyadic(1, fc_.eta_exponent)
                                     : Dyadic();
    const double gamma = gamma_up(N1, fc_.u);
    KConstants kc{gamma, std::isinf(gamma) ? Dyadic() : Dyadic::of(gamma), std::move(underflow_scale),
                  OverflowCertificate(N1, fc_)};
    // The same two constants as (odd mantissa, exponent) for the fixed-width path.
    if (std::isfinite(gamma) && gamma > 0) kc.gamma_parts = decompose(gamma);
    const double scale = mul_up(static_cast<double>(k_ - 1), growth);
    if (k_ >= 2 && std::isfinite(scale)) {
      kc.underflow_parts = decompose(scale);
      kc.underflow_parts.exponent += fc_.eta_exponent;
    }
    it = by_k_.emplace(K, std::move(kc)).first;
  }
  last_k_ = K;
  last_ = &it->second;
  return *last_;
}

template <class T>
template <class MaxP>
void TermTruth<T>::profile_element(KConstants& c, const Dyadic& abs_exact, const Dyadic& magnitude_exact,
                                   double magnitude_down, MaxP&& max_p, bool input_overflow, ElementTruth& t) {
  const ProfileBound& p = *profile_;
  // Partial results against Ω_a (§8): M with the accumulator's and the input rounding's growth.
  const bool partial = !input_overflow && (magnitude_exact.is_zero() ||
                                           c.sum_certificate.below_omega(magnitude_exact, t.magnitude, magnitude_down));
  bool partial_nonfactoring = partial;
  if (!partial && !input_overflow) {
    partial_nonfactoring = product_certificate_.below_omega(max_p()) && c.sum_certificate.below_omega(abs_exact);
  }
  // γ·0 = 0 whatever γ's double: one factor per term (no U) and S = 0 is bounded (ORACLE §2's γ is
  // finite; only its double is not).
  t.bounded = !std::isinf(c.gamma) || (abs_exact.is_zero() && c.underflow_scale.is_zero());
  // The final conversion (§8): |s| + E_a < Ω_o, for a finite class only (an infinite or NaN
  // partial result stays one through the conversion).
  bool final_ok = true;
  if (t.bounded) {
    Dyadic e = c.gamma_exact * abs_exact;
    if (!c.underflow_scale.is_zero()) e = sum_of(e, c.underflow_scale * magnitude_exact);
    const Dyadic reach = sum_of(t.exact.abs(), e);  // |s| + E_a
    // E_a + u_o·(|s| + E_a) + η_o, exactly: u_o and η_o are powers of two.
    t.scaled_bound = sum_of(sum_of(e, Dyadic(reach.mantissa(), reach.exponent() - p.out.digits)),
                            Dyadic(1, p.out.eta_exponent));
    t.bound = t.scaled_bound.round<double>(Rounding::up);
    final_ok = compare(reach, Dyadic::of(p.out.omega)) < 0;
  } else {
    t.bound = std::numeric_limits<double>::infinity();
    final_ok = false;
  }
  if (t.value_class != ValueClass::finite) final_ok = true;
  t.no_overflow = partial && final_ok;
  t.no_overflow_nonfactoring = partial_nonfactoring && final_ok;
}

template <class T>
void TermTruth<T>::compute(std::span<const std::int64_t> terms, std::span<const T* const> factors, ElementTruth& t,
                           T& r) {
  collect(terms, factors);
  finish(finite_terms_, grow_terms_, collected_, t, r);
}

template <class T>
void TermTruth<T>::compute_again(const TermTruth& first, ElementTruth& t, T& r) {
  finish(first.finite_terms_, first.grow_terms_, first.collected_, t, r);
}

template <class T>
void TermTruth<T>::collect(std::span<const std::int64_t> terms, std::span<const T* const> factors) {
  const int k = k_;
  // Every finite term as an exact (m, e) pair when its product fits 127 bits (the common case),
  // else as a Dyadic; finish sums them, one exact sum per sign in a digit accumulator.
  finite_terms_.clear();
  grow_terms_.clear();
  Collected& found = collected_;
  found.terms = static_cast<std::int64_t>(terms.size());
  found.wide.reset();
  found.max_grow = ExactTerm{0, 0};
  found.any_wide = found.pos_inf = found.neg_inf = found.nan_term = false;
  found.nan_input = found.zero_times_inf = found.inf_term = false;
  found.max_input = 0;
  for (const std::int64_t g : terms) {
    const auto at = [&](int m) { return factors[static_cast<std::size_t>(m)][g]; };
    bool has_nan = false, has_inf = false, has_zero = false, negative = false;
    ExactTerm product, grow;
    for (int m = 0; m < k; ++m) {
      const T x = at(m);
      if (std::isnan(x)) { has_nan = true; continue; }
      negative ^= std::signbit(x);
      if (std::isinf(x)) { has_inf = true; continue; }
      if (x == 0) { has_zero = true; continue; }
      // §8: a finite input above the input rounding's Ω could round to ±Inf there (finish
      // compares the largest with the profile's Ω).
      found.max_input = std::max(found.max_input, std::fabs(static_cast<double>(x)));
      const Decomposed d = decompose(x);
      product.multiply(d);
      if (std::fabs(x) > T(1)) grow.multiply(d);
    }
    // Every term contributes Π max(1,|x|) over its finite factors to M (§3), zero or not.
    if (grow.wide) {
      found.any_wide = true;
      if (!found.wide) found.wide = std::make_unique<Wide>();
      Dyadic exact_grow(1, 0);
      for (int m = 0; m < k; ++m) {
        const T x = at(m);
        if (std::isfinite(x) && std::fabs(x) > T(1)) exact_grow = exact_grow * Dyadic::of(std::fabs(x));
      }
      found.wide->magnitude.add(exact_grow);
      if (compare(exact_grow, found.wide->max_grow) > 0) found.wide->max_grow = exact_grow;
    } else {
      grow_terms_.push_back(grow);
      if (found.max_grow.m == 0 || term_less(found.max_grow, grow)) found.max_grow = grow;
    }
    if (has_nan) {
      found.nan_input = true;
      found.nan_term = true;
    } else if (has_inf && has_zero) {
      found.zero_times_inf = true;
      found.nan_term = true;
    } else if (has_inf) {
      (negative ? found.neg_inf : found.pos_inf) = true;
      Dyadic shrink(1, 0);
      for (int m = 0; m < k; ++m) {
        const T x = at(m);
        if (std::isfinite(x) && std::fabs(x) < T(1)) shrink = shrink * Dyadic::of(std::fabs(x));
      }
      if (!found.inf_term || compare(shrink, found.min_shrink) < 0) found.min_shrink = std::move(shrink);
      found.inf_term = true;
    } else if (!has_zero) {
      if (product.wide) {
        found.any_wide = true;
        if (!found.wide) found.wide = std::make_unique<Wide>();
        Dyadic exact_product(1, 0);  // Dyadic::of keeps each factor's sign
        for (int m = 0; m < k; ++m) exact_product = exact_product * Dyadic::of(at(m));
        found.wide->sum.add(exact_product);
        found.wide->abs_sum.add(exact_product.abs());
      } else {
        product.negative = negative;
        finite_terms_.push_back(product);
      }
    }
  }
}

template <class T>
void TermTruth<T>::finish(const std::vector<ExactTerm>& finite_terms, const std::vector<ExactTerm>& grow_terms,
                          const Collected& found, ElementTruth& t, T& r) {
  const int k = k_;
  const std::int64_t K = found.terms;
  KConstants& c = constants(K);
  const double gamma = c.gamma;
  t.terms = K;
  t.factors = k;
  if (found.nan_input) t.nan_input = true;
  if (found.zero_times_inf) t.zero_times_inf = true;
  // §3: the finite factors of an Inf term must not underflow to 0 on any path.
  if (found.inf_term && compare(found.min_shrink, underflow_floor_) < 0) t.no_inf_underflow = false;
  const Wide* wide = found.wide.get();
  const ExactTerm& max_grow = found.max_grow;
  const bool any_wide = found.any_wide;
  const bool pos_inf = found.pos_inf, neg_inf = found.neg_inf, nan_term = found.nan_term;
  // §8: a finite input above the input rounding's Ω could round to ±Inf there.
  const double input_omega = profile_ && profile_->rounds_inputs ? profile_->in.omega : 0.0;
  const bool input_overflow = input_omega != 0 && found.max_input > input_omega;
  // Exact sums over a window that covers every term (plus carry headroom inside the accumulator).
  const auto window = [](const std::vector<ExactTerm>& list, long& base, long& bits) {
    long lo = 0, hi = 0;
    for (std::size_t i = 0; i < list.size(); ++i) {
      lo = i ? std::min(lo, list[i].e) : list[i].e;
      hi = i ? std::max(hi, list[i].e) : list[i].e;
    }
    base = lo;
    bits = hi - lo + 128;
  };
  t.mixed_inf = pos_inf && neg_inf;
  t.value_class = (nan_term || t.mixed_inf) ? ValueClass::nan
                  : pos_inf                 ? ValueClass::pos_inf
                  : neg_inf                 ? ValueClass::neg_inf
                                            : ValueClass::finite;
  bool single = false;  // ŝ* already rounded
  // The fixed-width paths: the one-term one computes §2's bound for f32/f64, the few-term one §2's
  // or §8's (the general path is exact for every format and profile).
  const bool fixed = path_ == ExactPath::fixed && !any_wide;
  if (fixed && !profile_ && !is_half_type_v<T> && finite_terms.size() <= 1 && grow_terms.size() <= 1) {
    // One term at most (passthrough, diagonals, outer products, most VJP elements) in f32/f64.
    const ExactTerm none{0, 0};
    compute_single(finite_terms.empty() ? none : finite_terms.front(), grow_terms.empty() ? none : grow_terms.front(),
                   c, t, r);
    single = true;
  } else if (fixed && compute_fixed(finite_terms, grow_terms, max_grow, input_overflow, c, t)) {
    // A few terms (contractions, the 16-bit formats, profiles) in 192-bit integers: no GMP.
  } else {
    long base = 0, bits = 0;
    window(finite_terms, base, bits);
    positive_.reset(base, bits);
    negative_part_.reset(base, bits);
    for (const auto& term : finite_terms) (term.negative ? negative_part_ : positive_).add(term.m, term.e);
    const Dyadic pos = positive_.value();
    const Dyadic neg = negative_part_.value();
    window(grow_terms, base, bits);
    grow_sum_.reset(base, bits);
    for (const auto& term : grow_terms) grow_sum_.add(term.m, term.e);
    Dyadic abs_exact;        // S(o), exact
    Dyadic magnitude_exact;  // M(o), exact
    if (wide) {
      ExactAccumulator sum, abs_sum, magnitude;
      sum.add(pos);
      sum.add(-neg);
      sum.add(wide->sum.value());
      abs_sum.add(pos);
      abs_sum.add(neg);
      abs_sum.add(wide->abs_sum.value());
      magnitude.add(grow_sum_.value());
      magnitude.add(wide->magnitude.value());
      t.exact = sum.value();
      abs_exact = abs_sum.value();
      magnitude_exact = magnitude.value();
    } else {
      // Both signs were summed over the same window (one exponent): s = pos − neg and S = pos + neg
      // are one integer operation each, the same values (and, zero aside, the same representation)
      // as the accumulators above give.
      t.exact = signed_sum(pos, neg, true);
      abs_exact = signed_sum(pos, neg, false);
      Dyadic grow = grow_sum_.value();
      if (!grow.is_zero()) magnitude_exact = std::move(grow);
    }
    t.abs_sum = abs_exact.round<double>(Rounding::up);
    t.magnitude = magnitude_exact.round<double>(Rounding::up);
    const double magnitude_down = magnitude_exact.round<double>(Rounding::down);
    const auto max_p = [&] {
      const Dyadic wide_max_grow = wide ? wide->max_grow : Dyadic();
      return max_grow.m == 0 ? wide_max_grow
                             : std::max(Dyadic::of_u128(max_grow.m, max_grow.e, false), wide_max_grow,
                                        [](const Dyadic& a, const Dyadic& b) { return compare(a, b) < 0; });
    };
    if (profile_) {
      profile_element(c, abs_exact, magnitude_exact, magnitude_down, max_p, input_overflow, t);
    } else {
      // §2/§3: M·(1+u)^N' < Ω certifies every path; the sharper pair certifies non-factoring paths
      // (every term the product of its own factors, then summed) even when M >= Ω.
      t.no_overflow =
          magnitude_exact.is_zero() || c.sum_certificate.below_omega(magnitude_exact, t.magnitude, magnitude_down);
      if (t.no_overflow) {
        t.no_overflow_nonfactoring = true;
      } else {
        t.no_overflow_nonfactoring = product_certificate_.below_omega(max_p()) && c.sum_certificate.below_omega(abs_exact);
      }
      // B = γ_N'·S + (k−1)·η·(1+u)^N'·M with S, M and η exact (never rounded to 0, a subnormal or
      // Inf): γ_N' and (1+u)^N' are the only upper-bounded factors.
      // γ·0 = 0 whatever γ's double: one factor per term (no U) and S = 0 is bounded.
      t.bounded = !std::isinf(gamma) || (k == 1 && abs_exact.is_zero());
      if (t.bounded && gamma == 0) {  // the passthrough: exact
        t.bound = 0;
      } else if (t.bounded) {
        Dyadic bound = c.gamma_exact * abs_exact;
        if (k >= 2) bound = sum_of(bound, c.underflow_scale * magnitude_exact);
        t.scaled_bound = std::move(bound);
        t.bound = t.scaled_bound.round<double>(Rounding::up);
      } else {
        t.bound = std::numeric_limits<double>::infinity();
      }
    }
  }

  switch (t.value_class) {
    case ValueClass::nan: r = std::numeric_limits<T>::quiet_NaN(); break;
    case ValueClass::pos_inf: r = std::numeric_limits<T>::infinity(); break;
    case ValueClass::neg_inf: r = -std::numeric_limits<T>::infinity(); break;
    case ValueClass::finite:
      if (!single) r = t.exact.round<T>(Rounding::nearest_even);
      break;
  }
}

template <class T>
void TermTruth<T>::compute_single(const ExactTerm& term, const ExactTerm& grow, KConstants& c, ElementTruth& t,
                                  T& rounded) {
  // Only f32/f64 take the fixed-width path (compute never calls it for the 16-bit formats).
  if constexpr (is_half_type_v<T>) {
    harness_bug("compute_single on a 16-bit format");
  } else {
    // The general path's values from the same formulas, with S = |term| and M = grow exact in
    // (at most) 127 bits and the bound's two products in 192 (exact_fixed.hpp).
    t.exact.set_fixed({FixedDyadic{U192::of(term.m), term.e}}, term.negative);
    // S rounded up and ŝ* (the same term rounded to nearest) from one truncation each where the
    // values are normal; round_binary elsewhere. Correct rounding is unique: the same results.
    Truncated<double> s;
    if (term.m != 0 && truncate_normal(term.m, term.e, s)) {
      t.abs_sum = s.inexact() ? s.successor() : s.down;
    } else {
      t.abs_sum = round_binary<double>(term.m, term.e, false, Rounding::up);
    }
    Truncated<T> v;
    if (term.m != 0 && truncate_normal(term.m, term.e, v)) {
      const T magnitude = v.half && (v.sticky || v.odd) ? v.successor() : v.down;
      rounded = term.negative ? -magnitude : magnitude;
    } else {
      rounded = round_binary<T>(term.m, term.e, term.negative, Rounding::nearest_even);
    }
    double magnitude_down = 0;
    Truncated<double> g;
    if (grow.m != 0 && truncate_normal(grow.m, grow.e, g)) {
      magnitude_down = g.down;
      t.magnitude = g.inexact() ? g.successor() : g.down;
    } else {
      round_down_up(grow.m, grow.e, magnitude_down, t.magnitude);
    }
    if (grow.m == 0) {
      t.no_overflow = true;
    } else if (const std::optional<bool> quick = c.sum_certificate.decide(t.magnitude, magnitude_down)) {
      t.no_overflow = *quick;
    } else {
      t.no_overflow = c.sum_certificate.below_omega(Dyadic::of_u128(grow.m, grow.e, false), t.magnitude, magnitude_down);
    }
    // One term: max_j P_j is its grow, S its magnitude.
    t.no_overflow_nonfactoring = t.no_overflow || (product_certificate_.below_omega(Dyadic::of_u128(grow.m, grow.e, false)) &&
                                                   c.sum_certificate.below_omega(Dyadic::of_u128(term.m, term.e, false)));
    t.bounded = !std::isinf(c.gamma);
    if (t.bounded && c.gamma == 0) {  // the passthrough: exact
      t.bound = 0;
    } else if (t.bounded) {
      const FixedDyadic high{U192::product(c.gamma_parts.mantissa, term.m), c.gamma_parts.exponent + term.e};
      FixedDyadic low;
      if (k_ >= 2) low = {U192::product(c.underflow_parts.mantissa, grow.m), c.underflow_parts.exponent + grow.e};
      t.scaled_bound.set_fixed({high, low}, false);
      t.bound = t.scaled_bound.round<double>(Rounding::up);
    } else {
      t.bound = std::numeric_limits<double>::infinity();
    }
  }
}

namespace {

/// The exact sum of non-negative terms m·2^e in 192 bits over [lo, ...), or false when the terms
/// with their carries span more than `limit` bits.
struct FixedSum {
  U192 pos, neg;  // the two signs' sums, in units of 2^lo
  long lo = 0;
};

bool fixed_sum(const std::vector<ExactTerm>& terms, int limit, FixedSum& out) {
  out = FixedSum{};
  if (terms.empty()) return true;
  long lo = terms.front().e, hi = terms.front().e + terms.front().bits;
  for (const ExactTerm& x : terms) {
    lo = std::min(lo, x.e);
    hi = std::max(hi, x.e + x.bits);
  }
  // Each term is below 2^(hi − lo) in units of 2^lo; the sum of n of them below n·2^(hi − lo).
  const int carry_bits = 64 - __builtin_clzll(static_cast<std::uint64_t>(terms.size()));
  if (hi - lo + carry_bits > limit) return false;
  out.lo = lo;
  for (const ExactTerm& x : terms) {
    const U192 v = U192::of(x.m).shifted_left(static_cast<int>(x.e - lo));
    (x.negative ? out.neg : out.pos) = (x.negative ? out.neg : out.pos) + v;
  }
  return true;
}

}  // namespace

template <class T>
bool TermTruth<T>::compute_fixed(const std::vector<ExactTerm>& finite_terms, const std::vector<ExactTerm>& grow_terms,
                                 const ExactTerm& max_grow, bool input_overflow, KConstants& c, ElementTruth& t) {
  // 139 bits: γ's and the underflow scale's mantissas have at most 53, and their products with S
  // and M must fit 192.
  constexpr int kLimit = 192 - 53;
  FixedSum sum, grow;
  if (!fixed_sum(finite_terms, kLimit, sum) || !fixed_sum(grow_terms, kLimit, grow)) return false;
  const bool bounded = !std::isinf(c.gamma);
  const bool rounds_inputs = profile_ && profile_->rounds_inputs;  // §8: a second underflow term
  // S = 0 with γ beyond a double is bounded (γ·0 = 0): the general path decides it.
  if (!bounded && k_ == 1 && sum.pos.is_zero() && sum.neg.is_zero()) return false;
  if (bounded && c.gamma != 0 && c.gamma_parts.mantissa == 0) return false;
  if (bounded && k_ >= 2 && c.underflow_parts.mantissa == 0) return false;
  if (bounded && rounds_inputs && c.input_underflow_parts.mantissa == 0) return false;
  const U192 abs = sum.pos + sum.neg;  // S(o), exact
  const bool negative = compare(sum.neg, sum.pos) > 0;
  const FixedDyadic magnitude{negative ? sum.neg - sum.pos : sum.pos - sum.neg, sum.lo};  // |s(o)|
  // The bound's parts, before anything is written: §2's γ·S and U (none for the passthrough), or
  // §8's E_a + u_o·(|s| + E_a) + η_o as one part.
  FixedDyadic high, low;
  bool final_ok = true;  // §8's |s| + E_a < Ω_o
  if (bounded && (c.gamma != 0 || profile_)) {
    if (c.gamma != 0) high = {U192::product(c.gamma_parts.mantissa, abs), c.gamma_parts.exponent + sum.lo};
    if (k_ >= 2) low = {U192::product(c.underflow_parts.mantissa, grow.pos), c.underflow_parts.exponent + grow.lo};
    if (rounds_inputs) {
      const FixedDyadic input{U192::product(c.input_underflow_parts.mantissa, grow.pos),
                              c.input_underflow_parts.exponent + grow.lo};
      if (!fixed_add(low, input, low)) return false;
    }
    if (!profile_) {
      if (!order_parts(high, low)) return false;
    } else {
      FixedDyadic e;
      if (!fixed_add(high, low, e) || !fixed_conversion(e, magnitude, 1, profile_->out, high, final_ok)) return false;
      low = FixedDyadic{};
    }
  } else if (profile_) {
    final_ok = false;
  }
  if (t.value_class != ValueClass::finite) final_ok = true;
  t.exact.set_fixed({magnitude}, negative);
  Exact value;  // S and M, each rounded through the fixed Exact
  value.set_fixed({FixedDyadic{abs, sum.lo}}, false);
  t.abs_sum = value.round<double>(Rounding::up);
  value.set_fixed({FixedDyadic{grow.pos, grow.lo}}, false);
  t.magnitude = value.round<double>(Rounding::up);
  const double magnitude_down = value.round<double>(Rounding::down);
  // §2/§3's certificates (§8: of the partial results, against the accumulator's Ω), as the general
  // path decides them (Dyadics only where the doubles alone cannot decide).
  bool partial;
  if (input_overflow) {  // §8: a finite input above the input rounding's Ω
    partial = false;
  } else if (grow.pos.is_zero()) {
    partial = true;
  } else if (const std::optional<bool> quick = c.sum_certificate.decide(t.magnitude, magnitude_down)) {
    partial = *quick;
  } else {
    partial = c.sum_certificate.below_omega(FixedDyadic{grow.pos, grow.lo}.dyadic(), t.magnitude, magnitude_down);
  }
  bool partial_nonfactoring = partial;
  if (!partial && !input_overflow) {
    const Dyadic max_p = max_grow.m == 0 ? Dyadic() : Dyadic::of_u128(max_grow.m, max_grow.e, false);
    partial_nonfactoring = product_certificate_.below_omega(max_p) &&
                           c.sum_certificate.below_omega(FixedDyadic{abs, sum.lo}.dyadic());
  }
  t.no_overflow = partial && final_ok;
  t.no_overflow_nonfactoring = partial_nonfactoring && final_ok;
  t.bounded = bounded;
  if (bounded && c.gamma == 0 && !profile_) {  // the passthrough: exact
    t.bound = 0;
  } else if (bounded) {
    t.scaled_bound.set_fixed({high, low}, false);
    t.bound = t.scaled_bound.round<double>(Rounding::up);
  } else {
    t.bound = std::numeric_limits<double>::infinity();
  }
  return true;
}

template class TermTruth<float>;
template class TermTruth<double>;
template class TermTruth<Float16>;
template class TermTruth<BFloat16>;

}  // namespace detail

namespace {

/// The truth of a float einsum under each of `bounds` (nullopt: §2), into `out` (one per bound):
/// each element's terms are walked and summed once, by the first bound's TermTruth, and the others
/// compute only their bounds from what it collected (TermTruth::compute_again).
template <class T>
void multiset(const CheckedEinsum& e, const BroadcastOperands& broadcast, ExactPath path,
              std::span<const std::optional<detail::ProfileBound>> bounds, std::span<MultisetEinsum> out) {
  const Shape gshape = detail::global_shape(e);
  const int k = static_cast<int>(e.operands.size());
  std::vector<const T*> factors;
  for (const Tensor& b : broadcast.operands) factors.push_back(b.values<T>().data());
  // The first truth walks the terms; the others (none, in the common case: no allocation) reuse them.
  detail::TermTruth<T> first(format_constants<T>(), k, path, bounds[0]);
  std::vector<detail::TermTruth<T>> others;
  others.reserve(bounds.size() - 1);
  for (std::size_t b = 1; b < bounds.size(); ++b) others.emplace_back(format_constants<T>(), k, path, bounds[b]);
  std::vector<std::span<T>> rounded_others;
  for (MultisetEinsum& m : out) {
    m.rounded = Tensor(dtype_of_v<T>, e.output_shape);
    m.elements.resize(static_cast<std::size_t>(e.output_size));
    if (&m != &out[0]) rounded_others.push_back(m.rounded.values<T>());
  }
  const auto rounded = out[0].rounded.values<T>();
  std::vector<std::int64_t> terms;
  // An empty output has no terms, however long its contraction: the checker bounds output ×
  // contraction only (0 then), so the contraction alone may be 2^35 (fuzz_einsum_diff found it).
  if (e.output_size > 0) terms.reserve(static_cast<std::size_t>(e.contraction_size));
  for (std::int64_t o = 0; o < e.output_size; ++o) {
    const auto i = static_cast<std::size_t>(o);
    terms.clear();
    detail::for_each_term(e, gshape, o, [&](std::int64_t g) { terms.push_back(g); });
    first.compute(terms, factors, out[0].elements[i], rounded[i]);
    for (std::size_t b = 0; b < others.size(); ++b) {
      others[b].compute_again(first, out[b + 1].elements[i], rounded_others[b][i]);
    }
  }
}

/// The truth of a float einsum under each of `profiles` (null: its dtype's default, §2) along
/// `path`, into `out` (one per profile).
void multiset_of(const CheckedEinsum& einsum, const BroadcastOperands& broadcast, ExactPath path,
                 std::span<const PrecisionProfile* const> profiles, std::span<MultisetEinsum> out) {
  if (broadcast.operands.size() != einsum.operands.size() || broadcast.operands.empty() ||
      !is_float(broadcast.operands.front().dtype())) {
    harness_bug("multiset_einsum called on a non-float einsum, or with another einsum's broadcast operands");
  }
  if (profiles.empty() || profiles.size() != out.size()) {
    harness_bug("multiset_einsum called with no precision profile, or not one result per profile");
  }
  const DType dtype = broadcast.operands.front().dtype();
  std::vector<std::optional<detail::ProfileBound>> bounds;
  bounds.reserve(profiles.size());
  for (const PrecisionProfile* p : profiles) {
    bounds.push_back(p ? detail::profile_bound(dtype, *p) : std::optional<detail::ProfileBound>());
  }
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_type_v<T>) {
      multiset<T>(einsum, broadcast, path, bounds, out);
    } else {
      harness_bug("multiset_einsum called on a non-float einsum");
    }
  });
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (bounds[i]) out[i].profile = *profiles[i];
  }
}

/// multiset_of under one profile.
MultisetEinsum multiset_of(const CheckedEinsum& einsum, const BroadcastOperands& broadcast, ExactPath path,
                           const PrecisionProfile* profile) {
  MultisetEinsum out;
  multiset_of(einsum, broadcast, path, std::span<const PrecisionProfile* const>(&profile, 1),
              std::span<MultisetEinsum>(&out, 1));
  return out;
}

}  // namespace

/// The inputs' broadcast operands; a non-float einsum is multiset_of's harness bug, not broadcast's.
BroadcastOperands broadcast_of(const CheckedEinsum& einsum, std::span<const Tensor> inputs) {
  if (inputs.empty() || !is_float(inputs.front().dtype())) harness_bug("multiset_einsum called on a non-float einsum");
  return broadcast_einsum(einsum, inputs);
}

MultisetEinsum multiset_einsum(const CheckedEinsum& einsum, std::span<const Tensor> inputs, ExactPath path) {
  return multiset_of(einsum, broadcast_of(einsum, inputs), path, nullptr);
}

MultisetEinsum multiset_einsum(const CheckedEinsum& einsum, std::span<const Tensor> inputs) {
  return multiset_einsum(einsum, inputs, ExactPath::fixed);
}

MultisetEinsum multiset_einsum(const CheckedEinsum& einsum, std::span<const Tensor> inputs,
                               const PrecisionProfile& profile) {
  return multiset_of(einsum, broadcast_of(einsum, inputs), ExactPath::fixed, &profile);
}

MultisetEinsum multiset_einsum(const CheckedEinsum& einsum, std::span<const Tensor> inputs,
                               const PrecisionProfile& profile, ExactPath path) {
  return multiset_of(einsum, broadcast_of(einsum, inputs), path, &profile);
}

MultisetEinsum multiset_einsum(const CheckedEinsum& einsum, const BroadcastOperands& broadcast) {
  return multiset_of(einsum, broadcast, ExactPath::fixed, nullptr);
}

MultisetEinsum multiset_einsum(const CheckedEinsum& einsum, const BroadcastOperands& broadcast,
                               const PrecisionProfile& profile) {
  return multiset_of(einsum, broadcast, ExactPath::fixed, &profile);
}

std::vector<MultisetEinsum> multiset_einsum(const CheckedEinsum& einsum, const BroadcastOperands& broadcast,
                                            std::span<const PrecisionProfile> profiles, ExactPath path) {
  std::vector<const PrecisionProfile*> pointers;
  for (const PrecisionProfile& p : profiles) pointers.push_back(&p);
  std::vector<MultisetEinsum> out(profiles.size());
  multiset_of(einsum, broadcast, path, pointers, out);
  return out;
}

}  // namespace einfuzz::reference
