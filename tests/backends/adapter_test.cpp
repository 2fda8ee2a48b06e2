// The shared adapter prelude (backends/adapter.hpp) as the in-process backends answer through it:
// the same rejections, in the same order, with the same words, for eigen, xtensor and shuffle.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "einfuzz/backends/adapter.hpp"
#include "einfuzz/backends/eigen.hpp"
#include "einfuzz/backends/shuffle.hpp"
#include "einfuzz/backends/xtensor.hpp"
#include "einfuzz/core/check_case.hpp"

namespace einfuzz {
namespace {

std::vector<std::unique_ptr<Backend>> backends() {
  std::vector<std::unique_ptr<Backend>> out;
  out.push_back(make_eigen_backend());
  out.push_back(make_xtensor_backend());
  out.push_back(make_shuffle_backend(std::uint64_t{7}));
  return out;
}

Case einsum_case(std::string pattern, DType dtype, std::vector<Tensor> inputs) {
  Case c;
  c.pattern = std::move(pattern);
  c.dtype = dtype;
  c.inputs = std::move(inputs);
  return c;
}

/// The rejection `b` answers `c` with (fails the test for any other answer).
Rejected rejection(Backend& b, const Case& c) {
  const BackendResult r = b.run(c);
  const auto* rej = std::get_if<Rejected>(&r);
  EXPECT_NE(rej, nullptr) << b.name() << " did not reject " << c.pattern;
  return rej ? *rej : Rejected{};
}

/// Every backend rejects `c` with `code` and `message`.
void expect_all_reject(const Case& c, const std::string& code, const std::string& message) {
  for (const auto& b : backends()) {
    const Rejected r = rejection(*b, c);
    EXPECT_EQ(r.code, code) << b->name();
    EXPECT_EQ(r.message, message) << b->name();
  }
}

TEST(Adapter, EveryBackendDeclaresEveryOpDtypeAndReduction) {
  for (const auto& b : backends()) {
    const Capabilities& caps = b->capabilities();
    EXPECT_EQ(caps.ops, (std::vector<Op>{Op::einsum, Op::reduce})) << b->name();
    std::vector<DType> dtypes = {DType::f32, DType::f64, DType::i32, DType::i64, DType::boolean};
    // eigen also evaluates the 16-bit floats (Eigen::half, Eigen::bfloat16); shuffle too, under its
    // declared precision profiles (issue 14).
    if (b->name() == "eigen" || b->name() == "shuffle") dtypes.insert(dtypes.end(), {DType::f16, DType::bf16});
    EXPECT_EQ(caps.dtypes, dtypes) << b->name();
    EXPECT_EQ(caps.reductions, (std::vector<std::string>{"sum", "prod", "mean", "min", "max", "any", "all"}));
    EXPECT_FALSE(caps.strided_inputs);
  }
}

TEST(Adapter, AMixedDtypeIsRejectedBeforeThePatternIsChecked) {
  // The pattern is malformed too: the dtype gate comes first.
  const Case c = einsum_case("i j ->", DType::f64, {Tensor(DType::f64, Shape{2}), Tensor(DType::f32, Shape{2})});
  expect_all_reject(c, "invalidArgument", "input 1 is not f64");
}

TEST(Adapter, TheCheckersDiagnosticIsTheRejection) {
  const Case c = einsum_case("i j -> i", DType::f64, {Tensor(DType::f64, Shape{2})});
  for (const auto& b : backends()) EXPECT_EQ(rejection(*b, c).code, "rankMismatch") << b->name();
}

TEST(Adapter, AReduceNeedsExactlyOneInput) {
  Case c = einsum_case("a -> ", DType::f64, {Tensor(DType::f64, Shape{2}), Tensor(DType::f64, Shape{2})});
  c.op = Op::reduce;
  c.reduction = "sum";
  expect_all_reject(c, "invalidArgument", "a reduce case has exactly one input");
}

TEST(Adapter, AnEinsumOnBoolIsRejectedAfterTheCheckerOrUnsupportedByShuffle) {
  const Case ok = einsum_case("i ->", DType::boolean, {Tensor(DType::boolean, Shape{2})});
  const Case bad = einsum_case("i j ->", DType::boolean, {Tensor(DType::boolean, Shape{2})});
  for (const auto& b : backends()) {
    if (b->name() == "shuffle") {
      // Decided before the checker runs, whatever the pattern.
      for (const Case* c : {&ok, &bad}) {
        const BackendResult r = b->run(*c);
        ASSERT_TRUE(std::holds_alternative<Unsupported>(r));
        EXPECT_EQ(std::get<Unsupported>(r).message, "shuffle: no einsum on bool");
      }
      continue;
    }
    const Rejected r = rejection(*b, ok);
    EXPECT_EQ(r.code, "unsupportedDtype") << b->name();
    EXPECT_EQ(r.message, "einsum on bool") << b->name();
    EXPECT_EQ(rejection(*b, bad).code, "rankMismatch") << b->name();
  }
}

TEST(Adapter, MeanOnAnIntegerDtypeIsRejectedByTheCheckerFirst) {
  Case c = einsum_case("a -> ", DType::i32, {Tensor(DType::i32, Shape{2})});
  c.op = Op::reduce;
  c.reduction = "mean";
  for (const auto& b : backends()) EXPECT_EQ(rejection(*b, c).code, "unsupportedDtype") << b->name();
  EXPECT_EQ(unsupported_reduction("eigen", Reduction::mean, DType::i32).message, "eigen: mean on i32");
  EXPECT_FALSE(numeric_reduction<std::int32_t>(Reduction::mean));
  EXPECT_TRUE(numeric_reduction<float>(Reduction::mean));
  EXPECT_FALSE(numeric_reduction<double>(Reduction::any));
  EXPECT_TRUE(numeric_reduction<std::int64_t>(Reduction::max));
}

/// Everything an evaluator reads of a checked einsum, as text (two equal texts: the same check).
std::string einsum_text(const CheckedEinsum& e) {
  std::string s = e.pattern + " |";
  for (const Axis& a : e.axes) s += " " + a.name + "=" + std::to_string(a.length);
  for (const CheckedOperand& op : e.operands) {
    s += " | " + format_shape(op.shape) + ":";
    for (int a : op.axes) s += " " + std::to_string(a);
  }
  s += " | out";
  for (int a : e.output) s += " " + std::to_string(a);
  s += " | sum";
  for (int a : e.contracted) s += " " + std::to_string(a);
  s += " | roles";
  for (AxisRole r : e.roles) s += " " + std::to_string(static_cast<int>(r));
  return s + " | " + format_shape(e.output_shape) + " " + format_shape(e.contraction_shape) + " " +
         std::to_string(e.output_size) + " " + std::to_string(e.contraction_size);
}

TEST(Adapter, ACaseTheRunBoundaryAcceptedIsSharedNotCheckedAgain) {
  const Case c = einsum_case("b i j, b j k -> b i k", DType::f32,
                             {Tensor(DType::f32, Shape{2, 3, 4}), Tensor(DType::f32, Shape{1, 4, 5})});
  const Limits limits;
  const auto whole = check_case_shared(c, limits);
  ASSERT_TRUE(whole->ok());
  EXPECT_EQ(check_case_memoised(c, limits).get(), whole.get());
  const auto shared = checked_einsum_or_reject(c, limits);
  ASSERT_TRUE(std::holds_alternative<std::shared_ptr<const CheckedEinsum>>(shared));
  const CheckedEinsum& e = *std::get<std::shared_ptr<const CheckedEinsum>>(shared);
  EXPECT_EQ(&e, &std::get<CheckedEinsum>(**whole)) << "the adapter checked the case again";
  // The same value the adapter's own check gives: other limits miss check_case's memo.
  Limits other = limits;
  other.max_operands = 5;
  EXPECT_EQ(check_case_memoised(c, other), nullptr);
  const auto own = checked_einsum_or_reject(c, other);
  ASSERT_TRUE(std::holds_alternative<std::shared_ptr<const CheckedEinsum>>(own));
  EXPECT_NE(std::get<std::shared_ptr<const CheckedEinsum>>(own).get(), &e);
  EXPECT_EQ(einsum_text(*std::get<std::shared_ptr<const CheckedEinsum>>(own)), einsum_text(e));

  Case r = einsum_case("a (b c) -> a", DType::f64, {Tensor(DType::f64, Shape{3, 4})});
  r.op = Op::reduce;
  r.reduction = "sum";
  r.axis_lengths = {{"b", 2}};
  const auto reduce_whole = check_case_shared(r, limits);
  ASSERT_TRUE(reduce_whole->ok());
  const auto reduce_shared = checked_reduce_or_reject(r, limits);
  ASSERT_TRUE(std::holds_alternative<std::shared_ptr<const CheckedReduce>>(reduce_shared));
  EXPECT_EQ(std::get<std::shared_ptr<const CheckedReduce>>(reduce_shared).get(),
            &std::get<CheckedReduce>(**reduce_whole));
}

TEST(Adapter, ACaseTheRunBoundaryRejectedIsCheckedByTheAdapterItself) {
  // check_case rejects the input's dtype first; the adapter's own check of the pattern decides.
  Case c = einsum_case("i j -> j i", DType::boolean, {Tensor(DType::boolean, Shape{2, 3})});
  ASSERT_FALSE(check_case_shared(c, {})->ok());
  const auto checked = checked_einsum_or_reject(c, {});
  ASSERT_TRUE(std::holds_alternative<std::shared_ptr<const CheckedEinsum>>(checked))
      << "a bool einsum's pattern checks; einsum_on_bool rejects it after the checker";
  c.inputs[0] = Tensor(DType::boolean, Shape{2, 3, 1});
  ASSERT_FALSE(check_case_shared(c, {})->ok());
  const auto bad = checked_einsum_or_reject(c, {});
  ASSERT_TRUE(std::holds_alternative<Rejected>(bad));
  EXPECT_EQ(std::get<Rejected>(bad).code, "rankMismatch");
}

}  // namespace
}  // namespace einfuzz
