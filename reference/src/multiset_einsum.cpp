// The multiset oracle for einsum: exact term sums, enclosures and special classes (ORACLE.md §1–§3).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "einfuzz/reference/multiset.hpp"
#include "exact_sum.hpp"
#include "materialise.hpp"

namespace einfuzz::reference {

template <class T>
FormatConstants format_constants() {
  using L = std::numeric_limits<T>;
  // η = 2^-1075 for f64 is not a double (ldexp would round it to 0): round it up to 2^-1074.
  const double eta = std::max(std::ldexp(1.0, L::min_exponent - L::digits - 1),
                              std::numeric_limits<double>::denorm_min());
  return {std::ldexp(1.0, -L::digits), eta, static_cast<double>(L::max()), L::digits, L::min_exponent - 1};
}
template FormatConstants format_constants<float>();
template FormatConstants format_constants<double>();

namespace {

double up(double x) { return std::nextafter(x, std::numeric_limits<double>::infinity()); }
double down(double x) { return std::nextafter(x, -std::numeric_limits<double>::infinity()); }
// a, b >= 0. A zero factor gives an exact 0 (not the smallest subnormal), so that a passthrough
// element (γ_0 = 0, U = 0) keeps B = 0 and stays exact (ORACLE.md §2).
double mul_up(double a, double b) {
  return (a == 0 && !std::isinf(b)) || (b == 0 && !std::isinf(a)) ? 0.0 : up(a * b);
}
double add_up(double a, double b) { return a + b == 0 ? 0.0 : up(a + b); }  // a, b >= 0
// x·2^e rounded up (x >= 0, e < 0): ldexp rounds to nearest once the result is subnormal.
double scale_up(double x, int e) {
  const double y = std::ldexp(x, e);
  return std::ldexp(y, -e) < x ? up(y) : y;
}

}  // namespace

double gamma_up(std::int64_t n, double u) {
  if (n <= 0) return 0;
  const double nu = static_cast<double>(n) * u;  // exact: n < 2^53 and u a power of two
  if (nu >= 1) return std::numeric_limits<double>::infinity();
  return up(nu / down(1 - nu));
}

double one_plus_u_pow_up(std::int64_t n, double u) {
  // (1 + u)^n <= exp(n·u); glibc's exp is within one ulp, two steps up make it an upper bound.
  return up(up(std::exp(static_cast<double>(n) * u)));
}

namespace {

template <class T>
MultisetEinsum multiset(const CheckedEinsum& e, std::span<const Tensor> inputs) {
  const FormatConstants fc = format_constants<T>();
  const Shape gshape = detail::global_shape(e);
  const auto broadcast = detail::broadcast_operands<T>(e, inputs);
  const int k = static_cast<int>(e.operands.size());
  const std::int64_t K = e.contraction_size;
  const std::int64_t N = K + k - 2;
  const std::int64_t N1 = N >= 1 ? N + 1 : 0;
  const double gamma = gamma_up(N1, fc.u);
  const double growth = one_plus_u_pow_up(N1, fc.u);
  // The smallest a product of k finite factors of an Inf term may be: 2^emin · (1+u)^k, exactly.
  Dyadic underflow_floor(1, fc.min_exponent);
  {
    const Dyadic one_plus_u(mpz_class(1) + (mpz_class(1) << fc.digits), -fc.digits);
    for (int i = 0; i < k; ++i) underflow_floor = underflow_floor * one_plus_u;
  }

  MultisetEinsum out;
  out.rounded = Tensor(dtype_of_v<T>, e.output_shape);
  auto rounded = out.rounded.values<T>();
  out.elements.resize(static_cast<std::size_t>(e.output_size));
  // Per element: every finite term as an exact (m, e) pair when its product fits 127 bits (the
  // common case), else as a Dyadic; then one exact sum per sign in a digit accumulator.
  std::vector<detail::ExactTerm> finite_terms, grow_terms;
  detail::DigitAccumulator positive, negative_part, grow_sum;
  for (std::int64_t o = 0; o < e.output_size; ++o) {
    ElementTruth& t = out.elements[static_cast<std::size_t>(o)];
    t.terms = K;
    t.factors = k;
    finite_terms.clear();
    grow_terms.clear();
    ExactAccumulator wide_sum, wide_abs_sum, wide_magnitude;  // the rare > 127-bit products
    bool any_wide = false;
    bool pos_inf = false, neg_inf = false, nan_term = false;
    detail::for_each_term(e, gshape, o, [&](std::int64_t g) {
      bool has_nan = false, has_inf = false, has_zero = false, negative = false;
      detail::ExactTerm product, grow;
      for (int m = 0; m < k; ++m) {
        const T x = broadcast[static_cast<std::size_t>(m)][static_cast<std::size_t>(g)];
        if (std::isnan(x)) { has_nan = true; continue; }
        negative ^= std::signbit(x);
        if (std::isinf(x)) { has_inf = true; continue; }
        if (x == 0) { has_zero = true; continue; }
        const detail::Decomposed d = detail::decompose(x);
        product.multiply(d);
        if (std::fabs(x) > T(1)) grow.multiply(d);
      }
      // Every term contributes Π max(1,|x|) over its finite factors to M (§3), zero or not.
      if (grow.wide) {
        any_wide = true;
        Dyadic exact_grow(1, 0);
        for (int m = 0; m < k; ++m) {
          const T x = broadcast[static_cast<std::size_t>(m)][static_cast<std::size_t>(g)];
          if (std::isfinite(x) && std::fabs(x) > T(1)) exact_grow = exact_grow * Dyadic::of(std::fabs(x));
        }
        wide_magnitude.add(exact_grow);
      } else {
        grow_terms.push_back(grow);
      }
      if (has_nan) {
        t.nan_input = true;
        nan_term = true;
      } else if (has_inf && has_zero) {
        t.zero_times_inf = true;
        nan_term = true;
      } else if (has_inf) {
        (negative ? neg_inf : pos_inf) = true;
        Dyadic shrink(1, 0);
        for (int m = 0; m < k; ++m) {
          const T x = broadcast[static_cast<std::size_t>(m)][static_cast<std::size_t>(g)];
          if (std::isfinite(x) && std::fabs(x) < T(1)) shrink = shrink * Dyadic::of(std::fabs(x));
        }
        if (compare(shrink, underflow_floor) < 0) t.no_inf_underflow = false;
      } else if (!has_zero) {
        if (product.wide) {
          any_wide = true;
          Dyadic exact_product(1, 0);  // Dyadic::of keeps each factor's sign
          for (int m = 0; m < k; ++m) {
            exact_product = exact_product * Dyadic::of(broadcast[static_cast<std::size_t>(m)][static_cast<std::size_t>(g)]);
          }
          wide_sum.add(exact_product);
          wide_abs_sum.add(exact_product.abs());
        } else {
          product.negative = negative;
          finite_terms.push_back(product);
        }
      }
    });
    // Exact sums over a window that covers every term (plus carry headroom inside the accumulator).
    const auto window = [](const std::vector<detail::ExactTerm>& terms, long& base, long& bits) {
      long lo = 0, hi = 0;
      for (std::size_t i = 0; i < terms.size(); ++i) {
        lo = i ? std::min(lo, terms[i].e) : terms[i].e;
        hi = i ? std::max(hi, terms[i].e) : terms[i].e;
      }
      base = lo;
      bits = hi - lo + 128;
    };
    const bool single = finite_terms.size() <= 1 && grow_terms.size() <= 1 && !any_wide;
    if (single) {
      // One term at most (passthrough, diagonals, outer products): no accumulator, no GMP rounding.
      const detail::ExactTerm term = finite_terms.empty() ? detail::ExactTerm{0, 0} : finite_terms.front();
      const detail::ExactTerm grow = grow_terms.empty() ? detail::ExactTerm{0, 0} : grow_terms.front();
      t.exact = Dyadic::of_u128(term.m, term.e, term.negative);
      t.abs_sum = round_binary<double>(term.m, term.e, false, Rounding::up);
      t.magnitude = round_binary<double>(grow.m, grow.e, false, Rounding::up);
    } else {
      long base = 0, bits = 0;
      window(finite_terms, base, bits);
      positive.reset(base, bits);
      negative_part.reset(base, bits);
      for (const auto& term : finite_terms) (term.negative ? negative_part : positive).add(term.m, term.e);
      const Dyadic pos = positive.value();
      const Dyadic neg = negative_part.value();
      window(grow_terms, base, bits);
      grow_sum.reset(base, bits);
      for (const auto& term : grow_terms) grow_sum.add(term.m, term.e);
      ExactAccumulator sum, abs_sum, magnitude;
      sum.add(pos);
      sum.add(-neg);
      sum.add(wide_sum.value());
      abs_sum.add(pos);
      abs_sum.add(neg);
      abs_sum.add(wide_abs_sum.value());
      magnitude.add(grow_sum.value());
      magnitude.add(wide_magnitude.value());
      t.exact = sum.value();
      t.abs_sum = abs_sum.value().round<double>(Rounding::up);
      t.magnitude = magnitude.value().round<double>(Rounding::up);
    }
    t.mixed_inf = pos_inf && neg_inf;
    t.value_class = (nan_term || t.mixed_inf) ? ValueClass::nan
                    : pos_inf                 ? ValueClass::pos_inf
                    : neg_inf                 ? ValueClass::neg_inf
                                              : ValueClass::finite;
    t.no_overflow = mul_up(t.magnitude, growth) < fc.omega;
    // U = (k−1)·η·(1+u)^N'·M with η = 2^(emin−p) exactly (f64: 2^-1075, below every double):
    // scale by η last, unless the unscaled product overflows.
    double underflow = 0;
    if (k >= 2) {
      constexpr int eta_exponent = std::numeric_limits<T>::min_exponent - std::numeric_limits<T>::digits - 1;
      underflow = mul_up(mul_up(static_cast<double>(k - 1), growth), t.magnitude);
      underflow = std::isinf(underflow)
                      ? mul_up(mul_up(scale_up(t.magnitude, eta_exponent), static_cast<double>(k - 1)), growth)
                      : scale_up(underflow, eta_exponent);
    }
    t.bound = add_up(mul_up(gamma, t.abs_sum), underflow);
    if (std::isnan(t.bound)) t.bound = std::numeric_limits<double>::infinity();  // inf·0 guard

    T& r = rounded[static_cast<std::size_t>(o)];
    switch (t.value_class) {
      case ValueClass::nan: r = std::numeric_limits<T>::quiet_NaN(); break;
      case ValueClass::pos_inf: r = std::numeric_limits<T>::infinity(); break;
      case ValueClass::neg_inf: r = -std::numeric_limits<T>::infinity(); break;
      case ValueClass::finite: r = t.exact.round<T>(Rounding::nearest_even); break;
    }
  }
  return out;
}

}  // namespace

MultisetEinsum multiset_einsum(const CheckedEinsum& einsum, std::span<const Tensor> inputs) {
  if (inputs.front().dtype() == DType::f32) return multiset<float>(einsum, inputs);
  if (inputs.front().dtype() == DType::f64) return multiset<double>(einsum, inputs);
  std::fprintf(stderr, "einfuzz: multiset_einsum called on a non-float einsum (harness bug)\n");
  std::abort();
}

}  // namespace einfuzz::reference
