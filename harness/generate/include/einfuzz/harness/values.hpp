// Input values for `einfuzz check`: random, iota, ones, or a cycle of IEEE edge values.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "einfuzz/core/tensor.hpp"

namespace einfuzz {

enum class ValueMode {
  random,  ///< seeded small integers and binary fractions (exact products for f32/f64), rare edges
  iota,    ///< 1, 2, 3, … (the spec's `[1..n]`)
  ones,    ///< all 1
  edge,    ///< seeded draws from the IEEE edge set: NaN, ±Inf, ±0, subnormals, smallest normal,
           ///< largest finite, 1 ± ulp, cancellation pairs; integer extremes for i32/i64
};

std::string_view value_mode_name(ValueMode mode) noexcept;
std::optional<ValueMode> value_mode_from_name(std::string_view name) noexcept;

/// Values of operand `operand` (seeded independently per operand). The caller has already checked
/// the element count of `shape` against the limits.
Tensor make_values(DType dtype, const Shape& shape, ValueMode mode, std::uint64_t seed,
                   std::size_t operand);

/// The IEEE edge set of `T` (float, double, Float16, BFloat16), in a fixed order; the 16-bit lists
/// add half-ulp ties (2^-p, and 2^(emax-p), which rounds the largest finite up to infinity).
template <class T>
std::vector<T> edge_values();

}  // namespace einfuzz
