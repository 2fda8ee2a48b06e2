// core/coords.hpp: the row-major odometer every element-wise evaluator walks, and the strides it reads with.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "einfuzz/core/coords.hpp"

namespace einfuzz {
namespace {

using Coords = std::vector<std::int64_t>;

TEST(Coords, WalksTheSubsetRowMajorAndLeavesOtherAxesAlone) {
  const Shape lengths = {2, 9, 3};
  Coords coords = {7, 5, 7};
  std::vector<Coords> seen;
  for_each_coord({2, 0}, lengths, coords, [&] { seen.push_back(coords); });
  // axes[0] (global axis 2) is outermost; global axis 1 keeps its 5.
  const std::vector<Coords> expected = {{0, 5, 0}, {1, 5, 0}, {0, 5, 1}, {1, 5, 1}, {0, 5, 2}, {1, 5, 2}};
  EXPECT_EQ(seen, expected);
}

TEST(Coords, AnEmptySubsetCallsOnceAndAZeroLengthNever) {
  const Shape lengths = {3, 0};
  Coords coords = {1, 1};
  int calls = 0;
  for_each_coord({}, lengths, coords, [&] { ++calls; });
  EXPECT_EQ(calls, 1);
  for_each_coord({0, 1}, lengths, coords, [&] { ++calls; });
  EXPECT_EQ(calls, 1);
}

TEST(Coords, NestedCallsWalkTheProductSpace) {
  const Shape lengths = {2, 3};
  Coords coords(2, 0);
  std::vector<Coords> seen;
  for_each_coord({0}, lengths, coords, [&] { for_each_coord({1}, lengths, coords, [&] { seen.push_back(coords); }); });
  ASSERT_EQ(seen.size(), 6u);
  EXPECT_EQ(seen.front(), (Coords{0, 0}));
  EXPECT_EQ(seen[3], (Coords{1, 0}));
  EXPECT_EQ(seen.back(), (Coords{1, 2}));
}

TEST(Coords, OperandStridesAddUpOnADiagonalAndAreZeroWhereBroadcast) {
  // G = [i, j]; operand 0 is [3, 3] over (i, i), operand 1 is [1, 2] over (i, j) with i broadcast.
  auto e = check_einsum("i i, i j -> j", std::vector<Shape>{{3, 3}, {1, 2}});
  ASSERT_TRUE(e.ok());
  const auto s = operand_strides(*e);
  EXPECT_EQ(s, (std::vector<std::vector<std::int64_t>>{{4, 0}, {0, 1}}));
  EXPECT_EQ(storage_offset(s[0], {2, 1}), 8);
  EXPECT_EQ(storage_offset(s[1], {2, 1}), 1);
}

TEST(Coords, AnEmptyOperandsStridesDoNotOverflow) {
  // Accepted: the output and contraction counts are 0 and 2^40; the operand's lengths beside its 0
  // multiply to 2^80, which signed strides overflowed (UBSan).
  const std::int64_t big = std::int64_t{1} << 40;
  auto e = check_einsum("a b c -> a b", std::vector<Shape>{{0, big, big}});
  ASSERT_TRUE(e.ok()) << render(e.error());
  const auto s = operand_strides(*e);
  EXPECT_EQ(s[0][static_cast<std::size_t>(e->operands[0].axes[2])], 1);
  EXPECT_EQ(s[0][static_cast<std::size_t>(e->operands[0].axes[1])], big);
}

TEST(Coords, ElementaryStridesAreRowMajorInsideAGroup) {
  // (a b) c on [6, 4] with a = 2: a strides 3·4, b 4, c 1.
  const std::vector<std::pair<std::string, std::int64_t>> lengths = {{"a", 2}};
  auto r = check_reduce("(a b) c -> a", "sum", Shape{6, 4}, lengths, DType::f64);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(elementary_strides(*r), (std::vector<std::int64_t>{12, 4, 1}));
}

}  // namespace
}  // namespace einfuzz
