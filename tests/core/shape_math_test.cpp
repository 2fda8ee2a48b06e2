// Checked length products: an empty space counts 0 whatever its other lengths, before any of them
// is multiplied (three UBSan signed-overflow findings multiplied such lengths unchecked).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "einfuzz/core/shape_math.hpp"

namespace einfuzz {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

/// The product in 128-bit arithmetic, stopped once it leaves int64: the obviously-right answer.
std::optional<std::int64_t> wide_product(const std::vector<std::int64_t>& lengths) {
  for (std::int64_t l : lengths) {
    if (l < 0) return std::nullopt;
  }
  for (std::int64_t l : lengths) {
    if (l == 0) return 0;
  }
  __extension__ using Wide = __int128;
  Wide p = 1;
  for (std::int64_t l : lengths) {
    p *= l;
    if (p > kMax) return std::nullopt;
  }
  return static_cast<std::int64_t>(p);
}

TEST(ShapeMath, AnEmptySpaceCountsZeroWhateverItsOtherLengths) {
  // The lengths of the shuffle and reference findings: [0, 4539628424389459967, 32] and worse.
  const std::vector<std::int64_t> empty = {4539628424389459967, 32, 0, kMax, kMax};
  EXPECT_EQ(checked_product(empty), 0);
  EXPECT_EQ(element_count(empty), 0);
  const std::vector<std::int64_t> last = {kMax, kMax, kMax, 0};
  EXPECT_EQ(element_count(last), 0);
}

TEST(ShapeMath, OverflowAndNegativeLengthsHaveNoCount) {
  const std::vector<std::int64_t> over = {std::int64_t{1} << 32, std::int64_t{1} << 31};
  EXPECT_EQ(checked_product(over), std::nullopt);
  const std::vector<std::int64_t> fits = {std::int64_t{1} << 32, (std::int64_t{1} << 31) - 1};
  EXPECT_EQ(checked_product(fits), kMax - ((std::int64_t{1} << 32) - 1));  // 2^63 - 2^32
  const std::vector<std::int64_t> negative = {0, -1};
  EXPECT_EQ(checked_product(negative), std::nullopt);
  EXPECT_EQ(checked_product({}), 1);  // a rank-0 tensor holds one element
}

TEST(ShapeMathDeathTest, AnUnboundedElementCountIsAHarnessBug) {
  const std::vector<std::int64_t> over = {kMax, 2};
  EXPECT_DEATH(element_count(over), "harness bug: element_count");
}

RC_GTEST_PROP(ShapeMath, CheckedProductIsTheWideProduct, ()) {
  // Lengths from a mix of scales, so that zeros, small spaces and overflows all occur.
  const auto lengths = *rc::gen::container<std::vector<std::int64_t>>(rc::gen::oneOf(
      rc::gen::inRange<std::int64_t>(0, 4), rc::gen::inRange<std::int64_t>(0, std::int64_t{1} << 20),
      rc::gen::inRange<std::int64_t>(0, kMax), rc::gen::inRange<std::int64_t>(-2, 0)));
  RC_ASSERT(checked_product(lengths) == wide_product(lengths));
}

}  // namespace
}  // namespace einfuzz
