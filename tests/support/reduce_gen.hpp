// Random valid reduce cases for the tests, as a thin wrapper over the harness generator
// (einfuzz::generate_reduce) drawn from an einfuzz::Rng, so one seed always gives the same case.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/core/choice.hpp"
#include "einfuzz/core/tensor.hpp"
#include "einfuzz/harness/generate.hpp"

namespace einfuzz::test {

/// Which constructs the generator may use (the harness generator's options).
using ReduceGenOptions = einfuzz::ReduceGenOptions;

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

/// Draws one valid case with einfuzz::generate_reduce. Deterministic in `rng`'s state.
ReduceCase generate_reduce_case(Rng& rng, const ReduceGenOptions& options = {});

/// Values for `shape` from the harness generator's mixtures (einfuzz::generate_values).
Tensor random_values(Rng& rng, DType dtype, const Shape& shape);

}  // namespace einfuzz::test
