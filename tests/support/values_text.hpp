// Test helper: tensors written the way SEMANTICS §11 writes them ("1..6", "8*1", "inf", "-0").
#pragma once

#include <string_view>
#include <vector>

#include "einfuzz/core/tensor.hpp"

namespace einfuzz::test {

/// Comma-separated tokens: a number (strtod syntax: "1e16", "-0", "inf", "nan"), an integer range
/// "a..b" (inclusive), or a repetition "n*v". Empty text is no values.
std::vector<double> parse_value_list(std::string_view text);

/// A tensor of `dtype` and `shape` holding `text`'s values converted to the dtype (exactly).
Tensor tensor_from_text(DType dtype, const Shape& shape, std::string_view text);

}  // namespace einfuzz::test
