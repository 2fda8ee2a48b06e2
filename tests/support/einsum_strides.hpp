// Test helper for the tests' own plain einsum loops (faulty and planted backends, the MPFR check):
// each global axis's length and each operand's storage stride per global axis. Core only, so
// that the planted-bug plugins can use it too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "einfuzz/core/check.hpp"

namespace einfuzz::test {

/// The length of every global axis of `e`, in axis order.
inline Shape axis_lengths(const CheckedEinsum& e) {
  Shape lengths;
  for (const Axis& a : e.axes) lengths.push_back(a.length);
  return lengths;
}

/// Per operand and global axis: the row-major storage stride. A label repeated in one operand (a
/// diagonal) adds its dimensions' strides; a size-1 dimension broadcasts (stride 0).
inline std::vector<std::vector<std::int64_t>> operand_strides(const CheckedEinsum& e) {
  std::vector<std::vector<std::int64_t>> strides;
  for (const CheckedOperand& op : e.operands) {
    std::vector<std::int64_t> s(e.axes.size(), 0);
    std::int64_t step = 1;
    for (std::size_t d = op.shape.size(); d-- > 0;) {
      if (op.shape[d] != 1) s[static_cast<std::size_t>(op.axes[d])] += step;
      step *= op.shape[d];
    }
    strides.push_back(std::move(s));
  }
  return strides;
}

}  // namespace einfuzz::test
