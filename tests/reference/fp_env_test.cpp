// The floating-point environment of reference and fused (SEMANTICS §13.2): no FMA contraction,
// gradual underflow (no FTZ/DAZ), default rounding.
#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "einfuzz/core/check.hpp"
#include "einfuzz/fused/einsum.hpp"
#include "einfuzz/reference/einsum.hpp"
#include "support/compare.hpp"

namespace einfuzz {
namespace {

Tensor run_both(std::string_view pattern, std::vector<Tensor> inputs, Tensor* fused_out) {
  std::vector<Shape> shapes;
  for (const Tensor& t : inputs) shapes.push_back(t.shape());
  auto checked = check_einsum(pattern, shapes);
  EXPECT_TRUE(checked.ok());
  *fused_out = fused::execute(fused::compile(*checked), inputs, {1, 1});
  return reference::evaluate_einsum(*checked, inputs);
}

/// Reference and fused both give exactly `expected` (bit for bit).
void expect_both_give(std::string_view pattern, std::vector<Tensor> inputs, const Tensor& expected) {
  Tensor fused_result;
  const Tensor ref = run_both(pattern, std::move(inputs), &fused_result);
  EXPECT_TRUE(test::bitwise_same(expected, ref)) << "reference";
  EXPECT_TRUE(test::bitwise_same(expected, fused_result)) << "fused";
}

TEST(FloatingPointEnvironment, ProductPlusSumIsNeverFusedIntoAnFma) {
  // S = (0 + c·1) + a·b with c = -1, a = 1 + 2^-27, b = 1 - 2^-27: a·b = 1 - 2^-54 rounds to 1,
  // so S = +0. An FMA would keep a·b exact and give -2^-54.
  const double a = 1 + std::ldexp(1.0, -27);
  const double b = 1 - std::ldexp(1.0, -27);
  ASSERT_NE(std::fma(a, b, -1.0), 0.0);  // the test can fail: FMA differs here
  expect_both_give("i, i ->", {Tensor(Shape{2}, std::vector<double>{-1.0, a}),
                               Tensor(Shape{2}, std::vector<double>{1.0, b})},
                   Tensor(Shape{}, std::vector<double>{0.0}));

  // The same in binary32 with a = 1 + 2^-13, b = 1 - 2^-13: a·b = 1 - 2^-26 rounds to 1.
  const float af = 1 + std::ldexp(1.0f, -13);
  const float bf = 1 - std::ldexp(1.0f, -13);
  ASSERT_NE(std::fma(af, bf, -1.0f), 0.0f);
  expect_both_give("i, i ->", {Tensor(Shape{2}, std::vector<float>{-1.0f, af}),
                               Tensor(Shape{2}, std::vector<float>{1.0f, bf})},
                   Tensor(Shape{}, std::vector<float>{0.0f}));
}

TEST(FloatingPointEnvironment, SubnormalsSurvive) {
  // A subnormal input read unchanged (no DAZ) and a product that lands in the subnormal range (no FTZ).
  const double tiny = std::numeric_limits<double>::denorm_min();
  const double min_normal = std::numeric_limits<double>::min();
  ASSERT_TRUE(std::fpclassify(min_normal / 2) == FP_SUBNORMAL);
  expect_both_give("i, i -> i", {Tensor(Shape{2}, std::vector<double>{tiny, min_normal}),
                                 Tensor(Shape{2}, std::vector<double>{1.0, 0.5})},
                   Tensor(Shape{2}, std::vector<double>{tiny, min_normal / 2}));

  const float tiny32 = std::numeric_limits<float>::denorm_min();
  expect_both_give("i, i -> i", {Tensor(Shape{1}, std::vector<float>{tiny32}),
                                 Tensor(Shape{1}, std::vector<float>{3.0f})},
                   Tensor(Shape{1}, std::vector<float>{3 * tiny32}));
}

TEST(FloatingPointEnvironment, ControlRegisterHasNoFlushModesAndRoundsToNearest) {
  EXPECT_EQ(std::fegetround(), FE_TONEAREST);
#if defined(__SSE__)
  const unsigned csr = _mm_getcsr();
  EXPECT_EQ(csr & 0x8000u, 0u) << "FTZ is set";
  EXPECT_EQ(csr & 0x0040u, 0u) << "DAZ is set";
#endif
}

// SEMANTICS §13.10: in `acc + v` and `P · x` the left operand is the accumulator, and it decides the
// NaN payload when both operands are NaN. The compiler may commute a plain `a * b`, so without the
// explicit choice in core/scalar.hpp reference and fused disagreed under --strict-nan-payload on
// `i j, j k -> i k` (found by `check ... --values edge --seed 4 --strict-nan-payload`).
template <class T, class Bits>
T nan_with(Bits payload) {
  T v;
  std::memcpy(&v, &payload, sizeof v);
  return v;
}
template <class T, class Bits>
Bits bits_of(T v) {
  Bits b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

TEST(FloatingPointEnvironment, TheLeftOperandsNanWinsInProductsAndSums) {
  const float p = nan_with<float>(std::uint32_t{0x7fc00001});  // +NaN, payload 1
  const float q = nan_with<float>(std::uint32_t{0xffc00002});  // -NaN, payload 2
  for (const bool swap : {false, true}) {
    const float first = swap ? q : p, second = swap ? p : q;
    Tensor fused_result;
    // A product of two NaN factors: P = x_0 · x_1 keeps x_0's NaN.
    Tensor ref = run_both("i, i ->", {Tensor(Shape{1}, std::vector<float>{first}),
                                      Tensor(Shape{1}, std::vector<float>{second})},
                          &fused_result);
    EXPECT_EQ((bits_of<float, std::uint32_t>(ref.values<float>()[0])), (bits_of<float, std::uint32_t>(first)));
    EXPECT_TRUE(test::bitwise_same(ref, fused_result, /*strict_nan=*/true));
    // A sum of two NaN terms: S = (0 + t_0) + t_1 keeps t_0's NaN.
    ref = run_both("i ->", {Tensor(Shape{2}, std::vector<float>{first, second})}, &fused_result);
    EXPECT_EQ((bits_of<float, std::uint32_t>(ref.values<float>()[0])), (bits_of<float, std::uint32_t>(first)));
    EXPECT_TRUE(test::bitwise_same(ref, fused_result, /*strict_nan=*/true));
    // The found case's shape: a matmul whose element meets -Inf, then +NaN·(-NaN).
    const float inf = std::numeric_limits<float>::infinity();
    ref = run_both("i j, j k -> i k",
                   {Tensor(Shape{2, 2}, std::vector<float>{-inf, first, 1.0f, 2.0f}),
                    Tensor(Shape{2, 2}, std::vector<float>{1.0f, 3.0f, second, 4.0f})},
                   &fused_result);
    EXPECT_EQ((bits_of<float, std::uint32_t>(ref.values<float>()[0])), (bits_of<float, std::uint32_t>(first)));
    EXPECT_TRUE(test::bitwise_same(ref, fused_result, /*strict_nan=*/true));
  }
  const double d = nan_with<double>(std::uint64_t{0x7ff8000000000001}), e = nan_with<double>(std::uint64_t{0xfff8000000000002});
  Tensor fused_result;
  const Tensor ref = run_both("i, i ->", {Tensor(Shape{1}, std::vector<double>{e}), Tensor(Shape{1}, std::vector<double>{d})},
                              &fused_result);
  EXPECT_EQ((bits_of<double, std::uint64_t>(ref.values<double>()[0])), (bits_of<double, std::uint64_t>(e)));
  EXPECT_TRUE(test::bitwise_same(ref, fused_result, /*strict_nan=*/true));
}

}  // namespace
}  // namespace einfuzz
