// The row-major odometer over a subset of a checked einsum's (or reduce's) global axes, and the
// storage strides per global axis, shared by every evaluator that walks coordinates one element at
// a time; and a flat index turned back into coordinates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/core/tensor.hpp"

namespace einfuzz {

/// Row-major coordinates of element `flat` of `shape` (the last axis varies fastest).
inline std::vector<std::int64_t> unravel(std::int64_t flat, const Shape& shape) {
  std::vector<std::int64_t> coords(shape.size());
  for (std::size_t i = shape.size(); i-- > 0;) {
    coords[i] = flat % shape[i];
    flat /= shape[i];
  }
  return coords;
}

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

/// Per operand of `e` and global axis: that axis' stride in the operand's row-major storage (the
/// dimensions of a repeated label add up; a size-1 dimension is broadcast and contributes 0).
inline std::vector<std::vector<std::int64_t>> operand_strides(const CheckedEinsum& e) {
  std::vector<std::vector<std::int64_t>> strides;
  for (const CheckedOperand& op : e.operands) {
    // In unsigned arithmetic, as elementary_strides: an empty operand's other lengths may multiply
    // past int64 (the checker bounds only the output and contraction counts); nothing is read then.
    std::vector<std::int64_t> s(e.axes.size(), 0);
    std::uint64_t step = 1;
    for (std::size_t d = op.shape.size(); d-- > 0;) {
      if (op.shape[d] != 1) s[static_cast<std::size_t>(op.axes[d])] += static_cast<std::int64_t>(step);
      step *= static_cast<std::uint64_t>(op.shape[d]);
    }
    strides.push_back(std::move(s));
  }
  return strides;
}

/// Per elementary axis of a checked reduce, its stride in the input's row-major storage (a
/// composite group (x y z) is row-major inside its dimension).
inline std::vector<std::int64_t> elementary_strides(const CheckedReduce& r) {
  // In unsigned arithmetic: an empty input's other lengths may multiply past int64 (the checker
  // bounds only the element count, 0); such strides are never used, since nothing is read.
  std::vector<std::int64_t> stride(r.axes.size(), 0);
  std::uint64_t dim_stride = 1;
  for (std::size_t d = r.input_groups.size(); d-- > 0;) {
    std::uint64_t s = dim_stride;
    for (std::size_t k = r.input_groups[d].size(); k-- > 0;) {
      const auto a = static_cast<std::size_t>(r.input_groups[d][k]);
      stride[a] = static_cast<std::int64_t>(s);
      s *= static_cast<std::uint64_t>(r.axes[a].length);
    }
    dim_stride *= static_cast<std::uint64_t>(r.input_shape[d]);
  }
  return stride;
}

/// The storage offset of `coords` (indexed by global axis) under per-axis `stride`.
inline std::int64_t storage_offset(const std::vector<std::int64_t>& stride, const std::vector<std::int64_t>& coords) {
  std::int64_t at = 0;
  for (std::size_t a = 0; a < coords.size(); ++a) at += coords[a] * stride[a];
  return at;
}

}  // namespace einfuzz
