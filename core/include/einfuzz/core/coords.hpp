// The row-major odometer over a subset of a checked einsum's (or reduce's) global axes, shared by
// every evaluator that walks coordinates one element at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "einfuzz/core/tensor.hpp"

namespace einfuzz {

/// Calls fn() once per row-major coordinate of `axes` (global axis indices, axes[0] outermost),
/// with coords[a] set for each a in `axes` and every other entry of `coords` left as it is; never
/// when a length of `axes` is 0; once when `axes` is empty. `lengths` and `coords` are indexed by
/// global axis. Nested calls over disjoint subsets walk a product space.
template <class Fn>
void for_each_coord(const std::vector<int>& axes, const Shape& lengths, std::vector<std::int64_t>& coords, Fn&& fn) {
  for (const int a : axes) {
    if (lengths[static_cast<std::size_t>(a)] == 0) return;
    coords[static_cast<std::size_t>(a)] = 0;
  }
  for (;;) {
    fn();
    std::size_t i = axes.size();
    for (;;) {
      if (i == 0) return;
      const auto a = static_cast<std::size_t>(axes[--i]);
      if (++coords[a] < lengths[a]) break;
      coords[a] = 0;
    }
  }
}

}  // namespace einfuzz
