// The reference's ordered VJPs (SEMANTICS §13.8) on hand-worked examples: each expected value is
// derived in the comment above it from the definition, not read off the implementation.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/reference/vjp.hpp"

namespace einfuzz::reference {
namespace {

std::vector<Tensor> einsum_vjp(const std::string& pattern, std::vector<Tensor> inputs, const Tensor& g) {
  std::vector<Shape> shapes;
  for (const Tensor& t : inputs) shapes.push_back(t.shape());
  auto checked = check_einsum(pattern, shapes);
  EXPECT_TRUE(checked) << render(checked.error());
  return vjp_einsum(*checked, inputs, g);
}

Tensor reduce_vjp(const std::string& pattern, const std::string& kind, const Tensor& x, const Tensor& g) {
  auto checked = check_reduce(pattern, kind, x.shape(), {}, x.dtype());
  EXPECT_TRUE(checked) << render(checked.error());
  return vjp_reduce(*checked, x, g);
}

std::vector<std::uint64_t> bits(const Tensor& t) {
  std::vector<std::uint64_t> out;
  for (const double v : t.values<double>()) out.push_back(std::bit_cast<std::uint64_t>(v));
  return out;
}

void expect_bits(const Tensor& actual, const std::vector<double>& expected) {
  std::vector<std::uint64_t> want;
  for (const double v : expected) want.push_back(std::bit_cast<std::uint64_t>(v));
  EXPECT_EQ(bits(actual), want);
}

TEST(ReferenceVjp, MatmulIsTheTwoTransposedProducts) {
  // a b, b c -> a c with A = [[1,2],[3,4]], B = [[5],[6]], g = [[1],[10]]:
  // dA[a][b] = g[a]·B[b] = [[5,6],[50,60]]; dB[b] = Σ_a g[a]·A[a][b] = [1+30, 2+40] = [31, 42].
  const auto grads = einsum_vjp("a b, b c -> a c",
                                {Tensor(Shape{2, 2}, std::vector<double>{1, 2, 3, 4}), Tensor(Shape{2, 1}, std::vector<double>{5, 6})},
                                Tensor(Shape{2, 1}, std::vector<double>{1, 10}));
  ASSERT_EQ(grads.size(), 2u);
  EXPECT_EQ(grads[0].shape(), (Shape{2, 2}));
  expect_bits(grads[0], {5, 6, 50, 60});
  expect_bits(grads[1], {31, 42});
}

TEST(ReferenceVjp, SizeOneBroadcastSumsOverTheBroadcastPositions) {
  // i j, j -> i j with x of shape [1, 3] broadcast over i (length 2 from y? no: i comes from x only),
  // so use "i j, i j -> i j" with x [1,3] broadcast against y [2,3]: dx[0][j] = g[0][j]·y[0][j] + g[1][j]·y[1][j].
  const auto grads = einsum_vjp("i j, i j -> i j",
                                {Tensor(Shape{1, 3}, std::vector<double>{7, 8, 9}),
                                 Tensor(Shape{2, 3}, std::vector<double>{1, 2, 3, 4, 5, 6})},
                                Tensor(Shape{2, 3}, std::vector<double>{1, 1, 1, 2, 2, 2}));
  expect_bits(grads[0], {1 + 8, 2 + 10, 3 + 12});
  // dy[i][j] = g[i][j]·x[0][j].
  expect_bits(grads[1], {7, 8, 9, 14, 16, 18});
}

TEST(ReferenceVjp, DiagonalWritesOnlyTheDiagonal) {
  // trace i i -> with g = 3: dX[i][i] = 3, off-diagonal elements receive no assignment: +0.
  const auto grads = einsum_vjp("i i ->", {Tensor(Shape{2, 2}, std::vector<double>{1, 2, 3, 4})},
                                Tensor(Shape{}, std::vector<double>{3}));
  expect_bits(grads[0], {3, 0, 0, 3});
}

TEST(ReferenceVjp, ZeroLengthAxisGivesPositiveZeros) {
  // a b, b -> a with b of length 0: the output is [+0, +0]; every element of both inputs is
  // reached by no assignment (the global space is empty): dA has no elements, dv has none either.
  const auto grads = einsum_vjp("a b, b -> a",
                                {Tensor(Shape{2, 0}, std::vector<double>{}), Tensor(Shape{0}, std::vector<double>{})},
                                Tensor(Shape{2}, std::vector<double>{1, 2}));
  EXPECT_EQ(grads[0].size(), 0);
  EXPECT_EQ(grads[1].size(), 0);
  // a, b -> a with b of length 0: x's elements are reached by no assignment: +0 each.
  const auto outer = einsum_vjp("a, b -> a",
                                {Tensor(Shape{2}, std::vector<double>{5, 6}), Tensor(Shape{0}, std::vector<double>{})},
                                Tensor(Shape{2}, std::vector<double>{-1, -2}));
  expect_bits(outer[0], {0.0, 0.0});
}

TEST(ReferenceVjp, SingleAssignmentStillAddsToPositiveZero) {
  // i -> i with g = [-0]: the one assignment contributes -0·(empty product 1) = -0, and +0 + -0 = +0.
  const auto grads = einsum_vjp("i -> i", {Tensor(Shape{1}, std::vector<double>{4})}, Tensor(Shape{1}, std::vector<double>{-0.0}));
  expect_bits(grads[0], {0.0});
}

TEST(ReferenceVjp, SumCopiesAndMeanDividesOnce) {
  const Tensor x(Shape{2, 3}, std::vector<double>{1, 2, 3, 4, 5, 6});
  const Tensor g(Shape{2}, std::vector<double>{-0.0, 1});
  // sum: every fibre element receives its output's cotangent exactly (a -0 stays -0).
  expect_bits(reduce_vjp("a b -> a", "sum", x, g), {-0.0, -0.0, -0.0, 1, 1, 1});
  // mean: g / 3, one division: 1/3 rounded once.
  expect_bits(reduce_vjp("a b -> a", "mean", x, g), {-0.0 / 3, -0.0 / 3, -0.0 / 3, 1.0 / 3, 1.0 / 3, 1.0 / 3});
  // The fibre is not contiguous in the input: reduce over a of "a b -> b" reads down the columns.
  expect_bits(reduce_vjp("a b -> b", "sum", x, Tensor(Shape{3}, std::vector<double>{1, 2, 3})), {1, 2, 3, 1, 2, 3});
}

TEST(ReferenceVjp, ProdIsLeaveOneOutWithoutDivision) {
  // One zero: only the zero's own element gets the product of the others; two zeros: all 0.
  const Tensor g(Shape{2}, std::vector<double>{2, 2});
  const Tensor x(Shape{2, 3}, std::vector<double>{3, 0, 5, 0, 7, 0});
  // fibre [3, 0, 5]: [0·5, 3·5, 3·0]·2 = [0, 30, 0]; fibre [0, 7, 0]: [7·0, 0·0, 0·7]·2 = [0, 0, 0].
  expect_bits(reduce_vjp("a b -> a", "prod", x, g), {0, 30, 0, 0, 0, 0});
}

TEST(ReferenceVjp, MaxSharesEquallyAmongTiesIncludingSignedZeros) {
  // fibre [1, 3, 3]: T = {1, 2}, each gets g/2; fibre [-0, +0, -1]: the max is a zero and IEEE ==
  // puts both zeros in T: g/2 each.
  const Tensor x(Shape{2, 3}, std::vector<double>{1, 3, 3, -0.0, 0.0, -1});
  const Tensor g(Shape{2}, std::vector<double>{1, 6});
  expect_bits(reduce_vjp("a b -> a", "max", x, g), {0, 0.5, 0.5, 3, 3, 0});
  // min of the same: fibre 0's min 1 is unique; fibre 1's is -1.
  expect_bits(reduce_vjp("a b -> a", "min", x, g), {1, 0, 0, 0, 0, 6});
}

TEST(ReferenceVjp, NanFibreSharesAmongItsNans) {
  // The ≤-fold of max over [nan, 2, nan]: acc = nan; nan <= 2 false → nan; nan <= nan false → nan.
  // The result is NaN, and T is the NaN elements (NaN counts equal to NaN): g/2 each.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x(Shape{1, 3}, std::vector<double>{nan, 2, nan});
  const Tensor grad = reduce_vjp("a b -> a", "max", x, Tensor(Shape{1}, std::vector<double>{4}));
  expect_bits(grad, {2, 0, 2});
}

TEST(ReferenceVjp, Float32StaysInFloat32) {
  // mean of three f32 values with g = 1: 1.0f/3.0f rounded once in binary32.
  const Tensor x(Shape{3}, std::vector<float>{1, 2, 3});
  const Tensor grad = reduce_vjp("a -> ", "mean", x, Tensor(Shape{}, std::vector<float>{1}));
  ASSERT_EQ(grad.dtype(), DType::f32);
  for (const float v : grad.values<float>()) EXPECT_EQ(std::bit_cast<std::uint32_t>(v), std::bit_cast<std::uint32_t>(1.0f / 3.0f));
}

}  // namespace
}  // namespace einfuzz::reference
