// Exact decisions for the oracle's certificates (ORACLE.md §2–§4): whether x·(1+u)^n < Ω, with cheap
// double bounds first and exact dyadic arithmetic only near the threshold.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "einfuzz/core/rounding.hpp"
#include "einfuzz/reference/exact.hpp"
#include "einfuzz/reference/multiset.hpp"

namespace einfuzz::reference::detail {

/// (1+u)^n exactly, u = 2^-digits: (2^digits + 1)^n · 2^(−digits·n).
inline Dyadic one_plus_u_pow_exact(int digits, std::int64_t n) {
  mpz_class base = (mpz_class(1) << digits) + 1, power;
  mpz_pow_ui(power.get_mpz_t(), base.get_mpz_t(), static_cast<unsigned long>(n));
  return Dyadic(std::move(power), -static_cast<long>(digits) * static_cast<long>(n));
}

/// Decides x·(1+u)^n < Ω for exact x >= 0, for one fixed n. Sound always; exact unless n exceeds
/// kExactLimit and x lies within the (tiny) gap between the double bounds, where it answers false.
class OverflowCertificate {
 public:
  static constexpr std::int64_t kExactLimit = 4096;  ///< (1+u)^n has (p+1)·n bits: keep it small

  OverflowCertificate(std::int64_t n, const FormatConstants& fc)
      : n_(n), digits_(fc.digits), omega_(Dyadic::of(fc.omega)), omega_double_(fc.omega) {
    growth_hi_ = n == 0 ? 1.0 : one_plus_u_pow_up(n, fc.u);
    // (1+u)^n >= 1 + n·u (Bernoulli); one step down from the rounded sum is below it.
    growth_lo_ = n == 0 ? 1.0 : next_down(1.0 + static_cast<double>(n) * fc.u);
    // next_up(p) < Ω iff p < next_down(Ω); next_down(q) >= Ω iff q >= next_up(Ω): the same tests as
    // mul_up / mul_down against Ω, without a libm call per element.
    up_limit_ = next_down(omega_double_);
    down_limit_ = next_up(omega_double_);
  }

  /// Decides x·(1+u)^n·(1+2^-extra_digits)^extra_n < Ω (ORACLE §8: the accumulator's roundings
  /// times the input rounding's growth); the one-format constructor is extra_n = 0.
  OverflowCertificate(std::int64_t n, const FormatConstants& fc, int extra_digits, std::int64_t extra_n)
      : OverflowCertificate(n, fc) {
    if (extra_n == 0) return;
    extra_digits_ = extra_digits;
    extra_n_ = extra_n;
    const double v = std::ldexp(1.0, -extra_digits);
    growth_hi_ = mul_up(growth_hi_, one_plus_u_pow_up(extra_n, v));
    growth_lo_ = mul_down(growth_lo_, next_down(1.0 + static_cast<double>(extra_n) * v));
  }

  bool below_omega(const Dyadic& x) {
    if (x.is_zero()) return true;
    return below_omega(x, x.round<double>(Rounding::up), x.round<double>(Rounding::down));
  }

  /// The decision from x rounded up and down to doubles alone, when they suffice (no Dyadic).
  std::optional<bool> decide(double x_up, double x_down) const {
    if (x_up * growth_hi_ < up_limit_) return true;      // mul_up(x_up, growth_hi_) < Ω
    if (x_down * growth_lo_ >= down_limit_) return false;  // mul_down(x_down, growth_lo_) >= Ω
    if (n_ > kExactLimit) return false;
    return std::nullopt;
  }

  /// The same, with x rounded up and down to doubles already (`x_up` may be +inf).
  bool below_omega(const Dyadic& x, double x_up, double x_down) {
    if (const std::optional<bool> quick = decide(x_up, x_down)) return *quick;
    if (extra_n_ > kExactLimit) return false;
    if (!growth_) {
      growth_ = one_plus_u_pow_exact(digits_, n_);
      if (extra_n_ > 0) growth_ = *growth_ * one_plus_u_pow_exact(extra_digits_, extra_n_);
    }
    return compare(x * *growth_, omega_) < 0;
  }

 private:
  std::int64_t n_;
  int digits_;
  int extra_digits_ = 0;
  std::int64_t extra_n_ = 0;
  Dyadic omega_;
  double omega_double_;
  double growth_hi_ = 1, growth_lo_ = 1;
  double up_limit_ = 0, down_limit_ = 0;
  std::optional<Dyadic> growth_;
};

}  // namespace einfuzz::reference::detail
