// Exact dyadic arithmetic and correctly rounded conversion to binary32/binary64.
#include "einfuzz/reference/exact.hpp"

#include "einfuzz/core/half.hpp"
#include "einfuzz/core/harness_bug.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace einfuzz::reference {

bool gmp_blocks_installed();  // gmp_blocks.cpp
namespace {
/// Keeps gmp_blocks.cpp, which installs GMP's memory functions, in every static link of Dyadic.
[[maybe_unused]] const bool gmp_blocks = gmp_blocks_installed();
}  // namespace

template <class T>
Dyadic Dyadic::of(T finite) {
  if (finite == 0) return Dyadic();
  if (!std::isfinite(finite)) harness_bug("Dyadic::of called on a NaN or an infinity");
  int exp = 0;
  // finite = fraction · 2^exp, 0.5 <= |fraction| < 1 (a float for the 16-bit formats: exact)
  const auto fraction = std::frexp(finite, &exp);
  constexpr int digits = std::numeric_limits<T>::digits;
  // fraction · 2^digits is an integer of at most `digits` bits, exactly representable.
  auto m = static_cast<long long>(std::ldexp(fraction, digits));
  long e = static_cast<long>(exp) - digits;
  const int zeros = __builtin_ctzll(static_cast<unsigned long long>(m < 0 ? -m : m));
  m >>= zeros;  // arithmetic shift of a multiple of 2^zeros: exact
  e += zeros;
  return Dyadic(mpz_class(static_cast<long>(m)), e);
}
template Dyadic Dyadic::of<float>(float);
template Dyadic Dyadic::of<double>(double);
template Dyadic Dyadic::of<Float16>(Float16);
template Dyadic Dyadic::of<BFloat16>(BFloat16);

Dyadic Dyadic::operator+(const Dyadic& o) const {
  if (is_zero()) return o;
  if (o.is_zero()) return *this;
  if (e_ <= o.e_) {
    mpz_class shifted = o.m_;
    mpz_mul_2exp(shifted.get_mpz_t(), shifted.get_mpz_t(), static_cast<mp_bitcnt_t>(o.e_ - e_));
    return Dyadic(m_ + shifted, e_);
  }
  return o + *this;
}

int compare(const Dyadic& a, const Dyadic& b) {
  // Signs first, then the position of the top bit; only values with the same sign and top bit are
  // compared digit by digit, the one with the larger exponent shifted into a thread-local scratch
  // integer (a - b would allocate three integers per comparison).
  const int sa = a.sign(), sb = b.sign();
  if (sa != sb) return sa < sb ? -1 : 1;
  if (sa == 0) return 0;
  const long ta = static_cast<long>(mpz_sizeinbase(a.mantissa().get_mpz_t(), 2)) + a.exponent();
  const long tb = static_cast<long>(mpz_sizeinbase(b.mantissa().get_mpz_t(), 2)) + b.exponent();
  int magnitude = 0;  // |a| against |b|
  if (ta != tb) {
    magnitude = ta < tb ? -1 : 1;
  } else {
    thread_local mpz_class scratch;
    if (a.exponent() >= b.exponent()) {
      mpz_mul_2exp(scratch.get_mpz_t(), a.mantissa().get_mpz_t(), static_cast<mp_bitcnt_t>(a.exponent() - b.exponent()));
      magnitude = mpz_cmpabs(scratch.get_mpz_t(), b.mantissa().get_mpz_t());
    } else {
      mpz_mul_2exp(scratch.get_mpz_t(), b.mantissa().get_mpz_t(), static_cast<mp_bitcnt_t>(b.exponent() - a.exponent()));
      magnitude = mpz_cmpabs(a.mantissa().get_mpz_t(), scratch.get_mpz_t());
    }
    magnitude = magnitude < 0 ? -1 : magnitude > 0 ? 1 : 0;
  }
  return sa > 0 ? magnitude : -magnitude;
}


template <class T>
T round_binary(u128 magnitude, long exponent, bool negative, Rounding mode) {
  using L = std::numeric_limits<T>;
  if (magnitude == 0) return T(0);
  const auto hi = static_cast<std::uint64_t>(magnitude >> 64);
  const long bits = hi ? 128 - __builtin_clzll(hi) : 64 - __builtin_clzll(static_cast<std::uint64_t>(magnitude));
  const long top = bits - 1 + exponent;                        // |value| in [2^top, 2^(top+1))
  constexpr long p = L::digits;                                // 24 or 53
  constexpr long min_quantum = L::min_exponent - 1 - (p - 1);  // exponent of denorm_min
  constexpr long max_top = L::max_exponent - 1;                // exponent of the largest binade
  const long quantum = std::max(top - (p - 1), min_quantum);

  std::uint64_t q;  // the magnitude in units of 2^quantum, after rounding (at most p + 1 bits)
  const long shift = quantum - exponent;
  if (shift <= 0) {
    q = static_cast<std::uint64_t>(magnitude) << -shift;  // magnitude < 2^p here, so this is exact
  } else {
    const bool half = shift - 1 < 128 && ((magnitude >> (shift - 1)) & 1) != 0;
    const u128 below = shift - 1 >= 128 ? magnitude : magnitude & ((u128(1) << (shift - 1)) - 1);
    const bool sticky = below != 0;
    q = shift >= 128 ? 0 : static_cast<std::uint64_t>(magnitude >> shift);
    bool away = false;
    switch (mode) {
      case Rounding::nearest_even: away = half && (sticky || (q & 1) != 0); break;
      case Rounding::up: away = !negative && (half || sticky); break;
      case Rounding::down: away = negative && (half || sticky); break;
    }
    if (away) ++q;
  }
  T result;
  if (q != 0 && quantum + (63 - __builtin_clzll(q)) > max_top) {
    // Overflow: nearest gives inf; directed rounding gives inf away from the direction, else max.
    const bool to_inf = mode == Rounding::nearest_even || (mode == Rounding::up) != negative;
    result = to_inf ? L::infinity() : L::max();
  } else {
    // exact: q has <= p + 1 bits (the 16-bit formats scale in float, whose range holds theirs)
    if constexpr (is_half_type_v<T>) {
      result = static_cast<T>(std::ldexp(static_cast<float>(q), static_cast<int>(quantum)));
    } else {
      // The product is the representable rounded value, and 2^quantum lies in T's range (quantum
      // >= the subnormal quantum; no overflow, so top <= max_top): exact, without a libm call.
      result = static_cast<T>(q) * exact_pow2<T>(static_cast<int>(quantum));
    }
  }
  return negative ? -result : result;
}
template float round_binary<float>(u128, long, bool, Rounding);
template double round_binary<double>(u128, long, bool, Rounding);
template Float16 round_binary<Float16>(u128, long, bool, Rounding);
template BFloat16 round_binary<BFloat16>(u128, long, bool, Rounding);

template <class T>
T Dyadic::round(Rounding mode) const {
  if (is_zero()) return T(0);
  const bool negative = sgn(m_) < 0;
  if constexpr (sizeof(mp_limb_t) == 8 && GMP_NAIL_BITS == 0) {
    // Read from the mantissa's own limbs (|m| least significant first): no copy of it, so no
    // allocation per rounding. The same 120 bits and sticky bit as the general path below.
    const mpz_srcptr z = m_.get_mpz_t();
    const std::size_t limbs = mpz_size(z);
    const mp_limb_t* d = mpz_limbs_read(z);
    const auto limb = [&](std::size_t i) -> std::uint64_t { return i < limbs ? d[i] : 0; };
    const long bits = static_cast<long>(mpz_sizeinbase(z, 2));
    if (bits <= 120) return round_binary<T>((u128(limb(1)) << 64) | limb(0), e_, negative, mode);
    const long drop = bits - 120;
    // The lowest set bit of −|m| in two's complement (mpz_scan1's reading of a negative m) is |m|'s.
    const bool sticky = mpz_scan1(z, 0) < static_cast<mp_bitcnt_t>(drop);
    const auto w = static_cast<std::size_t>(drop / 64);
    const int shift = static_cast<int>(drop % 64);
    const u128 low = limb(w), middle = limb(w + 1), high = limb(w + 2);
    // Bits [drop, drop + 128) of |m|; those from drop + 120 up are zero.
    const u128 top = shift == 0 ? low | (middle << 64) : (low >> shift) | (middle << (64 - shift)) | (high << (128 - shift));
    return round_binary<T>((top << 1) | (sticky ? 1 : 0), e_ + drop - 1, negative, mode);
  } else {
    mpz_class mag = ::abs(m_);
    long exponent = e_;
    const long bits = static_cast<long>(mpz_sizeinbase(mag.get_mpz_t(), 2));
    if (bits > 120) {
      // Keep the top 120 bits (far more than p + 2) and fold everything below into a sticky bit.
      const long drop = bits - 120;
      const bool sticky = mpz_scan1(mag.get_mpz_t(), 0) < static_cast<mp_bitcnt_t>(drop);
      mpz_fdiv_q_2exp(mag.get_mpz_t(), mag.get_mpz_t(), static_cast<mp_bitcnt_t>(drop));
      mpz_mul_2exp(mag.get_mpz_t(), mag.get_mpz_t(), 1);
      if (sticky) mag += 1;
      exponent += drop - 1;
    }
    std::uint64_t words[2] = {0, 0};
    mpz_export(words, nullptr, -1, sizeof(std::uint64_t), 0, 0, mag.get_mpz_t());
    return round_binary<T>((u128(words[1]) << 64) | words[0], exponent, negative, mode);
  }
}
template float Dyadic::round<float>(Rounding) const;
template double Dyadic::round<double>(Rounding) const;
template Float16 Dyadic::round<Float16>(Rounding) const;
template BFloat16 Dyadic::round<BFloat16>(Rounding) const;

template <class T>
T Dyadic::round_quotient(std::int64_t n, Rounding mode) const {
  if (n == 1 || is_zero()) return round<T>(mode);
  // Scale so the integer quotient has at least p + 3 bits, then fold a nonzero remainder into an
  // extra low "sticky" bit: rounding that dyadic once rounds the rational correctly.
  constexpr long p = std::numeric_limits<T>::digits;
  const long divisor_bits = 64 - __builtin_clzll(static_cast<unsigned long long>(n));
  const long shift = p + 3 + divisor_bits;
  mpz_class scaled = m_;
  mpz_mul_2exp(scaled.get_mpz_t(), scaled.get_mpz_t(), static_cast<mp_bitcnt_t>(shift));
  mpz_class q, r;
  mpz_tdiv_qr_ui(q.get_mpz_t(), r.get_mpz_t(), scaled.get_mpz_t(), static_cast<unsigned long>(n));
  q *= 2;
  if (r != 0) q += sgn(q) < 0 || (q == 0 && sgn(m_) < 0) ? -1 : 1;
  return Dyadic(q, e_ - shift - 1).round<T>(mode);
}
template float Dyadic::round_quotient<float>(std::int64_t, Rounding) const;
template double Dyadic::round_quotient<double>(std::int64_t, Rounding) const;
template Float16 Dyadic::round_quotient<Float16>(std::int64_t, Rounding) const;
template BFloat16 Dyadic::round_quotient<BFloat16>(std::int64_t, Rounding) const;

void ExactAccumulator::add(const Dyadic& d) {
  if (d.is_zero()) return;
  if (empty_) {
    sum_ = d.mantissa();
    exp_ = d.exponent();
    empty_ = false;
    return;
  }
  if (d.exponent() >= exp_) {
    mpz_class shifted = d.mantissa();
    mpz_mul_2exp(shifted.get_mpz_t(), shifted.get_mpz_t(), static_cast<mp_bitcnt_t>(d.exponent() - exp_));
    sum_ += shifted;
  } else {
    mpz_mul_2exp(sum_.get_mpz_t(), sum_.get_mpz_t(), static_cast<mp_bitcnt_t>(exp_ - d.exponent()));
    exp_ = d.exponent();
    sum_ += d.mantissa();
  }
}

}  // namespace einfuzz::reference
