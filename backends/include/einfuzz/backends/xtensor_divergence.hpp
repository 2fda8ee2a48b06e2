// xtensor 0.24's recorded amin/amax divergence (corpus/divergences/README.md) as an exact model, so
// the fuzz target and the tests accept that one divergence and nothing else.
#pragma once

#include <optional>

#include "einfuzz/core/case.hpp"
#include "einfuzz/core/tensor.hpp"

namespace einfuzz {

/// What xtensor 0.24's lazy `xt::amax` / `xt::amin` compute (xreducer_stepper::aggregate_impl) for a
/// float min/max reduce case: each run along the innermost reduced axis is folded from lowest()
/// (max() for min) with f(acc, v) = select(acc > v, acc, v) (acc < v for min); outer reduced axes
/// merge their sub-results left to right with the same f, without an initial value; nothing reduced
/// gives f(init, x). So a NaN survives only as a run's last value, a later tie wins, and -inf (max)
/// gives lowest(). nullopt when the case is not an f32/f64 min/max reduce the checker accepts.
std::optional<Tensor> xtensor_extreme_fold(const Case& c);

/// True when `actual` is the recorded divergence on `c`: `c` is an f32/f64 min/max reduce and
/// `actual` equals xtensor_extreme_fold(c) bit for bit (NaN as NaN, any payload). Any other result
/// of such a case — another wrong min/max — is not this divergence.
bool is_xtensor_extreme_divergence(const Case& c, const Tensor& actual);

}  // namespace einfuzz
