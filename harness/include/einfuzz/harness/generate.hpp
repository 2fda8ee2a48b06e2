// The case generator: valid checked einsums with zero-length axes, size-1 broadcasting, diagonals,
// ellipses, scalar operands/outputs, every numeric dtype and IEEE edge values. Shared by the
// RapidCheck properties (which draw its seed) and, later, the fuzz campaign.
#pragma once

#include <cstdint>
#include <vector>

#include "einfuzz/core/case.hpp"
#include "einfuzz/core/choice.hpp"

namespace einfuzz {

struct GenOptions {
  int max_operands = 6;                 ///< 1..max_operands operands
  int max_axes_per_operand = 6;         ///< named items per operand (ellipsis not counted)
  std::int64_t max_length = 5;          ///< axis lengths drawn from 0..max_length, biased to 0, 1, 2
  std::int64_t max_global = 4096;       ///< bound on output size × contraction size
  std::vector<DType> dtypes = {DType::f32, DType::f64, DType::i32, DType::i64};
};

/// Draws one valid einsum case (the checker accepts it). Deterministic in the state of `rng`.
Case generate_einsum(Rng& rng, const GenOptions& options = {});

/// Applies a bijective renaming of every named label of `c`'s pattern (multi-character names
/// included), keeping the layout of the text; ellipses and structure are untouched.
Case relabel(const Case& c, Rng& rng);

}  // namespace einfuzz
