// The fused executor: §7 stride plans, the §9 task-count policy, SEMANTICS §11.1 values, and empty
// outputs and contractions that read nothing (tiles, threads and chunks: fused_chunks_test.cpp).
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/scalar.hpp"
#include "einfuzz/core/tensor.hpp"
#include "einfuzz/fused/einsum.hpp"
#include "einfuzz/harness/generate.hpp"
#include "einfuzz/reference/einsum.hpp"
#include "support/compare.hpp"
#include "support/fused_support.hpp"

namespace einfuzz::fused {
// Found by argument-dependent lookup from std::vector's == and from GoogleTest's printer.
bool operator==(const PlanTriple& a, const PlanTriple& b) {
  return a.from_output == b.from_output && a.position == b.position && a.stride == b.stride;
}
void PrintTo(const PlanTriple& t, std::ostream* os) {
  *os << "(" << (t.from_output ? "true" : "false") << "," << t.position << "," << t.stride << ")";
}
}  // namespace einfuzz::fused

namespace einfuzz {
namespace {

using fused::ExecOptions;
using fused::PlanTriple;

using namespace fused_test;


// ---------------------------------------------------------------------------------------------
// §7 stride plans

TEST(FusedPlan, DiagonalExampleOfSection7) {
  const auto plan = fused::compile(checked("i i j -> i j", {{2, 2, 2}}));
  ASSERT_EQ(plan.operands.size(), 1u);
  const auto& op = plan.operands[0];
  const std::vector<PlanTriple> want{{true, 0, 4}, {true, 0, 2}, {true, 1, 1}};
  EXPECT_EQ(op.triples, want);
  EXPECT_EQ(op.output_strides, (std::vector<std::int64_t>{6, 1}));  // the diagonal's strides add up
  EXPECT_TRUE(op.contract_strides.empty());
  EXPECT_EQ(plan.output_shape, (Shape{2, 2}));
  EXPECT_EQ(plan.output_size, 4);
  EXPECT_EQ(plan.contraction_size, 1);
}

TEST(FusedPlan, SingletonDimensionContributesNoTriple) {
  const auto plan = fused::compile(checked("i j, j k -> i k", {{2, 1}, {3, 2}}));
  ASSERT_EQ(plan.operands.size(), 2u);
  EXPECT_EQ(plan.operands[0].triples, (std::vector<PlanTriple>{{true, 0, 1}}));
  EXPECT_EQ(plan.operands[0].output_strides, (std::vector<std::int64_t>{1, 0}));
  EXPECT_EQ(plan.operands[0].contract_strides, (std::vector<std::int64_t>{0}));
  EXPECT_EQ(plan.operands[1].triples, (std::vector<PlanTriple>{{false, 0, 2}, {true, 1, 1}}));
  EXPECT_EQ(plan.contraction_shape, (Shape{3}));
  EXPECT_EQ(plan.contraction_size, 3);
}

TEST(FusedPlan, EllipsisSlotsFollowContractionOrder) {
  // C = [E1, E0] (SEMANTICS §5): positions index C, not the slot numbers.
  const auto plan = fused::compile(checked("... i, ... j -> i j", {{3, 1}, {2, 3, 1}}));
  EXPECT_EQ(plan.operands[0].triples, (std::vector<PlanTriple>{{false, 0, 1}}));
  EXPECT_EQ(plan.operands[1].triples, (std::vector<PlanTriple>{{false, 1, 3}, {false, 0, 1}}));
  EXPECT_EQ(plan.operands[1].contract_strides, (std::vector<std::int64_t>{1, 3}));
}

TEST(FusedPlan, ZeroLengthDimensionDoesNotOverflow) {
  // The stride of the 0-length dimension would overflow int64; the plan is never evaluated.
  const std::int64_t big = std::int64_t{1} << 40;
  const CheckedEinsum e = checked("a b c -> a b", {{0, big, big}});
  const auto plan = fused::compile(e);
  EXPECT_EQ(plan.output_size, 0);
  EXPECT_EQ(plan.operands[0].triples.size(), 3u);
  const std::vector<Tensor> inputs{Tensor(Shape{0, big, big}, std::vector<double>{})};
  EXPECT_TRUE(same_values(fused::execute(plan, inputs), Tensor(DType::f64, Shape{0, big})));
}

// ---------------------------------------------------------------------------------------------
// §9 task-count policy

TEST(FusedTaskCount, Policy) {
  using fused::task_count;
  EXPECT_EQ(task_count(100, 999'999, 64), 1u);
  EXPECT_EQ(task_count(100, 1'000'000, 64), 4u);
  EXPECT_EQ(task_count(100, 1'999'999, 64), 4u);
  EXPECT_EQ(task_count(100, 2'000'000, 64), 5u);
  EXPECT_EQ(task_count(100, 1'000'000'000, 64), 13u);  // 4 + floor(log2(1000))
  EXPECT_EQ(task_count(1000, std::numeric_limits<std::int64_t>::max(), 1000), 47u);
  EXPECT_EQ(task_count(3, 1'000'000'000, 64), 3u);     // capped by the outer axis
  EXPECT_EQ(task_count(100, 1'000'000'000, 2), 2u);    // capped by the threads
  EXPECT_EQ(task_count(1, 1'000'000'000, 64), 1u);
  EXPECT_EQ(task_count(0, 1'000'000'000, 64), 1u);
  EXPECT_EQ(task_count(100, 1'000'000'000, 0), 1u);
}

// ---------------------------------------------------------------------------------------------
// Values: SEMANTICS §11.1 examples

struct Example {
  const char* pattern;
  std::vector<Shape> shapes;
  std::vector<std::vector<double>> values;
  Shape out_shape;
  std::vector<double> out;
};

TEST(FusedExecute, ConformanceExamples) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<Example> examples{
      {"a b, b c -> a c", {{2, 3}, {3, 2}}, {{1, 2, 3, 4, 5, 6}, {1, 0, 0, 1, 1, 1}}, {2, 2}, {4, 5, 10, 11}},
      {"a b -> b a", {{2, 3}}, {{1, 2, 3, 4, 5, 6}}, {3, 2}, {1, 4, 2, 5, 3, 6}},
      {"a b ->", {{2, 3}}, {{1, 2, 3, 4, 5, 6}}, {}, {21}},
      {"i i -> i", {{3, 3}}, {{0, 1, 2, 3, 4, 5, 6, 7, 8}}, {3}, {0, 4, 8}},
      {"i i ->", {{3, 3}}, {{0, 1, 2, 3, 4, 5, 6, 7, 8}}, {}, {12}},
      {"i i j -> i j", {{2, 2, 2}}, {{0, 1, 2, 3, 4, 5, 6, 7}}, {2, 2}, {0, 1, 6, 7}},
      {"i i, i -> i", {{1, 1}, {3}}, {{2}, {1, 2, 3}}, {3}, {2, 4, 6}},
      {"i j, j k -> i k", {{2, 1}, {3, 2}}, {{1, 2}, {1, 2, 3, 4, 5, 6}}, {2, 2}, {9, 12, 18, 24}},
      {"->", {{}}, {{3}}, {}, {3}},
      {", ->", {{}, {}}, {{3}, {4}}, {}, {12}},
      {"a, -> a", {{2}, {}}, {{1, 2}, {10}}, {2}, {10, 20}},
      {"a, a, a, a, a -> a", {{2}, {2}, {2}, {1}, {2}}, {{1, 2}, {3, 4}, {5, 6}, {2}, {1, -1}}, {2}, {30, -96}},
      {"a b, b c, c d, d e -> a e", {{1, 2}, {2, 2}, {2, 1}, {1, 2}}, {{1, 2}, {1, 0, 0, 1}, {3, 4}, {1, 10}}, {1, 2}, {11, 110}},
      {"o i, ... i -> ... o", {{2, 3}, {2, 3}}, {{1, 0, 0, 0, 1, 1}, {1, 2, 3, 4, 5, 6}}, {2, 2}, {1, 5, 4, 11}},
      {"... i, ... i -> ... i", {{2, 1, 2}, {3, 2}}, {{1, 2, 3, 4}, {1, 1, 2, 2, 3, 3}}, {2, 3, 2}, {1, 2, 2, 4, 3, 6, 3, 4, 6, 8, 9, 12}},
      {"i j ->", {{2, 2}}, {{1e16, 1, -1e16, 1}}, {}, {1}},
      {"j i, i j ->", {{2, 2}, {2, 2}}, {{1, 1, 1, 1}, {1e16, 1, -1e16, 1}}, {}, {2}},
      {"... i, ... j -> i j", {{3, 1}, {2, 3, 1}}, {{1, 1, 1}, {1e16, -1e16, 0, 1, 1, 0}}, {1, 1}, {1}},
      {"i -> i", {{1}}, {{-0.0}}, {1}, {0.0}},
      {"i, i ->", {{1}, {1}}, {{-0.0}, {1}}, {}, {0.0}},
      {"i, i -> i", {{2}, {2}}, {{inf, 0}, {0, 1}}, {2}, {nan, 0.0}},
      {"i ->", {{2}}, {{1, nan}}, {}, {nan}},
      {"a, a, a -> a", {{1}, {1}, {1}}, {{1e308}, {10}, {0.1}}, {1}, {inf}},
      {"a, a, a -> a", {{1}, {1}, {1}}, {{0.1}, {10}, {1e308}}, {1}, {1e308}},
      {"b i j, b j k -> b i k", {{2, 1, 2}, {2, 2, 1}}, {{1, 2, 3, 4}, {1, 1, 1, -1}}, {2, 1, 1}, {3, -1}},
  };
  for (const Example& ex : examples) {
    SCOPED_TRACE(ex.pattern);
    const CheckedEinsum e = checked(ex.pattern, ex.shapes);
    std::vector<Tensor> inputs;
    for (std::size_t k = 0; k < ex.shapes.size(); ++k) inputs.emplace_back(ex.shapes[k], ex.values[k]);
    const Tensor want(ex.out_shape, ex.out);
    for (int width : {1, 4, 8}) EXPECT_TRUE(same_values(run_fused(e, inputs, {1, width, 0}), want));
  }
}

TEST(FusedExecute, Binary32IsSequential) {
  // E45: 2^24 + 1 + … + 1 stays 2^24 in binary32 when summed left to right.
  std::vector<float> v(9, 1.0f);
  v[0] = 16777216.0f;
  const std::vector<Tensor> inputs{Tensor(Shape{9}, v)};
  EXPECT_TRUE(same_values(run_fused(checked("i ->", {{9}}), inputs), Tensor(Shape{}, std::vector<float>{16777216.0f})));
}

TEST(FusedExecute, IntegersWrap) {
  const std::int32_t max32 = std::numeric_limits<std::int32_t>::max();
  const std::vector<Tensor> a{Tensor(Shape{2}, std::vector<std::int32_t>{max32, 2}),
                              Tensor(Shape{2}, std::vector<std::int32_t>{2, 1})};
  EXPECT_TRUE(same_values(run_fused(checked("i, i ->", {{2}, {2}}), a), Tensor(Shape{}, std::vector<std::int32_t>{0})));
  const std::int64_t min64 = std::numeric_limits<std::int64_t>::min();
  const std::vector<Tensor> b{Tensor(Shape{1}, std::vector<std::int64_t>{min64}),
                              Tensor(Shape{1}, std::vector<std::int64_t>{-1})};
  EXPECT_TRUE(same_values(run_fused(checked("i, i -> i", {{1}, {1}}), b), Tensor(Shape{1}, std::vector<std::int64_t>{min64})));
}

// ---------------------------------------------------------------------------------------------
// Empty outputs and empty contractions read nothing: the inputs below hold no storage at all.

template <class T>
void expect_no_reads(const char* pattern, std::vector<Shape> shapes, Shape out_shape) {
  SCOPED_TRACE(pattern);
  const CheckedEinsum e = checked(pattern, shapes);
  std::vector<Tensor> inputs;
  for (const Shape& s : shapes) inputs.emplace_back(s, std::vector<T>{});  // storage deliberately empty
  const Tensor zero(dtype_of_v<T>, out_shape);  // +0 everywhere
  for (int width : {1, 4, 8})
    for (unsigned threads : {1u, 3u})
      EXPECT_TRUE(same_values(run_fused(e, inputs, {threads, width, threads}), zero));
}

TEST(FusedExecute, EmptyContractionAndEmptyOutputReadNothing) {
  for (auto run : {&expect_no_reads<float>, &expect_no_reads<double>, &expect_no_reads<std::int32_t>,
                   &expect_no_reads<std::int64_t>}) {
    run("i, i ->", {{0}, {1}}, {});
    run("i j -> i", {{2, 0}}, {2});
    run("i j -> i", {{11, 0}}, {11});
    run("i j -> j", {{2, 0}}, {0});
    run("i, j -> i j", {{0}, {3}}, {0, 3});
    run("i i ->", {{0, 0}}, {});
    run("i i -> i", {{0, 0}}, {0});
    run("i j, j -> i", {{2, 0}, {1}}, {2});
    run("a b, b c -> a c", {{9, 0}, {0, 17}}, {9, 17});
    run("a b, b c, c d, d e -> a e", {{3, 2}, {2, 0}, {0, 4}, {4, 5}}, {3, 5});
  }
}

TEST(FusedExecute, EmptyContractionGivesPositiveZero) {
  const std::vector<Tensor> inputs{Tensor(Shape{3, 0}, std::vector<double>{})};
  const Tensor out = run_fused(checked("i j -> i", {{3, 0}}), inputs);
  for (double v : out.values<double>()) EXPECT_FALSE(std::signbit(v));
}

}  // namespace
}  // namespace einfuzz
