// The any-order VJP judge (ORACLE §7) on hand-worked cases: correct answers pass, the planted wrong
// answers of issue 13 (division for prod at a zero, the whole g to the first tie under equal-share,
// mean without 1/n, an off-diagonal write, a size-1 broadcast ignored) are mismatches, and the tie
// rules, NaN fibres, non-finite cotangents and wrong tensor counts get their verdicts.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "einfuzz/harness/run.hpp"
#include "harness/oracle_vjp_support.hpp"

namespace einfuzz {
namespace {

using namespace vjp_test;

constexpr VjpJudgeOptions kOne{false, TieRule::one};
constexpr VjpJudgeOptions kAll{false, TieRule::all};

// "a b, b c -> a c": dA = g·Bᵀ, dB = Aᵀ·g. A = [[1,2],[3,4]], B = [[5,6],[7,8]], g = ones:
// dA[a][b] = Σ_c B[b][c] = [[11,15],[11,15]]; dB[b][c] = Σ_a A[a][b] = [[4,4],[6,6]].
TEST(OracleVjp, MatmulAnswerPassesAndAWrongElementIsAMismatch) {
  const std::vector<Tensor> x = {f64({2, 2}, "1, 2, 3, 4"), f64({2, 2}, "5, 6, 7, 8")};
  const Tensor g = f64({2, 2}, "4*1");
  const Verdict ok = judge_einsum("a b, b c -> a c", x, g, {f64({2, 2}, "11, 15, 11, 15"), f64({2, 2}, "4, 4, 6, 6")});
  EXPECT_EQ(ok.kind, VerdictKind::pass) << explain(ok);
  const Verdict bad = judge_einsum("a b, b c -> a c", x, g, {f64({2, 2}, "11, 15, 11, 15"), f64({2, 2}, "4, 4, 6, 7")});
  ASSERT_EQ(bad.kind, VerdictKind::mismatch_value) << explain(bad);
  EXPECT_EQ(bad.first->gradient_of, 1);
  EXPECT_EQ(bad.first->flat_index, 3);
}

// "i i ->" (trace): the cotangent is g on the diagonal; off it no assignment reaches the element
// (K = 0): +0 exactly, -0 a note, anything else a mismatch.
TEST(OracleVjp, TraceWritingOffTheDiagonalIsAMismatch) {
  const std::vector<Tensor> x = {f64({2, 2}, "1, 2, 3, 4")};
  const Tensor g = f64({}, "1");
  const auto truth = reference::multiset_vjp_einsum(checked_einsum("i i ->", x), x, g);
  EXPECT_EQ(truth.inputs.at(0).elements.at(1).terms, 0);
  EXPECT_EQ(truth.inputs.at(0).elements.at(3).terms, 1);
  EXPECT_EQ(judge_einsum("i i ->", x, g, {f64({2, 2}, "1, 0, 0, 1")}).kind, VerdictKind::pass);
  EXPECT_EQ(judge_einsum("i i ->", x, g, {f64({2, 2}, "1, -0, 0, 1")}).kind, VerdictKind::note_signed_zero);
  const Verdict off = judge_einsum("i i ->", x, g, {f64({2, 2}, "1, 1, 1, 1")});
  EXPECT_EQ(off.kind, VerdictKind::mismatch_special) << explain(off);
  EXPECT_EQ(off.reason, "empty-contraction");
}

// "j, j ->" with x of shape [1] broadcast against y = [1, 2, 4]: dx[0] sums over the three
// assignments (K = 3): 1 + 2 + 4 = 7; an answer ignoring the broadcast (y[0] only) is wrong.
TEST(OracleVjp, IgnoringASizeOneBroadcastIsAMismatch) {
  const std::vector<Tensor> x = {f64({1}, "2"), f64({3}, "1, 2, 4")};
  const Tensor g = f64({}, "1");
  const auto truth = reference::multiset_vjp_einsum(checked_einsum("j, j ->", x), x, g);
  EXPECT_EQ(truth.inputs.at(0).elements.at(0).terms, 3);
  EXPECT_EQ(judge_einsum("j, j ->", x, g, {f64({1}, "7"), f64({3}, "3*2")}).kind, VerdictKind::pass);
  const Verdict ignored = judge_einsum("j, j ->", x, g, {f64({1}, "1"), f64({3}, "3*2")});
  EXPECT_EQ(ignored.kind, VerdictKind::mismatch_value) << explain(ignored);
}

// "i, j -> i" with an empty j: no assignment reaches any element of x's cotangent: +0 exactly.
TEST(OracleVjp, EmptyAxisCotangentIsPlusZero) {
  const std::vector<Tensor> x = {f64({2}, "1, inf"), f64({0}, "")};
  const Tensor g = f64({2}, "nan, 1");
  EXPECT_EQ(judge_einsum("i, j -> i", x, g, {f64({2}, "0, 0"), f64({0}, "")}).kind, VerdictKind::pass);
  EXPECT_EQ(judge_einsum("i, j -> i", x, g, {f64({2}, "-0, 0"), f64({0}, "")}).kind, VerdictKind::note_signed_zero);
  EXPECT_EQ(judge_einsum("i, j -> i", x, g, {f64({2}, "nan, 0"), f64({0}, "")}).kind, VerdictKind::mismatch_special);
}

// sum: a copy of g; a different sign of zero is a note, any other difference a mismatch.
TEST(OracleVjp, SumIsAnExactCopy) {
  const Tensor x = f64({2, 2}, "1, 2, 3, 4");
  const Tensor g = f64({2}, "-0, 3");
  EXPECT_EQ(judge_reduce("a b -> a", "sum", x, g, {f64({2, 2}, "-0, -0, 3, 3")}).kind, VerdictKind::pass);
  EXPECT_EQ(judge_reduce("a b -> a", "sum", x, g, {f64({2, 2}, "0, -0, 3, 3")}).kind, VerdictKind::note_signed_zero);
  const Verdict off = judge_reduce("a b -> a", "sum", x, g, {f64({2, 2}, "-0, -0, 3, 3.0000000000000004")});
  EXPECT_EQ(off.kind, VerdictKind::mismatch_value) << explain(off);
}

// mean over 4: g/4 = 0.25 within γ_3·0.25 + η (one ulp of 0.25 is 2^-54 < γ_3/4); g itself
// (mean without 1/n) is a mismatch.
TEST(OracleVjp, MeanWithoutOneOverNIsAMismatch) {
  const Tensor x = f64({4}, "1, 2, 3, 4");
  const Tensor g = f64({}, "1");
  EXPECT_EQ(judge_reduce("a ->", "mean", x, g, {f64({4}, "4*0.25")}).kind, VerdictKind::pass);
  const Tensor near = f64({4}, "0.25, 0.25, 0.25, 0.25000000000000006");
  EXPECT_EQ(judge_reduce("a ->", "mean", x, g, {near}).kind, VerdictKind::pass);
  const Verdict planted = judge_reduce("a ->", "mean", x, g, {f64({4}, "4*1")});
  EXPECT_EQ(planted.kind, VerdictKind::mismatch_value) << explain(planted);
}

// prod of [2, 0, 3], g = 1: leave-one-out [0, 6, 0]; dividing Π = 0 by x gives NaN at the zero.
// With two zeros every leave-one-out product is 0, and division gives NaN at both.
TEST(OracleVjp, ProdByDivisionAtAZeroIsAMismatch) {
  const Tensor g = f64({}, "1");
  const Tensor one_zero = f64({3}, "2, 0, 3");
  EXPECT_EQ(judge_reduce("a ->", "prod", one_zero, g, {f64({3}, "0, 6, 0")}).kind, VerdictKind::pass);
  const Verdict divided = judge_reduce("a ->", "prod", one_zero, g, {f64({3}, "0, nan, 0")});
  EXPECT_EQ(divided.kind, VerdictKind::mismatch_special) << explain(divided);
  const Tensor two_zeros = f64({3}, "0, 0, 3");
  EXPECT_EQ(judge_reduce("a ->", "prod", two_zeros, g, {f64({3}, "0, 0, 0")}).kind, VerdictKind::pass);
  EXPECT_EQ(judge_reduce("a ->", "prod", two_zeros, g, {f64({3}, "nan, nan, 0")}).kind, VerdictKind::mismatch_special);
}

// f32 prod of [2^100, 2^100, 2^-100], g = 1: the full product 2^100 is finite, but for the last
// element the leave-one-out product 2^200 overflows: not certified, so indeterminate, never a pass
// by luck or a mismatch. For the first two the leave-one-out product is 1.
TEST(OracleVjp, ProdLeaveOneOutOverflowIsIndeterminate) {
  const Tensor x = f32({3}, "0x1p100, 0x1p100, 0x1p-100");
  const Tensor g = f32({}, "1");
  const Verdict v = judge_reduce("a ->", "prod", x, g, {f32({3}, "1, 1, inf")});
  EXPECT_EQ(v.kind, VerdictKind::indeterminate) << explain(v);
  EXPECT_EQ(v.reason, "overflow-possible");
  EXPECT_EQ(judge_reduce("a ->", "prod", x, g, {f32({3}, "1, 2, inf")}).kind, VerdictKind::mismatch_value);
}

// max of [1, 3, 3], g = 2: T = {1, 2}. equal-share gives each 1; the whole g to the first tie is
// wrong there, right under rule one; rule all gives both 2.
TEST(OracleVjp, TieRules) {
  const Tensor x = f64({3}, "1, 3, 3");
  const Tensor g = f64({}, "2");
  EXPECT_EQ(judge_reduce("a ->", "max", x, g, {f64({3}, "0, 1, 1")}).kind, VerdictKind::pass);
  EXPECT_EQ(judge_reduce("a ->", "max", x, g, {f64({3}, "-0, 1, 1")}).kind, VerdictKind::pass);
  const Verdict first = judge_reduce("a ->", "max", x, g, {f64({3}, "0, 2, 0")});
  EXPECT_EQ(first.kind, VerdictKind::mismatch_value) << explain(first);
  EXPECT_EQ(judge_reduce("a ->", "max", x, g, {f64({3}, "1, 1, 1")}).kind, VerdictKind::mismatch_value);

  EXPECT_EQ(judge_reduce("a ->", "max", x, g, {f64({3}, "0, 2, 0")}, kOne).kind, VerdictKind::pass);
  EXPECT_EQ(judge_reduce("a ->", "max", x, g, {f64({3}, "0, 0, 2")}, kOne).kind, VerdictKind::pass);
  EXPECT_EQ(judge_reduce("a ->", "max", x, g, {f64({3}, "0, 2, 2")}, kOne).kind, VerdictKind::mismatch_value);
  EXPECT_EQ(judge_reduce("a ->", "max", x, g, {f64({3}, "0, 0, 0")}, kOne).kind, VerdictKind::mismatch_value);
  EXPECT_EQ(judge_reduce("a ->", "max", x, g, {f64({3}, "0, 1, 1")}, kOne).kind, VerdictKind::mismatch_value);
  EXPECT_EQ(judge_reduce("a ->", "max", x, g, {f64({3}, "2, 0, 2")}, kOne).kind, VerdictKind::mismatch_value);

  // Both tie elements wrong and neither got g: two failing elements, each counted once.
  const Verdict neither = judge_reduce("a ->", "max", x, g, {f64({3}, "0, 1, 1")}, kOne);
  EXPECT_EQ(neither.differing, 2) << explain(neither);
  EXPECT_EQ(judge_reduce("a ->", "max", x, g, {f64({3}, "0, 2, 2")}, kAll).kind, VerdictKind::pass);
  EXPECT_EQ(judge_reduce("a ->", "max", x, g, {f64({3}, "0, 2, 0")}, kAll).kind, VerdictKind::mismatch_value);
}

// min of [-0, +0, 1]: both zeros are IEEE == the extreme, so T has two elements, each gets g/2.
TEST(OracleVjp, ZeroTieSharesAcrossBothSigns) {
  const Tensor x = f64({3}, "-0, 0, 1");
  const Tensor g = f64({}, "3");
  EXPECT_EQ(judge_reduce("a ->", "min", x, g, {f64({3}, "1.5, 1.5, 0")}).kind, VerdictKind::pass);
  EXPECT_EQ(judge_reduce("a ->", "min", x, g, {f64({3}, "3, 0, 0")}).kind, VerdictKind::mismatch_value);
}

// A fibre whose forward result is NaN has no agreed rule: any answer there is indeterminate(nan-tie);
// the other fibres are still judged.
TEST(OracleVjp, NanFibreIsIndeterminate) {
  const Tensor x = f64({2, 2}, "1, nan, 5, 2");
  const Tensor g = f64({2}, "1, 1");
  const Verdict v = judge_reduce("a b -> a", "max", x, g, {f64({2, 2}, "7, 7, 1, 0")});
  EXPECT_EQ(v.kind, VerdictKind::indeterminate) << explain(v);
  EXPECT_EQ(v.reason, "nan-tie");
  EXPECT_EQ(v.indeterminate, 2);
  EXPECT_EQ(judge_reduce("a b -> a", "max", x, g, {f64({2, 2}, "7, 7, 0, 1")}).kind, VerdictKind::mismatch_value);
}

// Under the `ignore` NaN profile a fibre's result is the extreme of its numbers (ORACLE §5), so a
// fibre holding NaN and numbers has a tie set to judge; only an all-NaN fibre is indeterminate.
TEST(OracleVjp, UnderIgnoreAFibreWithNanAndNumbersIsJudged) {
  const VjpJudgeOptions ignore{false, TieRule::equal_share, NanProfile::ignore};
  const Tensor x = f64({3}, "nan, 1, 3");
  const Tensor g = f64({}, "1");
  EXPECT_EQ(judge_reduce("a ->", "max", x, g, {f64({3}, "0, 0, 1")}, ignore).kind, VerdictKind::pass);
  const Verdict to_nan = judge_reduce("a ->", "max", x, g, {f64({3}, "1, 0, 0")}, ignore);
  EXPECT_EQ(to_nan.kind, VerdictKind::mismatch_value) << explain(to_nan);
  EXPECT_EQ(judge_reduce("a ->", "max", x, g, {f64({3}, "0, 1, 1")}, ignore).kind, VerdictKind::mismatch_value);
  // min's extreme is found past a leading NaN too: T = {1}.
  EXPECT_EQ(judge_reduce("a ->", "min", x, g, {f64({3}, "0, 1, 0")}, ignore).kind, VerdictKind::pass);
  EXPECT_EQ(judge_reduce("a ->", "min", x, g, {f64({3}, "0, 0, 1")}, ignore).kind, VerdictKind::mismatch_value);
  // Under propagate the same fibre's result is NaN: no agreed rule.
  EXPECT_EQ(judge_reduce("a ->", "max", x, g, {f64({3}, "1, 0, 0")}).label(), "indeterminate(nan-tie)");
  // An all-NaN fibre is NaN under ignore as well.
  EXPECT_EQ(judge_reduce("a ->", "max", f64({2}, "nan, nan"), g, {f64({2}, "1, 0")}, ignore).label(),
            "indeterminate(nan-tie)");
}

// Under `ordered` a fibre's result is SEMANTICS §8.4's fold: max is NaN only when the first element
// is (else the largest number), min only when the last is (else the least element after the last
// NaN). Where that is a number, T is judged exactly; it had been indeterminate(nan-tie) whatever
// the backend answered.
TEST(OracleVjp, UnderOrderedTheFoldsResultDecidesTheTieSet) {
  const VjpJudgeOptions ordered{false, TieRule::equal_share, NanProfile::ordered};
  const Tensor g = f64({}, "1");
  const Tensor x = f64({3}, "1, nan, 0.5");  // max 1, min 0.5
  EXPECT_EQ(judge_reduce("a ->", "max", x, g, {f64({3}, "1, 0, 0")}, ordered).kind, VerdictKind::pass);
  const Verdict sevens = judge_reduce("a ->", "max", x, g, {f64({3}, "7, 7, 7")}, ordered);
  EXPECT_EQ(sevens.kind, VerdictKind::mismatch_value) << explain(sevens);
  EXPECT_EQ(judge_reduce("a ->", "min", x, g, {f64({3}, "0, 0, 1")}, ordered).kind, VerdictKind::pass);
  EXPECT_EQ(judge_reduce("a ->", "min", x, g, {f64({3}, "1, 0, 0")}, ordered).kind, VerdictKind::mismatch_value);
  // min after the last NaN: [0.25, nan, 0.5] folds to 0.5, though 0.25 is the least number.
  const Tensor later = f64({3}, "0.25, nan, 0.5");
  EXPECT_EQ(judge_reduce("a ->", "min", later, g, {f64({3}, "0, 0, 1")}, ordered).kind, VerdictKind::pass);
  EXPECT_EQ(judge_reduce("a ->", "min", later, g, {f64({3}, "1, 0, 0")}, ordered).kind, VerdictKind::mismatch_value);
  // A NaN result (max's first element, min's last) stays without an agreed rule.
  EXPECT_EQ(judge_reduce("a ->", "max", f64({3}, "nan, 1, 0.5"), g, {f64({3}, "7, 7, 7")}, ordered).label(),
            "indeterminate(nan-tie)");
  EXPECT_EQ(judge_reduce("a ->", "min", f64({3}, "1, 0.5, nan"), g, {f64({3}, "7, 7, 7")}, ordered).label(),
            "indeterminate(nan-tie)");
}

// A NaN cotangent: T's element gets NaN; outside T ±0 passes and a mask-multiplied NaN is
// indeterminate(non-finite-cotangent); a finite value in T is a mismatch.
TEST(OracleVjp, NonFiniteCotangent) {
  const Tensor x = f64({2}, "1, 3");
  const Tensor g = f64({}, "nan");
  EXPECT_EQ(judge_reduce("a ->", "max", x, g, {f64({2}, "0, nan")}).kind, VerdictKind::pass);
  const Verdict masked = judge_reduce("a ->", "max", x, g, {f64({2}, "nan, nan")});
  EXPECT_EQ(masked.kind, VerdictKind::indeterminate) << explain(masked);
  EXPECT_EQ(masked.reason, "non-finite-cotangent");
  EXPECT_EQ(judge_reduce("a ->", "max", x, g, {f64({2}, "0, 1")}).kind, VerdictKind::mismatch_special);
  EXPECT_EQ(judge_reduce("a ->", "max", x, g, {f64({2}, "nan, nan")}, kOne).kind, VerdictKind::indeterminate);
  // +Inf: the receiver gets +Inf, a mask gives 0·Inf = NaN elsewhere.
  const Tensor inf = f64({}, "inf");
  EXPECT_EQ(judge_reduce("a ->", "max", x, inf, {f64({2}, "nan, inf")}).kind, VerdictKind::indeterminate);
  EXPECT_EQ(judge_reduce("a ->", "max", x, inf, {f64({2}, "0, nan")}).kind, VerdictKind::mismatch_special);
  // sum copies it; einsum treats it as one more factor (NaN on every path).
  EXPECT_EQ(judge_reduce("a ->", "sum", x, g, {f64({2}, "nan, nan")}).kind, VerdictKind::pass);
  EXPECT_EQ(judge_reduce("a ->", "sum", x, g, {f64({2}, "0, nan")}).kind, VerdictKind::mismatch_special);
  const std::vector<Tensor> ops = {f64({2}, "1, 2"), f64({2}, "3, 4")};
  EXPECT_EQ(judge_einsum("i, i ->", ops, g, {f64({2}, "nan, 1"), f64({2}, "nan, nan")}).kind,
            VerdictKind::mismatch_special);
}

TEST(OracleVjp, WrongCountShapeOrDtypeIsShapeMismatch) {
  const std::vector<Tensor> x = {f64({2}, "1, 2"), f64({2}, "3, 4")};
  const Tensor g = f64({}, "1");
  EXPECT_EQ(judge_einsum("i, i ->", x, g, {f64({2}, "3, 4")}).kind, VerdictKind::mismatch_shape);
  EXPECT_EQ(judge_einsum("i, i ->", x, g, {f64({2}, "3, 4"), f64({3}, "1, 2, 0")}).kind, VerdictKind::mismatch_shape);
  EXPECT_EQ(judge_einsum("i, i ->", x, g, {f64({2}, "3, 4"), f32({2}, "1, 2")}).kind, VerdictKind::mismatch_shape);
  const Tensor y = f64({2}, "1, 3");
  EXPECT_EQ(judge_reduce("a ->", "max", y, g, {f32({2}, "0, 1")}).kind, VerdictKind::mismatch_shape);
  EXPECT_EQ(judge_reduce("a ->", "max", y, g, {f64({2}, "0, 1"), f64({2}, "0, 1")}).kind, VerdictKind::mismatch_shape);
  EXPECT_EQ(judge_reduce("a ->", "prod", y, g, {f64({1}, "0")}).kind, VerdictKind::mismatch_shape);
}

/// An any-order backend that answers every VJP case with fixed cotangents, under a tie rule.
class FixedVjpBackend final : public Backend {
 public:
  FixedVjpBackend(std::vector<Tensor> answer, TieRule rule, bool factoring = true) : answer_(std::move(answer)) {
    caps_.factoring = factoring;
    caps_.ops = {Op::einsum, Op::reduce};
    caps_.reductions = {"sum", "mean", "prod", "min", "max"};
    caps_.dtypes = {DType::f32, DType::f64};
    caps_.vjp = true;
    caps_.tie_rule = rule;
  }
  void declare_round_inputs(DType dtype, InputRounding rounding) { caps_.round_inputs.emplace_back(dtype, rounding); }
  std::string_view name() const override { return "fixed-vjp"; }
  const Capabilities& capabilities() const override { return caps_; }
  BackendResult run(const Case&) override { return Gradients{answer_}; }

 private:
  std::vector<Tensor> answer_;
  Capabilities caps_;
};

// Through the run boundary: an any-order backend declaring `vjp` is judged by the multiset VJP
// oracle with its declared tie rule (before this oracle landed, this path aborted as staged).
TEST(OracleVjp, RunCaseJudgesAnAnyOrderVjpBackend) {
  Case c;
  c.op = Op::reduce;
  c.pattern = "a ->";
  c.reduction = "max";
  c.dtype = DType::f64;
  c.inputs = {f64({3}, "1, 3, 3")};
  c.cotangent = f64({}, "2");
  FixedVjpBackend share({f64({3}, "0, 1, 1")}, TieRule::equal_share);
  Backend* list[] = {&share};
  EXPECT_EQ(run_case(c, list, {}).backends.at(0).verdict.kind, VerdictKind::pass);
  FixedVjpBackend one({f64({3}, "0, 2, 0")}, TieRule::one);
  Backend* one_list[] = {&one};
  EXPECT_EQ(run_case(c, one_list, {}).backends.at(0).verdict.kind, VerdictKind::pass);
  FixedVjpBackend wrong({f64({3}, "0, 2, 0")}, TieRule::equal_share);
  Backend* wrong_list[] = {&wrong};
  const Verdict v = run_case(c, wrong_list, {}).backends.at(0).verdict;
  EXPECT_EQ(v.kind, VerdictKind::mismatch_value) << explain(v);
  ASSERT_TRUE(v.first);
  EXPECT_EQ(v.first->gradient_of, 0);
}

// ORACLE §7: an einsum VJP is judged with factoring assumed, whatever the forward declares. `i, j ->`
// with x1 = [0, 1] and g = inf: per term x0's cotangent is inf·0 + inf·1 = NaN, summed first it is
// inf·1 = inf (torch's autograd); a backend whose forward einsum never factors may still do so.
TEST(OracleVjp, AnEinsumVjpIsJudgedAsFactoringWhateverTheForwardDeclares) {
  Case c;
  c.pattern = "i, j ->";
  c.dtype = DType::f64;
  c.inputs = {f64({1}, "1"), f64({2}, "0, 1")};
  c.cotangent = f64({}, "inf");
  for (const bool factoring : {true, false}) {
    FixedVjpBackend factored({f64({1}, "inf"), f64({2}, "inf, inf")}, TieRule::equal_share, factoring);
    Backend* list[] = {&factored};
    const Verdict v = run_case(c, list, {}).backends.at(0).verdict;
    EXPECT_EQ(v.label(), "indeterminate(special-path-dependent)") << factoring << ": " << explain(v);
    // A finite answer where no path is finite stays a mismatch.
    FixedVjpBackend finite({f64({1}, "1"), f64({2}, "inf, inf")}, TieRule::equal_share, factoring);
    Backend* finite_list[] = {&finite};
    EXPECT_EQ(run_case(c, finite_list, {}).backends.at(0).verdict.kind, VerdictKind::mismatch_special) << factoring;
  }
}

// ORACLE §8 / SEMANTICS §13.8: an einsum VJP is an einsum, so a declared TF32 input rounding
// applies to it as to the forward einsum. `i, i ->` with x1 = 1 + 2^-20: TF32 rounds x1 to 1, so a
// backward in TF32 gives x0's cotangent g·1 = 1, outside f32's storage bound around 1 + 2^-20.
TEST(OracleVjp, AnEinsumVjpIsJudgedUnderTheDeclaredProfile) {
  Case c;
  c.pattern = "i, i ->";
  c.dtype = DType::f32;
  c.inputs = {Tensor(Shape{1}, std::vector<float>{1}), Tensor(Shape{1}, std::vector<float>{0x1.00001p+0f})};
  c.cotangent = Tensor(Shape{}, std::vector<float>{1});
  const auto judged = [&](float answer, bool tf32, const RunOptions& options = {}) {
    FixedVjpBackend b({Tensor(Shape{1}, std::vector<float>{answer}), Tensor(Shape{1}, std::vector<float>{1})},
                      TieRule::equal_share);
    if (tf32) b.declare_round_inputs(DType::f32, InputRounding::tf32);
    Backend* list[] = {&b};
    return run_case(c, list, options).backends.at(0).verdict;
  };
  EXPECT_EQ(judged(1.0f, false).kind, VerdictKind::mismatch_value);
  EXPECT_EQ(judged(1.0f, true).kind, VerdictKind::pass) << explain(judged(1.0f, true));
  EXPECT_EQ(judged(0x1.00001p+0f, true).kind, VerdictKind::pass);
  EXPECT_EQ(judged(1.25f, true).kind, VerdictKind::mismatch_value);
  // --profile overrides the declaration for VJP einsums too.
  RunOptions storage;
  storage.profile = storage_profile(DType::f32);
  EXPECT_EQ(judged(1.0f, true, storage).kind, VerdictKind::mismatch_value);
  // A reduce's VJP never rounds its inputs: a sum's VJP is g itself, whatever is declared.
  Case sum;
  sum.op = Op::reduce;
  sum.reduction = "sum";
  sum.pattern = "a ->";
  sum.dtype = DType::f32;
  sum.inputs = {Tensor(Shape{1}, std::vector<float>{0x1.00001p+0f})};
  sum.cotangent = Tensor(Shape{}, std::vector<float>{0x1.00001p+0f});
  FixedVjpBackend rounded({Tensor(Shape{1}, std::vector<float>{1})}, TieRule::equal_share);
  rounded.declare_round_inputs(DType::f32, InputRounding::tf32);
  Backend* list[] = {&rounded};
  EXPECT_EQ(run_case(sum, list, {}).backends.at(0).verdict.kind, VerdictKind::mismatch_value);
}

}  // namespace
}  // namespace einfuzz
