// Internal to the shuffle backend: its two evaluations, one translation unit each (shuffle_einsum.cpp,
// shuffle_reduce.cpp), instantiated for every dtype they take.
#pragma once

#include <span>
#include <vector>

#include "einfuzz/backends/shuffle.hpp"
#include "einfuzz/core/check.hpp"
#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/core/choice.hpp"
#include "einfuzz/core/precision.hpp"
#include "einfuzz/core/tensor.hpp"

namespace einfuzz::shuffle_detail {

/// The einsum on T (f16, bf16, f32, f64, i32, i64) along paths drawn from `rng` within `options`'
/// freedoms: per term, or (when factoring) a random pairwise contraction path; +0 everywhere when
/// the output or the contraction is empty, without drawing from `rng`. A float T is evaluated as
/// `profile` declares (ORACLE §8): in its accumulator, and with TF32 inputs to every product when
/// it rounds inputs (per term: the k inputs; on a pairwise path: both operands of each pairwise
/// product, intermediates included, as a matrix unit does).
template <class T>
Tensor shuffle_einsum(const CheckedEinsum& e, std::span<const Tensor> inputs, Rng& rng, const ShuffleOptions& options,
                      const PrecisionProfile& profile);

/// The reduce on T (every dtype): every fibre folded in its own random order (ORACLE.md §4), a
/// float T's sum, mean and prod in `profile`'s accumulator (input rounding never applies).
template <class T>
Tensor shuffle_reduce(const CheckedReduce& r, const Tensor& input, Rng& rng, const ShuffleOptions& options,
                      const PrecisionProfile& profile);

/// The VJP of a checked einsum on T (f32, f64) with cotangent `g` (ORACLE §7): one cotangent per
/// operand, each element's terms multiplied and summed along random trees (no FMA), in `profile`'s
/// accumulator with its input rounding (an einsum VJP is an einsum, ORACLE §8), converted once.
template <class T>
std::vector<Tensor> shuffle_vjp_einsum(const CheckedEinsum& e, std::span<const Tensor> inputs, const Tensor& g, Rng& rng,
                                       const PrecisionProfile& profile);

/// The VJP of a checked differentiable reduce on T (f32, f64) with cotangent `g`, tie rule
/// equal-share (ORACLE §7), in random valid orders.
template <class T>
Tensor shuffle_vjp_reduce(const CheckedReduce& r, const Tensor& input, const Tensor& g, Rng& rng);

}  // namespace einfuzz::shuffle_detail
