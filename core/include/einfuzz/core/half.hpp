// IEEE binary16 (f16) and bfloat16 (bf16) as element types: 16 bits of storage, with the ordered
// semantics' arithmetic (ORACLE §8): each + − · ÷ is one binary32 operation rounded once to the
// format, to nearest even. binary32 has at least 2p + 2 bits for both formats, so rounding the
// binary32 result again is the same as rounding the exact result once.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace einfuzz {

namespace detail {

/// Rounds `x` to nearest even in the 16-bit binary format with `P` significand bits (hidden bit
/// included) and 16 − P exponent bits; returns its bits. Overflow gives ±inf, underflow ±0 or a
/// subnormal; a NaN keeps its sign and its payload's top bits, made quiet.
template <int P>
std::uint16_t round_to_bits16(double x) noexcept {
  constexpr int kEBits = 16 - P;
  constexpr int kEmax = (1 << (kEBits - 1)) - 1;
  constexpr int kEmin = 1 - kEmax;
  constexpr std::uint16_t kExpMask = static_cast<std::uint16_t>(((1u << kEBits) - 1) << (P - 1));
  constexpr std::uint32_t kHidden = 1u << (P - 1);
  const auto db = std::bit_cast<std::uint64_t>(x);
  const auto sign = static_cast<std::uint16_t>((db >> 63) << 15);
  const std::uint64_t magnitude = db & 0x7fffffffffffffffULL;
  if (magnitude > 0x7ff0000000000000ULL) {  // NaN
    const auto payload = static_cast<std::uint16_t>((db >> (52 - (P - 1))) & (kHidden - 1));
    return static_cast<std::uint16_t>(sign | kExpMask | payload | (kHidden >> 1));
  }
  if (magnitude == 0x7ff0000000000000ULL) return static_cast<std::uint16_t>(sign | kExpMask);
  // Every subnormal double (and 0) lies below half the formats' smallest subnormal: it rounds to ±0.
  const auto biased = static_cast<int>(magnitude >> 52);
  if (biased == 0) return sign;
  // |x| = significand · 2^(e − 52) with the hidden bit set, e = floor(log2 |x|).
  const int e = biased - 1023;
  if (e > kEmax) return static_cast<std::uint16_t>(sign | kExpMask);
  const std::uint64_t significand = (magnitude & 0x000fffffffffffffULL) | (std::uint64_t{1} << 52);
  const int q = (e < kEmin ? kEmin : e) - (P - 1);  // the exponent of one unit in the last place
  const int drop = q - (e - 52);                     // significand bits below that unit: >= 53 − P
  // Below half a unit (significand < 2^53 <= 2^(drop − 1)): rounds to ±0.
  if (drop > 53) return sign;
  std::uint64_t whole = significand >> drop;
  const std::uint64_t rest = significand & ((std::uint64_t{1} << drop) - 1);
  const std::uint64_t half = std::uint64_t{1} << (drop - 1);
  if (rest > half || (rest == half && (whole & 1) != 0)) whole += 1;  // nearest, ties to even
  auto m = static_cast<std::uint32_t>(whole);
  int exponent = q + (P - 1);
  if (m == (kHidden << 1)) {  // rounded up to the next binade
    m = kHidden;
    exponent += 1;
  }
  if (m < kHidden) return static_cast<std::uint16_t>(sign | m);  // subnormal (or zero)
  if (exponent > kEmax) return static_cast<std::uint16_t>(sign | kExpMask);
  return static_cast<std::uint16_t>(sign | (static_cast<std::uint32_t>(exponent - kEmin + 1) << (P - 1)) |
                                    (m - kHidden));
}

/// The value of the 16-bit format's `bits` as a float (exact: both formats are subsets of binary32;
/// a NaN's payload moves to the top of binary32's).
template <int P>
constexpr float bits16_to_float(std::uint16_t bits) noexcept {
  if constexpr (P == 8) {
    return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);  // bfloat16 is binary32's top half
  }
  constexpr int kEBits = 16 - P;
  constexpr int kBias = (1 << (kEBits - 1)) - 1;
  const std::uint32_t sign = static_cast<std::uint32_t>(bits >> 15) << 31;
  const std::uint32_t field = (bits >> (P - 1)) & ((1u << kEBits) - 1);
  std::uint32_t mantissa = bits & ((1u << (P - 1)) - 1);
  if (field == (1u << kEBits) - 1) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << (24 - P)));
  if (field == 0) {
    if (mantissa == 0) return std::bit_cast<float>(sign);
    // A subnormal of the format: normalise it into binary32 (whose normal range covers f16's).
    int exponent = 1 - kBias;
    while ((mantissa & (1u << (P - 1))) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    mantissa &= (1u << (P - 1)) - 1;
    return std::bit_cast<float>(sign | (static_cast<std::uint32_t>(exponent + 127) << 23) | (mantissa << (24 - P)));
  }
  const int exponent = static_cast<int>(field) - kBias;
  return std::bit_cast<float>(sign | (static_cast<std::uint32_t>(exponent + 127) << 23) | (mantissa << (24 - P)));
}

}  // namespace detail

/// A 16-bit binary floating-point element with `P` significand bits: 11 is IEEE binary16, 8 is
/// bfloat16. Converts to float exactly and implicitly (so comparisons, std::isnan and printing work
/// as on the value); conversions into it round to nearest even and are explicit.
template <int P>
class Float16Format {
 public:
  static constexpr int kDigits = P;

  constexpr Float16Format() noexcept = default;  ///< +0
  template <class A, std::enable_if_t<std::is_arithmetic_v<A>, int> = 0>
  explicit Float16Format(A value) noexcept
      // Integers above 2^53 round twice (to double, then here); double has >= 2P + 2 bits, so the
      // result is the correctly rounded one.
      : bits_(detail::round_to_bits16<P>(static_cast<double>(value))) {}

  /// The element whose bit pattern is `bits`.
  static constexpr Float16Format from_bits(std::uint16_t bits) noexcept {
    Float16Format f;
    f.bits_ = bits;
    return f;
  }
  constexpr std::uint16_t bits() const noexcept { return bits_; }
  constexpr operator float() const noexcept { return detail::bits16_to_float<P>(bits_); }

  /// Negation flips the sign bit (also of a NaN), like IEEE negate.
  constexpr Float16Format operator-() const noexcept { return from_bits(static_cast<std::uint16_t>(bits_ ^ 0x8000u)); }
  friend Float16Format operator+(Float16Format a, Float16Format b) noexcept {
    return Float16Format(static_cast<float>(a) + static_cast<float>(b));
  }
  friend Float16Format operator-(Float16Format a, Float16Format b) noexcept {
    return Float16Format(static_cast<float>(a) - static_cast<float>(b));
  }
  friend Float16Format operator*(Float16Format a, Float16Format b) noexcept {
    return Float16Format(static_cast<float>(a) * static_cast<float>(b));
  }
  friend Float16Format operator/(Float16Format a, Float16Format b) noexcept {
    return Float16Format(static_cast<float>(a) / static_cast<float>(b));
  }
  Float16Format& operator+=(Float16Format b) noexcept { return *this = *this + b; }
  Float16Format& operator-=(Float16Format b) noexcept { return *this = *this - b; }
  Float16Format& operator*=(Float16Format b) noexcept { return *this = *this * b; }
  Float16Format& operator/=(Float16Format b) noexcept { return *this = *this / b; }

 private:
  std::uint16_t bits_ = 0;
};

/// IEEE binary16: u = 2^-11, emin = −14, Ω = 65504.
using Float16 = Float16Format<11>;
/// bfloat16, the upper 16 bits of a binary32: u = 2^-8, emin = −126, Ω = (2 − 2^-7)·2^127.
using BFloat16 = Float16Format<8>;

static_assert(sizeof(Float16) == 2 && std::is_trivially_copyable_v<Float16>);

/// True for every floating element type of a case: float, double, Float16, BFloat16.
template <class T>
inline constexpr bool is_float_type_v =
    std::is_floating_point_v<T> || std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

/// True for the 16-bit formats, whose arithmetic goes through binary32.
template <class T>
inline constexpr bool is_half_type_v = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

/// std::nextafter for every float element type: the next representable value after `from` in the
/// direction of `to` (the 16-bit formats step their own bits).
template <class T>
T next_toward(T from, T to) noexcept {
  if constexpr (is_half_type_v<T>) {
    const float a = from, b = to;
    if (std::isnan(a) || std::isnan(b)) return T(a + b);
    if (a == b) return to;
    if (a == 0) return T::from_bits(b > 0 ? std::uint16_t{1} : std::uint16_t{0x8001});
    const bool grows = (a < b) == (a > 0);  // the magnitude moves away from zero
    return T::from_bits(static_cast<std::uint16_t>(grows ? from.bits() + 1 : from.bits() - 1));
  } else {
    return std::nextafter(from, to);
  }
}

}  // namespace einfuzz

/// numeric_limits as for an IEEE format (the project's bounds and the case format read these).
template <int P>
class std::numeric_limits<einfuzz::Float16Format<P>> {
  using F = einfuzz::Float16Format<P>;
  static constexpr int kEBits = 16 - P;
  static constexpr int kEmax = (1 << (kEBits - 1)) - 1;

 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = true;
  static constexpr std::float_denorm_style has_denorm = std::denorm_present;
  static constexpr bool has_denorm_loss = false;
  static constexpr std::float_round_style round_style = std::round_to_nearest;
  static constexpr bool is_iec559 = true;
  static constexpr bool is_bounded = true;
  static constexpr bool is_modulo = false;
  static constexpr int digits = P;
  static constexpr int digits10 = P == 11 ? 3 : 2;
  static constexpr int max_digits10 = P == 11 ? 5 : 4;
  static constexpr int radix = 2;
  // C++'s convention: emin + 1 and emax + 1.
  static constexpr int min_exponent = 2 - kEmax;
  static constexpr int max_exponent = kEmax + 1;
  static constexpr int min_exponent10 = P == 11 ? -4 : -37;
  static constexpr int max_exponent10 = P == 11 ? 4 : 38;
  static constexpr bool traps = false;
  static constexpr bool tinyness_before = false;

  static constexpr F min() noexcept { return F::from_bits(static_cast<std::uint16_t>(1u << (P - 1))); }
  static constexpr F max() noexcept { return F::from_bits(static_cast<std::uint16_t>(0x7fffu & ~(1u << (P - 1)))); }
  static constexpr F lowest() noexcept { return F::from_bits(static_cast<std::uint16_t>(0xffffu & ~(1u << (P - 1)))); }
  static constexpr F epsilon() noexcept {
    return F::from_bits(static_cast<std::uint16_t>((kEmax - (P - 1)) << (P - 1)));
  }
  static constexpr F round_error() noexcept { return F::from_bits(static_cast<std::uint16_t>((kEmax - 1) << (P - 1))); }
  static constexpr F infinity() noexcept { return F::from_bits(static_cast<std::uint16_t>(((1u << kEBits) - 1) << (P - 1))); }
  static constexpr F quiet_NaN() noexcept {
    return F::from_bits(static_cast<std::uint16_t>((((1u << kEBits) - 1) << (P - 1)) | (1u << (P - 2))));
  }
  static constexpr F signaling_NaN() noexcept {
    return F::from_bits(static_cast<std::uint16_t>((((1u << kEBits) - 1) << (P - 1)) | 1u));
  }
  static constexpr F denorm_min() noexcept { return F::from_bits(1); }
};
