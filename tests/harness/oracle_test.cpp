// The any-order oracle (ORACLE.md): the multiset value is exact (against MPFR), the judge is sound
// (the adversarial `shuffle` backend is never a mismatch) and tight (faulty backends are caught);
// the §3 divergences and the certificates' boundaries as unit tests.
#include <gtest/gtest.h>
#include <mpfr.h>
#include <rapidcheck/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <iostream>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "einfuzz/backends/shuffle.hpp"
#include "einfuzz/core/case.hpp"
#include "einfuzz/core/check.hpp"
#include "einfuzz/core/choice.hpp"
#include "einfuzz/harness/generate.hpp"
#include "einfuzz/harness/judge.hpp"
#include "einfuzz/harness/run.hpp"
#include "einfuzz/harness/values.hpp"
#include "einfuzz/reference/multiset.hpp"
#include "support/faulty_backends.hpp"
#include "support/values_text.hpp"

namespace einfuzz {
namespace {

using reference::ElementTruth;
using reference::MultisetEinsum;
using reference::ValueClass;

// ---------------------------------------------------------------------------------------------
// Cases, values and running

struct Input {
  Shape shape;
  std::string values;  ///< values_text notation: "1, -1e16, inf, nan, 3*0.5"
};

Case einsum_case(std::string pattern, DType dtype, const std::vector<Input>& inputs) {
  Case c;
  c.pattern = std::move(pattern);
  c.dtype = dtype;
  for (const Input& in : inputs) c.inputs.push_back(test::tensor_from_text(dtype, in.shape, in.values));
  return c;
}

Case reduce_case(std::string pattern, std::string reduction, Tensor input) {
  Case c;
  c.op = Op::reduce;
  c.pattern = std::move(pattern);
  c.reduction = std::move(reduction);
  c.dtype = input.dtype();
  c.inputs.push_back(std::move(input));
  return c;
}

Case reduce_case(std::string pattern, std::string reduction, DType dtype, const Input& input) {
  return reduce_case(std::move(pattern), std::move(reduction),
                     test::tensor_from_text(dtype, input.shape, input.values));
}

/// A one-input, rank-0 or rank-1 tensor of T from doubles (exact conversions only).
template <class T>
Tensor tensor_of(Shape shape, const std::vector<T>& values) {
  return Tensor(std::move(shape), values);
}

CheckedEinsum checked_of(const Case& c) {
  std::vector<Shape> shapes;
  for (const Tensor& t : c.inputs) shapes.push_back(t.shape());
  auto checked = check_einsum(c.pattern, shapes);
  if (!checked) ADD_FAILURE() << render(checked.error());
  return *checked;
}

MultisetEinsum truth_of(const Case& c) { return reference::multiset_einsum(checked_of(c), c.inputs); }

Verdict run_on(const Case& c, Backend& backend, const RunOptions& options = {}) {
  Backend* list[] = {&backend};
  const CaseOutcome out = run_case(c, list, options);
  return out.backends.at(0).verdict;
}

std::string explain(const Verdict& v, const Case& c) {
  std::string s = v.label() + ": " + v.detail;
  if (v.first) {
    s += "\n  element " + std::to_string(v.first->flat_index) + ": expected " + v.first->expected + ", actual " +
         v.first->actual + ", exact " + v.first->exact + ", bound " + v.first->bound_text + ", reachable " +
         v.first->reachable;
  }
  return s + "\ncase:\n" + write_case(c);
}

/// A backend that returns a fixed tensor (for judging hand-picked results end to end).
class FixedBackend final : public Backend {
 public:
  FixedBackend(Tensor result, bool factoring) : result_(std::move(result)) {
    caps_.dtypes = {DType::f32, DType::f64};
    caps_.factoring = factoring;
  }
  std::string_view name() const override { return "fixed"; }
  const Capabilities& capabilities() const override { return caps_; }
  BackendResult run(const Case&) override { return result_; }

 private:
  Tensor result_;
  Capabilities caps_;
};

/// How the exactness test and the edge-value soundness property redraw a generated case's values.
enum class Profile { generator, full_range, tiny, huge, cancellation, small, edges, mixed };
constexpr Profile kProfiles[] = {Profile::generator, Profile::full_range, Profile::tiny,   Profile::huge,
                                 Profile::cancellation, Profile::small,  Profile::edges, Profile::mixed};

template <class T>
T draw_value(Rng& rng, Profile profile) {
  using L = std::numeric_limits<T>;
  constexpr int p = L::digits;
  const T sign = rng.chance(1, 2) ? T(1) : T(-1);
  // 1.f with p-1 random fraction bits: exactly p significant bits.
  const T mantissa = T(1) + static_cast<T>(rng.next() >> (64 - (p - 1))) * std::ldexp(T(1), -(p - 1));
  switch (profile) {
    case Profile::generator: break;
    case Profile::full_range:  // every binade, subnormals included
      return sign * std::ldexp(mantissa, static_cast<int>(rng.between(L::min_exponent - p, L::max_exponent - 1)));
    case Profile::tiny:  // subnormals and the lowest normal binades: products underflow deeply
      return sign * std::ldexp(mantissa, static_cast<int>(rng.between(L::min_exponent - p, L::min_exponent + 3)));
    case Profile::huge:  // near Ω: sums and products overflow
      if (rng.chance(1, 2)) return sign * std::ldexp(mantissa, L::max_exponent - 1 - static_cast<int>(rng.below(3)));
      return sign * static_cast<T>(rng.between(1, 4));
    case Profile::cancellation: {
      const T pool[] = {T(1e16), T(-1e16), T(1), T(-1), std::ldexp(T(1), p), -std::ldexp(T(1), p),
                        std::nextafter(T(1), T(2)), std::nextafter(T(1), T(0)), T(3), T(0.1), T(-0.1), T(0.5)};
      return pool[rng.below(std::size(pool))];
    }
    case Profile::small:
      return static_cast<T>(rng.between(-8, 8)) / static_cast<T>(std::int64_t{1} << rng.below(3));
    case Profile::edges: {
      static const std::vector<T> edges = edge_values<T>();
      return edges[rng.below(edges.size())];
    }
    case Profile::mixed: {
      if (rng.chance(1, 30)) {
        const T specials[] = {L::quiet_NaN(), L::infinity(), -L::infinity(), T(0), -T(0)};
        return specials[rng.below(std::size(specials))];
      }
      return draw_value<T>(rng, kProfiles[1 + rng.below(5)]);
    }
  }
  return T(0);
}

void redraw_values(Case& c, Rng& rng, Profile profile) {
  if (profile == Profile::generator) return;
  for (Tensor& t : c.inputs) {
    visit_dtype(t.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_floating_point_v<T>) {
        for (T& v : t.values<T>()) v = draw_value<T>(rng, profile);
      }
    });
  }
}

/// Row-major odometer over `axes` (global indices) setting coords[a]; none when a length is 0.
template <class Fn>
void for_each_coord(const std::vector<int>& axes, const Shape& lengths, std::vector<std::int64_t>& coords, Fn&& fn) {
  for (const int a : axes) {
    if (lengths[static_cast<std::size_t>(a)] == 0) return;
    coords[static_cast<std::size_t>(a)] = 0;
  }
  for (;;) {
    fn();
    std::size_t i = axes.size();
    for (;;) {
      if (i == 0) return;
      const auto a = static_cast<std::size_t>(axes[--i]);
      if (++coords[a] < lengths[a]) break;
      coords[a] = 0;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Exact: the multiset value against MPFR

/// An MPFR number that frees itself.
class Mp {
 public:
  explicit Mp(mpfr_prec_t precision) { mpfr_init2(v_, precision); }
  ~Mp() { mpfr_clear(v_); }
  Mp(const Mp&) = delete;
  Mp& operator=(const Mp&) = delete;
  mpfr_ptr get() { return v_; }
  mpfr_srcptr get() const { return v_; }

 private:
  mpfr_t v_;
};

/// x rounded once to T (or, for the bounds, to double) as IEEE does: precision p, subnormals and
/// overflow emulated with emin/emax and mpfr_subnormalize.
template <class T>
T round_ieee(mpfr_srcptr x, mpfr_rnd_t rnd) {
  using L = std::numeric_limits<T>;
  Mp r(L::digits);
  int ternary = mpfr_set(r.get(), x, rnd);  // in the default (huge) exponent range
  const mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
  mpfr_set_emin(L::min_exponent - L::digits + 1);  // MPFR's emin of denorm_min: -1073 / -148
  mpfr_set_emax(L::max_exponent);                  // 1024 / 128
  ternary = mpfr_check_range(r.get(), ternary, rnd);
  mpfr_subnormalize(r.get(), ternary, rnd);
  T out;
  if constexpr (std::is_same_v<T, float>) {
    out = mpfr_get_flt(r.get(), MPFR_RNDN);
  } else {
    out = mpfr_get_d(r.get(), MPFR_RNDN);
  }
  mpfr_set_emin(emin);
  mpfr_set_emax(emax);
  return out;
}

/// The exact sum of `terms` (mpfr_sum at a precision that spans every bit of them).
void exact_sum(mpfr_ptr out, std::deque<Mp>& terms, mpfr_prec_t term_bits) {
  std::vector<mpfr_ptr> ptrs;
  mpfr_exp_t hi = std::numeric_limits<mpfr_exp_t>::min(), lo = std::numeric_limits<mpfr_exp_t>::max();
  for (Mp& t : terms) {
    if (mpfr_zero_p(t.get())) continue;
    ptrs.push_back(t.get());
    hi = std::max(hi, mpfr_get_exp(t.get()));
    lo = std::min(lo, mpfr_get_exp(t.get()) - term_bits);
  }
  const mpfr_prec_t precision = ptrs.empty() ? 2 : static_cast<mpfr_prec_t>(hi - lo) + 80;
  mpfr_set_prec(out, precision);
  const int ternary = mpfr_sum(out, ptrs.data(), ptrs.size(), MPFR_RNDN);
  ASSERT_EQ(ternary, 0) << "the test's own sum is not exact";
}

template <class T>
bool same_bits(T a, T b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

/// Compares every element of the multiset oracle with an independent MPFR computation.
template <class T>
void expect_exact(const Case& c) {
  using L = std::numeric_limits<T>;
  const CheckedEinsum e = checked_of(c);
  const MultisetEinsum truth = reference::multiset_einsum(e, c.inputs);
  const auto rounded = truth.rounded.values<T>();
  const std::size_t k = e.operands.size();
  const mpfr_prec_t term_bits = static_cast<mpfr_prec_t>(k) * L::digits + 2;
  const double u = std::ldexp(1.0, -L::digits);
  const double omega = static_cast<double>(L::max());

  Shape lengths;
  for (const Axis& a : e.axes) lengths.push_back(a.length);
  std::vector<std::vector<std::int64_t>> stride;  // per operand, per global axis
  for (const CheckedOperand& op : e.operands) {
    std::vector<std::int64_t> s(e.axes.size(), 0);
    std::int64_t step = 1;
    for (std::size_t d = op.shape.size(); d-- > 0;) {
      if (op.shape[d] != 1) s[static_cast<std::size_t>(op.axes[d])] += step;
      step *= op.shape[d];
    }
    stride.push_back(std::move(s));
  }
  // 2^emin · (1+u)^k, exact: the floor for the finite factors of an Inf term.
  Mp floor_value(static_cast<mpfr_prec_t>(k + 1) * (L::digits + 1) + 8);
  mpfr_set_ui_2exp(floor_value.get(), 1, L::min_exponent - 1, MPFR_RNDN);
  for (std::size_t m = 0; m < k; ++m) {
    Mp one_plus_u(L::digits + 1);
    mpfr_set_ui_2exp(one_plus_u.get(), 1, -L::digits, MPFR_RNDN);
    mpfr_add_ui(one_plus_u.get(), one_plus_u.get(), 1, MPFR_RNDN);
    ASSERT_EQ(mpfr_mul(floor_value.get(), floor_value.get(), one_plus_u.get(), MPFR_RNDN), 0);
  }

  std::vector<std::int64_t> coords(e.axes.size(), 0);
  std::size_t o = 0;
  for_each_coord(e.output, lengths, coords, [&] {
    const ElementTruth& t = truth.elements[o];
    std::deque<Mp> terms, abs_terms, grows;
    bool nan_input = false, zero_times_inf = false, pos_inf = false, neg_inf = false, underflow_ok = true;
    std::int64_t count = 0;
    for_each_coord(e.contracted, lengths, coords, [&] {
      ++count;
      bool nan = false, inf = false, zero = false, negative = false;
      Mp product(term_bits), grow(term_bits), shrink(term_bits);
      mpfr_set_ui(product.get(), 1, MPFR_RNDN);
      mpfr_set_ui(grow.get(), 1, MPFR_RNDN);
      mpfr_set_ui(shrink.get(), 1, MPFR_RNDN);
      for (std::size_t m = 0; m < k; ++m) {
        std::int64_t at = 0;
        for (std::size_t a = 0; a < coords.size(); ++a) at += coords[a] * stride[m][a];
        const double x = static_cast<double>(c.inputs[m].values<T>()[static_cast<std::size_t>(at)]);
        if (std::isnan(x)) { nan = true; continue; }
        negative ^= std::signbit(x);
        if (std::isinf(x)) { inf = true; continue; }
        zero |= x == 0;
        Mp v(64);
        mpfr_set_d(v.get(), x, MPFR_RNDN);
        ASSERT_EQ(mpfr_mul(product.get(), product.get(), v.get(), MPFR_RNDN), 0);
        mpfr_abs(v.get(), v.get(), MPFR_RNDN);
        if (mpfr_cmp_ui(v.get(), 1) > 0) {
          ASSERT_EQ(mpfr_mul(grow.get(), grow.get(), v.get(), MPFR_RNDN), 0);
        }
        if (mpfr_cmp_ui(v.get(), 1) < 0) {
          ASSERT_EQ(mpfr_mul(shrink.get(), shrink.get(), v.get(), MPFR_RNDN), 0);
        }
      }
      mpfr_set(grows.emplace_back(term_bits).get(), grow.get(), MPFR_RNDN);
      if (nan) {
        nan_input = true;
      } else if (inf && zero) {
        zero_times_inf = true;
      } else if (inf) {
        (negative ? neg_inf : pos_inf) = true;
        if (mpfr_cmp(shrink.get(), floor_value.get()) < 0) underflow_ok = false;
      } else {
        mpfr_set(terms.emplace_back(term_bits).get(), product.get(), MPFR_RNDN);
        mpfr_abs(abs_terms.emplace_back(term_bits).get(), product.get(), MPFR_RNDN);
      }
    });
    const std::string where = "element " + std::to_string(o) + " of\n" + write_case(c);
    const ValueClass cls = (nan_input || zero_times_inf || (pos_inf && neg_inf)) ? ValueClass::nan
                           : pos_inf                                              ? ValueClass::pos_inf
                           : neg_inf                                              ? ValueClass::neg_inf
                                                                                  : ValueClass::finite;
    EXPECT_EQ(t.terms, count) << where;
    EXPECT_EQ(t.factors, static_cast<int>(k)) << where;
    EXPECT_EQ(t.value_class, cls) << where;
    EXPECT_EQ(t.nan_input, nan_input) << where;
    EXPECT_EQ(t.zero_times_inf, zero_times_inf) << where;
    EXPECT_EQ(t.mixed_inf, pos_inf && neg_inf) << where;
    EXPECT_EQ(t.no_inf_underflow, underflow_ok) << where;

    Mp sum(2), abs_sum(2), magnitude(2);
    exact_sum(sum.get(), terms, term_bits);
    exact_sum(abs_sum.get(), abs_terms, term_bits);
    exact_sum(magnitude.get(), grows, term_bits);
    // ElementTruth::exact is the same number as the MPFR sum.
    Mp dyadic(std::max<mpfr_prec_t>(2, static_cast<mpfr_prec_t>(mpz_sizeinbase(t.exact.mantissa().get_mpz_t(), 2))));
    ASSERT_EQ(mpfr_set_z_2exp(dyadic.get(), t.exact.mantissa().get_mpz_t(), t.exact.exponent(), MPFR_RNDN), 0);
    EXPECT_TRUE(mpfr_equal_p(dyadic.get(), sum.get())) << where;
    // ŝ*: rounded once to T; the bounds' inputs rounded up to double.
    const T expected = cls == ValueClass::nan       ? L::quiet_NaN()
                       : cls == ValueClass::pos_inf ? L::infinity()
                       : cls == ValueClass::neg_inf ? -L::infinity()
                                                    : round_ieee<T>(sum.get(), MPFR_RNDN);
    EXPECT_TRUE(same_bits(rounded[o], expected)) << rounded[o] << " vs " << expected << ", " << where;
    EXPECT_TRUE(same_bits(t.magnitude, round_ieee<double>(magnitude.get(), MPFR_RNDU))) << where;
    if (cls == ValueClass::finite) {
      EXPECT_TRUE(same_bits(t.abs_sum, round_ieee<double>(abs_sum.get(), MPFR_RNDU))) << where;
    }

    // Certificates and bound, rigorously at 256 bits: sound (never claims what is false) and tight
    // up to the documented outward rounding.
    const std::int64_t n = count + static_cast<std::int64_t>(k) - 2;
    const std::int64_t n1 = n >= 1 ? n + 1 : 0;
    Mp growth_lo(256), growth_hi(256), tmp(256), lo(256), hi(256);
    mpfr_set_ui_2exp(tmp.get(), 1, -L::digits, MPFR_RNDN);
    mpfr_add_ui(tmp.get(), tmp.get(), 1, MPFR_RNDN);  // 1 + u, exact at 256 bits
    mpfr_pow_ui(growth_lo.get(), tmp.get(), static_cast<unsigned long>(n1), MPFR_RNDD);
    mpfr_pow_ui(growth_hi.get(), tmp.get(), static_cast<unsigned long>(n1 + 16), MPFR_RNDU);
    mpfr_mul(lo.get(), magnitude.get(), growth_lo.get(), MPFR_RNDD);
    mpfr_mul(hi.get(), magnitude.get(), growth_hi.get(), MPFR_RNDU);
    if (mpfr_cmp_d(lo.get(), omega) >= 0) {
      EXPECT_FALSE(t.no_overflow) << where;
    }
    if (mpfr_cmp_d(hi.get(), omega) < 0) {
      EXPECT_TRUE(t.no_overflow) << where;
    }
    // The sharper certificate for non-factoring backends (§2): max_j P_j·(1+u)^(k−1) < Ω and
    // S·(1+u)^N' < Ω, checked with the same 256-bit outward bounds.
    {
      Mp max_p(term_bits), p_lo(256), p_hi(256), s_lo(256), s_hi(256), k_lo(256), k_hi(256);
      mpfr_set_ui(max_p.get(), 0, MPFR_RNDN);
      for (Mp& g : grows) {
        if (mpfr_cmp(g.get(), max_p.get()) > 0) mpfr_set(max_p.get(), g.get(), MPFR_RNDN);
      }
      mpfr_pow_ui(k_lo.get(), tmp.get(), static_cast<unsigned long>(k - 1), MPFR_RNDD);
      mpfr_pow_ui(k_hi.get(), tmp.get(), static_cast<unsigned long>(k - 1 + 16), MPFR_RNDU);
      mpfr_mul(p_lo.get(), max_p.get(), k_lo.get(), MPFR_RNDD);
      mpfr_mul(p_hi.get(), max_p.get(), k_hi.get(), MPFR_RNDU);
      mpfr_mul(s_lo.get(), abs_sum.get(), growth_lo.get(), MPFR_RNDD);
      mpfr_mul(s_hi.get(), abs_sum.get(), growth_hi.get(), MPFR_RNDU);
      if (mpfr_cmp_d(p_lo.get(), omega) >= 0 || mpfr_cmp_d(s_lo.get(), omega) >= 0) {
        EXPECT_FALSE(t.no_overflow_nonfactoring) << where;
      }
      if (mpfr_cmp_d(p_hi.get(), omega) < 0 && mpfr_cmp_d(s_hi.get(), omega) < 0) {
        EXPECT_TRUE(t.no_overflow_nonfactoring) << where;
      }
      if (t.no_overflow) {
        EXPECT_TRUE(t.no_overflow_nonfactoring) << where;
      }
    }
    if (cls == ValueClass::finite && !std::isinf(t.bound)) {
      // B = γ_N'·S + (k−1)·η·(1+u)^N'·M, γ_N' = N'u / (1 − N'u); computed downwards.
      Mp gamma(256), bound(256), under(256);
      mpfr_set_d(gamma.get(), static_cast<double>(n1) * u, MPFR_RNDD);
      mpfr_ui_sub(tmp.get(), 1, gamma.get(), MPFR_RNDU);
      mpfr_div(gamma.get(), gamma.get(), tmp.get(), MPFR_RNDD);
      mpfr_mul(bound.get(), gamma.get(), abs_sum.get(), MPFR_RNDD);
      mpfr_set_ui_2exp(under.get(), static_cast<unsigned long>(k - 1), L::min_exponent - L::digits - 1, MPFR_RNDD);
      mpfr_mul(under.get(), under.get(), lo.get(), MPFR_RNDD);
      mpfr_add(bound.get(), bound.get(), under.get(), MPFR_RNDD);
      EXPECT_LE(mpfr_cmp_d(bound.get(), t.bound), 0)
          << "bound " << t.bound << " below the formula " << mpfr_get_d(bound.get(), MPFR_RNDN) << " (S "
          << t.abs_sum << ", M " << t.magnitude << "), " << where;
      if (k == 1 && count == 1) {
        EXPECT_EQ(t.bound, 0.0) << "a passthrough element is exact, " << where;
      }
    }
    ++o;
  });
}

TEST(OracleExact, MultisetValueEqualsMpfrOnRandomCases) {
  constexpr int kCases = 10000;
  std::int64_t elements = 0;
  for (int i = 0; i < kCases; ++i) {
    Rng rng(Rng::mix(20240917, static_cast<std::uint64_t>(i)));
    GenOptions options;
    options.dtypes = {DType::f32, DType::f64};
    options.max_operands = i % 4 == 0 ? 8 : 4;  // many operands: deep products, wide exponent spans
    options.max_global = 256;
    Case c = generate_einsum(rng, options);
    redraw_values(c, rng, kProfiles[static_cast<std::size_t>(i) % std::size(kProfiles)]);
    if (c.dtype == DType::f32) {
      expect_exact<float>(c);
    } else {
      expect_exact<double>(c);
    }
    elements += checked_of(c).output_size;
    if (HasFailure()) FAIL() << "stopped at case " << i;
  }
  std::cout << "[ oracle   ] " << kCases << " cases, " << elements << " elements exact against MPFR\n";
}

TEST(OracleExact, HandPickedValues) {
  const double omega = std::numeric_limits<double>::max();
  const double tiny = std::numeric_limits<double>::denorm_min();
  // Cancellation: 1e16 + 1 − 1e16 = 1 exactly (sequential binary64 gives 0).
  const MultisetEinsum a = truth_of(einsum_case("i ->", DType::f64, {{{3}, "1e16, 1, -1e16"}}));
  EXPECT_EQ(a.rounded.values<double>()[0], 1.0);
  // Near Ω: Ω + Ω − Ω = Ω exactly (a sequential fold overflows); Ω + Ω rounds to +Inf.
  Case near = einsum_case("i ->", DType::f64, {{{3}, "0, 0, 0"}});
  near.inputs[0].values<double>()[0] = omega;
  near.inputs[0].values<double>()[1] = omega;
  near.inputs[0].values<double>()[2] = -omega;
  EXPECT_EQ(truth_of(near).rounded.values<double>()[0], omega);
  EXPECT_FALSE(truth_of(near).elements[0].no_overflow);
  near.inputs[0].values<double>()[2] = 0;
  EXPECT_EQ(truth_of(near).rounded.values<double>()[0], std::numeric_limits<double>::infinity());
  // Subnormal products: denorm_min · 0.5 is exactly half an ulp: ties to even gives +0; times 0.75 rounds up.
  Case sub = einsum_case("i, i -> i", DType::f64, {{{2}, "0, 0"}, {{2}, "0.5, 0.75"}});
  sub.inputs[0].values<double>()[0] = tiny;
  sub.inputs[0].values<double>()[1] = tiny;
  const MultisetEinsum s = truth_of(sub);
  EXPECT_TRUE(same_bits(s.rounded.values<double>()[0], 0.0));
  EXPECT_EQ(s.rounded.values<double>()[1], tiny);
  EXPECT_FALSE(s.elements[0].exact.is_zero());
}

// ---------------------------------------------------------------------------------------------
// Sound: the shuffle backend is never judged a failure

/// How often one soundness property's cases and output elements were `indeterminate` (ORACLE.md
/// §2–§4 count them apart from passes): printed after the property, the soak runs' measurement.
class IndeterminateTally {
 public:
  void add(const Verdict& v, std::int64_t elements) {
    ++cases_;
    elements_ += elements;
    indeterminate_elements_ += v.indeterminate;
    if (v.indeterminate > 0) ++indeterminate_cases_;
  }
  void print(const std::string& suffix = "") const {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    std::cout << "[ oracle   ] " << test->test_suite_name() << "." << test->name() << suffix << ": indeterminate in "
              << indeterminate_cases_ << " of " << cases_ << " cases (" << percent(indeterminate_cases_, cases_)
              << "%), " << indeterminate_elements_ << " of " << elements_ << " elements ("
              << percent(indeterminate_elements_, elements_) << "%)\n";
  }

 private:
  static double percent(std::int64_t part, std::int64_t whole) {
    return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
  }
  std::int64_t cases_ = 0;
  std::int64_t indeterminate_cases_ = 0;
  std::int64_t elements_ = 0;
  std::int64_t indeterminate_elements_ = 0;
};

/// Runs `c` on a shuffle backend (seeded per case) and fails the property on any failing verdict.
void expect_sound(const Case& c, std::uint64_t seed, bool factoring, IndeterminateTally& tally) {
  ShuffleOptions options;
  options.seed = seed;
  options.factoring = factoring;
  const auto backend = make_shuffle_backend(options);
  Backend* list[] = {backend.get()};
  const CaseOutcome out = run_case(c, list, {});
  const Verdict& v = out.backends.at(0).verdict;
  RC_TAG(v.label());
  RC_CLASSIFY(v.kind == VerdictKind::indeterminate, "indeterminate (any reason)");
  if (is_failure(v.kind)) {
    RC_FAIL(explain(v, c) + "shuffle seed " + std::to_string(seed) + (factoring ? "" : ", factoring off"));
  }
  tally.add(v, out.expected ? out.expected->size() : 0);
}

/// Runs `c` on two shuffle backends with the same seed, one factoring (judged by the factoring
/// rules) and one not (judged by the stricter ones, ORACLE.md §2–§3), sharing the reference.
void expect_sound_both(const Case& c, std::uint64_t seed, IndeterminateTally& factoring_tally,
                       IndeterminateTally& per_term_tally) {
  ShuffleOptions options;
  options.seed = seed;
  const auto factoring = make_shuffle_backend(options);
  options.factoring = false;
  const auto per_term = make_shuffle_backend(options);
  Backend* list[] = {factoring.get(), per_term.get()};
  const CaseOutcome out = run_case(c, list, {});
  for (std::size_t b = 0; b < 2; ++b) {
    const Verdict& v = out.backends.at(b).verdict;
    RC_TAG(v.label() + (b == 0 ? "" : " (factoring off)"));
    if (is_failure(v.kind)) {
      RC_FAIL(explain(v, c) + "shuffle seed " + std::to_string(seed) + (b == 0 ? "" : ", factoring off"));
    }
    (b == 0 ? factoring_tally : per_term_tally).add(v, out.expected ? out.expected->size() : 0);
  }
}

/// A soundness property: `draw(tally)` is one RapidCheck case. Run by RapidCheck's Google Test
/// driver as RC_GTEST_PROP runs it (same id for `reproduce`, same RC_PARAMS), but with a tally
/// that outlives the cases, printed at the end.
template <class Draw>
void check_sound(Draw&& draw) {
  IndeterminateTally tally;
  rc::detail::checkGTest([&] { draw(tally); });
  tally.print();
}

Rng case_rng(std::uint64_t salt);

/// check_sound for einsum properties that judge every case on a factoring and a non-factoring
/// shuffle backend: `draw(rng)` returns the case, and the two tallies print apart.
template <class Draw>
void check_sound_both(std::uint64_t salt, Draw&& draw) {
  IndeterminateTally factoring, per_term;
  rc::detail::checkGTest([&] {
    Rng rng = case_rng(salt);
    const Case c = draw(rng);
    expect_sound_both(c, rng.next(), factoring, per_term);
  });
  factoring.print(" [factoring]");
  per_term.print(" [factoring off]");
}

/// A full-range seed for the case generator, salted per property (RapidCheck seeds every property
/// alike, and its integers are small at small sizes). Not shrunk: a failure reports the case drawn.
Rng case_rng(std::uint64_t salt) {
  const auto seed = *rc::gen::noShrink(rc::gen::resize(100, rc::gen::arbitrary<std::uint64_t>()));
  return Rng(Rng::mix(seed, salt));
}

/// The generator's defaults for half of the cases; for the other half longer axes (contractions of
/// up to ~2000 terms) but at most 3 items per operand, since a label repeated in one operand
/// (a diagonal) makes the operand L^r elements. 4 × 25,000 cases fit the CI budget, ASan included.
GenOptions sound_options(Rng& rng, std::vector<DType> dtypes) {
  GenOptions options;
  if (rng.chance(1, 2)) {
    options.max_length = 24;
    options.max_axes_per_operand = 3;
    options.max_global = 2048;
  }
  options.dtypes = std::move(dtypes);
  return options;
}

// The einsum properties judge every case twice: on a factoring shuffle backend and on one with
// factoring off (judged by the stricter §3 rules and the sharper §2 certificate).
TEST(OracleSound, ShuffleIsNeverAMismatchF32) {
  check_sound_both(1, [](Rng& rng) { return generate_einsum(rng, sound_options(rng, {DType::f32})); });
}

TEST(OracleSound, ShuffleIsNeverAMismatchF64) {
  check_sound_both(2, [](Rng& rng) { return generate_einsum(rng, sound_options(rng, {DType::f64})); });
}

TEST(OracleSound, ShuffleIsNeverAMismatchOnEdgeValues) {
  check_sound_both(3, [](Rng& rng) {
    Case c = generate_einsum(rng, sound_options(rng, {DType::f32, DType::f64}));
    redraw_values(c, rng, kProfiles[*rc::gen::inRange<std::size_t>(1, std::size(kProfiles))]);
    return c;
  });
}

// Every dtype (integers must equal the ordered reference bit for bit), half of the cases redrawn.
TEST(OracleSound, ShuffleIsNeverAMismatchAnyDtypeWithOrWithoutFactoring) {
  check_sound_both(4, [](Rng& rng) {
    Case c = generate_einsum(rng, sound_options(rng, {DType::f32, DType::f64, DType::i32, DType::i64}));
    if (rng.chance(1, 2)) redraw_values(c, rng, Profile::mixed);
    return c;
  });
}

/// A generated f32/f64 reduce of a kind the multiset oracle judges (sum, mean, prod, min, max).
Case float_reduce_case(Rng& rng) {
  constexpr Reduction kKinds[] = {Reduction::sum, Reduction::mean, Reduction::prod, Reduction::min, Reduction::max};
  ReduceGenOptions options;
  options.kind = kKinds[rng.below(std::size(kKinds))];
  options.dtype = rng.chance(1, 2) ? DType::f32 : DType::f64;
  SeededChoices choices(rng);
  return generate_reduce(choices, options);
}

// The generator's value mixtures (IEEE edge values, NaN payloads, cancellation pairs) or one of the
// redrawn profiles (every binade, near Ω, subnormals, …), every float kind.
TEST(OracleSound, ShuffleIsNeverAMismatchOnReduce) {
  check_sound([](IndeterminateTally& tally) {
    Rng rng = case_rng(5);
    Case c = float_reduce_case(rng);
    redraw_values(c, rng, kProfiles[*rc::gen::inRange<std::size_t>(0, std::size(kProfiles))]);
    expect_sound(c, rng.next(), true, tally);
  });
}

TEST(OracleSound, ShuffleIsReproducibleAndActuallyShuffles) {
  // Cancellation on a long contraction: different seeds give different (all accepted) results.
  Rng rng(7);
  std::vector<double> values(200);
  for (double& v : values) v = draw_value<double>(rng, Profile::cancellation);
  Case c;
  c.pattern = "i ->";
  c.dtype = DType::f64;
  c.inputs.push_back(Tensor(Shape{200}, values));
  std::set<double> results;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const auto a = make_shuffle_backend(seed);
    const auto b = make_shuffle_backend(seed);
    const auto ra = std::get<Tensor>(a->run(c));
    EXPECT_TRUE(bitwise_equal(ra, std::get<Tensor>(b->run(c))));
    results.insert(ra.values<double>()[0]);
    EXPECT_FALSE(is_failure(run_on(c, *a).kind));
  }
  EXPECT_GT(results.size(), 3u);
}

TEST(OracleSound, ShuffleFactorsAndKeepsEmptyContractionsZero) {
  // `, j ->` on Inf, [2, -1]: per term +Inf − Inf = NaN, factored Inf·(2 − 1) = +Inf; both reached.
  const Case c = einsum_case(", j ->", DType::f64, {{{}, "inf"}, {{2}, "2, -1"}});
  // `j, j, ->` on [0,1], [1,1], Inf: per term NaN, factored Inf.
  const Case d = einsum_case("j, j, ->", DType::f64, {{{2}, "0, 1"}, {{2}, "1, 1"}, {{}, "inf"}});
  bool nan_c = false, inf_c = false, nan_d = false, inf_d = false;
  for (std::uint64_t seed = 1; seed <= 64; ++seed) {
    const auto b = make_shuffle_backend(seed);
    const double rcv = std::get<Tensor>(b->run(c)).values<double>()[0];
    const double rd = std::get<Tensor>(b->run(d)).values<double>()[0];
    nan_c |= std::isnan(rcv);
    inf_c |= rcv == std::numeric_limits<double>::infinity();
    nan_d |= std::isnan(rd);
    inf_d |= rd == std::numeric_limits<double>::infinity();
    EXPECT_FALSE(is_failure(run_on(c, *b).kind));
    EXPECT_FALSE(is_failure(run_on(d, *b).kind));
  }
  EXPECT_TRUE(nan_c && inf_c && nan_d && inf_d);
  // Empty contractions are +0 whatever the other operands hold.
  for (const char* values : {"inf", "nan", "1e308"}) {
    const Case e = einsum_case("i, j ->", DType::f64, {{{1}, values}, {{0}, ""}});
    for (std::uint64_t seed = 1; seed <= 16; ++seed) {
      const auto b = make_shuffle_backend(seed);
      const double r = std::get<Tensor>(b->run(e)).values<double>()[0];
      EXPECT_TRUE(same_bits(r, 0.0)) << values;
    }
  }
  // Integers wrap identically on every path.
  const Case w = einsum_case("i j, j k -> i k", DType::i32, {{{2, 3}, "2147483647, -2, 7, 65536, 65536, 3"},
                                                             {{3, 2}, "2147483647, 5, -2147483648, 9, 11, 65536"}});
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    const auto b = make_shuffle_backend(seed);
    EXPECT_EQ(run_on(w, *b).kind, VerdictKind::pass_bitwise);
  }
}

/// The distinct bit patterns of the first result element of `c` over shuffle seeds 1..40; each
/// seed's run is checked to be reproducible, and a further run is judged.
template <class T>
std::set<std::uint64_t> reduce_results(const Case& c) {
  std::set<std::uint64_t> bits;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const auto a = make_shuffle_backend(seed);
    const auto b = make_shuffle_backend(seed);
    const Tensor ra = std::get<Tensor>(a->run(c));
    EXPECT_TRUE(bitwise_equal(ra, std::get<Tensor>(b->run(c)))) << "seed " << seed;
    bits.insert(std::bit_cast<std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>(ra.values<T>()[0]));
    const Verdict v = run_on(c, *a);
    EXPECT_FALSE(is_failure(v.kind)) << explain(v, c);
  }
  return bits;
}

TEST(OracleSound, ShuffleReducesInDifferentOrders) {
  // Cancellation-heavy f32 sums and means (both signs, 33 binades, 24-bit mantissas): the summation
  // tree shows in the bits, and every result is accepted.
  Rng rng(7);
  std::vector<float> values(200);
  for (float& v : values) {
    const float mantissa = 1.0f + static_cast<float>(rng.next() >> 41) * 0x1p-23f;
    v = (rng.chance(1, 2) ? 1.0f : -1.0f) * std::ldexp(mantissa, static_cast<int>(rng.between(-8, 24)));
  }
  for (const char* kind : {"sum", "mean"}) {
    EXPECT_GT(reduce_results<float>(reduce_case("i ->", kind, Tensor(Shape{200}, values))).size(), 3u) << kind;
  }
  // A product of 64 values in [0.5, 1): the association shows in the last bits.
  std::vector<float> factors(64);
  for (float& v : factors) v = static_cast<float>(0.5 + static_cast<double>(rng.next() >> 11) * 0x1p-54);
  EXPECT_GT(reduce_results<float>(reduce_case("i ->", "prod", Tensor(Shape{64}, factors))).size(), 3u);
  // min/max of a ±0 tie: either sign is an element of the fibre (§5: a note at worst); a NaN
  // anywhere in the fibre propagates on every order.
  for (const char* kind : {"min", "max"}) {
    const Case tie = reduce_case("i ->", kind, DType::f32, {{4}, "0, -0, 0, -0"});
    EXPECT_EQ(reduce_results<float>(tie).size(), 2u) << kind;
    const Case nan = reduce_case("i ->", kind, DType::f64, {{4}, "-inf, nan, 1, inf"});
    for (std::uint64_t seed = 1; seed <= 16; ++seed) {
      EXPECT_TRUE(std::isnan(std::get<Tensor>(make_shuffle_backend(seed)->run(nan)).values<double>()[0])) << kind;
    }
  }
}

TEST(OracleSound, ShuffleReducesIntegersAndBoolsExactly) {
  // Wrapping integers and any/all: every order gives the ordered reference's bits.
  constexpr Reduction kKinds[] = {Reduction::sum, Reduction::prod, Reduction::min, Reduction::max, Reduction::any,
                                  Reduction::all};
  Rng rng(29);
  for (int i = 0; i < 600; ++i) {
    ReduceGenOptions options;
    options.kind = kKinds[static_cast<std::size_t>(i) % std::size(kKinds)];
    if (*options.kind != Reduction::any && *options.kind != Reduction::all) {
      options.dtype = rng.chance(1, 2) ? DType::i32 : DType::i64;
    }
    SeededChoices choices(rng);
    const Case c = generate_reduce(choices, options);
    const auto backend = make_shuffle_backend(rng.next());
    const Verdict v = run_on(c, *backend);
    EXPECT_EQ(v.kind, VerdictKind::pass_bitwise) << explain(v, c);
  }
}

// ---------------------------------------------------------------------------------------------
// Tight: each faulty backend is caught with the expected verdict

/// "i j, j -> i" (8 rows, K = `terms`) with values in [0.5, 1).
Case dot_rows_case(DType dtype, std::int64_t terms, std::uint64_t seed) {
  Rng rng(seed);
  Case c;
  c.pattern = "i j, j -> i";
  c.dtype = dtype;
  auto fill = [&](Shape shape) {
    Tensor t(dtype, shape);
    visit_dtype(dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_floating_point_v<T>) {
        for (T& v : t.values<T>()) v = static_cast<T>(0.5 + static_cast<double>(rng.next() >> 11) * 0x1p-54);
      }
    });
    return t;
  };
  c.inputs.push_back(fill({8, terms}));
  c.inputs.push_back(fill({terms}));
  return c;
}

TEST(OracleTight, NarrowAccumulatorIsAValueMismatch) {
  for (const int bits : {11, 8}) {
    const auto backend = test::make_narrow_accumulator_backend(bits);
    for (const DType dtype : {DType::f32, DType::f64}) {
      for (const std::int64_t terms : {64, 256, 1000}) {
        for (std::uint64_t seed = 1; seed <= 5; ++seed) {
          const Case c = dot_rows_case(dtype, terms, seed);
          const Verdict v = run_on(c, *backend);
          EXPECT_EQ(v.kind, VerdictKind::mismatch_value) << bits << " bits, K = " << terms << ": " << v.label();
        }
      }
    }
  }
}

TEST(OracleTight, DroppedTermIsAValueMismatch) {
  const auto backend = test::make_dropped_term_backend();
  for (const DType dtype : {DType::f32, DType::f64}) {
    for (const std::int64_t terms : {1, 2, 7, 100}) {
      const Case c = dot_rows_case(dtype, terms, 11);
      EXPECT_EQ(run_on(c, *backend).kind, VerdictKind::mismatch_value) << terms;
    }
  }
}

TEST(OracleTight, PassthroughUlpIsAValueMismatch) {
  const auto backend = test::make_passthrough_ulp_backend();
  for (const DType dtype : {DType::f32, DType::f64}) {
    const Case c = einsum_case("i j -> j i", dtype, {{{2, 3}, "1, -2.5, 0.1, 1e-30, 7, -0"}});
    const MultisetEinsum truth = truth_of(c);
    for (const ElementTruth& t : truth.elements) EXPECT_EQ(t.bound, 0.0);  // passthrough: B = 0
    const Verdict v = run_on(c, *backend);
    EXPECT_EQ(v.kind, VerdictKind::mismatch_value) << v.label();
    EXPECT_EQ(v.differing, 6);
    // A contraction (K = 2) with the same values is computed correctly by this backend.
    const Case d = einsum_case("i j -> j", dtype, {{{2, 3}, "1, -2.5, 0.1, 1e-30, 7, -0"}});
    EXPECT_FALSE(is_failure(run_on(d, *backend).kind));
  }
}

TEST(OracleTight, NanReplacedByZeroIsASpecialMismatch) {
  const auto backend = test::make_nan_to_zero_backend();
  for (const DType dtype : {DType::f32, DType::f64}) {
    const Case nan_input = einsum_case("i, i ->", dtype, {{{3}, "1, nan, 2"}, {{3}, "1, 1, 1"}});
    EXPECT_EQ(run_on(nan_input, *backend).kind, VerdictKind::mismatch_special);
    // 0·Inf: a NaN class even a factoring backend must not turn into a finite value.
    const Case zero_inf = einsum_case("i, i ->", dtype, {{{2}, "0, 1"}, {{2}, "inf, 1"}});
    EXPECT_EQ(run_on(zero_inf, *backend).label(), "mismatch(special: finite result where NaN or Inf)");
  }
}

TEST(OracleTight, FactoredEmptyContractionIsCaught) {
  const auto backend = test::make_factored_empty_backend();
  for (const DType dtype : {DType::f32, DType::f64}) {
    const Case torch = einsum_case("i, j ->", dtype, {{{1}, "inf"}, {{0}, ""}});
    EXPECT_EQ(run_on(torch, *backend).label(), "mismatch(special: empty-contraction)");
    Case overflow = einsum_case("j, l ->", dtype, {{{2}, "0, 0"}, {{0}, ""}});
    visit_dtype(dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_floating_point_v<T>) {
        for (T& v : overflow.inputs[0].values<T>()) v = std::numeric_limits<T>::max();
      }
    });
    EXPECT_EQ(run_on(overflow, *backend).label(), "mismatch(special: empty-contraction)");
    // With finite partial sums the factored product is 0·x = ±0: only a note at worst.
    const Case finite = einsum_case("i, j ->", dtype, {{{2}, "1, 2"}, {{0}, ""}});
    EXPECT_FALSE(is_failure(run_on(finite, *backend).kind));
  }
}

TEST(OracleTight, NanIgnoringMinMaxUnderPropagateIsASpecialMismatch) {
  // ORACLE.md §5: under `propagate` a fibre holding a NaN is NaN; an all-NaN fibre is NaN under
  // `ignore` too, and a NaN-free fibre is the same extreme under both.
  const auto backend = test::make_nan_ignoring_extreme_backend();
  for (const DType dtype : {DType::f32, DType::f64}) {
    for (const char* kind : {"min", "max"}) {
      const Case c = reduce_case("r n -> r", kind, dtype, {{4, 3}, "1, nan, -2, nan, nan, nan, 3, 4, 5, inf, 0, nan"});
      const Verdict v = run_on(c, *backend);
      EXPECT_EQ(v.label(), "mismatch(special: NaN expected)") << kind;
      EXPECT_EQ(v.differing, 2) << kind;  // rows 0 and 3
      ASSERT_TRUE(v.first.has_value());
      EXPECT_EQ(v.first->flat_index, 0);
      const Case clean = reduce_case("r n -> r", kind, dtype, {{2, 3}, "1, -inf, -2, 0, 3, 7"});
      EXPECT_EQ(run_on(clean, *backend).kind, VerdictKind::pass) << kind;
    }
  }
}

TEST(OracleTight, SignedZeroIsANoteUnlessStrict) {
  // Exact value 0 from finite terms: -0 is a note; under strict_signed_zero a value mismatch.
  const Case c = einsum_case("i, i ->", DType::f64, {{{2}, "1, -1"}, {{2}, "1, 1"}});
  FixedBackend negative_zero(tensor_of<double>({}, {-0.0}), true);
  EXPECT_EQ(run_on(c, negative_zero).label(), "note(signed-zero)");
  RunOptions strict;
  strict.strict_signed_zero = true;
  EXPECT_EQ(run_on(c, negative_zero, strict).kind, VerdictKind::mismatch_value);
  FixedBackend positive_zero(tensor_of<double>({}, {0.0}), true);
  EXPECT_EQ(run_on(c, positive_zero, strict).kind, VerdictKind::pass);
  // Passthrough of -0: the semantics say 0 + (-0) = +0; -0 is a note.
  const Case p = einsum_case("->", DType::f64, {{{}, "-0"}});
  EXPECT_EQ(run_on(p, negative_zero).label(), "note(signed-zero)");
}

// ---------------------------------------------------------------------------------------------
// ORACLE.md §3: the observed divergences, judged

Verdict judge_one(const Case& c, double result, bool factoring) {
  return judge_any_order(truth_of(c), tensor_of<double>({}, {result}), {factoring, false});
}

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(OracleDivergences, NumpyPerTermNanVersusFactoredInf) {
  const Case c = einsum_case("j, j, ->", DType::f64, {{{2}, "0, 1"}, {{2}, "1, 1"}, {{}, "inf"}});
  const MultisetEinsum truth = truth_of(c);
  EXPECT_EQ(truth.elements[0].value_class, ValueClass::nan);
  EXPECT_TRUE(truth.elements[0].zero_times_inf);
  EXPECT_EQ(judge_one(c, kInf, true).label(), "indeterminate(special-path-dependent)");
  // NaN is accepted (ORACLE.md §3 counts the whole element as path-dependent; the judge may say
  // pass or indeterminate, never a failure).
  EXPECT_FALSE(is_failure(judge_one(c, kNaN, true).kind));
  EXPECT_EQ(judge_one(c, 1.0, true).kind, VerdictKind::mismatch_special);
  EXPECT_EQ(judge_one(c, kInf, false).kind, VerdictKind::mismatch_special);
  EXPECT_EQ(judge_one(c, kNaN, false).kind, VerdictKind::pass);
}

TEST(OracleDivergences, TorchEmptyContractionNan) {
  const Case c = einsum_case("i, j ->", DType::f64, {{{1}, "inf"}, {{0}, ""}});
  EXPECT_TRUE(same_bits(truth_of(c).rounded.values<double>()[0], 0.0));
  for (const bool factoring : {true, false}) {
    EXPECT_EQ(judge_one(c, kNaN, factoring).label(), "mismatch(special: empty-contraction)");
    EXPECT_EQ(judge_one(c, kInf, factoring).label(), "mismatch(special: empty-contraction)");
    EXPECT_EQ(judge_one(c, 0.0, factoring).kind, VerdictKind::pass);
    EXPECT_EQ(judge_one(c, -0.0, factoring).label(), "note(signed-zero)");
  }
}

TEST(OracleDivergences, OppositeInfTermsSharingOneFactor) {
  const Case c = einsum_case(", j ->", DType::f64, {{{}, "inf"}, {{2}, "2, -1"}});
  const MultisetEinsum truth = truth_of(c);
  EXPECT_EQ(truth.elements[0].value_class, ValueClass::nan);
  EXPECT_TRUE(truth.elements[0].mixed_inf);
  EXPECT_FALSE(is_failure(judge_one(c, kNaN, true).kind));
  EXPECT_EQ(judge_one(c, kInf, true).label(), "indeterminate(special-path-dependent)");
  EXPECT_EQ(judge_one(c, -kInf, true).label(), "indeterminate(special-path-dependent)");
  EXPECT_EQ(judge_one(c, 1.0, true).kind, VerdictKind::mismatch_special);
  EXPECT_EQ(judge_one(c, kInf, false).kind, VerdictKind::mismatch_special);
  EXPECT_EQ(judge_one(c, kNaN, false).kind, VerdictKind::pass);
}

TEST(OracleDivergences, EmptyContractionWithOverflowingPartialSumIsZero) {
  Case c = einsum_case("j, l ->", DType::f64, {{{2}, "0, 0"}, {{0}, ""}});
  for (double& v : c.inputs[0].values<double>()) v = std::numeric_limits<double>::max();
  EXPECT_TRUE(same_bits(truth_of(c).rounded.values<double>()[0], 0.0));
  EXPECT_EQ(judge_one(c, 0.0, true).kind, VerdictKind::pass);
  EXPECT_EQ(judge_one(c, kNaN, true).label(), "mismatch(special: empty-contraction)");
  EXPECT_EQ(judge_one(c, kInf, true).label(), "mismatch(special: empty-contraction)");
}

TEST(OracleDivergences, NanInputIsCertainEvenWhenCertificatesFail) {
  // Ω·Ω overflows and 0·Inf is present, yet a NaN input makes NaN the only answer.
  Case c = einsum_case("i, i ->", DType::f64, {{{3}, "nan, 0, 0"}, {{3}, "1, inf, 0"}});
  c.inputs[0].values<double>()[2] = std::numeric_limits<double>::max();
  c.inputs[1].values<double>()[2] = std::numeric_limits<double>::max();
  EXPECT_FALSE(truth_of(c).elements[0].certain());
  EXPECT_EQ(judge_one(c, kNaN, true).kind, VerdictKind::pass);
  EXPECT_EQ(judge_one(c, kInf, true).kind, VerdictKind::mismatch_special);
}

// ---------------------------------------------------------------------------------------------
// Certificates at their boundaries

/// (1+u)^n exactly.
template <class T>
void exact_growth(Mp& growth, std::int64_t n) {
  using L = std::numeric_limits<T>;
  mpfr_set_prec(growth.get(), static_cast<mpfr_prec_t>(n + 1) * (L::digits + 1) + 64);
  Mp one_plus_u(L::digits + 1);
  mpfr_set_ui_2exp(one_plus_u.get(), 1, -L::digits, MPFR_RNDN);
  mpfr_add_ui(one_plus_u.get(), one_plus_u.get(), 1, MPFR_RNDN);
  EXPECT_EQ(mpfr_pow_ui(growth.get(), one_plus_u.get(), static_cast<unsigned long>(n), MPFR_RNDN), 0);
}

/// "i ->" on [X, 1, …, 1] (K values): M = X + K − 1, N' = K. Finds the largest X for which the
/// certificate truly holds, then checks the oracle's flag on both sides of it.
template <class T>
void no_overflow_boundary(std::int64_t terms, int slack_ulps) {
  using L = std::numeric_limits<T>;
  auto truth_at = [&](T x) {
    std::vector<T> values(static_cast<std::size_t>(terms), T(1));
    values[0] = x;
    Case c;
    c.pattern = "i ->";
    c.dtype = dtype_of_v<T>;
    c.inputs.push_back(Tensor(Shape{terms}, values));
    return truth_of(c).elements[0];
  };
  Mp growth(2);
  exact_growth<T>(growth, terms);  // N' = K for k = 1, K >= 2
  auto exact_at = [&](T x) {      // M·(1+u)^N' < Ω, exactly
    Mp m(4096), product(mpfr_get_prec(growth.get()) + 4096);
    mpfr_set_d(m.get(), static_cast<double>(x), MPFR_RNDN);
    EXPECT_EQ(mpfr_add_si(m.get(), m.get(), static_cast<long>(terms - 1), MPFR_RNDN), 0);
    EXPECT_EQ(mpfr_mul(product.get(), m.get(), growth.get(), MPFR_RNDN), 0);
    return mpfr_cmp_d(product.get(), static_cast<double>(L::max())) < 0;
  };
  // Walk down from Ω to the true threshold X*.
  T x = L::max();
  while (!exact_at(x)) x = std::nextafter(x, T(0));
  ASSERT_FALSE(exact_at(std::nextafter(x, L::infinity())));
  // Sound: one ulp past the threshold the certificate must fail, and stays failed.
  T above = x;
  for (int i = 0; i < 3; ++i) {
    above = std::nextafter(above, L::infinity());
    if (std::isinf(above)) break;
    EXPECT_FALSE(truth_at(above).no_overflow) << "K = " << terms << ", " << i + 1 << " ulp above X*";
  }
  // Tight: the certificate is decided exactly (double bounds first, exact dyadics near the threshold).
  T below = x;
  for (int i = 0; i < slack_ulps; ++i) below = std::nextafter(below, T(0));
  EXPECT_TRUE(truth_at(below).no_overflow) << "K = " << terms << ", " << slack_ulps << " ulps below X*";
  int flip = 0;  // where the oracle's flag actually flips, for the record
  for (T y = x; !truth_at(y).no_overflow && flip < 64; y = std::nextafter(y, T(0))) ++flip;
  std::cout << "[ oracle   ] no_overflow " << (sizeof(T) == 4 ? "f32" : "f64") << " K=" << terms
            << ": flips " << flip << " ulp(s) below the exact threshold\n";
  // The judge: a finite result past the threshold is indeterminate(overflow-possible), Inf too.
  std::vector<T> values(static_cast<std::size_t>(terms), T(1));
  values[0] = above;
  Case c;
  c.pattern = "i ->";
  c.dtype = dtype_of_v<T>;
  c.inputs.push_back(Tensor(Shape{terms}, values));
  if (!std::isinf(above)) {
    const Verdict v = judge_any_order(truth_of(c), tensor_of<T>({}, {L::infinity()}), {});
    EXPECT_EQ(v.label(), "indeterminate(overflow-possible)");
  }
}

TEST(OracleCertificates, NoOverflowFlipsAtItsThreshold) {
  for (const std::int64_t terms : {2, 3, 100, 1000}) {
    no_overflow_boundary<float>(terms, 0);
    no_overflow_boundary<double>(terms, 0);
  }
}

/// "i, i, i -> i" on [Inf], [a], [b]: the Inf term's finite factors must stay >= 2^emin·(1+u)^3.
template <class T>
void inf_underflow_boundary() {
  using L = std::numeric_limits<T>;
  const T smallest_normal = L::min();
  const T one_ulp = std::nextafter(smallest_normal, T(1));              // 2^emin·(1+2u)
  const T two_ulps = std::nextafter(one_ulp, T(1));                     // 2^emin·(1+4u)
  auto truth_at = [](T a, T b, int k) {
    Case c;
    c.pattern = k == 3 ? "i, i, i -> i" : "i, i -> i";
    c.dtype = dtype_of_v<T>;
    c.inputs.push_back(Tensor(Shape{1}, std::vector<T>{L::infinity()}));
    c.inputs.push_back(Tensor(Shape{1}, std::vector<T>{a}));
    if (k == 3) c.inputs.push_back(Tensor(Shape{1}, std::vector<T>{b}));
    return truth_of(c).elements[0];
  };
  // k = 3, b = 1: need a >= 2^emin·(1 + 3u + 3u² + u³): 2 ulps above 2^emin hold, 1 ulp does not.
  EXPECT_TRUE(truth_at(two_ulps, T(1), 3).no_inf_underflow);
  EXPECT_FALSE(truth_at(one_ulp, T(1), 3).no_inf_underflow);
  EXPECT_EQ(truth_at(two_ulps, T(1), 3).value_class, ValueClass::pos_inf);
  // k = 2: need a >= 2^emin·(1 + 2u + u²): again 2 ulps hold, 1 ulp does not; negative a too.
  EXPECT_TRUE(truth_at(-two_ulps, T(0), 2).no_inf_underflow);
  EXPECT_FALSE(truth_at(-one_ulp, T(0), 2).no_inf_underflow);
  EXPECT_EQ(truth_at(-two_ulps, T(0), 2).value_class, ValueClass::neg_inf);
  // Two small factors: a·b with b = 1/2 and a = 2^(emin+1)·(1 + j·2u).
  const T a2 = std::nextafter(std::nextafter(smallest_normal * 2, T(1)), T(1));
  EXPECT_TRUE(truth_at(a2, T(0.5), 3).no_inf_underflow);
  EXPECT_FALSE(truth_at(std::nextafter(smallest_normal * 2, T(1)), T(0.5), 3).no_inf_underflow);
  // The judge: certain +Inf must be +Inf; past the boundary the class is order-dependent.
  for (const bool ok : {true, false}) {
    Case c;
    c.pattern = "i, i, i -> i";
    c.dtype = dtype_of_v<T>;
    c.inputs.push_back(Tensor(Shape{1}, std::vector<T>{L::infinity()}));
    c.inputs.push_back(Tensor(Shape{1}, std::vector<T>{ok ? two_ulps : one_ulp}));
    c.inputs.push_back(Tensor(Shape{1}, std::vector<T>{T(1)}));
    const MultisetEinsum truth = truth_of(c);
    const Verdict nan = judge_any_order(truth, tensor_of<T>({1}, {L::quiet_NaN()}), {});
    EXPECT_EQ(nan.label(), ok ? "mismatch(special: +Inf expected)" : "indeterminate(special-order-dependent)");
    // +Inf is the exact class and in the reachable set {+Inf, NaN} either way (§3); -Inf never is.
    EXPECT_EQ(judge_any_order(truth, tensor_of<T>({1}, {L::infinity()}), {}).kind, VerdictKind::pass);
    EXPECT_EQ(judge_any_order(truth, tensor_of<T>({1}, {-L::infinity()}), {}).kind, VerdictKind::mismatch_special);
  }
}

TEST(OracleCertificates, InfUnderflowFlipsExactlyAtItsThreshold) {
  inf_underflow_boundary<float>();
  inf_underflow_boundary<double>();
}

}  // namespace
}  // namespace einfuzz
