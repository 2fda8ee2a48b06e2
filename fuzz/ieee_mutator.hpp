// The value-aware half of the custom libFuzzer mutator: overwrite (or append) one element of the
// value bytes with an IEEE edge value or an integer extreme, aligned to the element width.
#pragma once

#include <cstddef>
#include <cstdint>

#include "fuzz_input.hpp"

namespace einfuzz::fuzz {

/// Mutates one value element of `data[0, size)` in place (at most `max_size` bytes) and returns the
/// new size, or 0 when it chose not to (the caller then falls back to LLVMFuzzerMutate).
/// Floats get NaN with random payloads and signs, ±Inf, ±0, ±the smallest and largest subnormal,
/// ±the smallest normal, ±the largest finite, 1 ± ulp, ±1, powers of two, or the negation of a
/// neighbour (a cancellation pair); integers get their extremes, ±1, 0, halves and wrap-around
/// neighbours; bools flip. Deterministic in `seed`.
std::size_t mutate_value(std::uint8_t* data, std::size_t size, std::size_t max_size, unsigned seed,
                         const ValueLayout& layout);

}  // namespace einfuzz::fuzz
