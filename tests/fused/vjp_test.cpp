// fused's ordered VJPs (SEMANTICS §13.8) against the reference's, bit for bit: the hand-derived VJP
// conformance rows, random einsum and reduce VJP cases drawn by the campaign's generator, the plan's
// loop structure, and the fused backend answering VJP cases through run_case.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "einfuzz/core/check_case.hpp"
#include "einfuzz/fused/vjp.hpp"
#include "einfuzz/harness/generate.hpp"
#include "einfuzz/harness/run.hpp"
#include "einfuzz/reference/vjp.hpp"
#include "support/arbitrary_case.hpp"
#include "support/compare.hpp"
#include "support/conformance_rows.hpp"

namespace einfuzz {
namespace {

using test::bitwise_same;

/// The reference's and fused's VJPs of a checked VJP case.
struct BothVjps {
  std::vector<Tensor> reference;
  std::vector<Tensor> fused;
};

BothVjps both_vjps(const Case& c, const CheckedCase& checked) {
  if (const auto* e = std::get_if<CheckedEinsum>(&checked)) {
    return {reference::vjp_einsum(*e, c.inputs, *c.cotangent), fused::vjp_einsum(*e, c.inputs, *c.cotangent)};
  }
  const auto& r = std::get<CheckedReduce>(checked);
  return {{reference::vjp_reduce(r, c.inputs[0], *c.cotangent)}, {fused::vjp_reduce(r, c.inputs[0], *c.cotangent)}};
}

/// A float VJP case of the forward case `c`, its cotangent drawn from the generator's value mixtures.
Case with_cotangent(Case c, ChoiceSource& choices) {
  const auto checked = check_case(c, Limits{});
  if (!checked) return c;  // the caller discards it (the generator draws valid cases only)
  const Shape out = std::visit([](const auto& k) { return k.output_shape; }, *checked);
  c.cotangent = generate_values(choices, c.dtype, out);
  return c;
}

Verdict fused_verdict(const Case& c) {
  RunOptions options;
  auto backend = make_fused_backend(options);
  Backend* backends[] = {backend.get()};
  const CaseOutcome outcome = run_case(c, backends, options);
  EXPECT_EQ(outcome.backends.size(), 1u);
  return outcome.backends.at(0).verdict;
}

class VjpRows : public ::testing::TestWithParam<test::VjpRow> {};

TEST_P(VjpRows, ReferenceAndFusedGiveTheHandDerivedBits) {
  const test::VjpRow& row = GetParam();
  const Case c = test::case_of(row);
  const auto checked = check_case(c, Limits{});
  ASSERT_TRUE(checked) << render(checked.error());
  const std::vector<Tensor> expected = test::expected_gradients(row);
  const BothVjps got = both_vjps(c, *checked);
  ASSERT_EQ(got.reference.size(), expected.size());
  ASSERT_EQ(got.fused.size(), expected.size());
  for (std::size_t k = 0; k < expected.size(); ++k) {
    EXPECT_TRUE(bitwise_same(expected[k], got.reference[k])) << "reference, input " << k;
    EXPECT_TRUE(bitwise_same(expected[k], got.fused[k])) << "fused, input " << k;
  }
  EXPECT_EQ(fused_verdict(c).kind, VerdictKind::pass_bitwise);
}

INSTANTIATE_TEST_SUITE_P(Docs, VjpRows, ::testing::ValuesIn(test::vjp_rows()), test::RowId{});

// Random einsums of the campaign's generator (broadcasting, diagonals, ellipses, zero-length axes,
// scalar operands) with f32/f64 values and cotangents from the mixtures (±0, ±Inf, NaN payloads,
// subnormals, cancellation): every operand's cotangent bit for bit, NaN payloads included.
RC_GTEST_PROP(FusedVjp, EinsumEqualsTheReferenceBitwise, ()) {
  const Case c = *rc::gen::exec([] {
    test::RapidCheckChoices choices;
    GenOptions options = test::arbitrary_case_options();
    options.dtypes = {DType::f32, DType::f64};
    options.long_axis_percent = 20;  // long free loops: thousands of terms per element
    return with_cotangent(generate_einsum(choices, options), choices);
  });
  RC_PRE(c.is_vjp());
  const auto checked = check_case(c, Limits{});
  RC_ASSERT(static_cast<bool>(checked));
  const auto& e = std::get<CheckedEinsum>(*checked);
  RC_CLASSIFY(std::any_of(e.operands.begin(), e.operands.end(),
                          [&](const CheckedOperand& op) {
                            for (std::size_t d = 0; d < op.shape.size(); ++d)
                              if (op.shape[d] == 1 && e.axes[static_cast<std::size_t>(op.axes[d])].length > 1) return true;
                            return false;
                          }),
              "size-1 broadcast");
  RC_CLASSIFY(std::any_of(e.operands.begin(), e.operands.end(),
                          [](const CheckedOperand& op) {
                            for (std::size_t d = 0; d < op.axes.size(); ++d)
                              for (std::size_t d2 = d + 1; d2 < op.axes.size(); ++d2)
                                if (op.axes[d] == op.axes[d2]) return true;
                            return false;
                          }),
              "diagonal");
  RC_CLASSIFY(e.output_size * e.contraction_size == 0, "empty axis");
  RC_CLASSIFY(c.pattern.find("...") != std::string::npos, "ellipsis");
  const BothVjps got = both_vjps(c, *checked);
  RC_ASSERT(got.fused.size() == got.reference.size());
  for (std::size_t k = 0; k < got.fused.size(); ++k) {
    const auto same = bitwise_same(got.reference[k], got.fused[k], /*strict_nan=*/true);
    RC_ASSERT_FALSE(!same);
  }
}

// Contiguous chunks of the reached elements on threads (2–4 tasks, including more tasks than
// elements) give the single-task bits.
RC_GTEST_PROP(FusedVjp, EinsumChunksDoNotChangeABit, ()) {
  const Case c = *rc::gen::exec([] {
    test::RapidCheckChoices choices;
    GenOptions options = test::arbitrary_case_options();
    options.dtypes = {DType::f32, DType::f64};
    return with_cotangent(generate_einsum(choices, options), choices);
  });
  RC_PRE(c.is_vjp());
  const auto tasks = *rc::gen::inRange(2u, 5u);
  const auto checked = check_case(c, Limits{});
  RC_ASSERT(static_cast<bool>(checked));
  const auto& e = std::get<CheckedEinsum>(*checked);
  const auto one = fused::vjp_einsum(e, c.inputs, *c.cotangent, fused::ExecOptions{1, 8, 0});
  const auto chunked = fused::vjp_einsum(e, c.inputs, *c.cotangent, fused::ExecOptions{tasks, 8, tasks});
  for (std::size_t k = 0; k < one.size(); ++k) {
    const auto same = bitwise_same(one[k], chunked[k], /*strict_nan=*/true);
    RC_ASSERT_FALSE(!same);
  }
}

// Random reduces of every differentiable kind, f32 and f64 (compositions, unit axes, anonymous
// factors, ellipses, empty fibres for sum/prod).
RC_GTEST_PROP(FusedVjp, ReduceEqualsTheReferenceBitwise, ()) {
  const Case c = *rc::gen::exec([] {
    test::RapidCheckChoices choices;
    static constexpr Reduction kKinds[] = {Reduction::sum, Reduction::mean, Reduction::prod, Reduction::min,
                                           Reduction::max};
    ReduceGenOptions options = test::arbitrary_case_options().reduce;
    options.kind = kKinds[choices.choose(5)];
    options.dtype = choices.choose(2) == 0 ? DType::f32 : DType::f64;
    return with_cotangent(generate_reduce(choices, options), choices);
  });
  RC_PRE(c.is_vjp());
  const auto checked = check_case(c, Limits{});
  RC_ASSERT(static_cast<bool>(checked));
  RC_TAG(c.reduction.value_or(""), c.dtype == DType::f32 ? "f32" : "f64");
  const BothVjps got = both_vjps(c, *checked);
  const auto same = bitwise_same(got.reference.at(0), got.fused.at(0), /*strict_nan=*/true);
  RC_ASSERT_FALSE(!same);
}

// The same cases through the run boundary: the fused backend answers with Gradients and the
// ordered VJP judge says pass(bitwise).
RC_GTEST_PROP(FusedVjp, FusedBackendPassesBitwiseThroughRunCase, ()) {
  const Case c = *rc::gen::exec([] {
    test::RapidCheckChoices choices;
    GenOptions options = test::arbitrary_case_options();
    options.dtypes = {DType::f32, DType::f64};
    options.reduce.dtype = choices.choose(2) == 0 ? DType::f32 : DType::f64;
    static constexpr Reduction kKinds[] = {Reduction::sum, Reduction::mean, Reduction::prod, Reduction::min,
                                           Reduction::max};
    options.reduce.kind = kKinds[choices.choose(5)];
    Case forward = choices.choose(2) == 0 ? generate_einsum(choices, options) : generate_reduce(choices, options.reduce);
    return with_cotangent(std::move(forward), choices);
  });
  RC_PRE(c.is_vjp());
  const Verdict v = fused_verdict(c);
  RC_ASSERT(v.kind == VerdictKind::pass_bitwise);
}

TEST(FusedVjp, BackendDeclaresOrderedVjpsWithEqualShareTies) {
  auto backend = make_fused_backend(RunOptions{});
  EXPECT_TRUE(backend->capabilities().vjp);
  EXPECT_EQ(backend->capabilities().tie_rule, TieRule::equal_share);
  Case c = test::case_of(test::vjp_rows().front());
  EXPECT_TRUE(backend->supports(c));
  const BackendResult result = backend->run(c);
  ASSERT_TRUE(std::holds_alternative<Gradients>(result));
  EXPECT_EQ(std::get<Gradients>(result).tensors.size(), c.inputs.size());
}

TEST(FusedVjp, IntegerVjpIsRejectedAsNotDifferentiable) {
  Case c;
  c.pattern = "a b -> a";
  c.dtype = DType::i32;
  c.inputs.emplace_back(DType::i32, Shape{2, 2});
  c.cotangent = Tensor(DType::i32, Shape{2});
  auto backend = make_fused_backend(RunOptions{});
  const BackendResult result = backend->run(c);
  ASSERT_TRUE(std::holds_alternative<Rejected>(result));
  EXPECT_EQ(std::get<Rejected>(result).code, "notDifferentiable");
}

// Operand 0 of `i j, i j -> i j` with x of shape 1×3: j names x's element (bound), i is x's size-1
// broadcast axis (free); operand 0 of `a b, a b ->` on 1×1, 2×3: a and b are free and walked as one
// progression by y (strides 3, 1) and g (0, 0), so they merge into one loop of 6.
TEST(FusedVjp, PlanSplitsBoundFromFreeAxesAndMergesProgressions) {
  const auto broadcast = check_einsum("i j, i j -> i j", std::vector<Shape>{{1, 3}, {2, 3}});
  ASSERT_TRUE(broadcast);
  const fused::EinsumVjpPlan p = fused::compile_vjp(*broadcast, 0);
  ASSERT_EQ(p.bound.size(), 1u);
  EXPECT_EQ(p.bound[0].length, 3);
  EXPECT_EQ(p.bound[0].target_stride, 1);
  ASSERT_EQ(p.free.size(), 1u);
  EXPECT_EQ(p.free[0].length, 2);
  EXPECT_EQ(p.free[0].strides, (std::vector<std::int64_t>{3, 3}));  // y's i stride, g's i stride

  const auto total = check_einsum("a b, a b ->", std::vector<Shape>{{1, 1}, {2, 3}});
  ASSERT_TRUE(total);
  const fused::EinsumVjpPlan q = fused::compile_vjp(*total, 0);
  EXPECT_TRUE(q.bound.empty());
  ASSERT_EQ(q.free.size(), 1u);
  EXPECT_EQ(q.free[0].length, 6);
  EXPECT_EQ(q.free[0].strides, (std::vector<std::int64_t>{1, 0}));

  const auto diagonal = check_einsum("i i j -> j", std::vector<Shape>{{3, 3, 2}});
  ASSERT_TRUE(diagonal);
  const fused::EinsumVjpPlan d = fused::compile_vjp(*diagonal, 0);
  ASSERT_EQ(d.bound.size(), 2u);
  EXPECT_EQ(d.bound[0].target_stride, 6 + 2);  // i's two dimensions: only the diagonal is written
  EXPECT_TRUE(d.free.empty());
}

// A zero-length axis anywhere: no assignment reaches any element, so a non-empty operand's
// cotangent is all +0 and nothing is read (the plan computes no strides).
TEST(FusedVjp, ZeroLengthAxisGivesPositiveZerosAndReadsNothing) {
  const auto e = check_einsum("i j, j k -> i k", std::vector<Shape>{{2, 3}, {3, 0}});
  ASSERT_TRUE(e);
  const fused::EinsumVjpPlan p = fused::compile_vjp(*e, 0);
  EXPECT_TRUE(p.empty);
  const std::vector<Tensor> inputs = {Tensor(Shape{2, 3}, std::vector<double>(6, -1.0)), Tensor(DType::f64, Shape{3, 0})};
  const Tensor g(DType::f64, Shape{2, 0});
  const Tensor grad = fused::execute_vjp(p, inputs, g);
  EXPECT_TRUE(bitwise_same(Tensor(DType::f64, Shape{2, 3}), grad, /*strict_nan=*/true));
}

}  // namespace
}  // namespace einfuzz
