// The built-in adversarial but correct any-order backend `shuffle` (ORACLE.md §6): it evaluates every
// einsum element with random (valid) summation trees, product associations, FMA use, wider
// accumulators and pairwise contraction paths, so the any-order oracle can be shown to be sound.
#pragma once

#include <cstdint>
#include <memory>

#include "einfuzz/backends/backend.hpp"
#include "einfuzz/core/limits.hpp"

namespace einfuzz {

/// What the shuffle backend may do; the defaults are everything a correct any-order backend may do.
struct ShuffleOptions {
  std::uint64_t seed = 1;  ///< with the case's content, selects every random choice (reproducible)
  bool factoring = true;   ///< pairwise contraction paths, labels summed inside one operand first
  bool fma = true;         ///< a product's last multiplication may be fused into the addition
  bool wider = true;       ///< f32 may be accumulated in f64, f64 in long double (rounded once)
  Limits limits;           ///< the harness limits its checker applies (the run's)
  /// Declares and answers VJP cases (tie rule equal-share); off: VJP cases are `unsupported`.
  bool vjp = true;
};

/// The `shuffle` backend: einsum on f32/f64/i32/i64, any-order semantics, factoring (as declared
/// by `options.factoring`), NaN profile `propagate`. Reductions (every kind, bool included) fold each
/// fibre in a random order: sum as a random tree, prod as a random association, mean as that sum
/// then ÷n or ×(1/n), min/max with NaN propagating and either sign on a ±0 tie. An empty
/// contraction gives +0 (0 for integers) on every path; integers wrap, so they are exact.
/// VJP cases (f32/f64; tie rule equal-share): every cotangent element's terms multiplied and
/// summed along random trees, mean as g/n or g·(1/n), prod's leave-one-out product in a random
/// association, min/max's share g/|T| or g·(1/|T|) — only the freedoms ORACLE §7 allows (no FMA,
/// no wider accumulator, no factoring).
/// A case draws its choices from `Rng::mix(seed, hash of the case's content)` (op, pattern,
/// reduction, supplied lengths, dtype, shapes, value bytes, a VJP's cotangent): the same seed and case give the same
/// result in any order of cases, on any machine.
std::unique_ptr<Backend> make_shuffle_backend(const ShuffleOptions& options);

/// make_shuffle_backend with every freedom enabled.
std::unique_ptr<Backend> make_shuffle_backend(std::uint64_t seed);

}  // namespace einfuzz
