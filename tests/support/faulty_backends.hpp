// Test-only any-order backends that are each wrong in exactly one way, to show that the any-order
// oracle is tight (ORACLE.md §6): every one of them must be caught with the expected verdict.
#pragma once

#include <memory>

#include "einfuzz/backends/backend.hpp"

namespace einfuzz::test {

/// (a) Partial sums rounded to `mantissa_bits` significant bits after every addition (a narrow
/// accumulator, e.g. 11 for f16 or 8 for bf16, behind an f32/f64 API). Products are exact-type.
std::unique_ptr<Backend> make_narrow_accumulator_backend(int mantissa_bits);

/// (b) Drops the last term of every output element (an off-by-one loop bound).
std::unique_ptr<Backend> make_dropped_term_backend();

/// (c) Adds one ulp (towards +Inf) to every passthrough element (k = 1, K = 1); correct elsewhere.
std::unique_ptr<Backend> make_passthrough_ulp_backend();

/// (d) Replaces every NaN result by +0.
std::unique_ptr<Backend> make_nan_to_zero_backend();

/// (e) Factors empty contractions as torch 1.13 does: when K = 0 the element is
/// Π_m (Σ of operand m over its contracted labels), so `i, j ->` on [Inf] and an empty j is
/// Inf·0 = NaN. Correct (sequential) whenever K >= 1.
std::unique_ptr<Backend> make_factored_empty_backend();

/// (f) Reduce min/max on f32/f64 that ignore NaN (fmin/fmax: the extreme of the non-NaN values, NaN
/// only when the whole fibre is NaN, ORACLE.md §5 `ignore`) while declaring the `propagate` profile.
std::unique_ptr<Backend> make_nan_ignoring_extreme_backend();

/// What a faulty f32/f64 reduce backend (sum, mean, prod; a plain sequential fold otherwise) gets wrong.
enum class ReduceFault {
  dropped_term,        ///< skips the last value of every fibre (an off-by-one loop bound)
  narrow_accumulator,  ///< holds the running sum/product in f32 for f64 inputs, in 11 bits for f32
  wrong_divisor,       ///< mean divides by n + 1 (sum and prod are correct)
};

/// (g) A reduce backend with one `fault`, declaring any-order semantics.
std::unique_ptr<Backend> make_faulty_reduce_backend(ReduceFault fault);

}  // namespace einfuzz::test
