// The reduction oracle (ORACLE.md §4) against MPFR: on random fibres (every binade, subnormals, values
// near Ω, cancellation, specials) the multiset sum, mean and product, their rounding, classes,
// certificates and bounds equal an independent exact computation.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "einfuzz/core/choice.hpp"
#include "harness/oracle_support.hpp"

namespace einfuzz {
namespace {

using namespace oracle_test;

/// x / divisor rounded once to T as IEEE does (precision p, subnormals and overflow emulated).
template <class T>
T round_ieee(mpfr_ptr x, long divisor) {
  using L = std::numeric_limits<T>;
  Mp r(L::digits);
  const mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
  mpfr_set_emin(L::min_exponent - L::digits + 1);
  mpfr_set_emax(L::max_exponent);
  int ternary = mpfr_div_si(r.get(), x, divisor, MPFR_RNDN);  // one correct rounding to p bits
  ternary = mpfr_check_range(r.get(), ternary, MPFR_RNDN);
  mpfr_subnormalize(r.get(), ternary, MPFR_RNDN);
  const T out = sizeof(T) == 4 ? static_cast<T>(mpfr_get_flt(r.get(), MPFR_RNDN)) : static_cast<T>(mpfr_get_d(r.get(), MPFR_RNDN));
  mpfr_set_emin(emin);
  mpfr_set_emax(emax);
  return out;
}

void set_dyadic(mpfr_ptr out, const reference::Dyadic& d) {
  mpfr_set_prec(out, std::max<mpfr_prec_t>(2, static_cast<mpfr_prec_t>(mpz_sizeinbase(d.mantissa().get_mpz_t(), 2))));
  ASSERT_EQ(mpfr_set_z_2exp(out, d.mantissa().get_mpz_t(), d.exponent(), MPFR_RNDN), 0);
}

/// A value drawn from one of the stress profiles.
template <class T>
T draw(Rng& rng, int profile) {
  using L = std::numeric_limits<T>;
  constexpr int p = L::digits;
  const T sign = rng.chance(1, 2) ? T(1) : T(-1);
  const T mantissa = T(1) + static_cast<T>(rng.next() >> (64 - (p - 1))) * std::ldexp(T(1), -(p - 1));
  switch (profile) {
    case 0: return sign * std::ldexp(mantissa, static_cast<int>(rng.between(L::min_exponent - p, L::max_exponent - 1)));
    case 1: return sign * std::ldexp(mantissa, static_cast<int>(rng.between(L::min_exponent - p, L::min_exponent + 3)));
    case 2: return rng.chance(1, 2) ? sign * std::ldexp(mantissa, L::max_exponent - 1 - static_cast<int>(rng.below(3)))
                                    : sign * static_cast<T>(rng.between(1, 4));
    case 3: {
      const T pool[] = {T(1e16), T(-1e16), T(1), T(-1), std::ldexp(T(1), p), -std::ldexp(T(1), p),
                        std::nextafter(T(1), T(2)), std::nextafter(T(1), T(0)), T(0.1), T(-0.1), T(0), -T(0)};
      return pool[rng.below(std::size(pool))];
    }
    case 4: return sign * std::ldexp(mantissa, static_cast<int>(rng.between(-3, 3)));  // products near 1
    default: {
      if (rng.chance(1, 20)) {
        const T specials[] = {L::quiet_NaN(), L::infinity(), -L::infinity(), T(0), -T(0)};
        return specials[rng.below(std::size(specials))];
      }
      return draw<T>(rng, static_cast<int>(rng.below(5)));
    }
  }
}

/// lo <= γ_m <= hi (γ_m = m·u / (1 − m·u), 0 for m = 0).
void gamma_bounds(long m, int digits, mpfr_ptr lo, mpfr_ptr hi) {
  Mp num(256), den(256);
  mpfr_set_si_2exp(num.get(), m, -digits, MPFR_RNDN);  // exact
  mpfr_ui_sub(den.get(), 1, num.get(), MPFR_RNDN);      // exact at 256 bits
  mpfr_div(lo, num.get(), den.get(), MPFR_RNDD);
  mpfr_div(hi, num.get(), den.get(), MPFR_RNDU);
}

template <class T>
void expect_reduce_exact(Rng& rng, const char* kind, std::int64_t& fibres) {
  using L = std::numeric_limits<T>;
  const bool prod = std::string(kind) == "prod", mean = std::string(kind) == "mean";
  const std::int64_t rows = rng.between(1, 3);
  const std::int64_t n = rng.between(1, prod ? 40 : 300);
  const int profile = static_cast<int>(rng.below(6));
  std::vector<T> values(static_cast<std::size_t>(rows * n));
  for (T& v : values) v = draw<T>(rng, profile);
  const Case c = reduce_case("r n -> r", kind, Tensor(Shape{rows, n}, values));
  const auto truth = reduce_truth(c);
  const auto rounded = truth.rounded.template values<T>();
  const mpfr_prec_t big = static_cast<mpfr_prec_t>(n + 1) * (L::digits + 1) + 64;
  for (std::int64_t row = 0; row < rows; ++row) {
    ++fibres;
    const ElementTruth& t = truth.elements[static_cast<std::size_t>(row)];
    const CaseWhere where{c, std::string(kind) + " row " + std::to_string(row)};
    bool nan = false, pos_inf = false, neg_inf = false, zero = false, negative = false;
    std::vector<Mp*> owned;
    std::vector<mpfr_ptr> finite, magnitudes;
    Mp product(static_cast<mpfr_prec_t>(n) * L::digits + 8), grow(static_cast<mpfr_prec_t>(n) * L::digits + 8),
        shrink(static_cast<mpfr_prec_t>(n) * L::digits + 8);
    mpfr_set_ui(product.get(), 1, MPFR_RNDN);
    mpfr_set_ui(grow.get(), 1, MPFR_RNDN);
    mpfr_set_ui(shrink.get(), 1, MPFR_RNDN);
    for (std::int64_t j = 0; j < n; ++j) {
      const double x = static_cast<double>(values[static_cast<std::size_t>(row * n + j)]);
      if (std::isnan(x)) { nan = true; continue; }
      negative ^= std::signbit(x);
      if (std::isinf(x)) { (x > 0 ? pos_inf : neg_inf) = true; continue; }
      zero |= x == 0;
      Mp* v = owned.emplace_back(new Mp(64));
      Mp* a = owned.emplace_back(new Mp(64));
      mpfr_set_d(v->get(), x, MPFR_RNDN);
      mpfr_abs(a->get(), v->get(), MPFR_RNDN);
      finite.push_back(v->get());
      magnitudes.push_back(a->get());
      ASSERT_EQ(mpfr_mul(product.get(), product.get(), v->get(), MPFR_RNDN), 0);
      if (mpfr_cmp_ui(a->get(), 1) > 0) {
        ASSERT_EQ(mpfr_mul(grow.get(), grow.get(), a->get(), MPFR_RNDN), 0);
      }
      if (mpfr_cmp_ui(a->get(), 1) < 0) {
        ASSERT_EQ(mpfr_mul(shrink.get(), shrink.get(), a->get(), MPFR_RNDN), 0);
      }
    }
    // Exact sums: 4400 bits cover every f64 binade plus carries.
    Mp sum(4400), abs_sum(4400);
    ASSERT_EQ(mpfr_sum(sum.get(), finite.data(), finite.size(), MPFR_RNDN), 0);
    ASSERT_EQ(mpfr_sum(abs_sum.get(), magnitudes.data(), magnitudes.size(), MPFR_RNDN), 0);
    for (Mp* m : owned) delete m;

    const ValueClass cls = prod ? (nan || (zero && (pos_inf || neg_inf)) ? ValueClass::nan
                                   : pos_inf || neg_inf                   ? (negative ? ValueClass::neg_inf : ValueClass::pos_inf)
                                                                          : ValueClass::finite)
                                : (nan || (pos_inf && neg_inf) ? ValueClass::nan
                                   : pos_inf                   ? ValueClass::pos_inf
                                   : neg_inf                   ? ValueClass::neg_inf
                                                               : ValueClass::finite);
    EXPECT_EQ(t.value_class, cls) << where;
    EXPECT_EQ(t.nan_input, nan) << where;
    EXPECT_EQ(t.divisor, mean ? n : 1) << where;
    if (cls != ValueClass::finite) continue;

    Mp exact(2);
    set_dyadic(exact.get(), t.exact);
    EXPECT_TRUE(mpfr_equal_p(exact.get(), prod ? product.get() : sum.get())) << where;
    T expected = round_ieee<T>(prod ? product.get() : sum.get(), mean ? static_cast<long>(n) : 1);
    // An exact zero: a product's sign is the same on every association; a sum's is +0 (0 + -0).
    if (expected == 0) expected = prod && negative ? -T(0) : T(0);
    const T got = rounded[static_cast<std::size_t>(row)];
    EXPECT_EQ(std::memcmp(&got, &expected, sizeof(T)), 0) << got << " vs " << expected << ", " << where;

    // Certificates, exactly: X·(1+u)^n < Ω and (prod, no zero) Π min(1,|x|) >= 2^emin·(1+u)^n.
    Mp growth(big), one_plus_u(L::digits + 1), scaled(2 * big), omega(L::digits);
    mpfr_set_ui_2exp(one_plus_u.get(), 1, -L::digits, MPFR_RNDN);
    mpfr_add_ui(one_plus_u.get(), one_plus_u.get(), 1, MPFR_RNDN);
    ASSERT_EQ(mpfr_pow_ui(growth.get(), one_plus_u.get(), static_cast<unsigned long>(n), MPFR_RNDN), 0);
    mpfr_set_d(omega.get(), static_cast<double>(L::max()), MPFR_RNDN);
    mpfr_mul(scaled.get(), prod ? grow.get() : abs_sum.get(), growth.get(), MPFR_RNDN);
    EXPECT_EQ(t.no_overflow, mpfr_cmp(scaled.get(), omega.get()) < 0) << where;
    EXPECT_EQ(t.no_overflow_nonfactoring, t.no_overflow) << where;
    if (prod && !zero) {
      Mp floor_value(big);
      mpfr_mul_2si(floor_value.get(), growth.get(), L::min_exponent - 1, MPFR_RNDN);
      EXPECT_EQ(t.no_inf_underflow, mpfr_cmp(shrink.get(), floor_value.get()) >= 0) << where;
    }

    // B·divisor between the formula (outward-rounded γ) and the formula with γ one part in 2^40 larger.
    ASSERT_TRUE(t.bounded) << where;
    Mp lo(256), hi(256), base(4400), formula_lo(4600), formula_hi(4600), bound(2);
    const long m = prod ? (n >= 2 ? n : 0) : mean ? n + 2 : (n >= 2 ? n : 0);
    gamma_bounds(m, L::digits, lo.get(), hi.get());
    mpfr_set(base.get(), prod ? product.get() : abs_sum.get(), MPFR_RNDN);
    mpfr_abs(base.get(), base.get(), MPFR_RNDN);
    mpfr_mul(formula_lo.get(), lo.get(), base.get(), MPFR_RNDD);
    mpfr_mul(formula_hi.get(), hi.get(), base.get(), MPFR_RNDU);
    mpfr_mul_2si(formula_hi.get(), formula_hi.get(), 0, MPFR_RNDU);
    Mp slack(4600);
    mpfr_mul_2si(slack.get(), formula_hi.get(), -40, MPFR_RNDU);
    mpfr_add(formula_hi.get(), formula_hi.get(), slack.get(), MPFR_RNDU);
    if (mean) {  // + n·η, exactly
      Mp eta(64);
      mpfr_set_si_2exp(eta.get(), static_cast<long>(n), L::min_exponent - 1 - L::digits, MPFR_RNDN);
      mpfr_add(formula_lo.get(), formula_lo.get(), eta.get(), MPFR_RNDD);
      mpfr_add(formula_hi.get(), formula_hi.get(), eta.get(), MPFR_RNDU);
    }
    set_dyadic(bound.get(), t.scaled_bound);
    EXPECT_GE(mpfr_cmp(bound.get(), formula_lo.get()), 0) << "B below the formula, " << where;
    EXPECT_LE(mpfr_cmp(bound.get(), formula_hi.get()), 0) << "B looser than the formula, " << where;
  }
}

TEST(OracleExact, MultisetReduceEqualsMpfrOnRandomFibres) {
  constexpr int kCases = 6000;
  std::int64_t fibres = 0;
  for (int i = 0; i < kCases; ++i) {
    Rng rng(Rng::mix(20261201, static_cast<std::uint64_t>(i)));
    const char* kinds[] = {"sum", "mean", "prod"};
    const char* kind = kinds[i % 3];
    if (rng.chance(1, 2)) {
      expect_reduce_exact<float>(rng, kind, fibres);
    } else {
      expect_reduce_exact<double>(rng, kind, fibres);
    }
    if (HasFailure()) FAIL() << "stopped at case " << i;
  }
  std::cout << "[ oracle   ] " << kCases << " reduce cases, " << fibres << " fibres exact against MPFR\n";
}

}  // namespace
}  // namespace einfuzz
