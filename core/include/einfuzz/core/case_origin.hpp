// Reading a case's free-form `origin` fields (CASES.md), and the one that decides a verdict:
// `origin.profile`, the precision profile a stored divergence's verdict is judged under.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "einfuzz/core/case.hpp"
#include "einfuzz/core/precision.hpp"

namespace einfuzz {

/// The value of `origin[key]`, "" when the case's origin has no such field.
std::string origin_value(const Case& c, std::string_view key);

/// `origin.profile`: the precision profile the case's recorded verdict is judged under (read_case
/// checked it is valid for the case's dtype); nullopt when absent or not a profile.
std::optional<PrecisionProfile> origin_profile(const Case& c);

}  // namespace einfuzz
