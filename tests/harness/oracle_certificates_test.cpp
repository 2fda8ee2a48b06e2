// The any-order oracle's certificates (no overflow, no Inf underflow) flip exactly at their
// thresholds, found independently with MPFR; and the judge's verdicts on both sides.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <vector>

#include "einfuzz/core/rounding.hpp"
#include "harness/oracle_support.hpp"

namespace einfuzz {
namespace {

using namespace oracle_test;

// ---------------------------------------------------------------------------------------------
// Certificates at their boundaries

/// (1+u)^n exactly.
template <class T>
void exact_growth(Mp& growth, std::int64_t n) {
  using L = std::numeric_limits<T>;
  mpfr_set_prec(growth.get(), static_cast<mpfr_prec_t>(n + 1) * (L::digits + 1) + 64);
  Mp one_plus_u(L::digits + 1);
  mpfr_set_ui_2exp(one_plus_u.get(), 1, -L::digits, MPFR_RNDN);
  mpfr_add_ui(one_plus_u.get(), one_plus_u.get(), 1, MPFR_RNDN);
  EXPECT_EQ(mpfr_pow_ui(growth.get(), one_plus_u.get(), static_cast<unsigned long>(n), MPFR_RNDN), 0);
}

/// "i ->" on [X, 1, …, 1] (K values): M = X + K − 1, N' = K. Finds the largest X for which the
/// certificate truly holds, then checks the oracle's flag on both sides of it.
template <class T>
void no_overflow_boundary(std::int64_t terms, int slack_ulps) {
  using L = std::numeric_limits<T>;
  auto case_at = [&](T x) {
    std::vector<T> values(static_cast<std::size_t>(terms), T(1));
    values[0] = x;
    Case c;
    c.pattern = "i ->";
    c.dtype = dtype_of_v<T>;
    c.inputs.push_back(Tensor(Shape{terms}, values));
    return c;
  };
  auto truth_at = [&](T x) { return einsum_truth(case_at(x)).elements[0]; };
  Mp growth(2);
  exact_growth<T>(growth, terms);  // N' = K for k = 1, K >= 2
  auto exact_at = [&](T x) {      // M·(1+u)^N' < Ω, exactly
    Mp m(4096), product(mpfr_get_prec(growth.get()) + 4096);
    mpfr_set_d(m.get(), static_cast<double>(x), MPFR_RNDN);
    EXPECT_EQ(mpfr_add_si(m.get(), m.get(), static_cast<long>(terms - 1), MPFR_RNDN), 0);
    EXPECT_EQ(mpfr_mul(product.get(), m.get(), growth.get(), MPFR_RNDN), 0);
    return mpfr_cmp_d(product.get(), static_cast<double>(L::max())) < 0;
  };
  // Walk down from Ω to the true threshold X*.
  T x = L::max();
  while (!exact_at(x)) x = std::nextafter(x, T(0));
  ASSERT_FALSE(exact_at(std::nextafter(x, L::infinity())));
  // Sound: one ulp past the threshold the certificate must fail, and stays failed.
  T above = x;
  for (int i = 0; i < 3; ++i) {
    above = std::nextafter(above, L::infinity());
    if (std::isinf(above)) break;
    EXPECT_FALSE(truth_at(above).no_overflow) << "K = " << terms << ", " << i + 1 << " ulp above X*";
  }
  // Tight: the certificate is decided exactly (double bounds first, exact dyadics near the threshold).
  T below = x;
  for (int i = 0; i < slack_ulps; ++i) below = std::nextafter(below, T(0));
  EXPECT_TRUE(truth_at(below).no_overflow) << "K = " << terms << ", " << slack_ulps << " ulps below X*";
  int flip = 0;  // where the oracle's flag actually flips, for the record
  for (T y = x; !truth_at(y).no_overflow && flip < 64; y = std::nextafter(y, T(0))) ++flip;
  std::cout << "[ oracle   ] no_overflow " << (sizeof(T) == 4 ? "f32" : "f64") << " K=" << terms
            << ": flips " << flip << " ulp(s) below the exact threshold\n";
  // The judge: a finite result past the threshold is indeterminate(overflow-possible), Inf too.
  if (!std::isinf(above)) {
    const Verdict v = judge_any_order(einsum_truth(case_at(above)), tensor_of<T>({}, {L::infinity()}), {});
    EXPECT_EQ(v.label(), "indeterminate(overflow-possible)");
  }
}

TEST(OracleCertificates, GammaIsTheGrowthItselfWhereNTimesUReachesOne) {
  // ORACLE §2: where n·u >= 1 (long sums in bf16 or f16) γ_n is (1+u)^n − 1 itself, rounded up:
  // finite, above the exact value and within a relative 2^-50 of it (MPFR, exactly).
  for (const auto& [digits, n] : std::vector<std::pair<int, std::int64_t>>{
           {8, 256}, {8, 257}, {8, 400}, {8, 5000}, {11, 2048}, {11, 3000}, {11, 70000}}) {
    const double u = std::ldexp(1.0, -digits);
    const double gamma = reference::gamma_up(n, u);
    ASSERT_TRUE(std::isfinite(gamma)) << "u = 2^-" << digits << ", n = " << n;
    Mp one_plus_u(digits + 1), growth(static_cast<mpfr_prec_t>(n + 1) * (digits + 1) + 64);
    mpfr_set_ui_2exp(one_plus_u.get(), 1, -digits, MPFR_RNDN);
    mpfr_add_ui(one_plus_u.get(), one_plus_u.get(), 1, MPFR_RNDN);
    ASSERT_EQ(mpfr_pow_ui(growth.get(), one_plus_u.get(), static_cast<unsigned long>(n), MPFR_RNDN), 0);
    ASSERT_EQ(mpfr_sub_ui(growth.get(), growth.get(), 1, MPFR_RNDN), 0);
    EXPECT_LE(mpfr_cmp_d(growth.get(), gamma), 0) << "below the exact value: u = 2^-" << digits << ", n = " << n;
    // gamma <= exact·(1 + 2^-50): one rounding of a double and the cut mantissas' drift
    Mp slack(mpfr_get_prec(growth.get()) + 64);
    mpfr_mul_2si(slack.get(), growth.get(), -50, MPFR_RNDN);
    mpfr_add(slack.get(), slack.get(), growth.get(), MPFR_RNDN);
    EXPECT_GE(mpfr_cmp_d(slack.get(), gamma), 0) << "not tight: u = 2^-" << digits << ", n = " << n;
  }
  // Below n·u = 1 the bound stays n·u/(1 − n·u).
  EXPECT_EQ(reference::gamma_up(255, 0x1p-8), next_up(255 * 0x1p-8 / next_down(1 - 255 * 0x1p-8)));
}

// Where γ_n is beyond a double ((1+2^-8)^n > 2^1024: bf16 sums of more than about 181,900 terms)
// the bound γ·S is still 0 when every term is 0 (S = 0, and k = 1: no U): only ±0 is accepted.
// γ had been taken as unbounded, and every finite answer passed.
TEST(OracleCertificates, ALongSumOfZerosAcceptsOnlyZeroWhereGammaIsBeyondADouble) {
  constexpr std::int64_t n = 200000;
  ASSERT_TRUE(std::isinf(reference::gamma_up(n, 0x1p-8)));
  const Tensor zeros(Shape{n}, std::vector<BFloat16>(static_cast<std::size_t>(n), BFloat16(0.0f)));
  Case sum;
  sum.op = Op::reduce;
  sum.pattern = "a ->";
  sum.dtype = DType::bf16;
  sum.inputs = {zeros};
  Case einsum;
  einsum.pattern = "i ->";
  einsum.dtype = DType::bf16;
  einsum.inputs = {zeros};
  for (const char* kind : {"sum", "mean", "einsum"}) {
    Case c = std::string(kind) == "einsum" ? einsum : sum;
    if (c.op == Op::reduce) c.reduction = kind;
    for (const bool factoring : {false, true}) {
      const Verdict four = run_fixed(c, Shape{}, std::vector<BFloat16>{BFloat16(4.0f)}, factoring);
      EXPECT_EQ(four.kind, VerdictKind::mismatch_value) << kind << (factoring ? " factoring: " : ": ") << explain(four, Case{});
      const Verdict zero = run_fixed(c, Shape{}, std::vector<BFloat16>{BFloat16(0.0f)}, factoring);
      EXPECT_TRUE(zero.kind == VerdictKind::pass || zero.kind == VerdictKind::indeterminate)
          << kind << (factoring ? " factoring: " : ": ") << explain(zero, Case{});
    }
  }
}

TEST(OracleCertificates, NoOverflowFlipsAtItsThreshold) {
  for (const std::int64_t terms : {2, 3, 100, 1000}) {
    no_overflow_boundary<float>(terms, 0);
    no_overflow_boundary<double>(terms, 0);
  }
}

/// "i, i, i -> i" on [Inf], [a], [b]: the Inf term's finite factors must stay >= 2^emin·(1+u)^3.
template <class T>
void inf_underflow_boundary() {
  using L = std::numeric_limits<T>;
  const T smallest_normal = L::min();
  const T one_ulp = std::nextafter(smallest_normal, T(1));              // 2^emin·(1+2u)
  const T two_ulps = std::nextafter(one_ulp, T(1));                     // 2^emin·(1+4u)
  auto truth_at = [](T a, T b, int k) {
    Case c;
    c.pattern = k == 3 ? "i, i, i -> i" : "i, i -> i";
    c.dtype = dtype_of_v<T>;
    c.inputs.push_back(Tensor(Shape{1}, std::vector<T>{L::infinity()}));
    c.inputs.push_back(Tensor(Shape{1}, std::vector<T>{a}));
    if (k == 3) c.inputs.push_back(Tensor(Shape{1}, std::vector<T>{b}));
    return einsum_truth(c).elements[0];
  };
  // k = 3, b = 1: need a >= 2^emin·(1 + 3u + 3u² + u³): 2 ulps above 2^emin hold, 1 ulp does not.
  EXPECT_TRUE(truth_at(two_ulps, T(1), 3).no_inf_underflow);
  EXPECT_FALSE(truth_at(one_ulp, T(1), 3).no_inf_underflow);
  EXPECT_EQ(truth_at(two_ulps, T(1), 3).value_class, ValueClass::pos_inf);
  // k = 2: need a >= 2^emin·(1 + 2u + u²): again 2 ulps hold, 1 ulp does not; negative a too.
  EXPECT_TRUE(truth_at(-two_ulps, T(0), 2).no_inf_underflow);
  EXPECT_FALSE(truth_at(-one_ulp, T(0), 2).no_inf_underflow);
  EXPECT_EQ(truth_at(-two_ulps, T(0), 2).value_class, ValueClass::neg_inf);
  // Two small factors: a·b with b = 1/2 and a = 2^(emin+1)·(1 + j·2u).
  const T a2 = std::nextafter(std::nextafter(smallest_normal * 2, T(1)), T(1));
  EXPECT_TRUE(truth_at(a2, T(0.5), 3).no_inf_underflow);
  EXPECT_FALSE(truth_at(std::nextafter(smallest_normal * 2, T(1)), T(0.5), 3).no_inf_underflow);
  // The judge: certain +Inf must be +Inf; past the boundary the class is order-dependent.
  for (const bool ok : {true, false}) {
    Case c;
    c.pattern = "i, i, i -> i";
    c.dtype = dtype_of_v<T>;
    c.inputs.push_back(Tensor(Shape{1}, std::vector<T>{L::infinity()}));
    c.inputs.push_back(Tensor(Shape{1}, std::vector<T>{ok ? two_ulps : one_ulp}));
    c.inputs.push_back(Tensor(Shape{1}, std::vector<T>{T(1)}));
    const MultisetEinsum truth = einsum_truth(c);
    const Verdict nan = judge_any_order(truth, tensor_of<T>({1}, {L::quiet_NaN()}), {});
    EXPECT_EQ(nan.label(), ok ? "mismatch(special: +Inf expected)" : "indeterminate(special-order-dependent)");
    // +Inf is the exact class and in the reachable set {+Inf, NaN} either way (§3); -Inf never is.
    EXPECT_EQ(judge_any_order(truth, tensor_of<T>({1}, {L::infinity()}), {}).kind, VerdictKind::pass);
    EXPECT_EQ(judge_any_order(truth, tensor_of<T>({1}, {-L::infinity()}), {}).kind, VerdictKind::mismatch_special);
  }
}

TEST(OracleCertificates, InfUnderflowFlipsExactlyAtItsThreshold) {
  inf_underflow_boundary<float>();
  inf_underflow_boundary<double>();
}

}  // namespace
}  // namespace einfuzz
