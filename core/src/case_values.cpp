// The value spellings of CASES.md: hex-float text out (computed from the bits, locale-free) and a
// strict, never-rounding reader back in; integers in decimal, bools as JSON booleans.
#include "case_values.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>
#include <type_traits>
#include <variant>

#include "einfuzz/core/case.hpp"
#include "einfuzz/core/harness_bug.hpp"

namespace einfuzz {

namespace detail {

std::string hex_bits(std::uint64_t bits, int digits) {
  static constexpr char kHexDigitChars[] = "0123456789abcdef";
  std::string out(static_cast<std::size_t>(digits), '0');
  for (int i = digits - 1; i >= 0; --i, bits >>= 4)
    out[static_cast<std::size_t>(i)] = kHexDigitChars[bits & 0xf];
  return out;
}

}  // namespace detail

namespace {

using detail::hex_bits;

/// The bit layout of an IEEE binary format, derived from its precision so each format is one line.
template <class F>
struct FloatBits {
  using Bits = std::conditional_t<sizeof(F) == 2, std::uint16_t,
                                  std::conditional_t<sizeof(F) == 4, std::uint32_t, std::uint64_t>>;
  static_assert(sizeof(Bits) == sizeof(F));
  static constexpr int kMantissaBits = std::numeric_limits<F>::digits - 1;
  // The casts keep 16-bit Bits from promoting to int (where ~0 >> 1 would stay negative).
  static constexpr Bits kMantissaMask = static_cast<Bits>((Bits{1} << kMantissaBits) - 1);
  static constexpr Bits kExponentMask = static_cast<Bits>(static_cast<Bits>(static_cast<Bits>(~Bits{0}) >> 1) & ~kMantissaMask);
  static constexpr Bits kDefaultNan = static_cast<Bits>(kExponentMask | (Bits{1} << (kMantissaBits - 1)));  // quiet, no payload
  static constexpr int kHexDigits = 2 * static_cast<int>(sizeof(F));
};
static_assert(FloatBits<float>::kDefaultNan == 0x7fc00000u && FloatBits<float>::kExponentMask == 0x7f800000u);
static_assert(FloatBits<Float16>::kDefaultNan == 0x7e00u && FloatBits<Float16>::kExponentMask == 0x7c00u);
static_assert(FloatBits<BFloat16>::kDefaultNan == 0x7fc0u && FloatBits<BFloat16>::kExponentMask == 0x7f80u);
static_assert(FloatBits<double>::kDefaultNan == 0x7ff8000000000000u &&
              FloatBits<double>::kMantissaMask == 0x000fffffffffffffu);


// %a as glibc prints a double, computed from the bits so the spelling (and every file name hashed
// from it) is identical on every platform and locale: "0x1.8p+1", "-0x0p+0",
// "0x0.0000000000001p-1022" for subnormals.
std::string hex_float(double v) {
  const auto bits = std::bit_cast<std::uint64_t>(v);
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  std::uint64_t mantissa = bits & FloatBits<double>::kMantissaMask;
  std::string out = (bits >> 63) ? "-0x" : "0x";
  if (biased == 0 && mantissa == 0) return out + "0p+0";
  out += biased == 0 ? '0' : '1';
  const int exponent = biased == 0 ? -1022 : biased - 1023;
  if (mantissa != 0) {
    std::string digits = hex_bits(mantissa, 13);
    digits.erase(digits.find_last_not_of('0') + 1);
    out += '.';
    out += digits;
  }
  out += exponent < 0 ? "p-" : "p+";
  out += std::to_string(exponent < 0 ? -exponent : exponent);
  return out;
}

template <class F>
std::string format_float(F v) {
  using B = FloatBits<F>;
  const auto bits = std::bit_cast<typename B::Bits>(v);
  if (std::isnan(v)) return bits == B::kDefaultNan ? "nan" : "nan:0x" + hex_bits(bits, B::kHexDigits);
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  return hex_float(static_cast<double>(v));  // float (and f16, bf16) -> double is exact
}

int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

/// A C99 hex float decomposed exactly: ±significand × 2^exponent with an odd significand (or 0).
struct HexFloat {
  enum class Status { ok, malformed, too_many_bits } status = Status::malformed;
  bool negative = false;
  std::uint64_t significand = 0;
  std::int64_t exponent = 0;
};

// Strict syntax: [-]0x<hex>[.<hex>]p[+-]<dec>, at least one hex digit, nothing before or after.
// Parsed by hand rather than with strtod: strtod tolerates leading spaces, decimal floats and
// partial consumption, its radix character depends on the locale, and it rounds silently where
// this format must reject.
HexFloat parse_hex_float(std::string_view s) {
  HexFloat r;
  std::size_t i = 0;
  if (i < s.size() && s[i] == '-') {
    r.negative = true;
    ++i;
  }
  if (s.size() - i < 2 || s[i] != '0' || (s[i + 1] != 'x' && s[i + 1] != 'X')) return r;
  i += 2;
  const std::size_t int_begin = i;
  while (i < s.size() && hex_value(s[i]) >= 0) ++i;
  const std::size_t int_digits = i - int_begin;
  std::size_t frac_begin = i;
  if (i < s.size() && s[i] == '.') frac_begin = ++i;
  while (i < s.size() && hex_value(s[i]) >= 0) ++i;
  const std::size_t frac_digits = i - frac_begin;
  if (int_digits + frac_digits == 0) return r;
  if (i >= s.size() || (s[i] != 'p' && s[i] != 'P')) return r;
  ++i;
  bool exponent_negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) exponent_negative = s[i++] == '-';
  if (i >= s.size() || !is_digit(s[i])) return r;
  // Saturate: any exponent beyond 2^40 is out of every dtype's range anyway.
  constexpr std::int64_t kExponentCap = std::int64_t{1} << 40;
  std::int64_t exponent = 0;
  for (; i < s.size() && is_digit(s[i]); ++i) exponent = std::min(kExponentCap, exponent * 10 + (s[i] - '0'));
  if (i != s.size()) return r;

  const auto digit = [&](std::size_t j) {
    return hex_value(j < int_digits ? s[int_begin + j] : s[frac_begin + (j - int_digits)]);
  };
  const std::size_t n = int_digits + frac_digits;
  std::size_t first = n;
  std::size_t last = 0;
  for (std::size_t j = 0; j < n; ++j) {
    if (digit(j) != 0) {
      if (first == n) first = j;
      last = j;
    }
  }
  r.status = HexFloat::Status::ok;
  if (first == n) return r;  // ±0, whatever the exponent
  // 15 hex digits from a non-zero one to a non-zero one span at least 54 bits: more than f64 holds.
  if (last - first + 1 > 14) {
    r.status = HexFloat::Status::too_many_bits;
    return r;
  }
  std::uint64_t significand = 0;
  for (std::size_t j = first; j <= last; ++j)
    significand = significand * 16 + static_cast<std::uint64_t>(digit(j));
  const int trailing = std::countr_zero(significand);
  r.significand = significand >> trailing;
  r.exponent = (exponent_negative ? -exponent : exponent) +
               4 * (static_cast<std::int64_t>(int_digits) - 1 - static_cast<std::int64_t>(last)) + trailing;
  return r;
}

/// Parses one float spelling into `out`; returns why it is rejected, or an empty string.
template <class F>
std::string parse_float(std::string_view s, F& out) {
  using B = FloatBits<F>;
  using L = std::numeric_limits<F>;
  if (s == "inf" || s == "-inf") {
    out = s[0] == '-' ? -L::infinity() : L::infinity();
    return {};
  }
  if (s == "nan") {
    out = std::bit_cast<F>(B::kDefaultNan);
    return {};
  }
  constexpr std::string_view kNanPrefix = "nan:0x";
  if (s.substr(0, kNanPrefix.size()) == kNanPrefix) {
    const std::string_view digits = s.substr(kNanPrefix.size());
    typename B::Bits bits = 0;
    bool ok = digits.size() == static_cast<std::size_t>(B::kHexDigits);
    for (char c : digits) {
      const int d = hex_value(c);
      ok = ok && d >= 0 && !(c >= 'A' && c <= 'F');
      bits = static_cast<typename B::Bits>((bits << 4) | static_cast<typename B::Bits>(d < 0 ? 0 : d));
    }
    if (!ok) {
      return "a NaN is spelled \"nan:0x\" followed by exactly " + std::to_string(B::kHexDigits) +
             " lowercase hex digits (its raw bits)";
    }
    if ((bits & B::kExponentMask) != B::kExponentMask || (bits & B::kMantissaMask) == 0) {
      return "the bits 0x" + std::string(digits) + " are not a NaN";
    }
    out = std::bit_cast<F>(bits);
    return {};
  }
  const HexFloat h = parse_hex_float(s);
  if (h.status == HexFloat::Status::malformed) {
    return "not a float spelling: expected a C99 hex float such as \"0x1.8p+1\", or \"inf\", \"-inf\", "
           "\"nan\", \"nan:0x<raw bits>\"";
  }
  // Representable iff the significand fits the precision, its lowest bit is no finer than the
  // smallest subnormal and its highest bit no coarser than the largest finite exponent.
  const int bits = h.significand == 0 ? 0 : std::bit_width(h.significand);
  const bool exact = h.status == HexFloat::Status::ok &&
                     (h.significand == 0 || (bits <= L::digits && h.exponent >= L::min_exponent - L::digits &&
                                             h.exponent + bits - 1 <= L::max_exponent - 1));
  if (!exact) {
    return "not exactly representable in " + std::string(dtype_name(dtype_of_v<F>)) +
           " (the format is bit-exact: no rounding, no overflow, no underflow)";
  }
  // ldexp of a significand below 2^53 is exact for a representable result.
  const double magnitude =
      h.significand == 0 ? 0.0 : std::ldexp(static_cast<double>(h.significand), static_cast<int>(h.exponent));
  out = static_cast<F>(h.negative ? -magnitude : magnitude);
  return {};
}

template <class I>
std::string parse_integer(std::string_view s, I& out) {
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, out);
  if (ec == std::errc::result_out_of_range && ptr == end) {
    return "out of range for " + std::string(dtype_name(dtype_of_v<I>));
  }
  if (s.empty() || ec != std::errc() || ptr != end) return "not a decimal integer";
  return {};
}

}  // namespace

namespace detail {

std::string parse_spelling(std::string_view s, float& out) { return parse_float(s, out); }
std::string parse_spelling(std::string_view s, double& out) { return parse_float(s, out); }
std::string parse_spelling(std::string_view s, Float16& out) { return parse_float(s, out); }
std::string parse_spelling(std::string_view s, BFloat16& out) { return parse_float(s, out); }
std::string parse_spelling(std::string_view s, std::int32_t& out) { return parse_integer(s, out); }
std::string parse_spelling(std::string_view s, std::int64_t& out) { return parse_integer(s, out); }

}  // namespace detail

std::string format_value(const Tensor& t, std::int64_t flat_index) {
  if (flat_index < 0 || flat_index >= t.size()) {
    harness_bug("format_value: index " + std::to_string(flat_index) + " out of range for " +
                std::to_string(t.size()) + " elements");
  }
  const auto i = static_cast<std::size_t>(flat_index);
  return std::visit(
      [i](const auto& v) -> std::string {
        using T = typename std::decay_t<decltype(v)>::value_type;
        if constexpr (is_float_type_v<T>) {
          return format_float(v[i]);
        } else if constexpr (std::is_same_v<T, Bool8>) {
          return v[i] ? "true" : "false";  // any non-zero byte is true
        } else {
          return std::to_string(v[i]);
        }
      },
      t.storage());
}

}  // namespace einfuzz
