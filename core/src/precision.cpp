// Names and formats of the precision profiles' input roundings, and profiles as text (ORACLE §8).
#include "einfuzz/core/precision_text.hpp"

namespace einfuzz {

std::string_view input_rounding_name(InputRounding r) noexcept {
  switch (r) {
    case InputRounding::none: return "none";
    case InputRounding::tf32: return "tf32";
  }
  return "?";
}

std::optional<InputRounding> input_rounding_from_name(std::string_view name) noexcept {
  if (name == "none") return InputRounding::none;
  if (name == "tf32") return InputRounding::tf32;
  return std::nullopt;
}

std::optional<FloatFormat> input_rounding_format(InputRounding r) noexcept {
  if (r == InputRounding::tf32) return FloatFormat{11, -126, 127};
  return std::nullopt;
}

std::string profile_problem(DType dtype, const PrecisionProfile& p) {
  if (is_valid_profile(dtype, p)) return {};
  const std::string d(dtype_name(dtype)), a(dtype_name(p.accumulate));
  if (!is_float(dtype)) return "precision profiles are for float dtypes (f16, bf16, f32, f64), not " + d;
  if (!is_float(p.accumulate)) return "the accumulator " + a + " is not a float format";
  const FloatFormat fd = *dtype_info(dtype).format, fa = *dtype_info(p.accumulate).format;
  if (fa.digits < fd.digits || fa.max_exponent < fd.max_exponent || fa.min_exponent > fd.min_exponent) {
    return "the accumulator " + a + " cannot hold every " + d + " value (narrower than the dtype, ORACLE §8)";
  }
  return std::string(input_rounding_name(p.round_inputs)) + " input rounding does not cover the exponent range of " + d +
         " (ORACLE §8)";
}

std::string profile_text(const PrecisionProfile& p) {
  std::string s(dtype_name(p.accumulate));
  if (p.round_inputs != InputRounding::none) s += "+" + std::string(input_rounding_name(p.round_inputs));
  return s;
}

std::optional<PrecisionProfile> profile_from_text(std::string_view text) {
  PrecisionProfile p;
  const std::size_t plus = text.find('+');
  if (plus != std::string_view::npos) {
    const auto r = input_rounding_from_name(text.substr(plus + 1));
    if (!r || *r == InputRounding::none) return std::nullopt;  // "f32+none" is spelled "f32"
    p.round_inputs = *r;
    text = text.substr(0, plus);
  }
  for (DType d : {DType::f16, DType::bf16, DType::f32, DType::f64}) {
    if (dtype_name(d) == text) {
      p.accumulate = d;
      return p;
    }
  }
  return std::nullopt;
}

}  // namespace einfuzz
