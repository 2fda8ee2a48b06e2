// Test helper for the tests' own plain einsum loops (faulty and planted backends, the MPFR check):
// each global axis's length; each operand's storage stride per global axis is core's
// operand_strides (einfuzz/core/coords.hpp, shared with the shuffle backend). Core only, so that
// the planted-bug plugins can use it too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/coords.hpp"

namespace einfuzz::test {

/// The length of every global axis of `e`, in axis order.
inline Shape axis_lengths(const CheckedEinsum& e) {
  Shape lengths;
  for (const Axis& a : e.axes) lengths.push_back(a.length);
  return lengths;
}

}  // namespace einfuzz::test
