// The 16-bit element types against two independent implementations: Eigen's Eigen::half and
// Eigen::bfloat16 (the library's own conversions) and the reference's exact rounding of a dyadic
// (reference/src/exact.cpp), so a wrong bit in core's conversions cannot hide behind either.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <Eigen/Core>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "einfuzz/core/case.hpp"
#include "einfuzz/core/dtype.hpp"
#include "einfuzz/core/half.hpp"
#include "einfuzz/reference/exact.hpp"

namespace einfuzz {
namespace {

template <class Ours, class Theirs>
void expect_every_pattern_converts_like(const char* name) {
  for (std::uint32_t b = 0; b <= 0xffff; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const float ours = Ours::from_bits(bits);
    const float theirs = static_cast<float>(Eigen::numext::bit_cast<Theirs>(bits));
    if (std::isnan(theirs)) {
      ASSERT_TRUE(std::isnan(ours)) << name << " bits 0x" << std::hex << b;
      ASSERT_EQ(std::signbit(ours), std::signbit(theirs)) << name << " bits 0x" << std::hex << b;
    } else {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(ours), std::bit_cast<std::uint32_t>(theirs))
          << name << " bits 0x" << std::hex << b;
    }
  }
}

TEST(Half, EveryF16AndBf16PatternWidensToTheFloatEigenGives) {
  expect_every_pattern_converts_like<Float16, Eigen::half>("f16");
  expect_every_pattern_converts_like<BFloat16, Eigen::bfloat16>("bf16");
}

/// Rounds `x` both ways and compares bits (NaNs: both NaN with the same sign).
template <class Ours, class Theirs>
void expect_rounds_like_eigen(float x) {
  const std::uint16_t ours = Ours(x).bits();
  const auto theirs = Eigen::numext::bit_cast<std::uint16_t>(Theirs(x));
  if (std::isnan(x)) {
    RC_ASSERT(std::isnan(static_cast<float>(Ours::from_bits(ours))));
    RC_ASSERT((ours >> 15) == (theirs >> 15));
  } else {
    RC_ASSERT(ours == theirs);
  }
}

// Floats near every 16-bit value (the value itself, the midpoints to its neighbours, one binary32
// ulp either side of them) are where round-to-nearest-even can go wrong.
template <class Ours, class Theirs>
void expect_ties_round_like_eigen() {
  for (std::uint32_t b = 0; b <= 0xffff; ++b) {
    const float v = Ours::from_bits(static_cast<std::uint16_t>(b));
    const float next = Ours::from_bits(static_cast<std::uint16_t>(b + 1));
    if (!std::isfinite(v)) continue;
    const float mid = std::isfinite(next) ? static_cast<float>((static_cast<double>(v) + next) / 2) : v;
    for (float x : {v, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, mid * 4 + 1), std::nextafter(v, 0.0f)}) {
      const std::uint16_t ours = Ours(x).bits();
      const auto theirs = Eigen::numext::bit_cast<std::uint16_t>(Theirs(x));
      ASSERT_EQ(ours, theirs) << "x = " << std::hexfloat << x;
    }
  }
}

TEST(Half, FloatsAtTiesRoundToNearestEvenLikeEigen) {
  expect_ties_round_like_eigen<Float16, Eigen::half>();
  expect_ties_round_like_eigen<BFloat16, Eigen::bfloat16>();
}

RC_GTEST_PROP(Half, AnyFloatRoundsLikeEigen, (std::uint32_t bits)) {
  const float x = std::bit_cast<float>(bits);
  expect_rounds_like_eigen<Float16, Eigen::half>(x);
  expect_rounds_like_eigen<BFloat16, Eigen::bfloat16>(x);
}

// A double rounds once (not through float): the reference's exact rounding of the same dyadic is
// the independent answer.
template <class T>
void expect_double_rounds_like_the_reference(double x) {
  if (!std::isfinite(x)) return;
  const T ours(x);
  const T exact = x == 0 ? T(x) : reference::Dyadic::of(x).round<T>(reference::Rounding::nearest_even);
  RC_ASSERT(ours.bits() == exact.bits());
}

RC_GTEST_PROP(Half, AnyDoubleRoundsOnceLikeTheReference, (std::uint64_t bits, int scale)) {
  // Doubles near the formats' range: a random significand at a random exponent in [-160, 140].
  const double x = std::ldexp(std::bit_cast<double>((bits & 0x800fffffffffffffULL) | 0x3ff0000000000000ULL),
                              (scale % 300) - 160);
  expect_double_rounds_like_the_reference<Float16>(x);
  expect_double_rounds_like_the_reference<BFloat16>(x);
}

// Doubles one double ulp either side of every midpoint (a sticky bit far below binary32's) and
// of every 16-bit value, positive and negative, the overflow threshold too: the reference's exact
// rounding is the answer.
template <class T>
void expect_double_ties_round_like_the_reference() {
  for (std::uint32_t b = 0; b < 0xffff; ++b) {
    const double v = static_cast<float>(T::from_bits(static_cast<std::uint16_t>(b)));
    double next = static_cast<float>(T::from_bits(static_cast<std::uint16_t>(b + 1)));
    // Past the largest value, the next "value" is 2^(emax+1): its midpoint is where overflow starts.
    if (std::isinf(next)) next = std::ldexp(1.0, std::numeric_limits<T>::max_exponent);
    if (!std::isfinite(v) || std::isnan(next) || std::signbit(v) || v >= next) continue;
    const double mid = (v + next) / 2;  // exact: v and next are 16-bit values, a double has room
    for (double x : {mid, std::nextafter(mid, 0.0), std::nextafter(mid, next), std::nextafter(v, 0.0),
                     std::nextafter(v, next)}) {
      for (double y : {x, -x}) {
        const std::uint16_t ours = T(y).bits();
        const std::uint16_t exact =
            y == 0 ? T(y).bits() : reference::Dyadic::of(y).round<T>(reference::Rounding::nearest_even).bits();
        ASSERT_EQ(ours, exact) << "x = " << std::hexfloat << y;
      }
    }
  }
}

TEST(Half, DoublesAtTiesRoundOnceLikeTheReference) {
  expect_double_ties_round_like_the_reference<Float16>();
  expect_double_ties_round_like_the_reference<BFloat16>();
}

TEST(Half, ArithmeticIsOneFloatOperationRoundedOnce) {
  // 2048 + 1 is a tie in f16 (2049 lies between 2048 and 2050): nearest even keeps 2048, so summing
  // ones in f16 stops growing there (ORACLE §8). bf16 stops at 256.
  EXPECT_EQ(static_cast<float>(Float16(2048) + Float16(1)), 2048.0f);
  EXPECT_EQ(static_cast<float>(Float16(2048) + Float16(3)), 2052.0f);
  EXPECT_EQ(static_cast<float>(BFloat16(256) + BFloat16(1)), 256.0f);
  // 65520 is the midpoint between Ω = 65504 and 2^16: it and everything above round to inf.
  EXPECT_EQ(static_cast<float>(Float16(65504) + Float16(15)), 65504.0f);
  EXPECT_TRUE(std::isinf(static_cast<float>(Float16(65504) + Float16(16))));
  EXPECT_EQ((-Float16(0)).bits(), 0x8000);
  EXPECT_EQ(std::numeric_limits<Float16>::max().bits(), 0x7bff);
  EXPECT_EQ(static_cast<float>(std::numeric_limits<BFloat16>::max()), std::ldexp(255.0f, 120));
  EXPECT_EQ(static_cast<float>(std::numeric_limits<Float16>::denorm_min()), std::ldexp(1.0f, -24));
  EXPECT_EQ(static_cast<float>(std::numeric_limits<Float16>::epsilon()), std::ldexp(1.0f, -10));
}

TEST(Half, TheDTypeTableAgreesWithTheTypes) {
  for (const DType d : {DType::f16, DType::bf16}) {
    EXPECT_TRUE(is_float(d));
    EXPECT_EQ(dtype_size(d), 2u);
    EXPECT_EQ(dtype_from_name(dtype_name(d)), d);
  }
  EXPECT_EQ(dtype_info(DType::f16).format->digits, 11);
  EXPECT_EQ(dtype_info(DType::bf16).format->min_exponent, -126);
}

TEST(Half, CaseValuesAreExactInTheirFormat) {
  const auto parse = [](const std::string& dtype, const std::string& value) {
    return read_case(R"({"format":"einfuzz-case/1","op":"einsum","pattern":"i -> i","dtype":")" + dtype +
                          R"(","inputs":[{"shape":[1],"values":[")" + value + R"("]}]})", "t.case.json");
  };
  // 1 + 2^-10 is an f16 but not a bf16; 2^-24 is f16's smallest subnormal, 2^-25 is not an f16.
  EXPECT_TRUE(parse("f16", "0x1.004p+0").ok());
  EXPECT_FALSE(parse("bf16", "0x1.004p+0").ok());
  EXPECT_TRUE(parse("f16", "0x1p-24").ok());
  EXPECT_FALSE(parse("f16", "0x1p-25").ok());
  EXPECT_FALSE(parse("f16", "0x1p+16").ok());  // overflows f16
  EXPECT_TRUE(parse("bf16", "0x1p+127").ok());
  const auto nan = parse("f16", "nan:0x7e01");
  ASSERT_TRUE(nan.ok());
  EXPECT_EQ(nan->inputs[0].values<Float16>()[0].bits(), 0x7e01);
  EXPECT_FALSE(parse("f16", "nan:0x7fc00001").ok());  // a binary32 NaN's spelling
}

}  // namespace
}  // namespace einfuzz
