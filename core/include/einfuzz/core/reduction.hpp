// The reduction kinds (SEMANTICS §8.3) and their one table: name, accepted dtypes, the empty-fibre
// rule and differentiability, read by the checker, the generator, every backend and the CLI.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "einfuzz/core/dtype.hpp"

namespace einfuzz {

/// The seven built-in reductions (SEMANTICS §8.3), in table order.
enum class Reduction { sum, prod, mean, min, max, any, all };

/// Which element types a reduction accepts (SEMANTICS §13.6, §13.11); the checker's
/// `unsupportedDtype` message names the rule.
enum class DTypeRule {
  numeric,   ///< every dtype but bool (sum, prod, min, max)
  floating,  ///< the floating dtypes only: the kind divides (mean)
  boolean,   ///< bool only (any, all)
};

/// One row of the reduction table.
struct ReductionInfo {
  Reduction kind;
  std::string_view name;      ///< the spelling in patterns, case files, the CLI and the wire
  DTypeRule dtypes;           ///< the element types it accepts
  bool needs_nonempty_fibre;  ///< undefined on an empty fibre: `emptyFiber` (mean, min, max)
  bool differentiable;        ///< has a vector-Jacobian product (not the logical any / all)
};

/// The table, one row per kind in enum order.
std::span<const ReductionInfo> reduction_table() noexcept;

/// The row of `kind`.
const ReductionInfo& reduction_info(Reduction kind) noexcept;

/// "sum", "prod", "mean", "min", "max", "any", "all".
std::string_view reduction_name(Reduction kind) noexcept;

/// The kind spelled `name` exactly (case-sensitive), or nullopt.
std::optional<Reduction> reduction_from_name(std::string_view name) noexcept;

/// Every kind's name in table order: what a backend that supports all kinds declares.
std::vector<std::string> all_reduction_names();

/// Whether `dtype` satisfies `rule`.
bool dtype_rule_accepts(DTypeRule rule, DType dtype) noexcept;

/// Whether the checker accepts `kind` on `dtype` (its row's DTypeRule).
bool reduction_accepts(Reduction kind, DType dtype) noexcept;

}  // namespace einfuzz
