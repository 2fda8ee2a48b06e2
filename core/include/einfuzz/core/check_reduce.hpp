// Pattern × shape × supplied lengths × kind × dtype → a checked reduce (SEMANTICS §2.3, §3 end,
// §8, §13.5–13.6, §13.11), or the first failing diagnostic in the spec's precedence.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "einfuzz/core/diagnostic.hpp"
#include "einfuzz/core/dtype.hpp"
#include "einfuzz/core/limits.hpp"
#include "einfuzz/core/pattern.hpp"
#include "einfuzz/core/reduction.hpp"
#include "einfuzz/core/tensor.hpp"

namespace einfuzz {

/// One elementary axis of the input (a named axis, an anonymous factor, or one ellipsis dimension).
struct ElementaryAxis {
  std::string name;         ///< the name, the anonymous literal's text, or "...k"
  std::int64_t length = 0;  ///< resolved length
};

/// A checked reduce: everything an evaluator needs, independent of values.
struct CheckedReduce {
  std::string pattern;                           ///< the source text
  Reduction kind = Reduction::sum;
  DType dtype = DType::f64;
  Shape input_shape;                             ///< physical input shape
  std::vector<ElementaryAxis> axes;              ///< input elementary axes, input order (groups flattened)
  std::vector<std::vector<int>> input_groups;    ///< per input dimension: its elementary axes (row-major)
  std::vector<std::vector<int>> output_groups;   ///< per output dimension: its elementary axes (empty: unit)
  std::vector<int> reduced;                      ///< reduced axes in input order (fibre row-major)
  Shape output_shape;                            ///< physical output shape (one entry per output group)
  std::int64_t output_size = 1;                  ///< product of output_shape
  std::int64_t fibre_size = 1;                   ///< product of reduced lengths (1 if none, 0 if any is 0)
};

/// Checks in this order: `unknownReduction` (the kind's name), parse errors, then SEMANTICS §2.3
/// (invalidEllipsis, rankMismatch, axisMismatch, duplicateAxisLength, unusedAxisLength,
/// dimensionMismatch / cannotInferAxis per input dimension), then `emptyFiber` for the kinds that
/// need a non-empty fibre (mean/min/max, decided from shapes only), then `unsupportedDtype` (the
/// kind's DTypeRule: mean on integers or bool, any/all on non-bool, sum/prod/min/max on bool), then
/// the size limits (`sizeLimitExceeded`).
Result<CheckedReduce> check_reduce(std::string_view pattern, std::string_view reduction, const Shape& input,
                                   std::span<const std::pair<std::string, std::int64_t>> axis_lengths,
                                   DType dtype, const Limits& limits = {});

/// check_reduce's result, shared instead of copied (the last call's on this thread, when every
/// argument is the same). Never null.
std::shared_ptr<const Result<CheckedReduce>> check_reduce_shared(
    std::string_view pattern, std::string_view reduction, const Shape& input,
    std::span<const std::pair<std::string, std::int64_t>> axis_lengths, DType dtype, const Limits& limits);

}  // namespace einfuzz
