// The dtype table (names, sizes, float format parameters) and the lookups that read it.
#include "einfuzz/core/dtype.hpp"
#include "einfuzz/core/harness_bug.hpp"

#include <array>
#include <limits>
#include <string>
#include <type_traits>

namespace einfuzz {

namespace {

/// C++'s numeric_limits spell emin + 1 as min_exponent and emax + 1 as max_exponent.
template <class F>
constexpr FloatFormat format_of() {
  using L = std::numeric_limits<F>;
  return {L::digits, L::min_exponent - 1, L::max_exponent - 1};
}

constexpr std::array<DTypeInfo, 7> kDTypes = {{
    {DType::f32, "f32", 4, FloatFormat{24, -126, 127}},
    {DType::f64, "f64", 8, FloatFormat{53, -1022, 1023}},
    {DType::i32, "i32", 4, std::nullopt},
    {DType::i64, "i64", 8, std::nullopt},
    {DType::boolean, "bool", 1, std::nullopt},
    {DType::f16, "f16", 2, FloatFormat{11, -14, 15}},
    {DType::bf16, "bf16", 2, FloatFormat{8, -126, 127}},
}};

constexpr bool rows_match_the_types() {
  for (std::size_t i = 0; i < kDTypes.size(); ++i) {
    if (static_cast<std::size_t>(kDTypes[i].dtype) != i) return false;
    const bool ok = visit_dtype(kDTypes[i].dtype, [&](auto tag) {
      using T = decltype(tag);
      if (kDTypes[i].size != sizeof(T) || kDTypes[i].format.has_value() != is_float_type_v<T>) return false;
      if constexpr (is_float_type_v<T>) {
        const FloatFormat f = *kDTypes[i].format, g = format_of<T>();
        return f.digits == g.digits && f.min_exponent == g.min_exponent && f.max_exponent == g.max_exponent;
      }
      return true;
    });
    if (!ok) return false;
  }
  return true;
}
static_assert(rows_match_the_types(), "the dtype table indexes by the enum and agrees with the C++ types");

}  // namespace

std::span<const DTypeInfo> dtype_table() noexcept { return kDTypes; }

const DTypeInfo& dtype_info(DType dtype) noexcept {
  const auto i = static_cast<std::size_t>(dtype);
  if (i >= kDTypes.size()) harness_bug("dtype_info: no dtype " + std::to_string(i));
  return kDTypes[i];
}

// A value outside the enum (a cast from the wire) is named "?" and has size 0, never a crash.
std::string_view dtype_name(DType dtype) noexcept {
  const auto i = static_cast<std::size_t>(dtype);
  return i < kDTypes.size() ? kDTypes[i].name : "?";
}

std::optional<DType> dtype_from_name(std::string_view name) noexcept {
  for (const DTypeInfo& row : kDTypes) {
    if (row.name == name) return row.dtype;
  }
  return std::nullopt;
}

std::size_t dtype_size(DType dtype) noexcept {
  const auto i = static_cast<std::size_t>(dtype);
  return i < kDTypes.size() ? kDTypes[i].size : 0;
}

}  // namespace einfuzz
