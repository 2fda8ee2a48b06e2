// Precision profiles (ORACLE §8): the format a backend holds its products and partial sums in, and a
// format it rounds its einsum inputs to before multiplying (TF32).
#pragma once

#include <optional>
#include <string_view>

#include "einfuzz/core/dtype.hpp"

namespace einfuzz {

/// A format einsum inputs may be rounded to before multiplying (ORACLE §8: `round_inputs`).
enum class InputRounding {
  none,  ///< inputs are used as they are
  tf32,  ///< binary32 with a 10-bit fraction (u = 2^-11), the input format of matrix units
};

/// "none", "tf32" (the PROTOCOL hello spelling; "none" is the hello's absent entry).
std::string_view input_rounding_name(InputRounding r) noexcept;
std::optional<InputRounding> input_rounding_from_name(std::string_view name) noexcept;
/// The format of `round_inputs` (TF32: p = 11, binary32's exponent range); none for `none`.
std::optional<FloatFormat> input_rounding_format(InputRounding r) noexcept;

/// What a backend declares for one float dtype (ORACLE §8). The default — accumulate in the dtype,
/// no input rounding — is §2's profile.
struct PrecisionProfile {
  DType accumulate = DType::f64;                    ///< a float dtype: f16, bf16, f32 or f64
  InputRounding round_inputs = InputRounding::none;
  friend bool operator==(const PrecisionProfile&, const PrecisionProfile&) = default;
};

/// The default profile of `dtype`: accumulate in it, inputs as they are.
inline PrecisionProfile storage_profile(DType dtype) noexcept { return {dtype, InputRounding::none}; }

/// True when `p` is the default profile of `dtype` (ORACLE §2 applies unchanged).
inline bool is_storage_profile(DType dtype, const PrecisionProfile& p) noexcept {
  return p == storage_profile(dtype);
}

/// True when `p` is a profile a backend may declare for the float dtype `dtype` (ORACLE §8): the
/// accumulator holds every value of the dtype exactly (at least its precision and its exponent
/// range: f16 in f16, f32 or f64; bf16 in bf16, f32 or f64; f32 in f32 or f64; f64 in f64), and
/// inputs are rounded to TF32 only from a dtype within TF32's exponent range (f32, and f16/bf16,
/// where it is exact).
inline bool is_valid_profile(DType dtype, const PrecisionProfile& p) noexcept {
  if (!is_float(dtype) || !is_float(p.accumulate)) return false;
  const FloatFormat d = *dtype_info(dtype).format, a = *dtype_info(p.accumulate).format;
  if (a.digits < d.digits || a.max_exponent < d.max_exponent || a.min_exponent > d.min_exponent) return false;
  if (const auto r = input_rounding_format(p.round_inputs)) return d.max_exponent <= r->max_exponent;
  return true;
}

}  // namespace einfuzz
