// The oracle's allocation-free exact path (ORACLE §1–§2): dyadics with 192-bit machine-integer
// mantissas for the values, bounds and distances of few-term elements, and `Exact`, which holds
// either such a fixed-width value or a GMP Dyadic, so that every consumer sees one exact number.
#pragma once

#include <cstdint>
#include <climits>
#include <optional>
#include <new>

#include "einfuzz/reference/exact.hpp"

namespace einfuzz::reference {

/// An unsigned 192-bit integer, three 64-bit limbs, least significant first.
struct U192 {
  std::uint64_t w[3] = {0, 0, 0};

  static U192 of(u128 x) noexcept { return {{static_cast<std::uint64_t>(x), static_cast<std::uint64_t>(x >> 64), 0}}; }
  /// a·b exactly (< 2^192).
  static U192 product(std::uint64_t a, u128 b) noexcept {
    const u128 p0 = u128(a) * static_cast<std::uint64_t>(b);
    const u128 p1 = u128(a) * static_cast<std::uint64_t>(b >> 64);
    const u128 mid = (p0 >> 64) + static_cast<std::uint64_t>(p1);
    return {{static_cast<std::uint64_t>(p0), static_cast<std::uint64_t>(mid),
             static_cast<std::uint64_t>(p1 >> 64) + static_cast<std::uint64_t>(mid >> 64)}};
  }

  /// a·b exactly; the caller guarantees a·b < 2^192.
  static U192 product(std::uint64_t a, const U192& b) noexcept {
    U192 out;
    std::uint64_t carry = 0;
    for (int i = 0; i < 3; ++i) {
      const u128 p = u128(a) * b.w[i] + carry;
      out.w[i] = static_cast<std::uint64_t>(p);
      carry = static_cast<std::uint64_t>(p >> 64);
    }
    return out;
  }

  bool is_zero() const noexcept { return (w[0] | w[1] | w[2]) == 0; }
  /// Number of significant bits (0 for zero).
  int bit_length() const noexcept {
    if (w[2] != 0) return 192 - __builtin_clzll(w[2]);
    if (w[1] != 0) return 128 - __builtin_clzll(w[1]);
    return w[0] != 0 ? 64 - __builtin_clzll(w[0]) : 0;
  }
  /// this·2^n (0 <= n < 192); the caller guarantees bit_length() + n <= 192.
  U192 shifted_left(int n) const noexcept {
    U192 out;
    const int words = n / 64, bits = n % 64;
    for (int i = 2; i >= words; --i) {
      const std::uint64_t hi = w[i - words] << bits;
      const std::uint64_t lo = bits != 0 && i - words - 1 >= 0 ? w[i - words - 1] >> (64 - bits) : 0;
      out.w[i] = hi | lo;
    }
    return out;
  }
  /// floor(this / 2^n), n < 192, and whether a dropped bit was set.
  U192 shifted_right(int n, bool& sticky) const noexcept;
  /// Low 128 bits (exact when bit_length() <= 128).
  u128 low128() const noexcept { return (u128(w[1]) << 64) | w[0]; }

  friend int compare(const U192& a, const U192& b) noexcept {
    for (int i = 2; i >= 0; --i) {
      if (a.w[i] != b.w[i]) return a.w[i] < b.w[i] ? -1 : 1;
    }
    return 0;
  }
  friend U192 operator+(const U192& a, const U192& b) noexcept;  ///< no overflow: caller's duty
  friend U192 operator-(const U192& a, const U192& b) noexcept;  ///< requires a >= b
};

/// A non-negative dyadic m·2^e with a fixed-width mantissa (zero: m = 0).
struct FixedDyadic {
  U192 m;
  long e = 0;

  bool is_zero() const noexcept { return m.is_zero(); }
  /// floor(log2(value)) + 1, i.e. value < 2^top(); meaningless for zero.
  long top() const noexcept { return m.bit_length() + e; }
  Dyadic dyadic() const;
};

/// Three-way exact comparison of two fixed dyadics (always decidable: no allocation).
inline int compare(const FixedDyadic& a, const FixedDyadic& b) noexcept {
  if (a.is_zero() || b.is_zero()) return a.is_zero() ? (b.is_zero() ? 0 : -1) : 1;
  const long ta = a.top(), tb = b.top();
  if (ta != tb) return ta < tb ? -1 : 1;
  // Same top bit: the one with the larger exponent, shifted down to the other's, keeps the other's
  // bit length, so the comparison stays within 192 bits.
  if (a.e >= b.e) return compare(a.m.shifted_left(static_cast<int>(a.e - b.e)), b.m);
  return compare(a.m, b.m.shifted_left(static_cast<int>(b.e - a.e)));
}

/// An exact dyadic number, stored either as a GMP Dyadic (the general representation) or, without
/// GMP, as ±(part 0 + part 1 + …) with fixed-width parts, each below the last bit of the one before
/// (a bound's γ·S and its far smaller underflow term; a value has one part). Both representations
/// denote the same number; `dyadic()` converts. Kept small: a truth holds two per element.
template <int Parts>
class BasicExact {
 public:
  BasicExact() noexcept { clear_limbs(); }  ///< zero, fixed: no GMP integer to initialise or clear
  BasicExact(Dyadic d) : general_(true) { new (&u_.dyadic) Dyadic(std::move(d)); }  // NOLINT: implicit
  BasicExact(const BasicExact& o) { copy_from(o); }
  BasicExact(BasicExact&& o) noexcept { move_from(std::move(o)); }
  BasicExact& operator=(const BasicExact& o) {
    if (this != &o) { reset(); copy_from(o); }
    return *this;
  }
  BasicExact& operator=(BasicExact&& o) noexcept {
    if (this != &o) { reset(); move_from(std::move(o)); }
    return *this;
  }
  ~BasicExact() { reset(); }

  /// ±(parts[0] + parts[1] + …), each part < 2^(previous part's e) unless zero. Stored fixed when
  /// that holds (zero parts are moved last) and the exponents fit 32 bits; otherwise the same
  /// value in the general representation.
  void set_fixed(const FixedDyadic (&parts)[Parts], bool negative) {
    bool ordered = true;  // the common case, stored without reordering
    for (int i = 0; i < Parts; ++i) {
      ordered = ordered && parts[i].e >= INT32_MIN && parts[i].e <= INT32_MAX &&
                (i == 0 || parts[i].is_zero() || (!parts[i - 1].is_zero() && parts[i].top() <= parts[i - 1].e));
    }
    if (!ordered) return set_general(parts, negative);
    if (general_) {
      u_.dyadic.~Dyadic();
      general_ = false;
    }
    for (int i = 0; i < Parts; ++i) {
      for (int j = 0; j < 3; ++j) u_.limbs[i][j] = parts[i].m.w[j];
      e_[i] = static_cast<std::int32_t>(parts[i].e);
    }
    negative_ = negative && !parts[0].is_zero();
  }

  bool is_fixed() const noexcept { return !general_; }
  /// Part i of a fixed value (part 0 is zero only when the value is).
  FixedDyadic part(int i) const noexcept {
    FixedDyadic d;
    for (int j = 0; j < 3; ++j) d.m.w[j] = u_.limbs[i][j];
    d.e = e_[i];
    return d;
  }
  bool negative() const noexcept { return negative_; }

  /// The value as a GMP Dyadic (allocates when fixed).
  Dyadic dyadic() const;
  operator Dyadic() const { return dyadic(); }  // NOLINT: implicit, for the Dyadic-based consumers
  /// The stored Dyadic without a copy in the general representation; else materialised in `scratch`.
  const Dyadic& as_dyadic(Dyadic& scratch) const {
    if (general_) return u_.dyadic;
    scratch = dyadic();
    return scratch;
  }

  bool is_zero() const noexcept {
    return general_ ? u_.dyadic.is_zero() : (u_.limbs[0][0] | u_.limbs[0][1] | u_.limbs[0][2]) == 0;
  }
  int sign() const noexcept { return general_ ? u_.dyadic.sign() : is_zero() ? 0 : negative_ ? -1 : 1; }

  /// Rounded once to T (as Dyadic::round); without GMP when fixed and the parts allow it.
  template <class T>
  T round(Rounding mode) const;
  template <class T>
  T round_quotient(std::int64_t n, Rounding mode) const {
    if (n == 1) return round<T>(mode);  // as Dyadic::round_quotient: without GMP when fixed
    return dyadic().template round_quotient<T>(n, mode);
  }
  Dyadic abs() const { return dyadic().abs(); }
  double approx() const { return round<double>(Rounding::nearest_even); }

 private:
  /// set_fixed for parts that are out of order or overlap.
  void set_general(const FixedDyadic (&parts)[Parts], bool negative);
  void clear_limbs() noexcept {
    for (auto& l : u_.limbs) l[0] = l[1] = l[2] = 0;
    for (auto& e : e_) e = 0;
  }
  void reset() noexcept {
    if (general_) u_.dyadic.~Dyadic();
    general_ = false;
    negative_ = false;
    clear_limbs();
  }
  void copy_from(const BasicExact& o) {
    general_ = o.general_;
    negative_ = o.negative_;
    for (int i = 0; i < Parts; ++i) e_[i] = o.e_[i];
    if (general_) {
      new (&u_.dyadic) Dyadic(o.u_.dyadic);
    } else {
      for (int i = 0; i < Parts; ++i) for (int j = 0; j < 3; ++j) u_.limbs[i][j] = o.u_.limbs[i][j];
    }
  }
  void move_from(BasicExact&& o) noexcept {
    general_ = o.general_;
    negative_ = o.negative_;
    for (int i = 0; i < Parts; ++i) e_[i] = o.e_[i];
    if (general_) {
      new (&u_.dyadic) Dyadic(std::move(o.u_.dyadic));
    } else {
      for (int i = 0; i < Parts; ++i) for (int j = 0; j < 3; ++j) u_.limbs[i][j] = o.u_.limbs[i][j];
    }
  }

  union Storage {
    Storage() noexcept {}
    ~Storage() {}
    std::uint64_t limbs[Parts][3];  // the fixed parts' mantissas (U192 limbs)
    Dyadic dyadic;                  // the general representation
  } u_;
  std::int32_t e_[Parts];  // the fixed parts' exponents
  bool negative_ = false;
  bool general_ = false;
};

/// An exact value (s(o)): one fixed part.
using Exact = BasicExact<1>;
/// An exact bound (B·divisor): a fixed γ·S part and the underflow part below it.
using ExactBound = BasicExact<2>;

extern template class BasicExact<1>;
extern template class BasicExact<2>;

/// out = a + b in one fixed part, when the sum fits 192 bits (else false, out unchanged); out may
/// be a or b.
bool fixed_add(const FixedDyadic& a, const FixedDyadic& b, FixedDyadic& out) noexcept;

/// high + low rewritten as ExactBound::set_fixed's parts without changing their sum: a zero part
/// last, low below high's last bit, or both as one part when they overlap and the sum fits 192
/// bits; false (nothing changed but the order) when it does not.
bool order_parts(FixedDyadic& high, FixedDyadic& low) noexcept;

/// |r − s| for a finite r and a fixed s, when it fits 192 bits (else nullopt).
template <class T>
std::optional<FixedDyadic> fixed_distance(const Exact& s, T r);

/// x <= b for a fixed non-negative b, exactly, or nullopt when the two parts of b are too close
/// for the allocation-free decision (the caller then compares Dyadics).
std::optional<bool> fixed_at_most(const FixedDyadic& x, const ExactBound& b);

/// floor(log2(b)) for a fixed, non-zero, non-negative b: its first part's (the second lies below
/// the first one's last bit, so it cannot carry into a new binade).
inline long fixed_floor_log2(const ExactBound& b) { return b.part(0).top() - 1; }

}  // namespace einfuzz::reference
