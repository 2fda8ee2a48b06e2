// Test-only broken variants of the ordered einsum executor (issue 6's acceptance): a small
// sequential executor that is correct with PlantedBug::none and wrong in exactly one way otherwise.
#pragma once

#include <memory>
#include <string_view>

#include "einfuzz/backends/backend.hpp"

namespace einfuzz::test {

enum class PlantedBug {
  none,                ///< the correct ordered semantics (the control)
  size1_stride,        ///< (a) a size-1 (broadcast) dimension walked with stride 1 instead of 0
  seeded_accumulator,  ///< (b) the accumulator seeded with the first product instead of +0
  innermost_first,     ///< (c) contracted axes walked innermost-first (C reversed)
  dropped_term,        ///< (d) the last term dropped when the contraction size is not a multiple of 8
};

/// "none", "size1-stride", "seeded-accumulator", "innermost-first", "dropped-term".
std::string_view planted_bug_name(PlantedBug bug);

/// An ordered einsum backend (f32, f64, i32, i64; reduce unsupported) named "planted-<bug>".
/// Reads that a bug pushes out of bounds wrap around the operand, so it stays memory-safe.
std::unique_ptr<Backend> make_planted_bug_backend(PlantedBug bug);

}  // namespace einfuzz::test
