// The `xtensor` backend: einsum as an xtensor expression of broadcast views and reduce through
// xtensor's reducers, used the way an xtensor user would.
#pragma once

#include <memory>

#include "einfuzz/backends/backend.hpp"
#include "einfuzz/core/limits.hpp"

namespace einfuzz {

/// The `xtensor` backend (xtensor 0.24). einsum: each operand is adapted without copying, its
/// repeated labels taken with `xt::diagonal`, `xt::transpose`d into global label order and given
/// `xt::newaxis` for the labels it lacks; the views are multiplied left to right (broadcasting) and
/// reduced with `xt::sum` over the contracted labels, then transposed to the output order. Every term
/// is one product, so the backend declares `factoring: false`. reduce: `xt::sum`, `xt::mean`,
/// `xt::prod`, `xt::amin`, `xt::amax` over the reduced elementary axes, `xt::any` / `xt::all` per
/// fibre. Empty outputs, empty contractions (+0) and empty fibres (the kind's identity) are decided
/// without calling xtensor (its strided iteration over empty arrays is not UB-clean); `tensordot` and
/// `linalg` are never used (BLAS exits the process on an empty dimension). Integers are computed
/// in the unsigned type of the same width (wrapping). Any-order; NaN profile declared `propagate`
/// (what xtensor documents for amin/amax, numpy's); the observed fold differs and is a known
/// divergence (corpus/divergences/README.md). Dtypes f32 f64 i32 i64 (+ bool for any/all).
/// `limits` are the harness limits its checker applies (the run's, so raising them reaches it).
std::unique_ptr<Backend> make_xtensor_backend(const Limits& limits = {});

}  // namespace einfuzz
