// Exact dyadic arithmetic for the multiset oracle (ORACLE.md §1): every finite float, every product
// of floats and every sum of such products is m·2^e exactly; rounding happens once, explicitly.
#pragma once

#include <gmpxx.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace einfuzz::reference {

/// Rounding directions for `Dyadic::round`.
enum class Rounding { nearest_even, up, down };

__extension__ using u128 = unsigned __int128;  // GCC/Clang extension, silenced for -Wpedantic

/// 2^e exactly, for e from T's smallest subnormal exponent up to its largest exponent (built from
/// its bits: ldexp costs a libm call, per element on the oracle's one-term path).
template <class T>
T exact_pow2(int e) noexcept {
  using L = std::numeric_limits<T>;
  using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
  constexpr int frac = L::digits - 1;
  constexpr int bias = L::max_exponent - 1;
  constexpr int min_normal = L::min_exponent - 1;
  if (e >= min_normal) return std::bit_cast<T>(static_cast<Bits>(static_cast<Bits>(e + bias) << frac));
  return std::bit_cast<T>(static_cast<Bits>(Bits{1} << (e - (min_normal - frac))));
}

/// ±magnitude·2^exponent rounded once to T (float or double) in the given direction, with IEEE
/// subnormals and overflow (nearest: ±inf past the threshold; directed: ±inf or ±max). 0 → +0.
template <class T>
T round_binary(u128 magnitude, long exponent, bool negative, Rounding mode);

/// An exact dyadic rational `m · 2^e` (m a GMP integer; zero is m = 0).
class Dyadic {
 public:
  Dyadic() = default;
  Dyadic(mpz_class mantissa, long exponent) : m_(std::move(mantissa)), e_(exponent) {}

  /// The exact value of a finite float or double (±0 both give 0: a dyadic zero has no sign).
  template <class T>
  static Dyadic of(T finite);

  /// ±magnitude·2^exponent.
  static Dyadic of_u128(u128 magnitude, long exponent, bool negative) {
    mpz_class m;
    const std::uint64_t words[2] = {static_cast<std::uint64_t>(magnitude), static_cast<std::uint64_t>(magnitude >> 64)};
    mpz_import(m.get_mpz_t(), 2, -1, sizeof(std::uint64_t), 0, 0, words);
    if (negative) m = -m;
    return Dyadic(std::move(m), exponent);
  }

  const mpz_class& mantissa() const noexcept { return m_; }
  long exponent() const noexcept { return e_; }
  int sign() const noexcept { return sgn(m_); }
  bool is_zero() const noexcept { return m_ == 0; }

  Dyadic operator*(const Dyadic& o) const { return Dyadic(m_ * o.m_, e_ + o.e_); }
  Dyadic operator-() const { return Dyadic(-m_, e_); }
  Dyadic abs() const { return Dyadic(::abs(m_), e_); }
  Dyadic operator+(const Dyadic& o) const;
  Dyadic operator-(const Dyadic& o) const { return *this + (-o); }

  /// Three-way exact comparison.
  friend int compare(const Dyadic& a, const Dyadic& b);

  /// The value rounded once to T (float or double) in the given direction, with IEEE subnormal
  /// and overflow behaviour (nearest: ±inf past the overflow threshold; up/down: ±inf or ±max).
  /// Zero rounds to +0.
  template <class T>
  T round(Rounding mode) const;

  /// The quotient value / n (n >= 1) rounded once to T in the given direction.
  template <class T>
  T round_quotient(std::int64_t n, Rounding mode) const;

  /// Double approximation (nearest) for reports; may overflow to ±inf.
  double approx() const { return round<double>(Rounding::nearest_even); }

 private:
  mpz_class m_;  // mpz_init: zero without allocating (GMP >= 6.2), so an unused Dyadic is free
  long e_ = 0;
};

/// Three-way exact comparison (also found for types that convert to Dyadic, e.g. Exact).
int compare(const Dyadic& a, const Dyadic& b);

/// Exact sum of many dyadics with a common scale, cheaper than repeated `+`.
class ExactAccumulator {
 public:
  void add(const Dyadic& d);
  Dyadic value() const { return Dyadic(sum_, exp_); }

 private:
  mpz_class sum_;  // zero, not yet allocated
  long exp_ = 0;
  bool empty_ = true;
};

}  // namespace einfuzz::reference
