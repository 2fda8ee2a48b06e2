// Harness limits (SEMANTICS §13.4): sizes are rejected before anything is allocated.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "einfuzz/core/diagnostic.hpp"

namespace einfuzz {

/// Configurable limits; exceeding one is `sizeLimitExceeded`, a harness limit, not a semantic error.
struct Limits {
  int max_operands = 64;                              ///< operands of one einsum
  int max_labels = 64;                                ///< distinct logical axes of one einsum
  std::int64_t max_tensor_elements = std::int64_t{1} << 28;  ///< any one input or output tensor
  /// Elements the reference materialises: (global axis space) × (operands + 1).
  std::int64_t max_materialised_elements = std::int64_t{1} << 27;
};

/// Ok when `shape`'s element count is representable and within `limits.max_tensor_elements`;
/// otherwise `sizeLimitExceeded` naming `what` (e.g. "input 2") and the limit.
Result<std::int64_t> check_tensor_size(std::span<const std::int64_t> shape, const Limits& limits,
                                       std::string_view what);

}  // namespace einfuzz
