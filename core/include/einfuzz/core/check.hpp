// AST × shapes → a checked einsum (SEMANTICS §2.2–§5): global axes, lengths, output and
// contracted axes, or the first failing diagnostic in the spec's precedence.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "einfuzz/core/diagnostic.hpp"
#include "einfuzz/core/limits.hpp"
#include "einfuzz/core/pattern.hpp"
#include "einfuzz/core/tensor.hpp"

namespace einfuzz {

/// A logical axis of the global axis list G: a named label or an ellipsis slot.
struct Axis {
  std::string name;        ///< the label, or "...k" for ellipsis slot E_k
  int ellipsis_slot = -1;  ///< k for slot E_k, -1 for a named label
  std::int64_t length = 0; ///< the resolved length L (SEMANTICS §3.3)
};

/// What a global axis does in a checked einsum, after TBLIS's classification of indices (each axis
/// has exactly one role; "operands" counts the operands the axis appears in, a repeated label
/// inside one operand counting once, a size-1 broadcast occurrence counting like any other).
enum class AxisRole {
  batch,               ///< in the output and in >= 2 operands: `b` of `b i k, b k j -> b i j`
  free,                ///< in the output and in exactly one operand: `i`, `j` of `i k, k j -> i j`
  contracted,          ///< not in the output, in >= 2 operands: `k` of `i k, k j -> i j`
  private_contracted,  ///< not in the output, in exactly one operand (summed inside it): `b` of
                       ///< `a b -> a`, `i` of the trace `i i ->`
};

/// One operand after ellipsis expansion.
struct CheckedOperand {
  Shape shape;             ///< physical shape as given
  std::vector<int> axes;   ///< per physical dimension: index into CheckedEinsum::axes
};

/// A checked einsum: everything an evaluator needs, independent of values and dtype.
struct CheckedEinsum {
  std::string pattern;                   ///< the source text
  std::vector<Axis> axes;                ///< G: first-appearance order over expanded operands
  std::vector<CheckedOperand> operands;  ///< in source order
  std::vector<int> output;               ///< O: indices into axes, in the user's output order
  std::vector<int> contracted;           ///< C: indices into axes, in G order (row-major, C[0] outermost)
  std::vector<AxisRole> roles;           ///< per global axis (indexed like axes): its role
  Shape output_shape;                    ///< [L(a) for a in O]
  Shape contraction_shape;               ///< [L(c) for c in C]
  std::int64_t output_size = 1;          ///< product of output_shape (1 for rank 0)
  std::int64_t contraction_size = 1;     ///< product of contraction_shape (1 when C is empty, 0 if any is 0)
};

/// Checks `pattern` against operand `shapes` in the exact order of SEMANTICS §2.2, then the size
/// limits of §13.4 (`sizeLimitExceeded`). Zero-length axes and size-1 broadcasting are legal as
/// the spec says; nothing is allocated in proportion to the shapes' element counts.
Result<CheckedEinsum> check_einsum(const EinsumPattern& pattern, std::span<const Shape> shapes,
                                   const Limits& limits = {});

/// parse_einsum + check_einsum.
Result<CheckedEinsum> check_einsum(std::string_view pattern, std::span<const Shape> shapes,
                                   const Limits& limits = {});

/// parse_einsum + check_einsum, shared instead of copied (the last call's on this thread, when
/// the pattern, shapes and limits are the same). Never null.
std::shared_ptr<const Result<CheckedEinsum>> check_einsum_shared(std::string_view pattern, std::span<const Shape> shapes,
                                                                const Limits& limits);

}  // namespace einfuzz
