// The floating-point environment of reference and fused (SEMANTICS §13.2): no FMA contraction,
// gradual underflow (no FTZ/DAZ), default rounding.
#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
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

TEST(FloatingPointEnvironment, ProductPlusSumIsNeverFusedIntoAnFma) {
  // S = (0 + c·1) + a·b with c = -1, a = 1 + 2^-27, b = 1 - 2^-27: a·b = 1 - 2^-54 rounds to 1,
  // so S = +0. An FMA would keep a·b exact and give -2^-54.
  const double a = 1 + std::ldexp(1.0, -27);
  const double b = 1 - std::ldexp(1.0, -27);
  ASSERT_NE(std::fma(a, b, -1.0), 0.0);  // the test can fail: FMA differs here
  Tensor fused_result;
  const Tensor ref = run_both("i, i ->", {Tensor(Shape{2}, std::vector<double>{-1.0, a}),
                                          Tensor(Shape{2}, std::vector<double>{1.0, b})},
                              &fused_result);
  const Tensor expected(Shape{}, std::vector<double>{0.0});
  EXPECT_TRUE(test::bitwise_same(expected, ref));
  EXPECT_TRUE(test::bitwise_same(expected, fused_result));

  // The same in binary32 with a = 1 + 2^-13, b = 1 - 2^-13: a·b = 1 - 2^-26 rounds to 1.
  const float af = 1 + std::ldexp(1.0f, -13);
  const float bf = 1 - std::ldexp(1.0f, -13);
  ASSERT_NE(std::fma(af, bf, -1.0f), 0.0f);
  const Tensor ref32 = run_both("i, i ->", {Tensor(Shape{2}, std::vector<float>{-1.0f, af}),
                                            Tensor(Shape{2}, std::vector<float>{1.0f, bf})},
                                &fused_result);
  const Tensor expected32(Shape{}, std::vector<float>{0.0f});
  EXPECT_TRUE(test::bitwise_same(expected32, ref32));
  EXPECT_TRUE(test::bitwise_same(expected32, fused_result));
}

TEST(FloatingPointEnvironment, SubnormalsSurvive) {
  // A subnormal input read unchanged (no DAZ) and a product that lands in the subnormal range (no FTZ).
  const double tiny = std::numeric_limits<double>::denorm_min();
  const double min_normal = std::numeric_limits<double>::min();
  Tensor fused_result;
  const Tensor ref = run_both("i, i -> i", {Tensor(Shape{2}, std::vector<double>{tiny, min_normal}),
                                            Tensor(Shape{2}, std::vector<double>{1.0, 0.5})},
                              &fused_result);
  const Tensor expected(Shape{2}, std::vector<double>{tiny, min_normal / 2});
  ASSERT_TRUE(std::fpclassify(min_normal / 2) == FP_SUBNORMAL);
  EXPECT_TRUE(test::bitwise_same(expected, ref));
  EXPECT_TRUE(test::bitwise_same(expected, fused_result));

  const float tiny32 = std::numeric_limits<float>::denorm_min();
  const Tensor ref32 = run_both("i, i -> i", {Tensor(Shape{1}, std::vector<float>{tiny32}),
                                              Tensor(Shape{1}, std::vector<float>{3.0f})},
                                &fused_result);
  const Tensor expected32(Shape{1}, std::vector<float>{3 * tiny32});
  EXPECT_TRUE(test::bitwise_same(expected32, ref32));
  EXPECT_TRUE(test::bitwise_same(expected32, fused_result));
}

TEST(FloatingPointEnvironment, ControlRegisterHasNoFlushModesAndRoundsToNearest) {
  EXPECT_EQ(std::fegetround(), FE_TONEAREST);
#if defined(__SSE__)
  const unsigned csr = _mm_getcsr();
  EXPECT_EQ(csr & 0x8000u, 0u) << "FTZ is set";
  EXPECT_EQ(csr & 0x0040u, 0u) << "DAZ is set";
#endif
}

}  // namespace
}  // namespace einfuzz
