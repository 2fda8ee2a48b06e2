// fused's f16/bf16 arithmetic: values held in binary32 and every + · ÷ rounded to the 16-bit format
// at once (ORACLE §8), the same bits as core's Float16Format operators without their 16-bit round trip.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

#include "einfuzz/core/half.hpp"

namespace einfuzz::fused::detail {

/// Rounds the binary32 `x` to nearest even in the 16-bit format with `P` significand bits (11: f16,
/// 8: bf16) and returns the result as a binary32 (exact: the formats are subsets of binary32). The
/// same value as `float(Float16Format<P>(x))`, NaNs included: sign and the payload's top P − 2 bits
/// kept, made quiet. Integer arithmetic on the bits, except f16's subnormal range.
template <int P>
inline float round_to_format(float x) noexcept {
  static_assert(P == 11 || P == 8);
  constexpr int kDrop = 24 - P;                      // binary32 fraction bits the format lacks
  constexpr std::uint32_t kLow = (1u << kDrop) - 1;  // those bits' mask
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  const std::uint32_t sign = u & 0x80000000u;
  std::uint32_t a = u ^ sign;
  if (a >= 0x7f800000u) {                                 // ±inf or NaN
    if (a > 0x7f800000u) a = (a & ~kLow) | 0x00400000u;  // NaN: the payload's top bits, quiet
    return std::bit_cast<float>(sign | a);
  }
  if constexpr (P == 11) {
    if (a < 0x38800000u) {
      // Below 2^-14 f16 is subnormal: a fixed quantum 2^-24. In [0.5, 1) binary32's ulp is 2^-24,
      // so adding 0.5 rounds |x| to a multiple of 2^-24, ties to even (0.5 is an even multiple);
      // subtracting 0.5 again is exact (Sterbenz). -ffp-contract=off keeps the two steps.
      const float t = std::bit_cast<float>(a) + 0.5f;
      return std::bit_cast<float>(sign | std::bit_cast<std::uint32_t>(t - 0.5f));
    }
  }
  // Above the subnormal range both formats drop the same kDrop bits of every binary32 (bf16's
  // subnormals are binary32's, scaled by 2^16): round half to even on the bit pattern, where a
  // carry into the exponent is the next binade (and, for bf16, binary32's largest finite → inf).
  a = (a + (kLow >> 1) + ((a >> kDrop) & 1u)) & ~kLow;
  if constexpr (P == 11) {
    if (a > 0x477fe000u) a = 0x7f800000u;  // beyond 65504 (the tie 65520 rounds up): inf
  }
  return std::bit_cast<float>(sign | a);
}

/// An f16 (P = 11) or bf16 (P = 8) element while fused computes: its value as a binary32 (always
/// representable in the format), with + · ÷ each one binary32 operation rounded once to the
/// format — what Float16Format<P>'s operators do, without converting to 16 bits and back.
template <int P>
struct Rounded {
  float v = 0.0f;  ///< T{} is +0, as every accumulator's start

  Rounded() noexcept = default;
  /// The format's own value `h`, exactly.
  static Rounded of(Float16Format<P> h) noexcept { return exact(static_cast<float>(h)); }
  /// `f`, which must already be representable in the format.
  static Rounded exact(float f) noexcept {
    Rounded r;
    r.v = f;
    return r;
  }
  /// An integer rounded to the format (0, 1, a mean's n): through core's conversion, once per plan.
  template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
  explicit Rounded(I n) noexcept : v(static_cast<float>(Float16Format<P>(n))) {}

  friend Rounded operator+(Rounded a, Rounded b) noexcept { return exact(round_to_format<P>(a.v + b.v)); }
  friend Rounded operator*(Rounded a, Rounded b) noexcept { return exact(round_to_format<P>(a.v * b.v)); }
  friend Rounded operator/(Rounded a, Rounded b) noexcept { return exact(round_to_format<P>(a.v / b.v)); }
  friend bool operator!=(Rounded a, Rounded b) noexcept { return a.v != b.v; }
  friend bool operator<=(Rounded a, Rounded b) noexcept { return a.v <= b.v; }
};

template <class T>
inline constexpr bool is_rounded_v = false;
template <int P>
inline constexpr bool is_rounded_v<Rounded<P>> = true;

/// The 16-bit element of the representable binary32 `f` (exact; a NaN keeps its top payload bits,
/// which are all it has).
template <int P>
inline Float16Format<P> narrow_exact(float f) noexcept {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  if constexpr (P == 8) {
    return Float16Format<P>::from_bits(static_cast<std::uint16_t>(u >> 16));
  } else {
    const auto sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
    const std::uint32_t a = u & 0x7fffffffu;
    if (a >= 0x7f800000u) return Float16Format<P>::from_bits(static_cast<std::uint16_t>(sign | 0x7c00u | ((a >> 13) & 0x3ffu)));
    if (a < 0x38800000u) {  // subnormal or zero: an integer multiple of 2^-24 (exact scaling)
      const auto m = static_cast<std::uint16_t>(std::bit_cast<float>(a) * 0x1p24f);
      return Float16Format<P>::from_bits(static_cast<std::uint16_t>(sign | m));
    }
    const std::uint32_t exponent = (a >> 23) - 127 + 15;
    return Float16Format<P>::from_bits(
        static_cast<std::uint16_t>(sign | (exponent << 10) | ((a >> 13) & 0x3ffu)));
  }
}

}  // namespace einfuzz::fused::detail
