// Exact dyadic arithmetic and correctly rounded conversion to binary32/binary64.
#include "einfuzz/reference/exact.hpp"

#include <cmath>
#include <limits>

namespace einfuzz::reference {

template <class T>
Dyadic Dyadic::of(T finite) {
  if (finite == 0) return Dyadic();
  int exp = 0;
  const T fraction = std::frexp(finite, &exp);  // finite = fraction · 2^exp, 0.5 <= |fraction| < 1
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
  const Dyadic d = a - b;
  return d.sign();
}

template <class T>
T Dyadic::round(Rounding mode) const {
  using L = std::numeric_limits<T>;
  if (is_zero()) return T(0);
  const bool negative = sgn(m_) < 0;
  mpz_class mag = ::abs(m_);
  const long bits = static_cast<long>(mpz_sizeinbase(mag.get_mpz_t(), 2));
  const long top = bits - 1 + e_;                    // |value| in [2^top, 2^(top+1))
  constexpr long p = L::digits;                      // 24 or 53
  constexpr long min_quantum = L::min_exponent - 1 - (p - 1);  // exponent of denorm_min
  constexpr long max_top = L::max_exponent - 1;      // exponent of the largest binade
  const long quantum = std::max(top - (p - 1), min_quantum);

  // Direction of rounding the magnitude: up (away from zero) or down (towards zero).
  auto round_away = [&](bool half, bool sticky, bool odd) {
    switch (mode) {
      case Rounding::nearest_even: return half && (sticky || odd);
      case Rounding::up: return !negative && (half || sticky);
      case Rounding::down: return negative && (half || sticky);
    }
    return false;
  };
  mpz_class q;  // the magnitude in units of 2^quantum, after rounding
  const long shift = quantum - e_;
  if (shift <= 0) {
    mpz_mul_2exp(q.get_mpz_t(), mag.get_mpz_t(), static_cast<mp_bitcnt_t>(-shift));
  } else {
    mpz_fdiv_q_2exp(q.get_mpz_t(), mag.get_mpz_t(), static_cast<mp_bitcnt_t>(shift));
    const bool half = mpz_tstbit(mag.get_mpz_t(), static_cast<mp_bitcnt_t>(shift - 1)) != 0;
    const bool sticky = mpz_scan1(mag.get_mpz_t(), 0) < static_cast<mp_bitcnt_t>(shift - 1);
    if (round_away(half, sticky, mpz_odd_p(q.get_mpz_t()) != 0)) q += 1;
  }
  // q < 2^(p+1); a carry to 2^p is still exact. Beyond the largest binade it overflows.
  const T magnitude_unit = static_cast<T>(q.get_d());  // exact: q has at most p+1 bits
  T result;
  if (quantum + static_cast<long>(mpz_sizeinbase(q.get_mpz_t(), 2)) - 1 > max_top) {
    // Overflow: nearest gives inf; directed rounding gives inf away from the direction, else max.
    const bool to_inf = mode == Rounding::nearest_even || (mode == Rounding::up) != negative;
    result = to_inf ? L::infinity() : L::max();
  } else {
    result = std::ldexp(magnitude_unit, static_cast<int>(quantum));
  }
  return negative ? -result : result;
}
template float Dyadic::round<float>(Rounding) const;
template double Dyadic::round<double>(Rounding) const;

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
