// Which built-in backends answer VJP cases (issue 13): torch through autograd, bit for bit the
// reference's ordered VJP where every order is exact, and its rejections the checker's; numpy,
// Eigen and xtensor declare no VJP, so a VJP case is `unsupported` for them and never sent.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "einfuzz/backends/eigen.hpp"
#include "einfuzz/backends/process.hpp"
#include "einfuzz/backends/xtensor.hpp"
#include "einfuzz/core/case.hpp"
#include "einfuzz/core/check_case.hpp"
#include "einfuzz/harness/backend_registry.hpp"
#include "einfuzz/harness/run.hpp"
#include "support/values_text.hpp"
#include "support/verdicts.hpp"

namespace einfuzz {
namespace {

using VK = VerdictKind;

Case vjp_case(const char* pattern, DType dtype, std::vector<std::pair<Shape, const char*>> inputs, Shape g_shape,
              const char* g) {
  Case c;
  c.pattern = pattern;
  c.dtype = dtype;
  for (const auto& [shape, values] : inputs) c.inputs.push_back(test::tensor_from_text(dtype, shape, values));
  c.cotangent = test::tensor_from_text(dtype, g_shape, g);
  return c;
}

Case reduce_vjp(const char* pattern, const char* kind, DType dtype, Shape shape, const char* values, Shape g_shape,
                const char* g) {
  Case c = vjp_case(pattern, dtype, {{shape, values}}, g_shape, g);
  c.op = Op::reduce;
  c.reduction = kind;
  return c;
}

/// VJP cases whose every evaluation order is exact (small integers, powers of two), without ties:
/// every correct VJP equals the reference's ordered one (up to the sign of a zero).
std::vector<Case> exact_cases() {
  return {
      vjp_case("a b, b c -> a c", DType::f64, {{{2, 3}, "1..6"}, {{3, 2}, "1,0,0,1,1,1"}}, {2, 2}, "1,-2,3,0.5"),
      vjp_case("i j, i j -> i j", DType::f32, {{{2, 1}, "3,-1"}, {{2, 3}, "1..6"}}, {2, 3}, "1,1,2,-1,0.25,4"),
      vjp_case("i i -> i", DType::f64, {{{3, 3}, "1..9"}}, {3}, "7,8,9"),
      vjp_case("i j ->", DType::f32, {{{2, 2}, "1..4"}}, {}, "-3"),
      vjp_case("b i j, b j k -> b k", DType::f64, {{{2, 2, 2}, "1..8"}, {{2, 2, 3}, "1..12"}}, {2, 3}, "1,0,-1,2,0.5,3"),
      reduce_vjp("a b -> a", "sum", DType::f32, {2, 3}, "1..6", {2}, "2,-1"),
      reduce_vjp("a b -> b", "mean", DType::f64, {4, 2}, "1..8", {2}, "3,-5"),
      reduce_vjp("a b -> a", "prod", DType::f64, {2, 4}, "1,2,-1,0.5,2,2,1,-2", {2}, "1,3"),
      reduce_vjp("a b c -> c", "prod", DType::f32, {2, 2, 1}, "1,0,2,-1", {1}, "2"),
      reduce_vjp("a b -> a", "max", DType::f64, {2, 3}, "1,5,2,-1,-3,0", {2}, "4,-2"),
      reduce_vjp("a b -> b", "min", DType::f32, {2, 3}, "1,5,2,-1,-3,0", {3}, "1,2,3"),
  };
}

std::unique_ptr<Backend> torch_or_skip(const std::string& name) { return make_builtin_backend(name, RunOptions{}); }

class TorchVjp : public ::testing::TestWithParam<std::string> {};

TEST_P(TorchVjp, EqualsTheOrderedVjpWhereEveryOrderIsExact) {
  const auto backend = torch_or_skip(GetParam());
  if (!backend) GTEST_SKIP() << GetParam() << " is not built: libtorch was not found (Debian: libtorch-dev)";
  EXPECT_TRUE(backend->capabilities().vjp);
  for (const Case& c : exact_cases()) {
    SCOPED_TRACE(case_kind_name(c) + " '" + c.pattern + "'");
    ASSERT_TRUE(backend->supports(c));
    const auto checked = check_case(c, Limits{});
    ASSERT_TRUE(checked.ok()) << checked.error().message;
    const std::vector<Tensor> expected = evaluate_reference_vjp(*checked, c.inputs, *c.cotangent);
    const BackendResult r = backend->run(c);
    const auto* got = std::get_if<Gradients>(&r);
    ASSERT_NE(got, nullptr) << GetParam() << " gave no gradients";
    ASSERT_EQ(got->tensors.size(), expected.size());
    for (std::size_t m = 0; m < expected.size(); ++m) {
      const Tensor& e = expected[m];
      const Tensor& g = got->tensors[m];
      ASSERT_EQ(g.shape(), e.shape());
      ASSERT_EQ(g.dtype(), e.dtype());
      for (std::int64_t p = 0; p < e.size(); ++p) {
        const double want = e.dtype() == DType::f32 ? e.values<float>()[p] : e.values<double>()[p];
        const double have = g.dtype() == DType::f32 ? g.values<float>()[p] : g.values<double>()[p];
        EXPECT_EQ(have, want) << "cotangent of input " << m << ", element " << p;
      }
    }
  }
}

TEST_P(TorchVjp, RejectsWhatHasNoVjpAsTheCheckerDoes) {
  const auto backend = torch_or_skip(GetParam());
  if (!backend) GTEST_SKIP() << GetParam() << " is not built: libtorch was not found (Debian: libtorch-dev)";
  Case any;
  any.op = Op::reduce;
  any.pattern = "a b -> a";
  any.reduction = "any";
  any.dtype = DType::boolean;
  any.inputs.emplace_back(DType::boolean, Shape{1, 2});
  any.cotangent = Tensor(DType::boolean, Shape{1});
  Case ints = vjp_case("i, i ->", DType::i32, {{{2}, "1,2"}, {{2}, "3,4"}}, {}, "1");
  Case shape = vjp_case("i, i ->", DType::f64, {{{2}, "1,2"}, {{2}, "3,4"}}, {1}, "1");
  for (const auto& [c, code] : {std::pair{any, "notDifferentiable"}, std::pair{ints, "notDifferentiable"},
                                std::pair{shape, "cotangentShapeMismatch"}}) {
    SCOPED_TRACE(c.pattern);
    const BackendResult r = backend->run(c);
    const auto* rejected = std::get_if<Rejected>(&r);
    ASSERT_NE(rejected, nullptr);
    EXPECT_EQ(rejected->code, code) << rejected->message;
    EXPECT_EQ(test::run_on(c, *backend).kind, VK::pass) << test::explain(test::run_on(c, *backend));
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, TorchVjp, ::testing::Values("torch", "torch-path-right", "torch-maxdim"),
                         [](const auto& p) { return test::test_name(p.param); });

TEST(VjpCapabilities, NumpyEigenAndXtensorDeclareNoVjpSoVjpCasesAreUnsupported) {
  std::vector<std::unique_ptr<Backend>> backends;
  backends.push_back(make_eigen_backend());
  backends.push_back(make_xtensor_backend());
  if (const auto client = find_numpy_client()) {
    backends.push_back(make_numpy_backend(false, *client, Limits{}));
    backends.push_back(make_numpy_backend(true, *client, Limits{}));
  } else {
    std::cout << "[ skipped  ] numpy: no python3 that imports numpy (Debian: apt-get install python3-numpy)\n";
  }
  for (const auto& b : backends) {
    SCOPED_TRACE(std::string(b->name()));
    EXPECT_FALSE(b->capabilities().vjp);
    for (const Case& c : exact_cases()) {
      EXPECT_FALSE(b->supports(c));
      EXPECT_EQ(test::run_on(c, *b).kind, VK::unsupported) << c.pattern;
    }
  }
}

}  // namespace
}  // namespace einfuzz
