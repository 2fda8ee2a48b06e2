// Value text of the case format (CASES.md §values): hex-float, NaN-bit, integer and bool spellings,
// in and out, bit-exact, and the format tag; shared by the case reader and writer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "einfuzz/core/half.hpp"

namespace einfuzz::detail {

/// The `format` member every case file carries; the reader accepts nothing else.
inline constexpr std::string_view kCaseFormat = "einfuzz-case/1";

/// `bits` as exactly `digits` lowercase hex digits, leading zeros kept (NaN bits, file-name hashes).
std::string hex_bits(std::uint64_t bits, int digits);

/// Parses one value spelling into `out`; returns why it is rejected, or an empty string. Floats:
/// a C99 hex float that the dtype holds exactly, "inf", "-inf", "nan", "nan:0x<raw bits>" of a
/// NaN; integers: decimal within the dtype's range. Nothing is rounded, nothing tolerated around it.
std::string parse_spelling(std::string_view s, float& out);
std::string parse_spelling(std::string_view s, double& out);
std::string parse_spelling(std::string_view s, Float16& out);
std::string parse_spelling(std::string_view s, BFloat16& out);
std::string parse_spelling(std::string_view s, std::int32_t& out);
std::string parse_spelling(std::string_view s, std::int64_t& out);

}  // namespace einfuzz::detail
