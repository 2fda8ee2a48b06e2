// The any-order oracle where certificates fail (ORACLE.md §2–§3): the reachable special classes, the
// sharper no-overflow certificate for non-factoring backends, exact zero corners, and the evidence a
// failing element prints.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <regex>
#include <string>
#include <vector>

#include "einfuzz/backends/shuffle.hpp"
#include "einfuzz/core/choice.hpp"
#include "harness/oracle_support.hpp"
#include "support/faulty_backends.hpp"

namespace einfuzz {
namespace {

using namespace oracle_test;
using reference::Dyadic;

constexpr double kSpecialInf = std::numeric_limits<double>::infinity();
constexpr double kSpecialNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kOmega = std::numeric_limits<double>::max();

/// "i ->" (or the reduce "i ->" sum) on f64 values.
Case sum_case(const std::vector<double>& values, bool reduce) {
  Tensor t(Shape{static_cast<std::int64_t>(values.size())}, values);
  if (reduce) return reduce_case("i ->", "sum", std::move(t));
  Case c;
  c.pattern = "i ->";
  c.dtype = DType::f64;
  c.inputs.push_back(std::move(t));
  return c;
}

std::string judged(const Case& c, double r, bool factoring) { return run_fixed<double>(c, {}, {r}, factoring).label(); }

// ---------------------------------------------------------------------------------------------
// ORACLE.md §3: reachable classes when a certificate fails

TEST(OracleReachable, ZeroReturningBackendOnInfOmegaOmegaIsASpecialMismatch) {
  // The issue's miss: M = 2Ω overflows, so the +Inf class is not certain, but no path is finite.
  for (const bool reduce : {false, true}) {
    const Case c = sum_case({kSpecialInf, kOmega, kOmega}, reduce);
    for (const bool factoring : {false, true}) {
      const Verdict v = run_fixed<double>(c, {}, {0.0}, factoring);
      EXPECT_EQ(v.kind, VerdictKind::mismatch_special) << v.label();
      ASSERT_TRUE(v.first.has_value());
      EXPECT_EQ(v.first->reachable, "{+Inf, NaN}");
      EXPECT_EQ(v.first->exact, "+Inf");
    }
  }
}

TEST(OracleReachable, InfClassKeepsItsSignWhenUncertain) {
  for (const bool reduce : {false, true}) {
    for (const double sign : {1.0, -1.0}) {
      const Case c = sum_case({sign * kSpecialInf, sign * kOmega, sign * kOmega}, reduce);
      for (const bool factoring : {false, true}) {
        EXPECT_EQ(judged(c, sign * kSpecialInf, factoring), "pass");
        EXPECT_EQ(judged(c, kSpecialNaN, factoring), "indeterminate(special-order-dependent)");
        EXPECT_EQ(judged(c, -sign * kSpecialInf, factoring),
                  std::string("mismatch(special: ") + (sign > 0 ? "+" : "-") + "Inf or NaN expected)");
        EXPECT_EQ(run_fixed<double>(c, {}, {sign * kOmega}, factoring).kind, VerdictKind::mismatch_special);
      }
    }
  }
  // Certain (nothing can overflow): NaN is a mismatch, and the reachable set is the class alone.
  const Case certain = sum_case({kSpecialInf, 1.0, 2.0}, false);
  const Verdict v = run_fixed<double>(certain, {}, {kSpecialNaN}, true);
  EXPECT_EQ(v.label(), "mismatch(special: +Inf expected)");
  ASSERT_TRUE(v.first.has_value());
  EXPECT_EQ(v.first->reachable, "{+Inf}");
}

TEST(OracleReachable, AnUnderflowingFiniteProdIsNeverInfOrNaN) {
  // ORACLE §3: without an Inf or NaN input only an overflow makes Inf or NaN. A prod whose
  // sub-products may underflow (2^-100·2^-100 in f32) but cannot overflow has no enclosure for its
  // finite value (§4): any finite answer is indeterminate, a non-finite one a mismatch.
  const Case c = reduce_case("a ->", "prod", DType::f32, {{3}, "0x1p-100, 0x1p-100, 2"});
  for (const bool factoring : {false, true}) {
    for (const float r : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()}) {
      const Verdict v = run_fixed<float>(c, {}, {r}, factoring);
      EXPECT_EQ(v.label(), "mismatch(special: non-finite result where the value is finite)") << r;
      ASSERT_TRUE(v.first.has_value());
      EXPECT_EQ(v.first->reachable, "{any finite}");
    }
    EXPECT_EQ(run_fixed<float>(c, {}, {0x1p100f}, factoring).label(), "indeterminate(underflow-possible)");
    EXPECT_EQ(run_fixed<float>(c, {}, {0.0f}, factoring).label(), "indeterminate(underflow-possible)");
  }
  // Where the product can also overflow, Inf and NaN stay possible.
  const Case both = reduce_case("a ->", "prod", DType::f32, {{4}, "0x1p-100, 0x1p-100, 0x1p100, 0x1p100"});
  EXPECT_EQ(run_fixed<float>(both, {}, {std::numeric_limits<float>::infinity()}, true).label(),
            "indeterminate(overflow-possible)");
}

TEST(OracleReachable, NanClassIsCertainWithoutFactoringEvenWhenCertificatesFail) {
  // 0·Inf and Ω·Ω: M overflows. Per-term paths give NaN; factoring ones may give ±Inf, never finite.
  Case c = einsum_case("i, i ->", DType::f64, {{{2}, "0, 0"}, {{2}, "inf, 0"}});
  c.inputs[0].values<double>()[1] = kOmega;
  c.inputs[1].values<double>()[1] = kOmega;
  ASSERT_FALSE(einsum_truth(c).elements[0].certain());
  EXPECT_EQ(judged(c, kSpecialNaN, false), "pass");
  EXPECT_EQ(judged(c, kSpecialInf, false), "mismatch(special: NaN expected)");
  EXPECT_EQ(judged(c, -kSpecialInf, false), "mismatch(special: NaN expected)");
  EXPECT_EQ(judged(c, 0.0, false), "mismatch(special: NaN expected)");
  for (const double r : {kSpecialNaN, kSpecialInf, -kSpecialInf}) EXPECT_EQ(judged(c, r, true), "indeterminate(special-path-dependent)");
  EXPECT_EQ(judged(c, 0.0, true), "mismatch(special: finite result where NaN or Inf)");
  EXPECT_EQ(judged(c, kOmega, true), "mismatch(special: finite result where NaN or Inf)");
  const Verdict v = run_fixed<double>(c, {}, {kSpecialInf}, false);
  ASSERT_TRUE(v.first.has_value());
  EXPECT_EQ(v.first->reachable, "{NaN}");
  EXPECT_EQ(run_fixed<double>(c, {}, {0.0}, true).first->reachable, "{NaN, +Inf, -Inf}");
  // A reduction of both Inf signs and an overflowing rest: NaN on every order.
  const Case r = sum_case({kSpecialInf, -kSpecialInf, kOmega, kOmega}, true);
  EXPECT_EQ(judged(r, kSpecialNaN, true), "pass");
  EXPECT_EQ(judged(r, kSpecialInf, true), "mismatch(special: NaN expected)");
  EXPECT_EQ(judged(r, 1.0, true), "mismatch(special: NaN expected)");
}

TEST(OracleReachable, ShuffleStaysInsideTheReachableSets) {
  // Both factoring settings, many seeds, on the cases above: never a failure.
  Case zero_inf = einsum_case("i, i ->", DType::f64, {{{3}, "0, 0, 1"}, {{3}, "inf, 0, 1"}});
  zero_inf.inputs[0].values<double>()[1] = kOmega;
  zero_inf.inputs[1].values<double>()[1] = kOmega;
  const Case cases[] = {sum_case({kSpecialInf, kOmega, kOmega}, false), sum_case({-kSpecialInf, -kOmega, -kOmega, 3.0}, false),
                        sum_case({kSpecialInf, kOmega, kOmega}, true), sum_case({kSpecialInf, -kSpecialInf, kOmega}, true), zero_inf,
                        einsum_case("i, j ->", DType::f64, {{{2}, "inf, 1e308"}, {{3}, "1e308, 2, 3"}})};
  for (const Case& c : cases) {
    for (const bool factoring : {false, true}) {
      for (std::uint64_t seed = 1; seed <= 48; ++seed) {
        ShuffleOptions options;
        options.seed = seed;
        options.factoring = factoring;
        const auto backend = make_shuffle_backend(options);
        const Verdict v = run_on(c, *backend);
        EXPECT_FALSE(is_failure(v.kind)) << v.label() << "\n" << write_case(c);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// ORACLE.md §2: the sharper certificate for non-factoring backends

TEST(OracleCertificates, SharperCertificateDecidesTheSpecCounterexampleOnlyWithoutFactoring) {
  // f32 "i, ->" on [0x1.8p+127, 0x1.8p+127], 0x1p-1: 0x1.8p+127 on every per-term path, +Inf when
  // the sum is formed first (numpy 1.24, torch 1.13).
  const Case c = einsum_case("i, ->", DType::f32, {{{2}, "0x1.8p+127, 0x1.8p+127"}, {{}, "0x1p-1"}});
  const auto truth = einsum_truth(c);
  const reference::ElementTruth& t = truth.elements[0];
  EXPECT_FALSE(t.no_overflow);
  EXPECT_TRUE(t.no_overflow_nonfactoring);
  EXPECT_TRUE(t.bounded);
  EXPECT_TRUE(std::isfinite(t.bound));
  const float value = 0x1.8p+127f, inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(run_fixed<float>(c, {}, {value}, false).label(), "pass");
  EXPECT_EQ(run_fixed<float>(c, {}, {inf}, false).label(), "mismatch(special: non-finite result where the value is finite)");
  EXPECT_EQ(run_fixed<float>(c, {}, {std::nextafter(value, 0.0f)}, false).kind, VerdictKind::pass);  // within B
  EXPECT_EQ(run_fixed<float>(c, {}, {0x1.4p+127f}, false).kind, VerdictKind::mismatch_value);
  EXPECT_EQ(run_fixed<float>(c, {}, {inf}, true).label(), "indeterminate(overflow-possible)");
  EXPECT_EQ(run_fixed<float>(c, {}, {value}, true).label(), "indeterminate(overflow-possible)");
  // The shuffle backend agrees: without factoring always 0x1.8p+127, with factoring sometimes +Inf.
  bool factored_inf = false;
  for (std::uint64_t seed = 1; seed <= 64; ++seed) {
    for (const bool factoring : {false, true}) {
      ShuffleOptions options;
      options.seed = seed;
      options.factoring = factoring;
      const auto backend = make_shuffle_backend(options);
      const float r = std::get<Tensor>(backend->run(c)).values<float>()[0];
      if (!factoring) {
        EXPECT_EQ(r, value) << "seed " << seed;
      }
      factored_inf |= factoring && r == inf;
      EXPECT_FALSE(is_failure(run_on(c, *backend).kind));
    }
  }
  EXPECT_TRUE(factored_inf);
}

TEST(OracleCertificates, SharperCertificateKeepsTheBoundFiniteWhenMOverflowsADouble) {
  // f64: M = 3·2^1023 is not a double, yet U = (k−1)·η·(1+u)^N'·M is tiny and exact.
  Case c = einsum_case("i, ->", DType::f64, {{{2}, "0, 0"}, {{}, "0x1p-1"}});
  for (double& v : c.inputs[0].values<double>()) v = 0x1.8p+1023;
  const reference::ElementTruth t = einsum_truth(c).elements[0];
  EXPECT_FALSE(t.no_overflow);
  EXPECT_TRUE(t.no_overflow_nonfactoring);
  EXPECT_TRUE(std::isinf(t.magnitude));
  EXPECT_TRUE(std::isfinite(t.bound));
  EXPECT_EQ(judged(c, 0x1.8p+1023, false), "pass");
  EXPECT_EQ(judged(c, kSpecialInf, false), "mismatch(special: non-finite result where the value is finite)");
  EXPECT_EQ(judged(c, 0x1.4p+1023, false), "mismatch(value)");
  EXPECT_EQ(judged(c, kSpecialInf, true), "indeterminate(overflow-possible)");
  // One factor at Ω·(1+u)^(k−1) or a sum near Ω still fails the sharper certificate.
  Case big = einsum_case("i, ->", DType::f64, {{{2}, "0, 0"}, {{}, "0x1p+0"}});
  for (double& v : big.inputs[0].values<double>()) v = 0x1.8p+1023;
  EXPECT_FALSE(einsum_truth(big).elements[0].no_overflow_nonfactoring);
  Case single = einsum_case("i, ->", DType::f64, {{{1}, "0"}, {{}, "0x1p-1"}});
  single.inputs[0].values<double>()[0] = kOmega;
  EXPECT_FALSE(einsum_truth(single).elements[0].no_overflow_nonfactoring);  // P = Ω, (1+u)^1 > 1
}

TEST(OracleCertificates, SharperCertificateDecidesMoreElementsForNonFactoringBackends) {
  // "i j, j -> i" with factors in [2^125, 2^127) in one operand and ±[1/4, 1) in the other: M = Σ|a|
  // often passes Ω while the terms |a·b| and their sum S often do not. The same
  // non-factoring shuffle result, judged by both rule sets: never a failure, never more
  // indeterminate elements without factoring, and strictly fewer in all.
  std::int64_t with_factoring = 0, without = 0, elements = 0;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    Rng rng(seed);
    const std::int64_t rows = 3, terms = rng.between(2, 6);
    std::vector<float> a(static_cast<std::size_t>(rows * terms)), b(static_cast<std::size_t>(terms));
    for (float& x : a) x = std::ldexp(1.0f + static_cast<float>(rng.below(1 << 20)) * 0x1p-20f, 126 - static_cast<int>(rng.below(2)));
    for (float& x : b) x = (rng.chance(1, 2) ? 1.0f : -1.0f) * std::ldexp(1.0f + static_cast<float>(rng.below(1 << 20)) * 0x1p-20f, -2 + static_cast<int>(rng.below(2)));
    Case c;
    c.pattern = "i j, j -> i";
    c.dtype = DType::f32;
    c.inputs = {Tensor(Shape{rows, terms}, a), Tensor(Shape{terms}, b)};
    ShuffleOptions options;
    options.seed = seed;
    options.factoring = false;
    options.random_profiles = false;  // judged below by the default profile's truth (ORACLE §2)
    const Tensor result = std::get<Tensor>(make_shuffle_backend(options)->run(c));
    const auto truth = einsum_truth(c);
    const Verdict on = judge_any_order(truth, result, {true, false});
    const Verdict off = judge_any_order(truth, result, {false, false});
    EXPECT_FALSE(is_failure(on.kind)) << on.label() << "\n" << write_case(c);
    EXPECT_FALSE(is_failure(off.kind)) << off.label() << "\n" << write_case(c);
    EXPECT_LE(off.indeterminate, on.indeterminate) << write_case(c);
    with_factoring += on.indeterminate;
    without += off.indeterminate;
    elements += rows;
  }
  EXPECT_LT(without, with_factoring);
  std::cout << "[ oracle   ] near-Ω rows: " << with_factoring << " of " << elements
            << " elements indeterminate under the factoring rules, " << without << " without factoring\n";
}

// ---------------------------------------------------------------------------------------------
// Exact corners: zeros have a zero (or exactly η) bound

TEST(OracleTight, SumMeanProdOfZerosRejectTheSmallestSubnormal) {
  for (const std::int64_t n : {1, 2, 5}) {
    for (const char* kind : {"sum", "mean", "prod"}) {
      {
        const Case c = reduce_case("i ->", kind, Tensor(Shape{n}, std::vector<float>(static_cast<std::size_t>(n), 0.0f)));
        const float tiny = std::numeric_limits<float>::denorm_min();
        EXPECT_EQ(run_fixed<float>(c, {}, {tiny}, false).kind, VerdictKind::mismatch_value) << kind << " f32 n=" << n;
        EXPECT_EQ(run_fixed<float>(c, {}, {0.0f}, false).kind, VerdictKind::pass) << kind << " f32 n=" << n;
      }
      {
        const Case c = reduce_case("i ->", kind, Tensor(Shape{n}, std::vector<double>(static_cast<std::size_t>(n), 0.0)));
        const double tiny = std::numeric_limits<double>::denorm_min();
        EXPECT_EQ(run_fixed<double>(c, {}, {tiny}, false).kind, VerdictKind::mismatch_value) << kind << " f64 n=" << n;
        EXPECT_EQ(run_fixed<double>(c, {}, {0.0}, false).kind, VerdictKind::pass) << kind << " f64 n=" << n;
      }
    }
  }
  // einsum with one factor: B = γ·S = 0 exactly.
  const Case e = einsum_case("i ->", DType::f64, {{{3}, "0, -0, 0"}});
  EXPECT_EQ(judged(e, std::numeric_limits<double>::denorm_min(), true), "mismatch(value)");
  // A mean's η is exactly 2^-1075 for f64 (not 2^-1074): the mean of [denorm_min, 0] is 2^-1075;
  // both neighbours 0 and 2^-1074 are within B = γ_4·2^-1074/2 + η, the next one is not.
  const Case m = reduce_case("i ->", "mean", Tensor(Shape{2}, std::vector<double>{std::numeric_limits<double>::denorm_min(), 0.0}));
  const auto truth = reduce_truth(m);
  EXPECT_EQ(exact_text(truth.elements[0].exact, truth.elements[0].divisor).substr(0, 14), "0x1p-1074 / 2 ");
  EXPECT_EQ(run_fixed<double>(m, {}, {0.0}, false).kind, VerdictKind::pass);
  EXPECT_EQ(run_fixed<double>(m, {}, {0x1p-1074}, false).kind, VerdictKind::pass);
  EXPECT_EQ(run_fixed<double>(m, {}, {0x1p-1073}, false).kind, VerdictKind::mismatch_value);
}

// ---------------------------------------------------------------------------------------------
// Evidence (ORACLE.md §6)

TEST(OracleEvidence, DyadicsPrintExactly) {
  EXPECT_EQ(dyadic_hex(Dyadic(3, -1)), "0x1.8p+0");
  EXPECT_EQ(dyadic_hex(Dyadic(-1, 0)), "-0x1p+0");
  EXPECT_EQ(dyadic_hex(Dyadic()), "0x0p+0");
  EXPECT_EQ(dyadic_hex(Dyadic(5, -1078)), "0x1.4p-1076");
  EXPECT_EQ(dyadic_hex(Dyadic(mpz_class(1) + (mpz_class(1) << 60), -60)), "0x1.000000000000001p+0");
  EXPECT_EQ(dyadic_hex(Dyadic(24, 3)), "0x1.8p+7");
  EXPECT_EQ(exact_text(Dyadic(1, 0), 3), "0x1p+0 / 3 (3.33333333333333333333e-01)");
  EXPECT_EQ(exact_text(Dyadic(1, -1075)), "0x1p-1075 (2.47032822920623272088e-324)");
  // Past 256 hex digits the report shows how many it leaves out (a product of a million factors
  // had printed 13 million digits on one line).
  const Dyadic wide(mpz_class(1) + (mpz_class(1) << 2000), -2000);  // 1 + 2^-2000: 500 hex digits
  EXPECT_EQ(exact_text(wide), "0x1." + std::string(256, '0') + "...(244 more hex digits)p+0 (1.00000000000000000000e+00)");
}

TEST(OracleEvidence, ValueMismatchPrintsTheExactValueAndTheBoundExactly) {
  // 1 + 2^-60: ŝ* = 1, the exact value needs 61 bits; %.17g of a double could not show it.
  const Case c = einsum_case("i ->", DType::f64, {{{2}, "1, 0x1p-60"}});
  const Verdict v = run_fixed<double>(c, {}, {1.5}, true);
  ASSERT_EQ(v.kind, VerdictKind::mismatch_value);
  ASSERT_TRUE(v.first.has_value());
  const ElementEvidence& e = *v.first;
  EXPECT_EQ(e.expected_label, "multiset value");
  EXPECT_EQ(e.expected, "0x1p+0 (1)");
  EXPECT_EQ(e.exact, "0x1.000000000000001p+0 (1.00000000000000000087e+00)");
  const auto truth = einsum_truth(c);
  EXPECT_EQ(e.bound_text, exact_text(truth.elements[0].scaled_bound));
  const std::regex spelled(R"(0x1(\.[0-9a-f]+)?p[+-][0-9]+ \([0-9]\.[0-9]{20}e[+-][0-9]+\))");
  EXPECT_TRUE(std::regex_match(e.bound_text, spelled)) << e.bound_text;
  EXPECT_EQ(e.reachable, "{finite within B}");
  EXPECT_GT(e.bound_multiples, 1.0);
  // A mean: the exact value is Σ / n, printed as such.
  const Case m = reduce_case("i ->", "mean", Tensor(Shape{3}, std::vector<double>{1.0, 1.0, 2.0}));
  const Verdict vm = run_fixed<double>(m, {}, {1.5}, false);
  ASSERT_EQ(vm.kind, VerdictKind::mismatch_value);
  EXPECT_EQ(vm.first->exact, "0x1p+2 / 3 (1.33333333333333333333e+00)");
  EXPECT_TRUE(vm.first->bound_text.find(" / 3 (") != std::string::npos) << vm.first->bound_text;
}

// A finite class whose multiset value rounds to +Inf (Ω + ulp(Ω)/2 is a tie that rounds up): the
// distance in ulps is measured at Ω, never from an infinite ŝ* (that computed a NaN ulp and fed it
// to the exact arithmetic: undefined behaviour, found by UBSan in accepted_set_test).
TEST(OracleEvidence, AMismatchWhoseMultisetValueRoundsToInfMeasuresUlpsAtOmega) {
  const Case c = einsum_case("i ->", DType::f32, {{{2}, "0x1.fffffep+127, 0x1p+103"}});
  ASSERT_TRUE(std::isinf(einsum_truth(c).rounded.values<float>()[0]));
  const Verdict v = run_fixed<float>(c, {}, {0.0f}, true);
  ASSERT_EQ(v.kind, VerdictKind::mismatch_value) << v.label();
  ASSERT_TRUE(v.first.has_value());
  EXPECT_TRUE(std::isfinite(v.first->ulps)) << v.first->ulps;
  EXPECT_GT(v.first->ulps, 1.0);
}

TEST(OracleEvidence, IgnoreProfilePrintsTheValueItRequires) {
  for (const char* kind : {"min", "max"}) {
    const Case c = reduce_case("i ->", kind, Tensor(Shape{3}, std::vector<double>{kSpecialNaN, 1.0, 2.0}));
    const double required = std::string(kind) == "min" ? 1.0 : 2.0;
    const Verdict ok = run_fixed<double>(c, {}, {required}, false, NanProfile::ignore);
    EXPECT_EQ(ok.kind, VerdictKind::pass) << kind;
    const Verdict v = run_fixed<double>(c, {}, {3.0}, false, NanProfile::ignore);
    ASSERT_EQ(v.kind, VerdictKind::mismatch_value) << kind;
    ASSERT_TRUE(v.first.has_value());
    EXPECT_EQ(v.first->expected, describe_value(Tensor(Shape{}, std::vector<double>{required}), 0)) << kind;
    EXPECT_EQ(v.first->expected_label, "required by the ignore NaN profile");
    // Under `propagate` the same fibre requires NaN.
    const Verdict p = run_fixed<double>(c, {}, {3.0}, false, NanProfile::propagate);
    EXPECT_EQ(p.first->expected, "nan");
    EXPECT_EQ(p.first->expected_label, "required by the propagate NaN profile");
  }
}

}  // namespace
}  // namespace einfuzz
