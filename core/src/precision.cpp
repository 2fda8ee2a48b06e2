// Names and formats of the precision profiles' input roundings (ORACLE §8).
#include "einfuzz/core/precision.hpp"

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

}  // namespace einfuzz
