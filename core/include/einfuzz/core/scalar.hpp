// The element type's own `+` and `·` (SEMANTICS §6, §13.1): IEEE for floats, wrapping for integers.
#pragma once

#include <cstdint>
#include <type_traits>

namespace einfuzz {

/// `a + b` in the element type, exactly as SEMANTICS §6 and §13.10 define it. Integers wrap modulo
/// 2^n (computed in the unsigned type, so it is defined behaviour); floats are one IEEE addition,
/// and when both operands are NaN the left one's NaN (quieted) is the result.
template <class T>
constexpr T scalar_add(T a, T b) noexcept {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    // The hardware keeps the first operand's NaN, but a compiler may commute `a + b`: the left
    // operand (the accumulator, §13.10) is chosen explicitly. `a + a` quiets it as `a + b` would.
    return a != a ? a + a : a + b;
  }
}

/// `a · b` in the element type, wrapping for integers, one IEEE multiplication for floats; when both
/// operands are NaN the left one's (P in `P · x`, §13.10) is the result.
template <class T>
constexpr T scalar_mul(T a, T b) noexcept {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    // uint32 * uint32 would promote to int on some ABIs only for narrower types; U is >= 32 bits.
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return a != a ? a + a : a * b;
  }
}

/// `a + b` as the hardware computes it: scalar_add except that when both operands are NaN either
/// NaN may be returned (the compiler may commute). For hot loops that repair NaN results afterwards.
template <class T>
constexpr T scalar_add_ieee(T a, T b) noexcept {
  if constexpr (std::is_integral_v<T>) {
    return scalar_add(a, b);
  } else {
    return a + b;
  }
}

/// `a · b` as the hardware computes it: scalar_mul up to which of two NaN operands is returned.
template <class T>
constexpr T scalar_mul_ieee(T a, T b) noexcept {
  if constexpr (std::is_integral_v<T>) {
    return scalar_mul(a, b);
  } else {
    return a * b;
  }
}

}  // namespace einfuzz
