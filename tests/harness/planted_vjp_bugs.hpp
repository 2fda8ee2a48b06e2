// Test-only VJP backends for issue 13's acceptance: a small executor of the ordered VJPs (SEMANTICS
// §13.8) that is correct with PlantedVjpBug::none and wrong in exactly one way otherwise.
#pragma once

#include <memory>
#include <string_view>

#include "einfuzz/backends/backend.hpp"

namespace einfuzz::test {

enum class PlantedVjpBug {
  none,               ///< the ordered VJPs (the control)
  mean_unscaled,      ///< mean's VJP without the 1/n: the plain pullback of g
  max_first_tie,      ///< min/max give the whole g to the first tie while declaring equal-share
  broadcast_ignored,  ///< an einsum VJP that ignores a size-1 broadcast (only coordinate 0 is summed)
  diagonal_off,       ///< a repeated label's VJP written at (i, 0) instead of (i, i): off the diagonal
  prod_division,      ///< prod's VJP as (the whole product · g) / x_j: NaN or ±Inf at zeros
};

/// "none", "mean-unscaled", "max-first-tie", "broadcast-ignored", "diagonal-off", "prod-division".
std::string_view planted_vjp_bug_name(PlantedVjpBug bug);

/// A backend named "planted-vjp-<bug>" answering VJP cases only (einsum and sum/prod/mean/min/max
/// reduces, f32/f64; forward cases unsupported), tie rule equal-share, declaring `semantics` (any
/// order: judged by the multiset VJP oracle; ordered: bitwise against the reference's VJP).
std::unique_ptr<Backend> make_planted_vjp_backend(PlantedVjpBug bug, Semantics semantics = Semantics::any_order);

}  // namespace einfuzz::test
