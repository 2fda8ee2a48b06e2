// The `eigen` and `xtensor` backends (their §11 rows: eigen_xtensor_rows_test.cpp): capabilities,
// the Eigen assertion guard, xtensor's observed min/max behaviour, the stored divergences, and
// RapidCheck properties (random einsums and reduces never fail except for documented divergences).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <span>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "einfuzz/backends/eigen.hpp"
#include "einfuzz/backends/xtensor.hpp"
#include "einfuzz/backends/xtensor_divergence.hpp"
#include "einfuzz/core/case.hpp"
#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/core/choice.hpp"
#include "einfuzz/harness/check_command.hpp"
#include "einfuzz/harness/generate.hpp"
#include "einfuzz/harness/run.hpp"
#include "einfuzz/harness/values.hpp"
#include "support/compare.hpp"
#include "support/conformance_rows.hpp"
#include "support/reduce_gen.hpp"
#include "support/values_text.hpp"
#include "support/verdicts.hpp"

namespace einfuzz {
namespace {

using VK = VerdictKind;

// ---------------------------------------------------------------------------------------------
// Cases and running

std::unique_ptr<Backend> make(const std::string& name) {
  return name == "eigen" ? make_eigen_backend() : make_xtensor_backend();
}

// ---------------------------------------------------------------------------------------------
// Capabilities, registry, rank bound, bool einsum

TEST(EigenXtensorBackends, DeclareTheirCapabilities) {
  auto eigen = make_eigen_backend();
  auto xtensor = make_xtensor_backend();
  EXPECT_EQ(eigen->name(), "eigen");
  EXPECT_EQ(xtensor->name(), "xtensor");
  for (Backend* b : {eigen.get(), xtensor.get()}) {
    const Capabilities& caps = b->capabilities();
    EXPECT_EQ(caps.semantics, Semantics::any_order);
    EXPECT_EQ(caps.nan_profile, NanProfile::propagate);
    EXPECT_EQ(caps.reductions.size(), 7u);
  }
  // Eigen also evaluates Eigen::half and Eigen::bfloat16; xtensor leaves the 16-bit floats undeclared.
  EXPECT_EQ(eigen->capabilities().dtypes.size(), 7u);
  EXPECT_EQ(xtensor->capabilities().dtypes.size(), 5u);
  EXPECT_TRUE(eigen->capabilities().factoring);
  EXPECT_FALSE(xtensor->capabilities().factoring);  // one product per term
  EXPECT_NE(eigen->capabilities().version.find("Eigen 3."), std::string::npos);
  EXPECT_NE(xtensor->capabilities().version.find("xtensor 0."), std::string::npos);
}

TEST(EigenXtensorBackends, AreBuiltinBackends) {
  const auto names = builtin_backend_names();
  for (const char* name : {"eigen", "xtensor"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
    auto b = make_builtin_backend(name, RunOptions{});
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->name(), name);
  }
}

TEST(EigenXtensorBackends, BoolEinsumIsRejectedLikeTheChecker) {
  Case c;
  c.pattern = "i, i ->";
  c.dtype = DType::boolean;
  c.inputs = {Tensor(DType::boolean, Shape{2}), Tensor(DType::boolean, Shape{2})};
  for (const char* name : {"eigen", "xtensor"}) {
    auto b = make(name);
    EXPECT_EQ(test::run_on(c, *b).kind, VK::pass) << name;  // both reject with unsupportedDtype
  }
}

TEST(EigenBackend, RanksBeyondSixAreUnsupported) {
  Case c;
  c.pattern = "a b c d e f g -> g a";
  c.dtype = DType::f64;
  c.inputs = {test::tensor_from_text(DType::f64, {1, 2, 1, 2, 1, 2, 2}, "1..16")};
  auto eigen = make_eigen_backend();
  EXPECT_EQ(test::run_on(c, *eigen).kind, VK::unsupported);
  auto xtensor = make_xtensor_backend();  // dynamic rank
  EXPECT_EQ(test::run_on(c, *xtensor).kind, VK::pass);
  // Rank 6 operands are dispatched; a rank-6 permutation of non-unit axes too.
  c.pattern = "a b c d e f -> f e d c b a";
  c.inputs = {test::tensor_from_text(DType::f64, {2, 2, 2, 2, 2, 2}, "1..64")};
  const Verdict v = test::run_on(c, *eigen);
  EXPECT_EQ(v.kind, VK::pass) << test::explain(v);
}

// ---------------------------------------------------------------------------------------------
// Eigen: eigen_assert stays active in the adapter even with NDEBUG

TEST(EigenBackend, MisSizedContractionIsCaughtNotSilentlyWrong) {
  const Tensor a = test::tensor_from_text(DType::f64, {2, 3}, "1..6");
  const Tensor b_ok = test::tensor_from_text(DType::f64, {3, 2}, "1,0,0,1,1,1");
  EXPECT_TRUE(test::bitwise_same(test::tensor_from_text(DType::f64, {2, 2}, "4,5,10,11"),
                                 detail::eigen_contract_unchecked(a, b_ok)));
  const Tensor b_bad = test::tensor_from_text(DType::f64, {2, 3}, "1..6");  // inner 3 vs 2
  try {
    detail::eigen_contract_unchecked(a, b_bad);
    FAIL() << "a mis-sized contraction returned a result";
  } catch (const EigenAssertionFailure& e) {
    EXPECT_NE(std::string(e.what()).find("Contraction axes must be same size"), std::string::npos) << e.what();
  }
}

// Found by fuzz_backends_diff (its input is fuzz/seeds/fuzz_backends_diff/regression-eigen-zero-
// length-product-overflow): an empty input whose other lengths multiply past int64. The checker
// bounds only the element count (0); the eigen adapter's relayout multiplied the lengths (UBSan:
// signed overflow). Replayed under UBSan by the dev preset.
TEST(EigenBackend, EmptyInputWithHugeLengthsIsEmptyNotOverflow) {
  Case c;
  c.op = Op::reduce;
  c.pattern = "... b -> b ...";
  c.reduction = "sum";
  c.dtype = DType::i64;
  c.inputs = {Tensor(DType::i64, Shape{97, 2350098854370846542, 32, 0, 127, 98})};
  const std::unique_ptr<Backend> eigen = make_eigen_backend();
  const Verdict v = test::run_on(c, *eigen);
  EXPECT_TRUE(v.kind == VK::pass || v.kind == VK::pass_bitwise) << test::explain(v);
}

// The xtensor fold model on an empty input whose other lengths multiply past int64 ([0, 2^32, 2^32]:
// the stride of the first axis would be 2^64): an empty output, computed without signed overflow
// (UBSan, the dev preset, fails this test with the model's strides in int64).
TEST(XtensorDivergence, TheFoldModelOfAnEmptyInputWithHugeLengthsIsEmpty) {
  const Case c = test::reduce_case("a b c -> a b", "max", {}, DType::f64,
                                   Tensor(DType::f64, Shape{0, std::int64_t{1} << 32, std::int64_t{1} << 32}));
  const std::optional<Tensor> model = xtensor_extreme_fold(c);
  ASSERT_TRUE(model.has_value());
  EXPECT_EQ(model->shape(), (Shape{0, std::int64_t{1} << 32}));
}

// ---------------------------------------------------------------------------------------------
// xtensor: the observed min/max behaviour, as a model

/// xtensor's result equals the recorded fold (bitwise, NaN as NaN) on this min/max case: the
/// predicate fuzz/fuzz_backends_diff.cpp shares (backends/xtensor_divergence.hpp).
bool xtensor_matches_extreme_model(const Case& c, const Tensor& actual) { return is_xtensor_extreme_divergence(c, actual); }

Tensor run_direct(Backend& b, const Case& c) {
  BackendResult r = b.run(c);
  if (!std::holds_alternative<Tensor>(r)) {
    ADD_FAILURE() << "no tensor";
    return Tensor();
  }
  return std::get<Tensor>(std::move(r));
}

TEST(XtensorBackend, ObservedMinMaxNanProfileIsNotPropagate) {
  auto xtensor = make_xtensor_backend();
  auto eigen = make_eigen_backend();
  struct Probe {
    const char* kind;
    const char* values;
    double xtensor;  // observed
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double big = std::numeric_limits<double>::max();
  const Probe probes[] = {
      {"max", "1,nan,0.5", 0.5}, {"max", "nan,1,0.5", 1}, {"max", "1,0.5,nan", nan},
      {"min", "1,nan,0.5", 0.5}, {"min", "nan,1,0.5", 0.5}, {"min", "1,0.5,nan", nan},
      {"max", "-inf", -big},     {"max", "-inf,-inf", -big}, {"min", "inf", big},
      {"max", "-inf,nan", nan},  {"max", "nan,-inf", -std::numeric_limits<double>::infinity()},
  };
  for (const Probe& p : probes) {
    const test::Lengths none;
    const auto n = static_cast<std::int64_t>(test::parse_value_list(p.values).size());
    const Case c =
        test::reduce_case("a ->", p.kind, none, DType::f64, test::tensor_from_text(DType::f64, {n}, p.values));
    const Tensor got = run_direct(*xtensor, c);
    const double r = got.values<double>()[0];
    EXPECT_TRUE(std::isnan(p.xtensor) ? std::isnan(r) : r == p.xtensor) << p.kind << " " << p.values << " gave " << r;
    EXPECT_TRUE(xtensor_matches_extreme_model(c, got)) << p.kind << " " << p.values;
    // Eigen's minimum/maximum<PropagateNaN> propagate, as declared.
    const Verdict ve = test::run_on(c, *eigen);
    EXPECT_EQ(ve.kind, VK::pass) << p.kind << " " << p.values << ": " << test::explain(ve);
  }
}

// ---------------------------------------------------------------------------------------------
// Stored divergences reproduce with the verdict recorded in their origin

std::string origin_field(const Case& c, const std::string& key) {
  for (const auto& [k, v] : c.origin) {
    if (k == key) return v;
  }
  return {};
}

TEST(StoredDivergences, ReproduceWithTheirRecordedVerdict) {
  const std::filesystem::path dir = std::filesystem::path(EINFUZZ_SOURCE_DIR) / "corpus" / "divergences";
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().string().find(".case.json") == std::string::npos) continue;
    SCOPED_TRACE(entry.path().filename().string());
    auto c = read_case_file(entry.path());
    ASSERT_TRUE(c.ok()) << render(c.error());
    const std::string backend_name = origin_field(*c, "backend");
    auto backend = make_builtin_backend(backend_name, RunOptions{});
    if (backend == nullptr) {
      // A backend this build or machine lacks (torch without libtorch, numpy without python3-numpy)
      // is skipped, unless scripts/test.sh's setup promised every backend.
      const char* all = std::getenv("EINFUZZ_REQUIRE_ALL_BACKENDS");
      ASSERT_FALSE(all != nullptr && std::string_view(all) == "1") << backend_name << " is not available";
      continue;
    }
    const Verdict v = test::run_on(*c, *backend, test::as_recorded(*c));
    EXPECT_EQ(v.label(), origin_field(*c, "verdict")) << test::explain(v);
    if (origin_profile(*c)) {  // a profile surprise, not a bug: the declared profile holds
      const Verdict declared = test::run_on(*c, *backend);
      EXPECT_FALSE(is_failure(declared.kind)) << "under the declared profile: " << test::explain(declared);
    }
    ++seen;
  }
  EXPECT_GE(seen, 1);
}

// The shared predicate (issue 10, item 9): it recognises each stored xtensor divergence as xtensor
// computes it, and nothing else: not a different wrong min/max (a value that is no fibre element,
// NaN where the fold has a number, a number where it has NaN), not the propagate answer (Eigen's,
// which its declared-capabilities test demonstrates), not another reduction or op.
TEST(XtensorDivergence, ThePredicateRecognisesTheRecordedFoldAndNothingElse) {
  auto xtensor = make_xtensor_backend();
  auto eigen = make_eigen_backend();
  const std::filesystem::path dir = std::filesystem::path(EINFUZZ_SOURCE_DIR) / "corpus" / "divergences";
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().string().find(".case.json") == std::string::npos) continue;
    auto c = read_case_file(entry.path());
    ASSERT_TRUE(c.ok()) << render(c.error());
    if (origin_field(*c, "backend") != "xtensor") continue;
    SCOPED_TRACE(entry.path().filename().string());
    ++seen;
    const Tensor got = run_direct(*xtensor, *c);
    EXPECT_TRUE(is_failure(test::run_on(*c, *xtensor).kind)) << "the recorded verdict is a failure";
    ASSERT_TRUE(is_xtensor_extreme_divergence(*c, got)) << "the stored divergence, as xtensor computes it";
    const Tensor propagate = run_direct(*eigen, *c);
    EXPECT_EQ(test::run_on(*c, *eigen).kind, VK::pass);
    EXPECT_FALSE(is_xtensor_extreme_divergence(*c, propagate)) << "the correct answer";
    for (std::int64_t i = 0; i < got.size(); ++i) {
      Tensor wrong = got;
      visit_dtype(c->dtype, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_floating_point_v<T>) {
          T* w = wrong.values<T>().data() + i;
          T beyond = 1;  // finite, larger in magnitude than every input: no fibre element
          for (T v : c->inputs[0].values<T>()) {
            if (std::isfinite(v)) beyond = std::max(beyond, 2 * std::abs(v));
          }
          *w = std::isnan(*w) ? beyond : std::numeric_limits<T>::quiet_NaN();
          EXPECT_FALSE(is_xtensor_extreme_divergence(*c, wrong)) << "element " << i << " made NaN/non-NaN";
          *w = beyond;
          EXPECT_FALSE(is_xtensor_extreme_divergence(*c, wrong)) << "element " << i << " no fibre element";
        }
      });
    }
    Case other = *c;
    other.reduction = "sum";
    EXPECT_FALSE(is_xtensor_extreme_divergence(other, got));
    other.op = Op::einsum;
    EXPECT_FALSE(is_xtensor_extreme_divergence(other, got));
  }
  EXPECT_GE(seen, 1) << "stored xtensor divergences";
}

// ---------------------------------------------------------------------------------------------
// Properties: random valid cases never fail, except for the documented xtensor min/max divergence

std::string failure_report(const std::string& backend, const Verdict& v, const Case& c) {
  return backend + ": " + test::explain(v) + "\ncase:\n" + write_case(c);
}

/// Runs `c` on both backends; any failing verdict, or an `unsupported` other than Eigen's rank bound
/// or diagonals, fails the property. Returns Eigen's verdict.
Verdict expect_no_failure(const Case& c) {
  auto eigen = make_eigen_backend();
  auto xtensor = make_xtensor_backend();
  Backend* list[] = {eigen.get(), xtensor.get()};
  const CaseOutcome out = run_case(c, list, RunOptions{});
  for (const BackendOutcome& b : out.backends) {
    if (is_failure(b.verdict.kind)) RC_FAIL(failure_report(b.backend, b.verdict, c));
    const bool eigen_limit = b.backend == "eigen" && (b.verdict.detail.find("rank") != std::string::npos ||
                                                      b.verdict.detail.find("diagonal") != std::string::npos);
    if (b.verdict.kind == VK::unsupported && !eigen_limit) RC_FAIL(failure_report(b.backend, b.verdict, c));
  }
  return out.backends[0].verdict;
}

RC_GTEST_PROP(EigenXtensorProperties, GeneratedEinsumsNeverFail, ()) {
  Rng rng(*rc::gen::arbitrary<std::uint64_t>());
  const Case c = generate_einsum(rng);
  const Verdict eigen = expect_no_failure(c);
  RC_CLASSIFY(eigen.kind == VK::unsupported, "eigen unsupported");
}

/// True when some operand repeats a label (a diagonal, which Eigen cannot express).
bool has_diagonal(const Case& c) {
  std::vector<Shape> shapes;
  for (const Tensor& t : c.inputs) shapes.push_back(t.shape());
  auto checked = check_einsum(c.pattern, shapes);
  if (!checked) return false;
  for (const CheckedOperand& op : checked->operands) {
    std::vector<int> axes = op.axes;
    std::sort(axes.begin(), axes.end());
    if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) return true;
  }
  return false;
}

// Half the cases on IEEE edge values (NaN, ±Inf, ±0, subnormals, Ω, cancellation pairs), all of
// them free of diagonals so that Eigen's contraction chain runs every time.
RC_GTEST_PROP(EigenXtensorProperties, DiagonalFreeEinsumsOnEdgeValuesNeverFail, ()) {
  Rng rng(*rc::gen::arbitrary<std::uint64_t>());
  Case c = generate_einsum(rng);
  while (has_diagonal(c)) c = generate_einsum(rng);
  const bool edge = rng.chance(1, 2);
  if (edge) {
    for (std::size_t k = 0; k < c.inputs.size(); ++k) {
      c.inputs[k] = make_values(c.dtype, c.inputs[k].shape(), ValueMode::edge, rng.next(), k);
    }
  }
  const Verdict eigen = expect_no_failure(c);
  RC_CLASSIFY(edge, "edge values");
  RC_CLASSIFY(eigen.kind == VK::indeterminate, "eigen indeterminate");
  RC_CLASSIFY(eigen.kind == VK::unsupported, "eigen unsupported (rank > 6)");
  RC_CLASSIFY(c.inputs.size() >= 3, "3+ operands");
}

// Longer axes, so that Eigen's blocked, vectorised GEMM kernels and packet reductions run.
RC_GTEST_PROP(EigenXtensorProperties, LongerAxesNeverFail, ()) {
  Rng rng(*rc::gen::arbitrary<std::uint64_t>());
  GenOptions options;
  options.max_operands = 3;
  options.max_axes_per_operand = 3;
  options.max_length = 24;
  options.max_global = 1 << 14;
  options.dtypes = {DType::f32, DType::f64};
  Case c = generate_einsum(rng, options);
  if (rng.chance(1, 3)) {
    for (std::size_t k = 0; k < c.inputs.size(); ++k) {
      c.inputs[k] = make_values(c.dtype, c.inputs[k].shape(), ValueMode::edge, rng.next(), k);
    }
  }
  const Verdict eigen = expect_no_failure(c);
  RC_CLASSIFY(eigen.kind == VK::unsupported, "eigen unsupported");
}

Case reduce_case_of(const test::ReduceCase& g) {
  Case c;
  c.op = Op::reduce;
  c.pattern = g.pattern;
  c.reduction = std::string(reduction_name(g.kind));
  c.axis_lengths = g.axis_lengths;
  c.dtype = g.dtype;
  c.inputs.push_back(g.input);
  return c;
}

RC_GTEST_PROP(EigenXtensorProperties, GeneratedReducesNeverFailExceptXtensorMinMax, ()) {
  Rng rng(*rc::gen::arbitrary<std::uint64_t>());
  const test::ReduceCase g = test::generate_reduce_case(rng);
  const Case c = reduce_case_of(g);
  auto eigen = make_eigen_backend();
  auto xtensor = make_xtensor_backend();
  const Verdict ve = test::run_on(c, *eigen);
  if (is_failure(ve.kind)) RC_FAIL(failure_report("eigen", ve, c));
  // The one thing Eigen may not express here: a permutation above its dispatched rank.
  if (ve.kind == VK::unsupported && ve.detail.find("rank") == std::string::npos) RC_FAIL(failure_report("eigen", ve, c));
  RC_CLASSIFY(ve.kind == VK::unsupported, "eigen unsupported (rank > 6)");
  const Verdict vx = test::run_on(c, *xtensor);
  if (is_failure(vx.kind)) {
    // Known: xtensor's amin/amax fold (corpus/divergences/README.md), exactly as modelled.
    const bool extreme = g.kind == Reduction::min || g.kind == Reduction::max;
    if (!extreme || !xtensor_matches_extreme_model(c, run_direct(*xtensor, c))) {
      RC_FAIL(failure_report("xtensor", vx, c));
    }
    RC_CLASSIFY(true, "xtensor min/max divergence");
  }
  RC_ASSERT(vx.kind != VK::unsupported);
}

// Longer fibres, so that Eigen's packet reductions (and their NaN propagation) run.
RC_GTEST_PROP(EigenXtensorProperties, LongerFibresNeverFailExceptXtensorMinMax, ()) {
  Rng rng(*rc::gen::arbitrary<std::uint64_t>());
  test::ReduceGenOptions options;
  options.max_axes = 3;
  options.max_length = 40;
  options.max_elements = 1 << 14;
  const Case c = reduce_case_of(test::generate_reduce_case(rng, options));
  auto eigen = make_eigen_backend();
  const Verdict ve = test::run_on(c, *eigen);
  if (is_failure(ve.kind)) RC_FAIL(failure_report("eigen", ve, c));
  auto xtensor = make_xtensor_backend();
  const Verdict vx = test::run_on(c, *xtensor);
  const bool extreme = *c.reduction == "min" || *c.reduction == "max";
  if (is_failure(vx.kind) && !(extreme && xtensor_matches_extreme_model(c, run_direct(*xtensor, c)))) {
    RC_FAIL(failure_report("xtensor", vx, c));
  }
}

RC_GTEST_PROP(EigenXtensorProperties, XtensorMinMaxFollowsTheModelledFold, ()) {
  Rng rng(*rc::gen::arbitrary<std::uint64_t>());
  test::ReduceGenOptions options;
  options.kind = rng.chance(1, 2) ? Reduction::min : Reduction::max;
  options.dtype = rng.chance(1, 2) ? DType::f32 : DType::f64;
  const Case c = reduce_case_of(test::generate_reduce_case(rng, options));
  auto xtensor = make_xtensor_backend();
  const Tensor got = run_direct(*xtensor, c);
  if (!xtensor_matches_extreme_model(c, got)) RC_FAIL("xtensor differs from its model\ncase:\n" + write_case(c));
  const Verdict v = test::run_on(c, *xtensor);
  RC_CLASSIFY(is_failure(v.kind), "diverges from propagate");
}

}  // namespace
}  // namespace einfuzz
