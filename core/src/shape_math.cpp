// Checked products of axis lengths: a zero length wins before anything is multiplied.
#include "einfuzz/core/shape_math.hpp"

#include <algorithm>
#include <string>

#include "einfuzz/core/harness_bug.hpp"

namespace einfuzz {

std::optional<std::int64_t> checked_product(std::span<const std::int64_t> lengths) noexcept {
  if (std::any_of(lengths.begin(), lengths.end(), [](std::int64_t l) { return l < 0; })) return std::nullopt;
  if (std::find(lengths.begin(), lengths.end(), std::int64_t{0}) != lengths.end()) return 0;
  std::int64_t product = 1;
  for (std::int64_t l : lengths) {
    if (__builtin_mul_overflow(product, l, &product)) return std::nullopt;
  }
  return product;
}

std::int64_t element_count(std::span<const std::int64_t> lengths) noexcept {
  const std::optional<std::int64_t> n = checked_product(lengths);
  if (!n) harness_bug("element_count: " + std::to_string(lengths.size()) + " lengths that no int64 counts");
  return *n;
}

}  // namespace einfuzz
