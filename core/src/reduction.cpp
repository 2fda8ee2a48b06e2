// The reduction table: adding a kind is one row here plus its evaluators.
#include "einfuzz/core/reduction.hpp"

#include <array>

namespace einfuzz {

namespace {

constexpr std::array<ReductionInfo, 7> kReductions = {{
    {Reduction::sum, "sum", DTypeRule::numeric, false, true},
    {Reduction::prod, "prod", DTypeRule::numeric, false, true},
    {Reduction::mean, "mean", DTypeRule::floating, true, true},
    {Reduction::min, "min", DTypeRule::numeric, true, true},
    {Reduction::max, "max", DTypeRule::numeric, true, true},
    {Reduction::any, "any", DTypeRule::boolean, false, false},
    {Reduction::all, "all", DTypeRule::boolean, false, false},
}};

constexpr bool rows_in_enum_order() {
  for (std::size_t i = 0; i < kReductions.size(); ++i) {
    if (static_cast<std::size_t>(kReductions[i].kind) != i) return false;
  }
  return true;
}
static_assert(rows_in_enum_order(), "reduction_info indexes the table by the enum");

}  // namespace

std::span<const ReductionInfo> reduction_table() noexcept { return kReductions; }

const ReductionInfo& reduction_info(Reduction kind) noexcept { return kReductions[static_cast<std::size_t>(kind)]; }

std::string_view reduction_name(Reduction kind) noexcept { return reduction_info(kind).name; }

std::optional<Reduction> reduction_from_name(std::string_view name) noexcept {
  for (const ReductionInfo& row : kReductions) {
    if (row.name == name) return row.kind;
  }
  return std::nullopt;
}

std::vector<std::string> all_reduction_names() {
  std::vector<std::string> names;
  for (const ReductionInfo& row : kReductions) names.emplace_back(row.name);
  return names;
}

bool dtype_rule_accepts(DTypeRule rule, DType dtype) noexcept {
  switch (rule) {
    case DTypeRule::numeric: return dtype != DType::boolean;
    case DTypeRule::floating: return is_float(dtype);
    case DTypeRule::boolean: return dtype == DType::boolean;
  }
  return false;
}

bool reduction_accepts(Reduction kind, DType dtype) noexcept {
  return dtype_rule_accepts(reduction_info(kind).dtypes, dtype);
}

}  // namespace einfuzz
