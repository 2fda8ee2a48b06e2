// The any-order oracle (ORACLE.md): the multiset value is exact (against MPFR), the judge is sound
// (the adversarial `shuffle` backend is never a mismatch) and tight (faulty backends are caught);
// the §3 divergences and the certificates' boundaries as unit tests.
#include <gtest/gtest.h>
#include <mpfr.h>
#include <rapidcheck/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <iostream>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "einfuzz/core/case.hpp"
#include "einfuzz/core/check.hpp"
#include "einfuzz/core/choice.hpp"
#include "einfuzz/core/coords.hpp"
#include "einfuzz/harness/generate.hpp"
#include "einfuzz/harness/judge.hpp"
#include "einfuzz/harness/run.hpp"
#include "einfuzz/harness/values.hpp"
#include "einfuzz/reference/multiset.hpp"
#include "harness/oracle_support.hpp"
#include "support/einsum_strides.hpp"
#include "support/values_text.hpp"

namespace einfuzz {
namespace {

using namespace oracle_test;

// ---------------------------------------------------------------------------------------------
// Exact: the multiset value against MPFR

/// The exact sum of `terms` (mpfr_sum at a precision that spans every bit of them).
void exact_sum(mpfr_ptr out, std::deque<Mp>& terms, mpfr_prec_t term_bits) {
  std::vector<mpfr_ptr> ptrs;
  mpfr_exp_t hi = std::numeric_limits<mpfr_exp_t>::min(), lo = std::numeric_limits<mpfr_exp_t>::max();
  for (Mp& t : terms) {
    if (mpfr_zero_p(t.get())) continue;
    ptrs.push_back(t.get());
    hi = std::max(hi, mpfr_get_exp(t.get()));
    lo = std::min(lo, mpfr_get_exp(t.get()) - term_bits);
  }
  const mpfr_prec_t precision = ptrs.empty() ? 2 : static_cast<mpfr_prec_t>(hi - lo) + 80;
  mpfr_set_prec(out, precision);
  const int ternary = mpfr_sum(out, ptrs.data(), ptrs.size(), MPFR_RNDN);
  ASSERT_EQ(ternary, 0) << "the test's own sum is not exact";
}

/// Compares every element of the multiset oracle with an independent MPFR computation.
template <class T>
void expect_exact(const Case& c) {
  using L = std::numeric_limits<T>;
  const CheckedEinsum e = checked_of(c);
  const MultisetEinsum truth = reference::multiset_einsum(e, c.inputs);
  const auto rounded = truth.rounded.values<T>();
  const std::size_t k = e.operands.size();
  const mpfr_prec_t term_bits = static_cast<mpfr_prec_t>(k) * L::digits + 2;
  const double u = std::ldexp(1.0, -L::digits);
  const double omega = static_cast<double>(L::max());

  const Shape lengths = test::axis_lengths(e);
  const auto stride = operand_strides(e);  // per operand, per global axis
  // 2^emin · (1+u)^k, exact: the floor for the finite factors of an Inf term.
  Mp floor_value(static_cast<mpfr_prec_t>(k + 1) * (L::digits + 1) + 8);
  mpfr_set_ui_2exp(floor_value.get(), 1, L::min_exponent - 1, MPFR_RNDN);
  for (std::size_t m = 0; m < k; ++m) {
    Mp one_plus_u(L::digits + 1);
    mpfr_set_ui_2exp(one_plus_u.get(), 1, -L::digits, MPFR_RNDN);
    mpfr_add_ui(one_plus_u.get(), one_plus_u.get(), 1, MPFR_RNDN);
    ASSERT_EQ(mpfr_mul(floor_value.get(), floor_value.get(), one_plus_u.get(), MPFR_RNDN), 0);
  }

  std::vector<std::int64_t> coords(e.axes.size(), 0);
  std::size_t o = 0;
  for_each_coord(e.output, lengths, coords, [&] {
    const ElementTruth& t = truth.elements[o];
    std::deque<Mp> terms, abs_terms, grows;
    bool nan_input = false, zero_times_inf = false, pos_inf = false, neg_inf = false, underflow_ok = true;
    std::int64_t count = 0;
    for_each_coord(e.contracted, lengths, coords, [&] {
      ++count;
      bool nan = false, inf = false, zero = false, negative = false;
      Mp product(term_bits), grow(term_bits), shrink(term_bits);
      mpfr_set_ui(product.get(), 1, MPFR_RNDN);
      mpfr_set_ui(grow.get(), 1, MPFR_RNDN);
      mpfr_set_ui(shrink.get(), 1, MPFR_RNDN);
      for (std::size_t m = 0; m < k; ++m) {
        const std::int64_t at = storage_offset(stride[m], coords);
        const double x = static_cast<double>(c.inputs[m].values<T>()[static_cast<std::size_t>(at)]);
        if (std::isnan(x)) { nan = true; continue; }
        negative ^= std::signbit(x);
        if (std::isinf(x)) { inf = true; continue; }
        zero |= x == 0;
        Mp v(64);
        mpfr_set_d(v.get(), x, MPFR_RNDN);
        ASSERT_EQ(mpfr_mul(product.get(), product.get(), v.get(), MPFR_RNDN), 0);
        mpfr_abs(v.get(), v.get(), MPFR_RNDN);
        if (mpfr_cmp_ui(v.get(), 1) > 0) {
          ASSERT_EQ(mpfr_mul(grow.get(), grow.get(), v.get(), MPFR_RNDN), 0);
        }
        if (mpfr_cmp_ui(v.get(), 1) < 0) {
          ASSERT_EQ(mpfr_mul(shrink.get(), shrink.get(), v.get(), MPFR_RNDN), 0);
        }
      }
      mpfr_set(grows.emplace_back(term_bits).get(), grow.get(), MPFR_RNDN);
      if (nan) {
        nan_input = true;
      } else if (inf && zero) {
        zero_times_inf = true;
      } else if (inf) {
        (negative ? neg_inf : pos_inf) = true;
        if (mpfr_cmp(shrink.get(), floor_value.get()) < 0) underflow_ok = false;
      } else {
        mpfr_set(terms.emplace_back(term_bits).get(), product.get(), MPFR_RNDN);
        mpfr_abs(abs_terms.emplace_back(term_bits).get(), product.get(), MPFR_RNDN);
      }
    });
    const CaseWhere where{c, "element " + std::to_string(o)};
    const ValueClass cls = (nan_input || zero_times_inf || (pos_inf && neg_inf)) ? ValueClass::nan
                           : pos_inf                                              ? ValueClass::pos_inf
                           : neg_inf                                              ? ValueClass::neg_inf
                                                                                  : ValueClass::finite;
    EXPECT_EQ(t.terms, count) << where;
    EXPECT_EQ(t.factors, static_cast<int>(k)) << where;
    EXPECT_EQ(t.value_class, cls) << where;
    EXPECT_EQ(t.nan_input, nan_input) << where;
    EXPECT_EQ(t.zero_times_inf, zero_times_inf) << where;
    EXPECT_EQ(t.mixed_inf, pos_inf && neg_inf) << where;
    EXPECT_EQ(t.no_inf_underflow, underflow_ok) << where;

    Mp sum(2), abs_sum(2), magnitude(2);
    exact_sum(sum.get(), terms, term_bits);
    exact_sum(abs_sum.get(), abs_terms, term_bits);
    exact_sum(magnitude.get(), grows, term_bits);
    // ElementTruth::exact is the same number as the MPFR sum.
    const reference::Dyadic exact = t.exact;  // either representation (exact_fixed.hpp)
    Mp dyadic(std::max<mpfr_prec_t>(2, static_cast<mpfr_prec_t>(mpz_sizeinbase(exact.mantissa().get_mpz_t(), 2))));
    ASSERT_EQ(mpfr_set_z_2exp(dyadic.get(), exact.mantissa().get_mpz_t(), exact.exponent(), MPFR_RNDN), 0);
    EXPECT_TRUE(mpfr_equal_p(dyadic.get(), sum.get())) << where;
    // ŝ*: rounded once to T; the bounds' inputs rounded up to double.
    const T expected = cls == ValueClass::nan       ? L::quiet_NaN()
                       : cls == ValueClass::pos_inf ? L::infinity()
                       : cls == ValueClass::neg_inf ? -L::infinity()
                                                    : round_ieee<T>(sum.get(), MPFR_RNDN);
    EXPECT_TRUE(same_bits(rounded[o], expected)) << rounded[o] << " vs " << expected << ", " << where;
    EXPECT_TRUE(same_bits(t.magnitude, round_ieee<double>(magnitude.get(), MPFR_RNDU))) << where;
    if (cls == ValueClass::finite) {
      EXPECT_TRUE(same_bits(t.abs_sum, round_ieee<double>(abs_sum.get(), MPFR_RNDU))) << where;
    }

    // Certificates and bound, rigorously at 256 bits: sound (never claims what is false) and tight
    // up to the documented outward rounding.
    const std::int64_t n = count + static_cast<std::int64_t>(k) - 2;
    const std::int64_t n1 = n >= 1 ? n + 1 : 0;
    Mp growth_lo(256), growth_hi(256), tmp(256), lo(256), hi(256);
    mpfr_set_ui_2exp(tmp.get(), 1, -L::digits, MPFR_RNDN);
    mpfr_add_ui(tmp.get(), tmp.get(), 1, MPFR_RNDN);  // 1 + u, exact at 256 bits
    mpfr_pow_ui(growth_lo.get(), tmp.get(), static_cast<unsigned long>(n1), MPFR_RNDD);
    mpfr_pow_ui(growth_hi.get(), tmp.get(), static_cast<unsigned long>(n1 + 16), MPFR_RNDU);
    mpfr_mul(lo.get(), magnitude.get(), growth_lo.get(), MPFR_RNDD);
    mpfr_mul(hi.get(), magnitude.get(), growth_hi.get(), MPFR_RNDU);
    if (mpfr_cmp_d(lo.get(), omega) >= 0) {
      EXPECT_FALSE(t.no_overflow) << where;
    }
    if (mpfr_cmp_d(hi.get(), omega) < 0) {
      EXPECT_TRUE(t.no_overflow) << where;
    }
    // The sharper certificate for non-factoring backends (§2): max_j P_j·(1+u)^(k−1) < Ω and
    // S·(1+u)^N' < Ω, checked with the same 256-bit outward bounds.
    {
      Mp max_p(term_bits), p_lo(256), p_hi(256), s_lo(256), s_hi(256), k_lo(256), k_hi(256);
      mpfr_set_ui(max_p.get(), 0, MPFR_RNDN);
      for (Mp& g : grows) {
        if (mpfr_cmp(g.get(), max_p.get()) > 0) mpfr_set(max_p.get(), g.get(), MPFR_RNDN);
      }
      mpfr_pow_ui(k_lo.get(), tmp.get(), static_cast<unsigned long>(k - 1), MPFR_RNDD);
      mpfr_pow_ui(k_hi.get(), tmp.get(), static_cast<unsigned long>(k - 1 + 16), MPFR_RNDU);
      mpfr_mul(p_lo.get(), max_p.get(), k_lo.get(), MPFR_RNDD);
      mpfr_mul(p_hi.get(), max_p.get(), k_hi.get(), MPFR_RNDU);
      mpfr_mul(s_lo.get(), abs_sum.get(), growth_lo.get(), MPFR_RNDD);
      mpfr_mul(s_hi.get(), abs_sum.get(), growth_hi.get(), MPFR_RNDU);
      if (mpfr_cmp_d(p_lo.get(), omega) >= 0 || mpfr_cmp_d(s_lo.get(), omega) >= 0) {
        EXPECT_FALSE(t.no_overflow_nonfactoring) << where;
      }
      if (mpfr_cmp_d(p_hi.get(), omega) < 0 && mpfr_cmp_d(s_hi.get(), omega) < 0) {
        EXPECT_TRUE(t.no_overflow_nonfactoring) << where;
      }
      if (t.no_overflow) {
        EXPECT_TRUE(t.no_overflow_nonfactoring) << where;
      }
    }
    if (cls == ValueClass::finite && !std::isinf(t.bound)) {
      // B = γ_N'·S + (k−1)·η·(1+u)^N'·M, γ_N' = N'u / (1 − N'u); computed downwards.
      Mp gamma(256), bound(256), under(256);
      mpfr_set_d(gamma.get(), static_cast<double>(n1) * u, MPFR_RNDD);
      mpfr_ui_sub(tmp.get(), 1, gamma.get(), MPFR_RNDU);
      mpfr_div(gamma.get(), gamma.get(), tmp.get(), MPFR_RNDD);
      mpfr_mul(bound.get(), gamma.get(), abs_sum.get(), MPFR_RNDD);
      mpfr_set_ui_2exp(under.get(), static_cast<unsigned long>(k - 1), L::min_exponent - L::digits - 1, MPFR_RNDD);
      mpfr_mul(under.get(), under.get(), lo.get(), MPFR_RNDD);
      mpfr_add(bound.get(), bound.get(), under.get(), MPFR_RNDD);
      EXPECT_LE(mpfr_cmp_d(bound.get(), t.bound), 0)
          << "bound " << t.bound << " below the formula " << mpfr_get_d(bound.get(), MPFR_RNDN) << " (S "
          << t.abs_sum << ", M " << t.magnitude << "), " << where;
      if (k == 1 && count == 1) {
        EXPECT_EQ(t.bound, 0.0) << "a passthrough element is exact, " << where;
      }
    }
    ++o;
  });
}

TEST(OracleExact, MultisetValueEqualsMpfrOnRandomCases) {
  constexpr int kCases = 10000;
  std::int64_t elements = 0;
  for (int i = 0; i < kCases; ++i) {
    Rng rng(Rng::mix(20240917, static_cast<std::uint64_t>(i)));
    GenOptions options;
    options.dtypes = {DType::f32, DType::f64};
    options.max_operands = i % 4 == 0 ? 8 : 4;  // many operands: deep products, wide exponent spans
    options.max_global = 256;
    Case c = generate_einsum(rng, options);
    redraw_values(c, rng, kProfiles[static_cast<std::size_t>(i) % std::size(kProfiles)]);
    if (c.dtype == DType::f32) {
      expect_exact<float>(c);
    } else {
      expect_exact<double>(c);
    }
    elements += checked_of(c).output_size;
    if (HasFailure()) FAIL() << "stopped at case " << i;
  }
  std::cout << "[ oracle   ] " << kCases << " cases, " << elements << " elements exact against MPFR\n";
}

TEST(OracleExact, HandPickedValues) {
  const double omega = std::numeric_limits<double>::max();
  const double tiny = std::numeric_limits<double>::denorm_min();
  // Cancellation: 1e16 + 1 − 1e16 = 1 exactly (sequential binary64 gives 0).
  const MultisetEinsum a = einsum_truth(einsum_case("i ->", DType::f64, {{{3}, "1e16, 1, -1e16"}}));
  EXPECT_EQ(a.rounded.values<double>()[0], 1.0);
  // Near Ω: Ω + Ω − Ω = Ω exactly (a sequential fold overflows); Ω + Ω rounds to +Inf.
  Case near = einsum_case("i ->", DType::f64, {{{3}, "0, 0, 0"}});
  near.inputs[0].values<double>()[0] = omega;
  near.inputs[0].values<double>()[1] = omega;
  near.inputs[0].values<double>()[2] = -omega;
  EXPECT_EQ(einsum_truth(near).rounded.values<double>()[0], omega);
  EXPECT_FALSE(einsum_truth(near).elements[0].no_overflow);
  near.inputs[0].values<double>()[2] = 0;
  EXPECT_EQ(einsum_truth(near).rounded.values<double>()[0], std::numeric_limits<double>::infinity());
  // Subnormal products: denorm_min · 0.5 is exactly half an ulp: ties to even gives +0; times 0.75 rounds up.
  Case sub = einsum_case("i, i -> i", DType::f64, {{{2}, "0, 0"}, {{2}, "0.5, 0.75"}});
  sub.inputs[0].values<double>()[0] = tiny;
  sub.inputs[0].values<double>()[1] = tiny;
  const MultisetEinsum s = einsum_truth(sub);
  EXPECT_TRUE(same_bits(s.rounded.values<double>()[0], 0.0));
  EXPECT_EQ(s.rounded.values<double>()[1], tiny);
  EXPECT_FALSE(s.elements[0].exact.is_zero());
}

// An empty output whose contraction is long (a size-1 axis broadcast against 2^35 - 1): the
// checker bounds output × contraction, which is 0, so the oracle must size nothing by the contraction
// alone. It reserved 2^35 terms, and the std::bad_alloc was a harness bug (fuzz_einsum_diff in CI;
// corpus/regressions/einsum-empty-output-long-contraction.case.json is that input).
TEST(OracleExact, AnEmptyOutputSizesNothingByItsContraction) {
  const std::int64_t j = (std::int64_t{1} << 35) - 1;
  const Case c = einsum_case("i j, j k -> i k", DType::f64, {{{2, 1}, "5, 6"}, {{j, 0}, ""}});
  const MultisetEinsum m = einsum_truth(c);
  EXPECT_TRUE(m.elements.empty());
  EXPECT_EQ(m.rounded.shape(), (Shape{2, 0}));
}

}  // namespace
}  // namespace einfuzz
