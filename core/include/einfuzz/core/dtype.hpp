// Element types of a case (SEMANTICS §13.1) and the mapping between C++ types and dtype tags.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "einfuzz/core/half.hpp"

namespace einfuzz {

/// The element type shared by all operands of one case. `boolean` exists only for `any`/`all`.
/// `f16` is IEEE binary16, `bf16` bfloat16 (ORACLE §8); they come last so the older tags keep
/// their values.
enum class DType { f32, f64, i32, i64, boolean, f16, bf16 };

/// The parameters of a binary floating-point format that the oracle's bounds use (ORACLE.md §2):
/// u = 2^-digits, η = 2^(min_exponent − digits), Ω = (2 − 2^(1 − digits)) · 2^max_exponent.
struct FloatFormat {
  int digits;        ///< p: significand bits, the hidden bit included
  int min_exponent;  ///< emin: the smallest normal is 2^emin
  int max_exponent;  ///< emax: the largest finite value is just below 2^(emax + 1)
};

/// One row of the dtype table: adding a dtype is one row here plus its evaluators.
struct DTypeInfo {
  DType dtype;
  std::string_view name;              ///< the spelling in case files, the CLI and the wire
  std::size_t size;                   ///< bytes per element (bool: one byte, 0 or 1)
  std::optional<FloatFormat> format;  ///< floating dtypes only; integers and bool have none
};

/// The table, one row per dtype in enum order.
std::span<const DTypeInfo> dtype_table() noexcept;
const DTypeInfo& dtype_info(DType dtype) noexcept;

/// "f32", "f64", "i32", "i64", "bool", "f16", "bf16".
std::string_view dtype_name(DType dtype) noexcept;
std::optional<DType> dtype_from_name(std::string_view name) noexcept;
std::size_t dtype_size(DType dtype) noexcept;
/// The floating dtypes: f32, f64, f16, bf16 (those with a FloatFormat row).
inline bool is_float(DType d) noexcept {
  return d == DType::f32 || d == DType::f64 || d == DType::f16 || d == DType::bf16;
}
/// The 16-bit floating dtypes, whose ordered arithmetic goes through binary32 (ORACLE §8).
inline bool is_half(DType d) noexcept { return d == DType::f16 || d == DType::bf16; }
inline bool is_integer(DType d) noexcept { return d == DType::i32 || d == DType::i64; }

/// Booleans are stored one byte each, 0 or 1 (the PROTOCOL's wire format as well).
using Bool8 = std::uint8_t;

template <class T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::f32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::f64; };
template <> struct dtype_of<std::int32_t> { static constexpr DType value = DType::i32; };
template <> struct dtype_of<std::int64_t> { static constexpr DType value = DType::i64; };
template <> struct dtype_of<Bool8> { static constexpr DType value = DType::boolean; };
template <> struct dtype_of<Float16> { static constexpr DType value = DType::f16; };
template <> struct dtype_of<BFloat16> { static constexpr DType value = DType::bf16; };
template <class T> inline constexpr DType dtype_of_v = dtype_of<T>::value;

/// Calls `fn(T{})` with the C++ element type of `dtype` (float, double, int32_t, int64_t, Bool8,
/// Float16, BFloat16).
template <class Fn>
constexpr decltype(auto) visit_dtype(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::f32: return fn(float{});
    case DType::f64: return fn(double{});
    case DType::i32: return fn(std::int32_t{});
    case DType::i64: return fn(std::int64_t{});
    case DType::f16: return fn(Float16{});
    case DType::bf16: return fn(BFloat16{});
    case DType::boolean: break;
  }
  return fn(Bool8{});
}

}  // namespace einfuzz
