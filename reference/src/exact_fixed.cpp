// Fixed-width exact dyadics (exact_fixed.hpp): 192-bit integer arithmetic, the two-part Exact, and
// the allocation-free distance, comparison and rounding the oracle's fast path needs.
#include "einfuzz/reference/exact_fixed.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "einfuzz/core/half.hpp"
#include "exact_sum.hpp"

namespace einfuzz::reference {

U192 U192::shifted_right(int n, bool& sticky) const noexcept {
  U192 out;
  const int words = n / 64, bits = n % 64;
  sticky = false;
  for (int i = 0; i < words; ++i) sticky |= w[i] != 0;
  if (bits != 0) sticky |= (w[words] & ((std::uint64_t{1} << bits) - 1)) != 0;
  for (int i = 0; i + words < 3; ++i) {
    const std::uint64_t lo = w[i + words] >> bits;
    const std::uint64_t hi = bits != 0 && i + words + 1 < 3 ? w[i + words + 1] << (64 - bits) : 0;
    out.w[i] = lo | hi;
  }
  return out;
}

U192 operator+(const U192& a, const U192& b) noexcept {
  U192 out;
  std::uint64_t carry = 0;
  for (int i = 0; i < 3; ++i) {
    const u128 s = u128(a.w[i]) + b.w[i] + carry;
    out.w[i] = static_cast<std::uint64_t>(s);
    carry = static_cast<std::uint64_t>(s >> 64);
  }
  return out;
}

U192 operator-(const U192& a, const U192& b) noexcept {
  U192 out;
  std::uint64_t borrow = 0;
  for (int i = 0; i < 3; ++i) {
    const std::uint64_t d = a.w[i] - b.w[i] - borrow;
    borrow = (a.w[i] < b.w[i] || (a.w[i] == b.w[i] && borrow)) ? 1 : 0;
    out.w[i] = d;
  }
  return out;
}

Dyadic FixedDyadic::dyadic() const {
  if (m.is_zero()) return Dyadic();
  mpz_class z;
  mpz_import(z.get_mpz_t(), 3, -1, sizeof(std::uint64_t), 0, 0, m.w);
  return Dyadic(std::move(z), e);
}

template <int Parts>
void BasicExact<Parts>::set_general(const FixedDyadic (&parts)[Parts], bool negative) {
  FixedDyadic p[Parts];
  int n = 0;
  for (int i = 0; i < Parts; ++i) {
    if (!parts[i].is_zero()) p[n++] = parts[i];
  }
  bool fits = true;
  for (int i = 0; i < n; ++i) {
    fits = fits && p[i].e >= INT32_MIN && p[i].e <= INT32_MAX && (i == 0 || p[i].top() <= p[i - 1].e);
  }
  reset();
  if (!fits) {  // overlapping parts: the general representation
    Dyadic sum;
    for (int i = 0; i < n; ++i) sum = sum + p[i].dyadic();
    new (&u_.dyadic) Dyadic(negative ? -sum : sum);
    general_ = true;
    return;
  }
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < 3; ++j) u_.limbs[i][j] = p[i].m.w[j];
    e_[i] = static_cast<std::int32_t>(p[i].e);
  }
  negative_ = negative && n > 0;
}

template <int Parts>
Dyadic BasicExact<Parts>::dyadic() const {
  if (general_) return u_.dyadic;
  Dyadic d;
  for (int i = 0; i < Parts; ++i) {
    const FixedDyadic p = part(i);
    if (!p.is_zero()) d = d + p.dyadic();
  }
  return negative_ ? -d : d;
}

namespace {

/// m·2^e rounded once to T the way Dyadic::round rounds it: more than 120 bits are cut to 120
/// plus a sticky bit first, so both representations give the same result.
template <class T>
T round_part(const U192& m, long e, bool negative, Rounding mode) {
  const int bits = m.bit_length();
  if (bits <= 120) return round_binary<T>(m.low128(), e, negative, mode);
  const int drop = bits - 120;
  bool sticky = false;
  U192 top = m.shifted_right(drop, sticky);
  const u128 kept = (top.low128() << 1) | (sticky ? 1 : 0);
  return round_binary<T>(kept, e + drop - 1, negative, mode);
}

/// m·2^e (m > 0) rounded down to T, when the value lies in T's normal range (else false): the
/// top p bits, exact as q·2^e'.
template <class T>
bool round_down_normal(const U192& m, long e, T& out) {
  using L = std::numeric_limits<T>;
  constexpr int p = L::digits;
  const int bits = m.bit_length();
  const long top = bits - 1 + e;
  if (top < L::min_exponent - 1 || top > L::max_exponent - 1) return false;
  std::uint64_t q = m.w[0];
  if (bits > p) {
    bool sticky = false;
    q = m.shifted_right(bits - p, sticky).w[0];
    e += bits - p;
  }
  out = static_cast<T>(q) * exact_pow2<T>(static_cast<int>(e));  // q < 2^p, q·2^e normal: exact
  return true;
}

}  // namespace

template <int Parts>
template <class T>
T BasicExact<Parts>::round(Rounding mode) const {
  if (general_) return u_.dyadic.template round<T>(mode);
  const FixedDyadic high = part(0);
  if (high.is_zero()) return T(0);
  const FixedDyadic low = Parts > 1 ? part(Parts - 1) : FixedDyadic{};
  if (Parts == 1 || low.is_zero()) return round_part<T>(high.m, high.e, negative_, mode);
  // Two parts rounded to a 16-bit format (never needed by the oracle: its bounds round to double)
  // take the general Dyadic.
  if constexpr (is_half_type_v<T>) {
    return dyadic().template round<T>(mode);
  } else {
  // high + low lies in (high, high + 2^e') for any e' with low < 2^e' that still writes high as an
  // integer times 2^e'. If T's quantum at high's binade is at least 2^(e'+1), that open interval
  // holds no T and no rounding midpoint (nor the overflow threshold), so high + 2^(e'−1) rounds alike.
  using L = std::numeric_limits<T>;
  constexpr long p = L::digits;
  constexpr long min_quantum = L::min_exponent - 1 - (p - 1);
  const long quantum = std::max(high.top() - 1 - (p - 1), min_quantum);
  const long e = std::min(high.e, quantum - 1);
  const long shift = high.e - e;
  if (low.top() > e || high.m.bit_length() + shift + 1 > 192) return dyadic().template round<T>(mode);
  // A bound rounded up (the common use): no T lies in (high, high + low], so the result is the
  // successor of high rounded down, whether or not high itself is a T.
  if (mode == Rounding::up && !negative_) {
    T down;
    if (round_down_normal<T>(high.m, high.e, down)) {
      using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
      return std::bit_cast<T>(static_cast<Bits>(std::bit_cast<Bits>(down) + 1));  // max + 1 ulp: +inf
    }
  }
  U192 m = high.m.shifted_left(static_cast<int>(shift + 1));
  m.w[0] |= 1;
  return round_part<T>(m, e - 1, negative_, mode);
  }
}

template class BasicExact<1>;
template class BasicExact<2>;
template float BasicExact<1>::round<float>(Rounding) const;
template double BasicExact<1>::round<double>(Rounding) const;
template float BasicExact<2>::round<float>(Rounding) const;
template double BasicExact<2>::round<double>(Rounding) const;
template Float16 BasicExact<1>::round<Float16>(Rounding) const;
template BFloat16 BasicExact<1>::round<BFloat16>(Rounding) const;
template Float16 BasicExact<2>::round<Float16>(Rounding) const;
template BFloat16 BasicExact<2>::round<BFloat16>(Rounding) const;

template <class T>
std::optional<FixedDyadic> fixed_distance(const Exact& s, T r) {
  if (!s.is_fixed()) return std::nullopt;
  const FixedDyadic sm = s.part(0);
  if (r == 0) return sm;
  const detail::Decomposed d = detail::decompose(r);
  const FixedDyadic rm{U192::of(d.mantissa), d.exponent};
  if (sm.is_zero()) return rm;
  const long q = std::min(rm.e, sm.e);
  const int bits_r = 64 - __builtin_clzll(d.mantissa), bits_s = sm.m.bit_length();
  if (bits_r + (rm.e - q) <= 127 && bits_s + (sm.e - q) <= 127) {  // the common case, in 128 bits
    const u128 a = u128(d.mantissa) << (rm.e - q);
    const u128 b = sm.m.low128() << (sm.e - q);
    return FixedDyadic{U192::of(std::signbit(r) != s.negative() ? a + b : a >= b ? a - b : b - a), q};
  }
  const long shift_r = rm.e - q, shift_s = sm.e - q;
  // Both aligned operands below 2^191: their sum fits.
  if (rm.m.bit_length() + shift_r > 191 || sm.m.bit_length() + shift_s > 191) return std::nullopt;
  const U192 a = rm.m.shifted_left(static_cast<int>(shift_r));
  const U192 b = sm.m.shifted_left(static_cast<int>(shift_s));
  if (std::signbit(r) != s.negative()) return FixedDyadic{a + b, q};
  return FixedDyadic{compare(a, b) >= 0 ? a - b : b - a, q};
}
template std::optional<FixedDyadic> fixed_distance<float>(const Exact&, float);
template std::optional<FixedDyadic> fixed_distance<double>(const Exact&, double);
template std::optional<FixedDyadic> fixed_distance<Float16>(const Exact&, Float16);
template std::optional<FixedDyadic> fixed_distance<BFloat16>(const Exact&, BFloat16);

bool fixed_add(const FixedDyadic& a, const FixedDyadic& b, FixedDyadic& out) noexcept {
  if (a.is_zero() || b.is_zero()) {
    out = a.is_zero() ? b : a;
    return true;
  }
  const long e = std::min(a.e, b.e);
  if (std::max(a.top(), b.top()) + 1 - e > 192) return false;  // both below 2^max(top): the sum one bit more
  out = FixedDyadic{a.m.shifted_left(static_cast<int>(a.e - e)) + b.m.shifted_left(static_cast<int>(b.e - e)), e};
  return true;
}

bool order_parts(FixedDyadic& high, FixedDyadic& low) noexcept {
  if (high.is_zero()) std::swap(high, low);
  if (low.is_zero() || low.top() <= high.e) return true;
  if (!fixed_add(high, low, high)) return false;
  low = FixedDyadic{};
  return true;
}

std::optional<bool> fixed_at_most(const FixedDyadic& x, const ExactBound& b) {
  if (!b.is_fixed() || b.negative()) return std::nullopt;
  const FixedDyadic high = b.part(0), low = b.part(1);
  if (compare(x, high) <= 0) return true;
  if (low.is_zero()) return false;
  // x > high, both multiples of 2^q: x − high >= 2^q, which low cannot reach if low < 2^q.
  if (low.top() <= std::min(x.e, high.e)) return false;
  return std::nullopt;
}

}  // namespace einfuzz::reference
