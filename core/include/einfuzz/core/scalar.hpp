// The element type's own `+` and `·` (SEMANTICS §6, §13.1): IEEE for floats, wrapping for integers.
#pragma once

#include <cstdint>
#include <type_traits>

namespace einfuzz {

/// `a + b` in the element type. Integers wrap modulo 2^n (computed in the unsigned type, so it is
/// defined behaviour); floats are one IEEE addition.
template <class T>
constexpr T scalar_add(T a, T b) noexcept {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

/// `a · b` in the element type, wrapping for integers, one IEEE multiplication for floats.
template <class T>
constexpr T scalar_mul(T a, T b) noexcept {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    // uint32 * uint32 would promote to int on some ABIs only for narrower types; U is >= 32 bits.
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return a * b;
  }
}

}  // namespace einfuzz
