// Random valid reduce cases (pattern, kind, dtype, shape, supplied lengths, values) drawn from an
// einfuzz::Rng, so one seed always gives the same case; shared by RapidCheck properties and fuzzers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/core/choice.hpp"
#include "einfuzz/core/tensor.hpp"

namespace einfuzz::test {

/// Which constructs the generator may use. Every generated case passes check_reduce.
struct ReduceGenOptions {
  bool composite = true;              ///< groups `(a b)` on both sides (and `(...)` on the right)
  bool anonymous = true;              ///< anonymous factors `2`, `3` on the left (always reduced)
  bool units = true;                  ///< `1`, `()`, `(1)` on both sides and `1` inside groups
  bool ellipsis = true;               ///< a bare left ellipsis covering 0–2 dimensions
  bool zero_lengths = true;           ///< axes of length 0 (never reduced for mean/min/max)
  int max_axes = 5;                   ///< named axes on the left
  std::int64_t max_length = 4;        ///< longest named or ellipsis axis
  std::int64_t max_elements = 4096;   ///< cap on the input's element count
  std::optional<Reduction> kind;      ///< force a kind (the dtype is then drawn among its valid ones)
  std::optional<DType> dtype;         ///< force a dtype (must be valid for the kind)
};

/// One generated case, ready for check_reduce and both evaluators.
struct ReduceCase {
  std::string pattern;
  Reduction kind = Reduction::sum;
  DType dtype = DType::f64;
  Shape shape;
  std::vector<std::pair<std::string, std::int64_t>> axis_lengths;  ///< supplied, in random order
  Tensor input;

  /// "sum 'a (b c) -> c' on 2x4 b=2 f64" — enough to replay the case by hand.
  std::string describe() const;
};

/// Draws one valid case. Deterministic in `rng`'s state.
ReduceCase generate_reduce_case(Rng& rng, const ReduceGenOptions& options = {});

/// Values for `shape` in one of several profiles: small integers, special values (±0, ±inf, NaN,
/// 1e16, 1e308, halves) for ties and NaN placement, or raw bit patterns; integers small or full
/// range (wrapping); bools 0/1.
Tensor random_values(Rng& rng, DType dtype, const Shape& shape);

}  // namespace einfuzz::test
