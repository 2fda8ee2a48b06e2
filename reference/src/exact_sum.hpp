// Fast exact summation for the multiset oracle: floats decomposed into integer mantissas, products
// of a few factors kept in 128-bit integers, sums in a carry-save array of 32-bit digits (one GMP
// conversion per output element instead of one per term). Exactness is the contract; the general
// Dyadic path (exact.hpp) remains the fallback for products wider than 127 bits.
#pragma once

#include <gmp.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "einfuzz/core/half.hpp"
#include "einfuzz/reference/exact.hpp"

namespace einfuzz::reference::detail {

/// |x| = mantissa · 2^exponent with an odd mantissa (x finite, non-zero).
struct Decomposed {
  std::uint64_t mantissa;
  long exponent;
};

template <class T>
Decomposed decompose(T x) {
  static_assert(is_float_type_v<T>);
  // The 16-bit formats are subsets of binary32: decompose the exact float value.
  if constexpr (is_half_type_v<T>) return decompose(static_cast<float>(x));
  else {
  constexpr int frac_bits = std::numeric_limits<T>::digits - 1;
  constexpr int bias = std::numeric_limits<T>::max_exponent - 1;
  using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
  const Bits bits = std::bit_cast<Bits>(x);
  const auto biased = static_cast<long>((bits >> frac_bits) & ((Bits(1) << (sizeof(T) * 8 - 1 - frac_bits)) - 1));
  std::uint64_t m = static_cast<std::uint64_t>(bits & ((Bits(1) << frac_bits) - 1));
  long e;
  if (biased == 0) {
    e = 1 - bias - frac_bits;  // subnormal
  } else {
    m |= std::uint64_t{1} << frac_bits;
    e = biased - bias - frac_bits;
  }
  const int zeros = std::countr_zero(m);
  return {m >> zeros, e + zeros};
  }
}

/// Exact sum of non-negative terms m·2^e (m < 2^128) over an exponent window fixed by `reset`.
class DigitAccumulator {
 public:
  /// Covers exponents [base, base + bits); every added term must lie inside.
  void reset(long base, long bits) {
    base_ = base;
    digits_.assign(static_cast<std::size_t>((bits + 31) / 32 + 6), 0);
    pending_ = 0;
  }

  void add(u128 m, long e) {
    if (m == 0) return;
    const long offset = e - base_;
    const auto first = static_cast<std::size_t>(offset / 32);
    const int shift = static_cast<int>(offset % 32);
    const auto lo = static_cast<std::uint64_t>(m);
    const auto hi = static_cast<std::uint64_t>(m >> 64);
    const std::uint64_t w0 = lo << shift;
    const std::uint64_t w1 = (hi << shift) | (shift ? lo >> (64 - shift) : 0);
    const std::uint64_t w2 = shift ? hi >> (64 - shift) : 0;
    std::uint64_t* d = digits_.data() + first;
    d[0] += w0 & 0xffffffffu;
    d[1] += w0 >> 32;
    d[2] += w1 & 0xffffffffu;
    d[3] += w1 >> 32;
    d[4] += w2;
    // Each digit absorbs 2^31 additions of < 2^32 before it could overflow 64 bits.
    if (++pending_ == (std::uint64_t{1} << 31)) normalise();
  }

  /// The exact sum as a Dyadic.
  Dyadic value() {
    normalise();
    mpz_class z;
    if constexpr (sizeof(mp_limb_t) == 8 && GMP_NAIL_BITS == 0) {
      // Two 32-bit digits per 64-bit limb, written in place (mpz_import with 32 nail bits takes
      // GMP's generic bit-by-bit path); mpz_limbs_finish drops the high zero limbs.
      const std::size_t n = (digits_.size() + 1) / 2;
      mp_limb_t* limbs = mpz_limbs_write(z.get_mpz_t(), static_cast<mp_size_t>(n));
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t high = 2 * i + 1 < digits_.size() ? digits_[2 * i + 1] : 0;
        limbs[i] = static_cast<mp_limb_t>(digits_[2 * i] | (high << 32));
      }
      mpz_limbs_finish(z.get_mpz_t(), static_cast<mp_size_t>(n));
    } else {
      mpz_import(z.get_mpz_t(), digits_.size(), -1, sizeof(std::uint64_t), 0, 32, digits_.data());
    }
    return Dyadic(std::move(z), base_);
  }

 private:
  void normalise() {
    std::uint64_t carry = 0;
    for (std::uint64_t& d : digits_) {
      const std::uint64_t t = d + carry;
      d = t & 0xffffffffu;
      carry = t >> 32;
    }
    pending_ = 0;
  }

  std::vector<std::uint64_t> digits_;  // 32-bit digits, least significant first, carry-save
  long base_ = 0;
  std::uint64_t pending_ = 0;          // additions since the last normalisation
};

/// One term or factor product kept exactly: |value| = m · 2^e, with a sign.
struct ExactTerm {
  u128 m = 1;
  long e = 0;
  int bits = 1;       // bit length bound of m
  bool negative = false;
  bool wide = false;  // m would exceed 127 bits: the caller takes the Dyadic path

  void multiply(const Decomposed& d) {
    const int b = 64 - std::countl_zero(d.mantissa);
    if (bits + b > 127) {
      wide = true;
      return;
    }
    m *= d.mantissa;
    e += d.exponent;
    bits += b;
  }
};

}  // namespace einfuzz::reference::detail
