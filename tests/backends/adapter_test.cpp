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

}  // namespace
}  // namespace einfuzz
