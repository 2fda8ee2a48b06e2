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

}  // namespace einfuzz
