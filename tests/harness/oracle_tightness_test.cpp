// Tightness of the any-order oracle (ORACLE.md §2, §4, §6): correct evaluations designed so that every
// rounding errs the same way reach at least half the bound B (a bound 2× too loose fails here), and
// faulty reduce backends (a dropped term, a narrow accumulator, mean by the wrong n) are caught.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "einfuzz/core/choice.hpp"
#include "harness/oracle_support.hpp"
#include "support/faulty_backends.hpp"

namespace einfuzz {
namespace {

using namespace oracle_test;
using reference::Dyadic;

template <class T>
constexpr T kU = std::numeric_limits<T>::epsilon() / 2;  // unit roundoff u

/// Checks that `r` is accepted and that |r − s| >= B/2, both exactly (B·d and |r·d − s·d| for a mean).
template <class T>
void expect_reaches_half_the_bound(const ElementTruth& t, T r, const Verdict& v, const std::string& what) {
  EXPECT_EQ(v.kind, VerdictKind::pass) << what << ": " << v.label() << " " << v.detail;
  ASSERT_TRUE(t.bounded) << what;
  const Dyadic distance = (Dyadic::of(r) * Dyadic(t.divisor, 0) - t.exact).abs();
  EXPECT_GE(compare(distance * Dyadic(2, 0), t.scaled_bound), 0)
      << what << ": |r − s| = " << exact_text(distance, t.divisor) << " is below B/2, B = " << exact_text(t.scaled_bound, t.divisor);
  EXPECT_LE(compare(distance, t.scaled_bound), 0) << what;
}

/// [1, x, x, …] with x just below u: every addition 1 + x rounds back to 1, losing ≈ u·|partial|.
template <class T>
std::vector<T> losing_summands(std::int64_t n) {
  std::vector<T> v(static_cast<std::size_t>(n), kU<T> * (T(1) - std::ldexp(T(1), -10)));
  v[0] = T(1);
  return v;
}

/// `kind` over "i ->" on `v`, with `result` from a valid order: accepted and at least B/2 off.
template <class T>
void expect_reduce_reaches_half_the_bound(const char* kind, const std::vector<T>& v, T result, const std::string& what) {
  const Case c = reduce_case("i ->", kind, Tensor(Shape{static_cast<std::int64_t>(v.size())}, v));
  expect_reaches_half_the_bound(reduce_truth(c).elements[0], result, run_fixed<T>(c, {}, {result}, false), what);
}

template <class T>
void sum_and_mean_reach_half_the_bound() {
  for (const std::int64_t n : {3, 10, 100, 1000, 10000}) {
    const std::vector<T> v = losing_summands<T>(n);
    const T acc = std::accumulate(v.begin(), v.end(), T(0));  // sequential, a valid order: stays 1
    ASSERT_EQ(acc, T(1));
    expect_reduce_reaches_half_the_bound("sum", v, acc, "sum n=" + std::to_string(n));
  }
  for (const std::int64_t n : {8, 64, 1024, 8192}) {  // powers of two: the division is exact
    const std::vector<T> v = losing_summands<T>(n);
    const T mean = std::accumulate(v.begin(), v.end(), T(0)) / static_cast<T>(n);
    expect_reduce_reaches_half_the_bound("mean", v, mean, "mean n=" + std::to_string(n));
  }
}

TEST(OracleTightness, SumAndMeanReachHalfTheBound) {
  sum_and_mean_reach_half_the_bound<float>();
  sum_and_mean_reach_half_the_bound<double>();
}

/// |p·a − fl(p·a)| and whether fl rounded down (p, a > 0).
template <class T>
double rounding_loss(T p, T a, T& rounded) {
  rounded = p * a;
  if constexpr (std::is_same_v<T, float>) {
    return static_cast<double>(p) * static_cast<double>(a) - static_cast<double>(rounded);  // exact in double
  } else {
    return std::fma(p, a, -rounded);  // the exact residual
  }
}

/// n factors whose sequential product loses almost u·|partial| (downwards) at every multiplication:
/// each next factor a puts p·a in (1 + 2^-8, 1 + 2^-5) just below a rounding midpoint.
template <class T>
std::vector<T> losing_factors(std::int64_t n, T& product) {
  std::vector<T> f = {std::sqrt(T(2))};  // not close to a short fraction, unlike 1.3 in binary64
  T p = f[0];
  while (static_cast<std::int64_t>(f.size()) < n) {
    T a = (T(1) + std::ldexp(T(1), -8)) / p;
    bool found = false;
    for (int step = 0; step < (1 << 20) && p * a < T(1) + std::ldexp(T(1), -5); ++step, a = std::nextafter(a, T(2))) {
      T rounded;
      const double loss = rounding_loss(p, a, rounded);
      if (loss > 0 && loss >= (1 - 0x1p-5) * static_cast<double>(kU<T>) * static_cast<double>(rounded)) {
        f.push_back(a);
        p = rounded;
        found = true;
        break;
      }
    }
    EXPECT_TRUE(found) << "no factor found after " << f.size();
    if (!found) break;
  }
  product = p;
  return f;
}

template <class T>
void product_reaches_half_the_bound() {
  for (const std::int64_t n : {3, 10, 100, 1000}) {
    T product = 0;
    const std::vector<T> f = losing_factors<T>(n, product);
    const T acc = std::accumulate(f.begin(), f.end(), T(1), std::multiplies<T>());
    ASSERT_EQ(acc, product);
    expect_reduce_reaches_half_the_bound("prod", f, acc, "prod n=" + std::to_string(n));
  }
}

TEST(OracleTightness, ProductReachesHalfTheBound) {
  product_reaches_half_the_bound<float>();
  product_reaches_half_the_bound<double>();
}

/// "i, i ->" with a = [1+2u, x, …], b = [1−u, 1, …]: the first product (1 + u − 2u²) rounds down to
/// 1, then every addition 1 + x rounds back to 1: K roundings of ≈ u each, B ≈ (K+1)·u.
template <class T>
void dot_product_reaches_half_the_bound() {
  for (const std::int64_t terms : {2, 10, 100, 1000}) {
    std::vector<T> a = losing_summands<T>(terms), b(static_cast<std::size_t>(terms), T(1));
    a[0] = T(1) + 2 * kU<T>;
    b[0] = T(1) - kU<T>;
    T acc = 0;
    for (std::size_t i = 0; i < a.size(); ++i) acc += a[i] * b[i];  // -ffp-contract=off: no FMA
    ASSERT_EQ(acc, T(1));
    Case c;
    c.pattern = "i, i ->";
    c.dtype = dtype_of_v<T>;
    c.inputs = {Tensor(Shape{terms}, a), Tensor(Shape{terms}, b)};
    for (const bool factoring : {false, true}) {
      expect_reaches_half_the_bound(einsum_truth(c).elements[0], acc, run_fixed<T>(c, {}, {acc}, factoring),
                                    "dot K=" + std::to_string(terms));
    }
  }
}

TEST(OracleTightness, DotProductReachesHalfTheBound) {
  dot_product_reaches_half_the_bound<float>();
  dot_product_reaches_half_the_bound<double>();
}

// ---------------------------------------------------------------------------------------------
// Faulty reduce backends are caught

/// "r n -> r", 4 rows of n values: in [0.5, 1) for sums, alternately in [0.5, 0.75) and [1.5, 2)
/// for products (so that no product under- or overflows and every factor matters).
template <class T>
Case fibre_case(const char* kind, std::int64_t n, std::uint64_t seed) {
  Rng rng(seed);
  const bool prod = std::string(kind) == "prod";
  std::vector<T> v(static_cast<std::size_t>(4 * n));
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double unit = static_cast<double>(rng.next() >> 11) * 0x1p-53;
    v[i] = static_cast<T>(prod ? (i % 2 ? 1.5 + 0.5 * unit : 0.5 + 0.25 * unit) : 0.5 + 0.5 * unit);
  }
  return reduce_case("r n -> r", kind, Tensor(Shape{4, n}, v));
}

template <class T>
void faulty_reduce_is_caught() {
  using test::ReduceFault;
  for (const char* kind : {"sum", "mean", "prod"}) {
    const std::int64_t n = std::string(kind) == "prod" ? 64 : 1000;
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const Case c = fibre_case<T>(kind, n, seed);
      for (const ReduceFault fault : {ReduceFault::dropped_term, ReduceFault::narrow_accumulator, ReduceFault::wrong_divisor}) {
        const auto backend = test::make_faulty_reduce_backend(fault);
        const Verdict v = run_on(c, *backend);
        const bool wrong = fault != ReduceFault::wrong_divisor || std::string(kind) == "mean";
        EXPECT_EQ(v.kind, wrong ? VerdictKind::mismatch_value : VerdictKind::pass)
            << backend->name() << " " << kind << " " << dtype_name(c.dtype) << ": " << v.label() << " " << v.detail;
        if (wrong) {
          EXPECT_EQ(v.differing, 4) << backend->name() << " " << kind;
        }
      }
    }
  }
}

TEST(OracleTight, FaultyReduceBackendsAreCaught) {
  faulty_reduce_is_caught<float>();
  faulty_reduce_is_caught<double>();
}

TEST(OracleTight, FaultyReduceBackendsAreCorrectOnShortFibres) {
  // The faults need length to show: a narrow accumulator on one value, a drop-free n=1 mean by the
  // right n… Here only the sanity check that the backends compute the same fibres the oracle sees.
  const Case c = reduce_case("r n -> r", "sum", Tensor(Shape{2, 1}, std::vector<double>{1.5, -2.0}));
  const auto backend = test::make_faulty_reduce_backend(test::ReduceFault::wrong_divisor);
  EXPECT_EQ(run_on(c, *backend).kind, VerdictKind::pass);
}

}  // namespace
}  // namespace einfuzz
