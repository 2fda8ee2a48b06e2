// Precision profiles as text (ORACLE §8): how `--profile`, `origin.profile` and `einfuzz profile`
// spell one, and why one is not valid for a dtype.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "einfuzz/core/precision.hpp"

namespace einfuzz {

/// Why `p` is not a valid profile for `dtype` (is_valid_profile), in words: "" when it is valid.
std::string profile_problem(DType dtype, const PrecisionProfile& p);

/// "f32", "f32+tf32": the accumulator, then the input rounding if any.
std::string profile_text(const PrecisionProfile& p);

/// The profile `text` spells (profile_text's form: ACC or ACC+tf32, ACC one of f16, bf16, f32,
/// f64), or nullopt for anything else. Says nothing about which dtype it is valid for.
std::optional<PrecisionProfile> profile_from_text(std::string_view text);

}  // namespace einfuzz
