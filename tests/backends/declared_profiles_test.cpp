// Every built-in backend's declared precision profile (ORACLE §8: `accumulate` and `round_inputs` per
// float dtype) tested against the library itself: distinguishing cases (long sums of ones, a factored
// product of 1 + u, matrix products of ones, TF32-sensitive products) run through the adapter, and
// each raw result checked directly against §8's bound for the declared profile, with no judge in
// between. A declaration wider than the library fails the bound; a storage-type declaration where
// the library is wider on every case fails the tightness check (issue 14).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "einfuzz/backends/eigen.hpp"
#include "einfuzz/backends/plugin.hpp"
#include "einfuzz/backends/xtensor.hpp"
#include "einfuzz/core/case.hpp"
#include "einfuzz/harness/backend_registry.hpp"
#include "einfuzz/harness/run.hpp"
#include "support/library_backends.hpp"
#include "support/values_text.hpp"

namespace einfuzz {
namespace {

using test::kLibraryBackends;
using test::library_test_name;
using test::make_library_backend;

/// Element `i` of a float tensor, widened exactly.
double profile_element(const Tensor& t, std::size_t i) {
  return visit_dtype(t.dtype(), [&](auto tag) -> double {
    using T = decltype(tag);
    if constexpr (is_float_type_v<T>) {
      return static_cast<double>(t.values<T>()[i]);
    } else {
      ADD_FAILURE() << "not a float tensor";
      return 0;
    }
  });
}

/// A format's u and η (ORACLE §2): u = 2^-p, η = 2^(emin − p).
struct Units {
  double u, eta;
};
Units units(DType d) {
  const FloatFormat f = *dtype_info(d).format;
  return {std::ldexp(1.0, -f.digits), std::ldexp(1.0, f.min_exponent - f.digits)};
}

/// One distinguishing case whose output element 0 is judged: its exact value s and Σ|terms| S, the
/// factors per term k and the term count K (a sum reduce: k = 1, K = n; a mean: `mean` set).
struct Probe {
  std::string what;
  Case c;
  double s, S;
  int k;
  double K;
  bool mean = false;
};

/// ORACLE §8's acceptance of `r` for `p` under `profile` in output dtype `o`, computed directly.
bool accepted(const Probe& p, DType o, const PrecisionProfile& profile, double r) {
  const Units a = units(profile.accumulate);
  const Units out = units(o);
  // round_inputs applies to einsum products only (never to reductions).
  double u_i = 0;
  if (p.c.op == Op::einsum && profile.round_inputs != InputRounding::none) {
    u_i = std::ldexp(1.0, -input_rounding_format(profile.round_inputs)->digits);
  }
  const double N = p.K + p.k - 2;
  const double growth = std::expm1(p.k * std::log1p(u_i) + N * std::log1p(a.u));
  // U_a: partial products may underflow (k ≥ 2); every |partial| here is at most S.
  const double U = p.k >= 2 ? (p.k - 1) * a.eta * std::exp(N * std::log1p(a.u)) * p.S : 0;
  const double E = growth * p.S + U;
  if (p.mean) {
    const double n = p.K;
    return std::fabs(r - p.s / n) <= E / n + (a.u + out.u) * (std::fabs(p.s) / n + E / n) + a.eta + out.eta;
  }
  return std::fabs(r - p.s) <= E + out.u * (std::fabs(p.s) + E) + out.eta;
}

Case einsum_case(const std::string& pattern, DType d, const std::vector<std::pair<Shape, std::string>>& operands) {
  Case c;
  c.pattern = pattern;
  c.dtype = d;
  for (const auto& [shape, values] : operands) c.inputs.push_back(test::tensor_from_text(d, shape, values));
  return c;
}

Case reduce_case(const std::string& pattern, const std::string& kind, DType d, const Shape& shape, const std::string& values) {
  Case c = einsum_case(pattern, d, {{shape, values}});
  c.op = Op::reduce;
  c.reduction = kind;
  return c;
}

/// The ones count for `d` that separates its storage accumulator from f32: f16 sums of ones stop at
/// 2048, bf16 at 256 (ORACLE §8); f32 and f64 only check soundness.
std::int64_t ones_count(DType d) { return d == DType::bf16 ? 300 : 3000; }

std::vector<Probe> probes(DType d) {
  const std::int64_t n = ones_count(d);
  const auto dn = static_cast<double>(n);
  const std::string ones = std::to_string(n) + "*1";
  const std::string ones2 = std::to_string(2 * n) + "*1";
  const std::string ones4 = std::to_string(4 * n) + "*1";
  const double u = units(d).u;
  char unit[32];
  std::snprintf(unit, sizeof unit, "%a", u);
  const std::string factored = std::string("1,") + unit;
  std::vector<Probe> out;
  out.push_back({"sum of ones along the outer axis", reduce_case("a b -> b", "sum", d, {n, 2}, ones2), dn, dn, 1, dn});
  out.push_back({"sum of ones along the inner axis", reduce_case("b a -> b", "sum", d, {2, n}, ones2), dn, dn, 1, dn});
  Probe mean{"mean of ones along the outer axis", reduce_case("a b -> b", "mean", d, {n, 2}, ones2), dn, dn, 1, dn};
  mean.mean = true;
  out.push_back(mean);
  out.push_back({"einsum sum of ones", einsum_case("a b -> b", d, {{{n, 2}, ones2}}), dn, dn, 1, dn});
  out.push_back({"dot of ones", einsum_case("i, i ->", d, {{{n}, ones}, {{n}, ones}}), dn, dn, 2, dn});
  out.push_back({"matrix product of ones", einsum_case("i j, j k -> i k", d, {{{2, n}, ones2}, {{n, 2}, ones2}}), dn, dn,
                 2, dn});
  out.push_back({"batched matrix product of ones",
                 einsum_case("b i j, b j k -> b i k", d, {{{2, 2, n}, ones4}, {{2, n, 2}, ones4}}), dn, dn, 2, dn});
  // 2^p + 1 − 2^p: the 1 is lost when the partial sum 2^p + 1 is held in the dtype (f16: p = 11).
  char big[32];
  std::snprintf(big, sizeof big, "%a", std::ldexp(1.0, dtype_info(d).format->digits));
  const std::string cancel = std::string(big) + ",1,-" + big;
  const double cancel_S = 2 * std::ldexp(1.0, dtype_info(d).format->digits) + 1;
  out.push_back({"cancellation sum along the outer axis",
                 reduce_case("a b -> b", "sum", d, {3, 2}, std::string(big) + "," + big + ",1,1,-" + big + ",-" + big), 1,
                 cancel_S, 1, 3});
  out.push_back({"cancellation dot", einsum_case("i, i ->", d, {{{3}, cancel}, {{3}, "1,1,1"}}), 1, cancel_S, 2, 3});
  // (1 + u)² = 1 + 2u + u²: one rounding from a wide accumulator gives 1 + 2u; summing each operand
  // first in the dtype (a factored path that keeps its intermediates in the dtype) gives 1·1 = 1.
  const double exact = 1 + 2 * u + u * u;
  out.push_back({"factored product of sums of 1 and u", einsum_case("i, j ->", d, {{{2}, factored}, {{2}, factored}}),
                 exact, exact, 2, 4});
  return out;
}

/// The next wider accumulator a backend could declare for `d` instead of `d` itself.
DType wider(DType d) { return d == DType::f32 ? DType::f64 : DType::f32; }

class DeclaredProfile : public ::testing::TestWithParam<std::string> {};

TEST_P(DeclaredProfile, HoldsAgainstTheLibrary) {
  std::string why;
  const auto backend = make_library_backend(GetParam(), why);
  if (!backend) GTEST_SKIP() << why;
  const Capabilities& caps = backend->capabilities();
  int dtypes = 0;
  for (DType d : {DType::f16, DType::bf16, DType::f32}) {
    if (std::find(caps.dtypes.begin(), caps.dtypes.end(), d) == caps.dtypes.end()) continue;
    ++dtypes;
    const PrecisionProfile declared = caps.profile(d);
    const PrecisionProfile next_wider{wider(d), declared.round_inputs};
    const PrecisionProfile next_narrower{d, declared.round_inputs};
    bool excludes_wider = false;  // some result is outside the wider accumulator's bound
    bool beyond_storage = false;  // some sum of ones reached its exact count, past the dtype's 2^p
    for (const Probe& p : probes(d)) {
      SCOPED_TRACE(GetParam() + " " + std::string(dtype_name(d)) + ": " + p.what + " '" + p.c.pattern + "'");
      const BackendResult res = backend->run(p.c);
      if (const auto* un = std::get_if<Unsupported>(&res)) {
        std::cout << "  " << GetParam() << " " << dtype_name(d) << " " << p.what << ": unsupported (" << un->message
                  << ")\n";
        continue;
      }
      // A rejection would be a disagreement with the reference, which accepts every probe.
      ASSERT_TRUE(std::holds_alternative<Tensor>(res)) << "neither a result nor unsupported (index " << res.index() << ")";
      const Tensor& t = std::get<Tensor>(res);
      ASSERT_EQ(t.dtype(), d);
      ASSERT_GE(t.size(), 1);
      const double r = profile_element(t, 0);
      std::cout << "  " << GetParam() << " " << dtype_name(d) << " " << p.what << ": " << r << " (exact "
                << (p.mean ? p.s / p.K : p.s) << ")\n";
      EXPECT_TRUE(accepted(p, d, declared, r))
          << "declared accumulate " << dtype_name(declared.accumulate) << " but the library gave " << r
          << ": it holds partial results in a narrower format than it declares";
      if (!accepted(p, d, next_wider, r)) excludes_wider = true;
      if (p.k == 1 && !p.mean && r == p.s && p.s > std::ldexp(1.0, dtype_info(d).format->digits)) beyond_storage = true;
    }
    if (declared.accumulate == d && is_half(d)) {
      EXPECT_TRUE(excludes_wider) << GetParam() << " declares accumulate " << dtype_name(d)
                                  << " (the default) but every result fits accumulate " << dtype_name(wider(d))
                                  << ": declare the wider accumulator";
    }
    if (declared.accumulate != next_narrower.accumulate && is_half(d)) {
      EXPECT_TRUE(beyond_storage) << GetParam() << " declares accumulate " << dtype_name(declared.accumulate)
                                  << " for " << dtype_name(d)
                                  << " but no sum of ones went past what the dtype itself can count";
    }
  }
  if (dtypes == 0) GTEST_SKIP() << GetParam() << " declares none of f16, bf16, f32";
}

INSTANTIATE_TEST_SUITE_P(Backends, DeclaredProfile, ::testing::ValuesIn(kLibraryBackends), library_test_name);

// ---------------------------------------------------------------------------------------------
// TF32: (1 + 2^-12)² = 1 + 2^-11 + 2^-24 is 1 + 2^-11 in f32 (a tie to even), but 1 when the inputs
// are first rounded to TF32 (10 fraction bits: 1 + 2^-12 rounds to 1). A diagonal matrix product
// large enough for a GEMM path, and a dot of length 1.

class DeclaredInputRounding : public ::testing::TestWithParam<std::string> {};

TEST_P(DeclaredInputRounding, HoldsAgainstTheLibrary) {
  std::string why;
  const auto backend = make_library_backend(GetParam(), why);
  if (!backend) GTEST_SKIP() << why;
  const Capabilities& caps = backend->capabilities();
  if (std::find(caps.dtypes.begin(), caps.dtypes.end(), DType::f32) == caps.dtypes.end()) {
    GTEST_SKIP() << GetParam() << " declares no f32";
  }
  const bool tf32 = caps.profile(DType::f32).round_inputs == InputRounding::tf32;
  const double x = 1 + std::ldexp(1.0, -12);
  const double f32_result = 1 + std::ldexp(1.0, -11);
  const double tf32_result = 1;
  constexpr std::int64_t n = 32;
  std::string diag;
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) diag += (diag.empty() ? "" : ",") + std::string(i == j ? "0x1.001p+0" : "0");
  }
  const std::vector<Case> cases = {einsum_case("i j, j k -> i k", DType::f32, {{{n, n}, diag}, {{n, n}, diag}}),
                                   einsum_case("i, i ->", DType::f32, {{{1}, "0x1.001p+0"}, {{1}, "0x1.001p+0"}})};
  for (const Case& c : cases) {
    SCOPED_TRACE(GetParam() + ": '" + c.pattern + "'");
    ASSERT_EQ(c.inputs[0].values<float>()[0], static_cast<float>(x));
    const BackendResult res = backend->run(c);
    ASSERT_TRUE(std::holds_alternative<Tensor>(res)) << "index " << res.index();
    const Tensor& t = std::get<Tensor>(res);
    for (std::int64_t i = 0; i < t.size(); i += n + 1) {
      const double r = profile_element(t, static_cast<std::size_t>(i));
      EXPECT_EQ(r, tf32 ? tf32_result : f32_result)
          << (tf32 ? "declares round_inputs tf32 but multiplied the inputs as they are"
                   : "declares no input rounding but rounded the inputs to TF32");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, DeclaredInputRounding, ::testing::ValuesIn(kLibraryBackends), library_test_name);

// ---------------------------------------------------------------------------------------------
// The eigen adapter hands core's 16-bit values to Eigen::half / Eigen::bfloat16 and back bit for
// bit: a passthrough einsum returns every bit pattern unchanged (NaN payloads, −0, subnormals
// included); a reduce that reduces nothing does too for the values Eigen's sum (0 + x) keeps: every
// non-NaN except −0.

template <class T>
void eigen_keeps_every_bit(DType d) {
  auto eigen = make_eigen_backend();
  Tensor all(d, Shape{65536});
  auto v = all.values<T>();
  for (std::uint32_t bits = 0; bits < 65536; ++bits) v[bits] = T::from_bits(static_cast<std::uint16_t>(bits));
  Case e;
  e.pattern = "i -> i";
  e.dtype = d;
  e.inputs.push_back(all);
  Case r = e;
  r.op = Op::reduce;
  r.pattern = "(a b) -> a b";
  r.reduction = "sum";
  r.axis_lengths = {{"a", 256}};
  for (const Case* c : {&e, &r}) {
    SCOPED_TRACE(std::string(op_name(c->op)) + " '" + c->pattern + "' " + std::string(dtype_name(d)));
    const BackendResult res = eigen->run(*c);
    ASSERT_TRUE(std::holds_alternative<Tensor>(res)) << "index " << res.index();
    const auto out = std::get<Tensor>(res).values<T>();
    ASSERT_EQ(out.size(), v.size());
    int wrong = 0;
    for (std::size_t k = 0; k < out.size(); ++k) {
      const bool kept_by_sum = !std::isnan(static_cast<float>(v[k])) && v[k].bits() != 0x8000u;
      if (c->op == Op::reduce && !kept_by_sum) continue;
      if (out[k].bits() != v[k].bits() && ++wrong <= 5) {
        ADD_FAILURE() << "bits 0x" << std::hex << v[k].bits() << " came back as 0x" << out[k].bits();
      }
    }
  }
}

TEST(EigenHalf, TheBoundaryConversionKeepsEveryF16Bit) { eigen_keeps_every_bit<Float16>(DType::f16); }
TEST(EigenHalf, TheBoundaryConversionKeepsEveryBF16Bit) { eigen_keeps_every_bit<BFloat16>(DType::bf16); }

}  // namespace
}  // namespace einfuzz
