// The shrinker: candidates valid by construction and strictly smaller, greedy restarts, minimal
// results for simple predicates, values simplified towards 0, ±1 and fewer special values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "einfuzz/core/check.hpp"
#include "einfuzz/harness/generate.hpp"
#include "einfuzz/harness/run.hpp"
#include "einfuzz/harness/shrink.hpp"

namespace einfuzz {
namespace {

Case einsum_case(std::string pattern, std::vector<Tensor> inputs) {
  Case c;
  c.pattern = std::move(pattern);
  c.dtype = inputs.empty() ? DType::f64 : inputs[0].dtype();
  c.inputs = std::move(inputs);
  return c;
}

std::int64_t elements(const Case& c) {
  std::int64_t n = 0;
  for (const Tensor& t : c.inputs) n += t.size();
  return n;
}

TEST(Shrink, EinsumCandidatesAreValidAndSmaller) {
  std::size_t candidates = 0;
  for (std::uint64_t i = 0; i < 300; ++i) {
    SeededChoices s(Rng::mix(3, i));
    GenOptions o;
    o.max_global = 256;
    const Case c = generate_einsum(s, o);
    for_each_shrink_candidate(c, [&](Case&& candidate) {
      ++candidates;
      auto checked = check_case(candidate, Limits{});
      EXPECT_TRUE(checked.ok()) << "from\n" << write_case(c) << "to\n" << write_case(candidate)
                                << (checked.ok() ? "" : render(checked.error()));
      return HasFailure();
    });
    if (HasFailure()) return;
  }
  EXPECT_GT(candidates, 3000u);
}

TEST(Shrink, ReduceCandidatesAreValidExceptForEmptyFibresAndInference) {
  std::size_t candidates = 0, valid = 0;
  for (std::uint64_t i = 0; i < 300; ++i) {
    SeededChoices s(Rng::mix(4, i));
    const Case c = generate_reduce(s);
    for_each_shrink_candidate(c, [&](Case&& candidate) {
      ++candidates;
      auto checked = check_case(candidate, Limits{});
      if (checked) {
        ++valid;
        return false;
      }
      // Shortening a reduced axis to 0 or dropping a supplied length may make a case unsolvable.
      const Code code = checked.error().code;
      EXPECT_TRUE(code == Code::emptyFiber || code == Code::cannotInferAxis)
          << "from\n" << write_case(c) << "to\n" << write_case(candidate) << render(checked.error());
      return HasFailure();
    });
    if (HasFailure()) return;
  }
  EXPECT_GT(valid, candidates * 3 / 4);
}

TEST(Shrink, AnAlwaysFailingEinsumShrinksToOneScalarZero) {
  SeededChoices s(17);
  GenOptions o;
  o.max_operands = 6;
  Case c = generate_einsum(s, o);
  for (int i = 0; c.inputs.size() < 3 && i < 100; ++i) c = generate_einsum(s, o);
  const ShrinkResult r = shrink_case(c, [](const Case&) { return true; });
  EXPECT_FALSE(r.exhausted);
  EXPECT_GT(r.steps, 0);
  ASSERT_EQ(r.shrunk.inputs.size(), 1u) << write_case(r.shrunk);
  EXPECT_EQ(r.shrunk.inputs[0].rank(), 0u) << write_case(r.shrunk);
  EXPECT_EQ(r.shrunk.pattern, "->");
  EXPECT_EQ(format_value(r.shrunk.inputs[0], 0).find('-'), std::string::npos);  // +0, +0.0 or 0
}

TEST(Shrink, AnAlwaysFailingReduceShrinksToAFewElements) {
  for (std::uint64_t i = 0; i < 20; ++i) {
    SeededChoices s(Rng::mix(9, i));
    const Case c = generate_reduce(s);
    const ShrinkResult r = shrink_case(c, [](const Case& x) { return check_case(x, Limits{}).ok(); });
    EXPECT_TRUE(check_case(r.shrunk, Limits{}).ok());
    EXPECT_LE(elements(r.shrunk), 1) << write_case(c) << "->\n" << write_case(r.shrunk);
  }
}

TEST(Shrink, KeepsWhatThePredicateNeedsAndSimplifiesTheRest) {
  // "some output element is NaN": one NaN input survives, everything else goes.
  Case c = einsum_case("batch i, i j -> batch j",
                       {Tensor(Shape{2, 3}, std::vector<double>{1.5, -2, 7, 0.25, 3, 1e300}),
                        Tensor(Shape{3, 2}, std::vector<double>{4, std::numeric_limits<double>::quiet_NaN(), -0.0, 5, 6, 7})});
  std::uint64_t payload = 0x7ff8000000000123ULL;
  std::memcpy(&c.inputs[1].values<double>()[1], &payload, sizeof payload);
  auto fused = make_fused_backend({});
  const auto output_has_nan = [&](const Case& x) {
    auto checked = check_case(x, Limits{});
    if (!checked) return false;
    const Tensor out = evaluate_reference(*checked, x.inputs);
    for (double v : out.values<double>())
      if (std::isnan(v)) return true;
    return false;
  };
  const ShrinkResult r = shrink_case(c, output_has_nan);
  EXPECT_TRUE(output_has_nan(r.shrunk));
  EXPECT_LE(r.shrunk.inputs.size(), 1u) << write_case(r.shrunk);
  EXPECT_EQ(elements(r.shrunk), 1) << write_case(r.shrunk);
  EXPECT_EQ(format_value(r.shrunk.inputs[0], 0), "nan");  // the payload went, the NaN stayed
  EXPECT_EQ(r.shrunk.pattern, "->");
}

TEST(Shrink, MergesLabelsAndShortensNames) {
  // "the pattern has a diagonal": needs one repeated label; names become single letters.
  Case c = einsum_case("batch head, head batch, x -> x",
                       {Tensor(DType::f64, Shape{2, 2}), Tensor(DType::f64, Shape{2, 2}), Tensor(DType::f64, Shape{3})});
  const auto has_diagonal = [](const Case& x) {
    auto checked = check_case(x, Limits{});
    if (!checked) return false;
    for (const CheckedOperand& op : std::get<CheckedEinsum>(*checked).operands) {
      if (std::set<int>(op.axes.begin(), op.axes.end()).size() < op.axes.size()) return true;
    }
    return false;
  };
  const ShrinkResult r = shrink_case(c, has_diagonal);
  EXPECT_EQ(r.shrunk.pattern, "a a ->") << write_case(r.shrunk);
  EXPECT_EQ(elements(r.shrunk), 0);  // a 0x0 diagonal is still a diagonal
}

TEST(Shrink, SmallerCaseIsAStrictOrder) {
  const Case a = einsum_case("i ->", {Tensor(Shape{2}, std::vector<double>{1, 2})});
  Case b = a;
  b.inputs[0].values<double>()[1] = 0;
  EXPECT_TRUE(smaller_case(b, a));
  EXPECT_FALSE(smaller_case(a, b));
  EXPECT_FALSE(smaller_case(a, a));
}

TEST(Shrink, RejectedCasesShrinkTheirInputsAndText) {
  // Reference rejects (incompatibleEinsumBroadcast); predicate: still rejected with that code.
  const Case c = einsum_case("i, i -> i", {Tensor(Shape{2}, std::vector<double>{1, 2}),
                                           Tensor(Shape{3}, std::vector<double>{3, 4, 5})});
  const auto still = [](const Case& x) {
    auto checked = check_case(x, Limits{});
    return !checked && checked.error().code == Code::incompatibleEinsumBroadcast;
  };
  const ShrinkResult r = shrink_case(c, still);
  EXPECT_TRUE(still(r.shrunk));
  EXPECT_LT(elements(r.shrunk), 5);
  for (const Tensor& t : r.shrunk.inputs)
    for (double v : t.values<double>()) EXPECT_EQ(v, 0.0);
}

}  // namespace
}  // namespace einfuzz
