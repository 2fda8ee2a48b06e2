// Pattern text → AST, with the diagnostics and precedence of SEMANTICS §1, §2.1 and §13.3.
#pragma once

#include <string_view>

#include "einfuzz/core/diagnostic.hpp"
#include "einfuzz/core/pattern.hpp"

namespace einfuzz {

/// Parses an einsum pattern. Repeated names are allowed in operands (diagonals) but not in the
/// output (except `_`, rejected later by the checker). Never throws; any byte string is accepted as
/// input and yields an AST or a diagnostic whose column lies in [0, pattern.size()].
Result<EinsumPattern> parse_einsum(std::string_view pattern);

/// Parses a reduce pattern: one expression on each side, `_` rejected, no repeated names per side.
Result<TransformPattern> parse_transform(std::string_view pattern);

}  // namespace einfuzz
