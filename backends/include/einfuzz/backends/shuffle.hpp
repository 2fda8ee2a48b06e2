// The built-in adversarial but correct any-order backend `shuffle` (ORACLE.md §6): it evaluates every
// einsum element with random (valid) summation trees, product associations, FMA use, wider
// accumulators and pairwise contraction paths, so the any-order oracle can be shown to be sound.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

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
  /// Precision profiles (ORACLE §8) to declare and evaluate, per float dtype; each must be valid
  /// for its dtype (is_valid_profile). A dtype without an entry gets one drawn from `seed` when
  /// `random_profiles`, else its default profile.
  std::vector<std::pair<DType, PrecisionProfile>> profiles;
  bool random_profiles = true;
};

/// The profile a shuffle backend with `options` declares and evaluates for `dtype`: the entry in
/// `options.profiles`, else (random_profiles) one drawn from the seed alone — f16 and bf16
/// accumulate in themselves, f32 or f64; f32 in f32 or f64, inputs rounded to TF32 or not; f64
/// in f64 — else the default. The same seed gives the same profiles on every machine.
PrecisionProfile shuffle_profile(const ShuffleOptions& options, DType dtype);

/// The `shuffle` backend: einsum on f16/bf16/f32/f64/i32/i64, any-order semantics, the precision
/// profiles of `shuffle_profile` declared (capabilities `accumulate`, `round_inputs`, and the
/// version text, which names the seed and the profiles) and evaluated as declared, factoring (as declared
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
