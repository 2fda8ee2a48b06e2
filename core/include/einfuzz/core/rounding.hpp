// Directed rounding for the oracle's double bounds without touching the FP environment: a result
// rounded to nearest is at most half an ulp off, so one step outward bounds the exact value.
#pragma once

#include <cmath>
#include <limits>

namespace einfuzz {

/// The next double above `x` (+inf stays +inf): an upper bound of any value that rounds to `x`.
inline double next_up(double x) noexcept { return std::nextafter(x, std::numeric_limits<double>::infinity()); }

/// The next double below `x` (-inf stays -inf): a lower bound of any value that rounds to `x`.
inline double next_down(double x) noexcept { return std::nextafter(x, -std::numeric_limits<double>::infinity()); }

/// An upper bound of the exact a·b (the bounds' constant factors; +inf on overflow).
inline double mul_up(double a, double b) noexcept { return next_up(a * b); }

/// A lower bound of the exact a·b.
inline double mul_down(double a, double b) noexcept { return next_down(a * b); }

}  // namespace einfuzz
