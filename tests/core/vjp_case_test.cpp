// Tests of VJP cases in the case format (CASES.md: "op": "vjp", "of", "cotangent") and of the
// checker's VJP rules (check_case: notDifferentiable, cotangentShapeMismatch).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "einfuzz/core/case.hpp"
#include "einfuzz/core/check_case.hpp"

namespace einfuzz {
namespace {

Case vjp_case() {
  Case c;
  c.op = Op::einsum;
  c.pattern = "i j, j -> i";
  c.dtype = DType::f32;
  c.inputs = {Tensor(Shape{2, 1}, std::vector<float>{1.5f, -0.0f}), Tensor(Shape{3}, std::vector<float>{1, 2, 3})};
  c.cotangent = Tensor(Shape{2}, std::vector<float>{0x1p-149f, -3.0f});
  return c;
}

TEST(VjpCase, RoundTripsEveryBit) {
  const Case c = vjp_case();
  const std::string text = write_case(c);
  EXPECT_NE(text.find("\"op\": \"vjp\",\n  \"of\": \"einsum\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"cotangent\": {\"shape\": [2], \"values\": [\"0x1p-149\", \"-0x1.8p+1\"]}"), std::string::npos)
      << text;
  auto back = read_case(text, "vjp.case.json");
  ASSERT_TRUE(back) << render(back.error());
  ASSERT_TRUE(back->is_vjp());
  EXPECT_EQ(back->op, Op::einsum);
  EXPECT_EQ(write_case(*back), text);
  EXPECT_EQ(case_file_name(*back).rfind("vjp-einsum-", 0), 0u) << case_file_name(*back);
}

TEST(VjpCase, FileNameDiffersFromTheForwardCase) {
  Case c = vjp_case();
  const std::string with = case_file_name(c);
  c.cotangent.reset();
  EXPECT_NE(case_file_name(c), with);
  EXPECT_EQ(case_file_name(c).rfind("einsum-", 0), 0u);
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

void expect_malformed(const std::string& text, const std::string& words) {
  auto r = read_case(text, "bad.case.json");
  ASSERT_FALSE(r) << text;
  EXPECT_EQ(r.error().code, Code::malformedCase) << r.error().message;
  EXPECT_NE(r.error().message.find(words), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("bad.case.json"), std::string::npos) << r.error().message;
}

TEST(VjpCase, ReaderRejectsInconsistentFields) {
  const std::string good = write_case(vjp_case());
  expect_malformed(replace(good, "\"of\": \"einsum\",\n  ", ""), "missing field \"of\"");
  expect_malformed(replace(good, "\"of\": \"einsum\"", "\"of\": \"vjp\""), "of: unknown op");
  expect_malformed(replace(good, "\"op\": \"vjp\",\n  \"of\": \"einsum\"", "\"op\": \"einsum\""),
                   "only a vjp case has a cotangent");
  expect_malformed(replace(good, "\"op\": \"vjp\"", "\"op\": \"reduce\""), "only a vjp case has \"of\"");
  expect_malformed(replace(good, "\"values\": [\"0x1p-149\", \"-0x1.8p+1\"]", "\"values\": [\"0x1p-149\"]"),
                   "cotangent.values: shape 2 needs 2 values, found 1");
  expect_malformed(replace(good, "\"-0x1.8p+1\"]}", "\"zz\"]}"), "cotangent.values[1]");
  expect_malformed(replace(good, "\"-0x1.8p+1\"]}", "\"-0x1.8p+1\"], \"layout\": {}}"), "\"layout\"");
  const std::string no_cotangent = good.substr(0, good.find(",\n  \"cotangent\"")) + "\n}\n";
  expect_malformed(no_cotangent, "missing field \"cotangent\"");
}

Code check_code(const Case& c) {
  auto r = check_case(c, Limits{});
  EXPECT_FALSE(r);
  return r ? Code::internalInvariant : r.error().code;
}

TEST(VjpCase, CheckerAcceptsAWellFormedVjp) {
  auto r = check_case(vjp_case(), Limits{});
  ASSERT_TRUE(r) << render(r.error());
  EXPECT_TRUE(std::holds_alternative<CheckedEinsum>(*r));
}

TEST(VjpCase, CotangentShapeMustBeTheForwardOutputs) {
  Case c = vjp_case();
  c.cotangent = Tensor(Shape{3}, std::vector<float>{1, 2, 3});
  EXPECT_EQ(check_code(c), Code::cotangentShapeMismatch);
  c.cotangent = Tensor(Shape{2, 1}, std::vector<float>{1, 2});
  EXPECT_EQ(check_code(c), Code::cotangentShapeMismatch);
  c.cotangent = Tensor(Shape{2}, std::vector<double>{1, 2});
  EXPECT_EQ(check_code(c), Code::invalidArgument);
}

// A prod's VJP holds one exact leave-one-out product per input element, each over its fibre: four
// times input x fibre counts against max-materialised-elements (8000 f64 factors took 1.8 GB, and
// 32000, a case file of under a megabyte, would not have fitted in 24 GB). Another reduce is not
// limited so.
TEST(VjpCase, AProdsVjpCountsItsLeaveOneOutProductsAgainstTheLimit) {
  Case c;
  c.op = Op::reduce;
  c.pattern = "a ->";
  c.reduction = "prod";
  c.dtype = DType::f64;
  c.inputs = {Tensor(Shape{100}, std::vector<double>(100, 1.5))};
  c.cotangent = Tensor(Shape{}, std::vector<double>{1});
  Limits limits;
  limits.max_materialised_elements = 4 * 100 * 100;
  EXPECT_TRUE(check_case(c, limits).ok());
  limits.max_materialised_elements -= 1;
  const auto refused = check_case(c, limits);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, Code::sizeLimitExceeded);
  EXPECT_NE(refused.error().message.find("leave-one-out"), std::string::npos) << refused.error().message;
  c.reduction = "sum";
  EXPECT_TRUE(check_case(c, limits).ok());
  // The campaign's longest fibre, 4096 elements, stays within the default limit.
  c.reduction = "prod";
  c.inputs = {Tensor(Shape{4096}, std::vector<double>(4096, 1.5))};
  EXPECT_TRUE(check_case(c, Limits{}).ok());
}

TEST(VjpCase, LogicalReductionsAndIntegersAreNotDifferentiable) {
  Case c;
  c.op = Op::reduce;
  c.pattern = "a b -> a";
  c.reduction = "any";
  c.dtype = DType::boolean;
  c.inputs = {Tensor(Shape{2, 2}, std::vector<Bool8>{1, 0, 0, 0})};
  c.cotangent = Tensor(Shape{2}, std::vector<Bool8>{1, 1});
  EXPECT_EQ(check_code(c), Code::notDifferentiable);
  c.reduction = "sum";
  c.dtype = DType::i32;
  c.inputs = {Tensor(Shape{2, 2}, std::vector<std::int32_t>{1, 2, 3, 4})};
  c.cotangent = Tensor(Shape{2}, std::vector<std::int32_t>{1, 1});
  EXPECT_EQ(check_code(c), Code::notDifferentiable);
  // The forward case's own errors come first.
  c.pattern = "a b -> c";
  EXPECT_NE(check_code(c), Code::notDifferentiable);
}

}  // namespace
}  // namespace einfuzz
