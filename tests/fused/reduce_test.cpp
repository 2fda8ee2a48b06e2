// Fused reduce: bitwise equal to the reference on random cases (threads 1..3, any chunking), one
// compiled plan reusable across inputs, equal
// to the einsum that expresses a sum (and a mean = that sum / n), identities on empty fibres,
// wrapping integers, and the §9 task policy on a large input.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/fused/reduce.hpp"
#include "einfuzz/reference/einsum.hpp"
#include "einfuzz/reference/reduce.hpp"
#include "support/compare.hpp"
#include "support/reduce_gen.hpp"
#include "support/values_text.hpp"

namespace einfuzz {
namespace {

Result<CheckedReduce> check(const test::ReduceCase& c) {
  return check_reduce(c.pattern, reduction_name(c.kind), c.shape, c.axis_lengths, c.dtype);
}

CheckedReduce ok(std::string_view pattern, std::string_view kind, const Shape& shape, DType dtype = DType::f64) {
  auto r = check_reduce(pattern, kind, shape, {}, dtype);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : render(r.error()));
  return r.ok() ? *r : CheckedReduce{};
}

fused::ExecOptions with(unsigned threads, unsigned tasks = 0) {
  fused::ExecOptions options;
  options.threads = threads;
  options.tasks = tasks;
  return options;
}

RC_GTEST_PROP(FusedReduceProperty, EqualsTheReferenceBitwise, ()) {
  Rng rng(*rc::gen::arbitrary<std::uint64_t>());
  const test::ReduceCase c = test::generate_reduce_case(rng);
  auto r = check(c);
  if (!r.ok()) RC_FAIL(c.describe() + ": " + render(r.error()));
  const Tensor expected = reference::evaluate_reduce(*r, c.input);
  RC_ASSERT(expected.dtype() == c.dtype);
  RC_ASSERT(expected.shape() == r->output_shape);
  const auto options = with(*rc::gen::inRange(1u, 4u), *rc::gen::inRange(0u, 6u));
  // Same operations in the same order: even NaN payloads agree.
  const auto same = test::bitwise_same(expected, fused::execute_reduce(*r, c.input, options), true);
  if (!same) RC_FAIL(c.describe() + " threads " + std::to_string(options.threads) + " tasks " +
                     std::to_string(options.tasks) + ": " + same.message());
}

// A plan depends on the checked reduce only: executed on two inputs of the checked shape, it gives
// what two one-shot calls give, even when the second input follows the first.
RC_GTEST_PROP(FusedReduceProperty, OnePlanOnTwoInputsEqualsTwoOneShotCalls, ()) {
  Rng rng(*rc::gen::arbitrary<std::uint64_t>());
  const test::ReduceCase c = test::generate_reduce_case(rng);
  auto r = check(c);
  if (!r.ok()) RC_FAIL(c.describe() + ": " + render(r.error()));
  const Tensor second = test::random_values(rng, c.dtype, c.input.shape());
  const auto options = with(*rc::gen::inRange(1u, 4u), *rc::gen::inRange(0u, 6u));
  const fused::ReducePlan plan = fused::compile(*r);
  for (const Tensor* x : {&c.input, &second}) {
    const auto same = test::bitwise_same(fused::execute_reduce(*r, *x, options), fused::execute(plan, *x, options), true);
    if (!same) RC_FAIL(c.describe() + (x == &second ? " (second input)" : " (first input)") + ": " + same.message());
  }
}

// Free-form sides (not the generator's layouts): whatever the checker accepts, both evaluate alike.
RC_GTEST_PROP(FusedReduceProperty, AnyAcceptedFreeFormPatternEvaluatesAlike, ()) {
  const auto side = rc::gen::map(
      rc::gen::resize(7, rc::gen::container<std::vector<std::string>>(
                             rc::gen::element<std::string>("a", "b", "c", "2", "1", "()", "(", ")", "...", " "))),
      [](const std::vector<std::string>& v) {
        std::string s;
        for (const auto& piece : v) s += piece + (piece == "(" ? "" : " ");
        return s;
      });
  const std::string pattern = *side + "->" + *side;
  const Shape shape = *rc::gen::resize(5, rc::gen::container<Shape>(rc::gen::inRange<std::int64_t>(0, 5)));
  std::vector<std::pair<std::string, std::int64_t>> lengths;
  for (const char* name : {"a", "b", "c"}) {
    if (*rc::gen::inRange(0, 3) == 0) lengths.emplace_back(name, *rc::gen::inRange<std::int64_t>(0, 5));
  }
  const auto kind = static_cast<Reduction>(*rc::gen::inRange(0, 7));
  const DType dtype = *rc::gen::element(DType::f32, DType::f64, DType::i32, DType::i64, DType::boolean);
  auto r = check_reduce(pattern, reduction_name(kind), shape, lengths, dtype);
  RC_CLASSIFY(r.ok());
  if (!r.ok()) return;
  Rng rng(*rc::gen::arbitrary<std::uint64_t>());
  const Tensor x = test::random_values(rng, dtype, shape);
  const auto same = test::bitwise_same(reference::evaluate_reduce(*r, x),
                                       fused::execute_reduce(*r, x, with(*rc::gen::inRange(1u, 4u), 3)), true);
  if (!same) RC_FAIL(pattern + " " + std::string(reduction_name(kind)) + " on " + format_shape(shape) + ": " +
                     same.message());
}

/// Reduce patterns without groups, anonymous or unit axes are einsum patterns with the same
/// meaning: same output order, contracted axes in input order, `0 + 1·x` = `0 + x` bitwise.
test::ReduceCase einsum_expressible(Rng& rng, Reduction kind) {
  test::ReduceGenOptions o;
  o.composite = false;
  o.anonymous = false;
  o.units = false;
  o.kind = kind;
  return test::generate_reduce_case(rng, o);
}

Tensor einsum_sum(const test::ReduceCase& c) {
  const std::vector<Shape> shapes{c.shape};
  auto e = check_einsum(c.pattern, shapes);
  if (!e.ok()) {
    ADD_FAILURE() << c.describe() << ": " << render(e.error());
    return {};
  }
  const std::vector<Tensor> inputs{c.input};
  return reference::evaluate_einsum(*e, inputs);
}

RC_GTEST_PROP(FusedReduceProperty, SumEqualsTheEinsumThatExpressesIt, ()) {
  Rng rng(*rc::gen::arbitrary<std::uint64_t>());
  const test::ReduceCase c = einsum_expressible(rng, Reduction::sum);
  auto r = check(c);
  if (!r.ok()) RC_FAIL(c.describe() + ": " + render(r.error()));
  const Tensor expected = einsum_sum(c);
  for (const Tensor& actual : {reference::evaluate_reduce(*r, c.input),
                               fused::execute_reduce(*r, c.input, with(*rc::gen::inRange(1u, 4u), 2))}) {
    const auto same = test::bitwise_same(expected, actual);
    if (!same) RC_FAIL(c.describe() + ": " + same.message());
  }
}

RC_GTEST_PROP(FusedReduceProperty, MeanEqualsTheEinsumSumDividedOnceByN, ()) {
  Rng rng(*rc::gen::arbitrary<std::uint64_t>());
  const test::ReduceCase c = einsum_expressible(rng, Reduction::mean);
  auto r = check(c);
  if (!r.ok()) RC_FAIL(c.describe() + ": " + render(r.error()));
  RC_ASSERT(r->fibre_size > 0);
  Tensor expected = einsum_sum(c);
  visit_dtype(c.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      for (T& v : expected.values<T>()) v = v / static_cast<T>(r->fibre_size);
    }
  });
  for (const Tensor& actual : {reference::evaluate_reduce(*r, c.input), fused::execute_reduce(*r, c.input)}) {
    const auto same = test::bitwise_same(expected, actual);
    if (!same) RC_FAIL(c.describe() + ": " + same.message());
  }
}

// The generator is the properties' only source of cases: it must reach every construct.
TEST(ReduceGenerator, DrawsValidCasesCoveringEveryConstruct) {
  std::set<Reduction> kinds;
  std::set<DType> dtypes;
  bool empty_fibre = false, empty_output = false, composite = false, anonymous = false, unit = false;
  bool ellipsis = false, flat_ellipsis = false, supplied = false, nan = false, signed_zero = false;
  for (std::uint64_t seed = 0; seed < 1500; ++seed) {
    Rng rng(Rng::mix(seed, 7));
    const test::ReduceCase c = test::generate_reduce_case(rng);
    auto r = check(c);
    ASSERT_TRUE(r.ok()) << c.describe() << ": " << render(r.error());
    ASSERT_TRUE(test::bitwise_same(reference::evaluate_reduce(*r, c.input),
                                   fused::execute_reduce(*r, c.input, with(static_cast<unsigned>(1 + seed % 3), static_cast<unsigned>(seed % 5))), true))
        << c.describe();
    kinds.insert(c.kind);
    dtypes.insert(c.dtype);
    empty_fibre |= r->fibre_size == 0;
    empty_output |= r->output_size == 0;
    const std::string& p = c.pattern;
    composite |= p.find("(a") != std::string::npos || p.find("(b") != std::string::npos;
    anonymous |= p.find('2') != std::string::npos && p.find("k2") == std::string::npos;
    unit |= p.find("()") != std::string::npos || p.find(" 1") != std::string::npos;
    ellipsis |= p.find("...") != std::string::npos;
    flat_ellipsis |= p.find("(...") != std::string::npos;
    supplied |= !c.axis_lengths.empty();
    if (is_float(c.dtype)) {
      visit_dtype(c.dtype, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_floating_point_v<T>) {
          for (T v : c.input.values<T>()) {
            nan |= std::isnan(v);
            signed_zero |= v == 0 && std::signbit(v);
          }
        }
      });
    }
  }
  EXPECT_EQ(kinds.size(), 7u);
  EXPECT_EQ(dtypes.size(), 5u);
  EXPECT_TRUE(empty_fibre && empty_output && composite && anonymous && unit);
  EXPECT_TRUE(ellipsis && flat_ellipsis && supplied && nan && signed_zero);
}

TEST(ReduceGenerator, IsDeterministicInTheSeed) {
  Rng a(42), b(42);
  const auto x = test::generate_reduce_case(a);
  const auto y = test::generate_reduce_case(b);
  EXPECT_EQ(x.describe(), y.describe());
  EXPECT_TRUE(test::bitwise_same(x.input, y.input, true));
}

TEST(FusedReduce, EmptyFibresGiveTheIdentityWithoutReading) {
  for (DType dtype : {DType::f32, DType::f64, DType::i32, DType::i64}) {
    const Tensor input(dtype, Shape{3, 0});
    EXPECT_TRUE(test::bitwise_same(test::tensor_from_text(dtype, {3}, "0,0,0"),
                                   fused::execute_reduce(ok("a b -> a", "sum", {3, 0}, dtype), input)));
    EXPECT_TRUE(test::bitwise_same(test::tensor_from_text(dtype, {3}, "1,1,1"),
                                   fused::execute_reduce(ok("a b -> a", "prod", {3, 0}, dtype), input)));
  }
  const Tensor flags(DType::boolean, Shape{0, 2});
  EXPECT_TRUE(test::bitwise_same(test::tensor_from_text(DType::boolean, {2}, "0,0"),
                                 fused::execute_reduce(ok("a b -> b", "any", {0, 2}, DType::boolean), flags)));
  EXPECT_TRUE(test::bitwise_same(test::tensor_from_text(DType::boolean, {1, 2, 1}, "1,1"),
                                 fused::execute_reduce(ok("a b -> 1 b ()", "all", {0, 2}, DType::boolean), flags)));
  const Tensor empty_out(DType::f64, Shape{0, 5});
  EXPECT_EQ(fused::execute_reduce(ok("a b -> a", "max", {0, 5}), empty_out).shape(), Shape{0});
}

TEST(FusedReduce, IntegersWrap) {
  // Length 2 inputs and rank-0 results, built directly (int64 extremes do not survive a double).
  const auto make = [](auto v) {
    Shape shape = v.size() == 1 ? Shape{} : Shape{2};
    return Tensor(std::move(shape), std::move(v));
  };
  const auto i32 = [&](std::vector<std::int32_t> v) { return make(std::move(v)); };
  const auto i64 = [&](std::vector<std::int64_t> v) { return make(std::move(v)); };
  constexpr std::int32_t kMin32 = std::numeric_limits<std::int32_t>::min();
  constexpr std::int32_t kMax32 = std::numeric_limits<std::int32_t>::max();
  constexpr std::int64_t kMax64 = std::numeric_limits<std::int64_t>::max();
  struct Row {
    const char* kind;
    Tensor input;
    Tensor expected;
  };
  const Row rows[] = {
      {"sum", i32({kMax32, 1}), i32({kMin32})},
      {"prod", i32({65536, 65536}), i32({0})},
      {"prod", i32({65537, 65537}), i32({131073})},
      {"sum", i64({kMax64, 2}), i64({-kMax64})},
      {"prod", i64({std::int64_t{1} << 62, 4}), i64({0})},
      {"prod", i64({std::int64_t{1} << 62, 3}), i64({-(std::int64_t{1} << 62)})},
      {"min", i32({kMin32, kMax32}), i32({kMin32})},
      {"max", i64({-kMax64, 1 - kMax64}), i64({1 - kMax64})},
  };
  for (const Row& row : rows) {
    const CheckedReduce r = ok("a ->", row.kind, {2}, row.input.dtype());
    EXPECT_TRUE(test::bitwise_same(row.expected, fused::execute_reduce(r, row.input))) << row.kind;
    EXPECT_TRUE(test::bitwise_same(row.expected, reference::evaluate_reduce(r, row.input))) << row.kind;
  }
}

TEST(FusedReduce, MeanIsOneDivisionInTheElementType) {
  const Tensor f32 = test::tensor_from_text(DType::f32, {3}, "1,2,4");
  const Tensor expected32(Shape{}, std::vector<float>{7.0f / 3.0f});
  EXPECT_TRUE(test::bitwise_same(expected32, fused::execute_reduce(ok("a ->", "mean", {3}, DType::f32), f32)));
  const Tensor tenths = test::tensor_from_text(DType::f64, {10}, "10*0.1");
  double sum = 0;
  for (int i = 0; i < 10; ++i) sum += 0.1;
  const Tensor expected64(Shape{}, std::vector<double>{sum / 10.0});
  EXPECT_TRUE(test::bitwise_same(expected64, fused::execute_reduce(ok("a ->", "mean", {10}), tenths)));
}

TEST(FusedReduce, CompositeStridesKeepTheLeanTieAndNaNRules) {
  // (a b) -> b reads the fibre of b at flat indices b, b+2: [-0, +0] and [+0, -0].
  const Tensor x = test::tensor_from_text(DType::f64, {4}, "-0,0,0,-0");
  const auto reduce = [&](const char* kind) {
    auto r = check_reduce("(a b) -> b", kind, {4}, std::vector<std::pair<std::string, std::int64_t>>{{"a", 2}},
                          DType::f64);
    EXPECT_TRUE(r.ok());
    return fused::execute_reduce(*r, x, with(2, 2));
  };
  EXPECT_TRUE(test::bitwise_same(test::tensor_from_text(DType::f64, {2}, "-0,0"), reduce("min")));
  EXPECT_TRUE(test::bitwise_same(test::tensor_from_text(DType::f64, {2}, "0,-0"), reduce("max")));
  const Tensor n = test::tensor_from_text(DType::f64, {2, 3}, "nan,1,2,3,nan,1");
  // Fibres over a: [nan,3] [1,nan] [2,1]. max: NaN iff first; min: NaN iff last.
  EXPECT_TRUE(test::bitwise_same(test::tensor_from_text(DType::f64, {3}, "nan,1,2"),
                                 fused::execute_reduce(ok("a b -> b", "max", {2, 3}), n, with(3, 3))));
  EXPECT_TRUE(test::bitwise_same(test::tensor_from_text(DType::f64, {3}, "3,nan,1"),
                                 fused::execute_reduce(ok("a b -> b", "min", {2, 3}), n, with(3, 3))));
}

TEST(FusedReduce, LargeInputsTakeTheParallelPathWithTheSameBits) {
  // 1000 x 1000 = 10^6 units of work: the §9 policy picks several tasks when threads allow.
  Rng rng(1729);
  const Tensor x = test::random_values(rng, DType::f32, {1000, 1000});
  for (const char* pattern : {"a b -> a", "a b -> b", "(a 2) b -> (b a)"}) {
    const CheckedReduce r = ok(pattern, "sum", {1000, 1000}, DType::f32);
    const Tensor expected = reference::evaluate_reduce(r, x);
    EXPECT_TRUE(test::bitwise_same(expected, fused::execute_reduce(r, x, with(3)), true)) << pattern;
    EXPECT_TRUE(test::bitwise_same(expected, fused::execute_reduce(r, x, with(1)), true)) << pattern;
  }
  EXPECT_GT(fused::task_count(1000, 1'000'000, 3), 1u);
}

}  // namespace
}  // namespace einfuzz
