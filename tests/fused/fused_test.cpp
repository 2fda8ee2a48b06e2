// Tests of the fused executor: §7 stride plans, the §9 task policy, and that tiles, threads and chunks
// never change an output bit (against a tiny naive §6 evaluator that shares no code with fused/, and
// on random generated einsums split into several chunks against the reference).
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

CheckedEinsum checked(std::string_view pattern, std::vector<Shape> shapes) {
  auto result = check_einsum(pattern, shapes);
  if (!result) throw std::runtime_error(render(result.error()));
  return std::move(result).value();
}

Tensor run_fused(const CheckedEinsum& einsum, std::span<const Tensor> inputs, ExecOptions options = {}) {
  return fused::execute(fused::compile(einsum), inputs, options);
}

// §6 literally: S := 0; for c row-major: P := 1; P := P · x_k[...] in operand order; S := S + P.
// Operand coordinates come from the checked axes and shapes (a length-1 dimension reads 0).
template <class T>
Tensor naive_einsum(const CheckedEinsum& e, std::span<const Tensor> inputs) {
  Tensor out(dtype_of_v<T>, e.output_shape);
  std::vector<std::int64_t> coord(e.axes.size(), 0);
  const auto decode = [&](std::int64_t flat, const std::vector<int>& axes, const Shape& shape) {
    for (std::size_t i = axes.size(); i-- > 0;) {
      coord[static_cast<std::size_t>(axes[i])] = flat % shape[i];
      flat /= shape[i];
    }
  };
  for (std::int64_t o = 0; o < e.output_size; ++o) {
    decode(o, e.output, e.output_shape);
    T sum = T(0);
    for (std::int64_t c = 0; c < e.contraction_size; ++c) {
      decode(c, e.contracted, e.contraction_shape);
      T product = T(1);
      for (std::size_t k = 0; k < e.operands.size(); ++k) {
        const CheckedOperand& op = e.operands[k];
        std::int64_t index = 0;
        for (std::size_t d = 0; d < op.shape.size(); ++d)
          index = index * op.shape[d] + (op.shape[d] == 1 ? 0 : coord[static_cast<std::size_t>(op.axes[d])]);
        product = scalar_mul(product, inputs[k].values<T>()[static_cast<std::size_t>(index)]);
      }
      sum = scalar_add(sum, product);
    }
    out.values<T>()[static_cast<std::size_t>(o)] = sum;
  }
  return out;
}

Tensor naive(const CheckedEinsum& e, std::span<const Tensor> inputs) {
  return visit_dtype(inputs[0].dtype(), [&](auto tag) -> Tensor {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Bool8>) {
      throw std::logic_error("bool einsum");
    } else {
      return naive_einsum<T>(e, inputs);
    }
  });
}

// Bitwise equality with NaN compared as "is NaN" (ORACLE.md: payloads are ignored by default).
template <class T>
bool same_bits(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) && std::isnan(b)) return true;
  }
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

testing::AssertionResult same_values(const Tensor& actual, const Tensor& expected) {
  if (actual.dtype() != expected.dtype()) return testing::AssertionFailure() << "dtype differs";
  if (actual.shape() != expected.shape())
    return testing::AssertionFailure() << "shape " << format_shape(actual.shape()) << " vs "
                                       << format_shape(expected.shape());
  return visit_dtype(actual.dtype(), [&](auto tag) -> testing::AssertionResult {
    using T = decltype(tag);
    const auto a = actual.values<T>();
    const auto b = expected.values<T>();
    if (a.size() != b.size()) return testing::AssertionFailure() << "element count differs";
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!same_bits(a[i], b[i]))
        return testing::AssertionFailure() << "element " << i << ": " << +a[i] << " vs " << +b[i];
    return testing::AssertionSuccess();
  });
}

// Values that make order visible: mixed magnitudes, and for floats a sprinkle of NaN, ±Inf, -0.0,
// subnormals and huge values; integers span the full range so products wrap.
template <class T>
std::vector<T> random_values(std::int64_t count, std::mt19937_64& rng) {
  std::vector<T> v(static_cast<std::size_t>(count));
  std::uniform_int_distribution<int> pick(0, 99);
  for (T& x : v) {
    const int p = pick(rng);
    if constexpr (std::is_floating_point_v<T>) {
      using L = std::numeric_limits<T>;
      if (p < 40) {
        x = static_cast<T>(std::uniform_int_distribution<int>(-4, 4)(rng));
      } else if (p < 92) {
        const T mantissa = std::uniform_real_distribution<T>(-1, 1)(rng);
        x = std::ldexp(mantissa, std::uniform_int_distribution<int>(-30, 30)(rng));
      } else {
        const T special[] = {L::quiet_NaN(), L::infinity(), -L::infinity(), T(-0.0),
                             L::denorm_min() * 3, -L::denorm_min(), L::max() / 4, L::min()};
        x = special[p - 92];
      }
    } else {
      x = p < 50 ? static_cast<T>(std::uniform_int_distribution<int>(-9, 9)(rng))
                 : static_cast<T>(rng());
    }
  }
  return v;
}

std::vector<Tensor> random_inputs(const CheckedEinsum& e, DType dtype, std::mt19937_64& rng) {
  std::vector<Tensor> inputs;
  for (const CheckedOperand& op : e.operands) {
    const std::int64_t count = checked_element_count(op.shape).value();
    visit_dtype(dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (!std::is_same_v<T, Bool8>) inputs.emplace_back(op.shape, random_values<T>(count, rng));
    });
  }
  return inputs;
}

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

// ---------------------------------------------------------------------------------------------
// Tiles, threads and chunks never change a bit; every configuration equals the naive §6 loop.

struct InvarianceCase {
  std::string pattern;
  std::vector<Shape> shapes;
};

std::vector<InvarianceCase> invariance_cases() {
  std::vector<InvarianceCase> cases{
      {"a b, b c -> a c", {{5, 7}, {7, 19}}},                   // matmul, 2 full tiles + tail
      {"b i j, b j k -> b i k", {{3, 4, 5}, {3, 5, 13}}},       // batched
      {"b i j, b j k -> b i k", {{1, 4, 5}, {3, 5, 9}}},        // batch broadcast
      {"i i j -> i j", {{6, 6, 11}}},                           // diagonal
      {"i i ->", {{7, 7}}},                                     // trace
      {"i i i -> i", {{9, 9, 9}}},
      {"a b, b -> a b", {{9, 17}, {17}}},                       // broadcast
      {"a b, a b -> a b", {{9, 1}, {1, 17}}},                   // size-1 dims on both sides
      {"i j, j k -> i k", {{10, 1}, {3, 12}}},
      {"a b, b c, c d, d e -> a e", {{3, 4}, {4, 2}, {2, 3}, {3, 10}}},  // 4 operands
      {"i, i ->", {{37}, {37}}},                                // scalar output
      {"a b ->", {{5, 6}}},
      {"a b -> b a", {{6, 13}}},                                // strided lanes
      {"a b -> a", {{13, 5}}},
      {"a b, b, a b -> a b", {{5, 11}, {11}, {5, 11}}},         // 3 operands
      {"a b, a, b a -> a b", {{5, 11}, {5}, {11, 5}}},          // zero / unit / strided lanes
      {"a b, b a, a -> a b", {{7, 9}, {9, 7}, {7}}},
      {"a, a, a, a, a -> a", {{21}, {21}, {1}, {21}, {21}}},    // generic operand count
      // Generic count with a hoisted prefix and 1, 2, 3 or 5 operands moving in the inner loop.
      {"a b, b, a b, b c d -> a d", {{5, 3}, {3}, {5, 3}, {3, 4, 11}}},
      {"a b, b c, c d, d e -> a e", {{3, 4}, {4, 2}, {2, 3}, {3, 13}}},
      {"a b, b c d, c d, d e -> a e", {{3, 4}, {4, 2, 3}, {2, 3}, {3, 10}}},
      {"a b, c, b c, b c, b c, c e -> a e", {{3, 4}, {5}, {4, 5}, {4, 5}, {4, 5}, {5, 9}}},
      {"a b, b c, c d, e d -> a e", {{3, 4}, {4, 2}, {2, 3}, {12, 3}}},  // strided moving lanes
      {"a c b, b c d -> a d", {{3, 4, 5}, {5, 4, 9}}},          // two contraction loops
      {"a b c, b c d -> a d", {{3, 4, 5}, {4, 5, 9}}},          // mergeable contraction loops
      {"x y z, x y z -> x y z", {{3, 4, 5}, {3, 4, 5}}},        // mergeable output loops
      {"i, j -> j i", {{3}, {10}}},                             // outer product, transposed
      {"a, -> a", {{13}, {}}},                                  // rank-0 operand
      {", ->", {{}, {}}},
      {"j i, i j ->", {{6, 5}, {5, 6}}},
      {"... i, ... i -> ... i", {{2, 1, 2}, {3, 2}}},
      {"... i j, ... j -> ... i", {{2, 3, 9, 4}, {3, 4}}},
      {"a b, b c -> a c", {{4, 0}, {0, 9}}},                    // empty contraction
      {"a b, b c -> a c", {{0, 3}, {3, 9}}},                    // empty output
      {"a b, b c -> c", {{4, 3}, {3, 0}}},
  };
  // 64 operands: the generic fallback at its limit.
  std::string many;
  std::vector<Shape> many_shapes;
  for (int k = 0; k < 64; ++k) {
    many += k ? ", a" : "a";
    many_shapes.push_back({k % 7 == 3 ? 1 : 10});
  }
  cases.push_back({many + " -> a", many_shapes});
  return cases;
}

TEST(FusedExecute, TilesThreadsAndChunksAreBitwiseInvisible) {
  std::mt19937_64 rng(20240531);
  for (const InvarianceCase& c : invariance_cases()) {
    const CheckedEinsum e = checked(c.pattern, c.shapes);
    const auto plan = fused::compile(e);
    for (DType dtype : {DType::f32, DType::f64, DType::i32, DType::i64}) {
      SCOPED_TRACE(c.pattern + " " + std::string(dtype_name(dtype)));
      const std::vector<Tensor> inputs = random_inputs(e, dtype, rng);
      const Tensor want = naive(e, inputs);
      for (int width : {1, 4, 8}) {
        for (unsigned threads : {1u, 2u, 3u}) {
          for (unsigned tasks : {0u, threads}) {
            SCOPED_TRACE("width " + std::to_string(width) + " threads " + std::to_string(threads) +
                         " tasks " + std::to_string(tasks));
            EXPECT_TRUE(same_values(fused::execute(plan, inputs, {threads, width, tasks}), want));
          }
        }
      }
    }
  }
}

TEST(FusedExecute, PolicyChunksLargeWork) {
  // 64·128 outputs × 128 terms ≥ 1e6: the §9 policy itself picks several chunks.
  const CheckedEinsum e = checked("a b, b c -> a c", {{64, 128}, {128, 128}});
  ASSERT_GT(fused::task_count(64, e.output_size * e.contraction_size, 3), 1u);
  std::mt19937_64 rng(7);
  const std::vector<Tensor> inputs = random_inputs(e, DType::f64, rng);
  const Tensor want = naive(e, inputs);
  for (int width : {1, 8}) EXPECT_TRUE(same_values(run_fused(e, inputs, {3, width, 0}), want));
}

// ---------------------------------------------------------------------------------------------
// Random generated einsums, really split into chunks: below 10^6 units of work the §9 policy runs one
// chunk, so the property draws `tasks` (and threads >= 2 most of the time) to split small cases.

using Executor = std::function<Tensor(const fused::EinsumPlan&, std::span<const Tensor>, const ExecOptions&)>;

/// Draws of the chunked property: how many evaluated cases, and how many of them ran > 1 chunk.
struct ChunkTally {
  int evaluated = 0;
  int split = 0;
};

/// fused-vs-reference on generated einsums with drawn threads, tile width and tasks; false (with
/// RapidCheck's counterexample printed) when `execute` differs from the reference on some draw.
bool chunked_cases_equal_the_reference(const Executor& execute, ChunkTally& tally) {
  return rc::check("fused equals the reference on generated einsums split into chunks", [&] {
    Rng rng(*rc::gen::arbitrary<std::uint64_t>());
    // Most generated einsums have a rank-0, empty or length-1 leading output axis, which no task
    // count can split: draw up to 8 and keep the first whose O[0] has room for several chunks (so
    // the others still turn up, as fallbacks, now and then).
    GenOptions gen;
    gen.long_axis_percent = 10;
    einfuzz::Case c;
    std::optional<CheckedEinsum> checked;
    for (int attempt = 0; attempt < 8; ++attempt) {
      c = generate_einsum(rng, gen);
      std::vector<Shape> shapes;
      for (const Tensor& t : c.inputs) shapes.push_back(t.shape());
      auto e = check_einsum(c.pattern, shapes);
      RC_ASSERT(e.ok());
      checked = std::move(*e);
      if (checked->output_size > 0 && checked->contraction_size > 0 && !checked->output_shape.empty() &&
          checked->output_shape[0] >= 2) {
        break;
      }
    }
    ExecOptions options;
    options.threads = static_cast<unsigned>(*rc::gen::weightedElement<int>({{1, 1}, {3, 2}, {3, 3}, {2, 4}}));
    options.tile_width = *rc::gen::element(1, 4, 8);
    options.tasks = static_cast<unsigned>(*rc::gen::inRange(0, 9));
    const fused::EinsumPlan plan = fused::compile(*checked);
    const unsigned chunks = fused::chunk_count(plan, options);
    ++tally.evaluated;
    tally.split += chunks > 1;
    RC_CLASSIFY(chunks > 1, "several chunks");
    const Tensor want = reference::evaluate_einsum(*checked, c.inputs);
    const auto same = test::bitwise_same(want, execute(plan, c.inputs, options), /*strict_nan=*/true);
    if (!same) {
      RC_FAIL(std::string(same.message()) + "\nthreads " + std::to_string(options.threads) + " tile " +
              std::to_string(options.tile_width) + " tasks " + std::to_string(options.tasks) + " (" +
              std::to_string(chunks) + " chunks)\ncase:\n" + write_case(c));
    }
  });
}

TEST(FusedChunks, ChunkCountFollowsTasksThreadsAndTheOuterAxis) {
  const auto plan = fused::compile(checked("a b, b c -> a c", {{5, 7}, {7, 3}}));
  EXPECT_EQ(fused::chunk_count(plan, {3, 8, 0}), 1u);  // small work: the §9 policy runs one chunk
  EXPECT_EQ(fused::chunk_count(plan, {3, 8, 2}), 2u);
  EXPECT_EQ(fused::chunk_count(plan, {3, 8, 7}), 3u);  // capped by the threads
  EXPECT_EQ(fused::chunk_count(plan, {8, 8, 7}), 5u);  // capped by O[0]
  EXPECT_EQ(fused::chunk_count(fused::compile(checked("a b -> b", {{4, 6}})), {3, 8, 3}), 3u);
  EXPECT_EQ(fused::chunk_count(fused::compile(checked("a b ->", {{4, 6}})), {3, 8, 3}), 1u);  // rank-0 output
  EXPECT_EQ(fused::chunk_count(fused::compile(checked("a b -> a", {{4, 0}})), {3, 8, 3}), 0u);  // reads nothing
}

TEST(FusedChunks, GeneratedEinsumsSplitIntoChunksEqualTheReference) {
  ChunkTally tally;
  EXPECT_TRUE(chunked_cases_equal_the_reference(
      [](const fused::EinsumPlan& plan, std::span<const Tensor> inputs, const ExecOptions& options) {
        return fused::execute(plan, inputs, options);
      },
      tally));
  // The point of drawing `tasks`: a fair share of the cases really runs several chunks.
  ASSERT_GT(tally.evaluated, 0);
  EXPECT_GE(tally.split * 4, tally.evaluated) << tally.split << " of " << tally.evaluated << " split";
}

TEST(FusedChunks, APlantedChunkBoundaryBugIsCaught) {
  // Test-only defect: the balanced split forgets the remainder, so when O[0] is not a multiple of
  // the chunk count its last rows are never written (they keep the output's initial +0).
  const Executor forgets_the_remainder = [](const fused::EinsumPlan& plan, std::span<const Tensor> inputs,
                                            const ExecOptions& options) {
    Tensor out = fused::execute(plan, inputs, options);
    const unsigned chunks = fused::chunk_count(plan, options);
    if (chunks <= 1) return out;
    const std::int64_t outer = plan.output_shape[0];
    const std::int64_t row = plan.output_size / outer;
    const std::int64_t covered = outer / chunks * chunks;
    visit_dtype(out.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (!std::is_same_v<T, Bool8>) {
        auto v = out.values<T>();
        for (std::int64_t i = covered * row; i < outer * row; ++i) v[static_cast<std::size_t>(i)] = T(0);
      }
    });
    return out;
  };
  ChunkTally tally;
  EXPECT_FALSE(chunked_cases_equal_the_reference(forgets_the_remainder, tally));
}

TEST(FusedExecuteDeathTest, MixedDtypesAbort) {
  const CheckedEinsum e = checked("i, i ->", {{1}, {1}});
  const std::vector<Tensor> inputs{Tensor(Shape{1}, std::vector<double>{1}),
                                   Tensor(Shape{1}, std::vector<float>{1})};
  EXPECT_DEATH(run_fused(e, inputs), "share one dtype");
}

}  // namespace
}  // namespace einfuzz
