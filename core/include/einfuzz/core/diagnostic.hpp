// Bad-input diagnostics: the code (the stable contract), a message, and the column it points at.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace einfuzz {

/// Every diagnostic einfuzz can report for bad input. Names are spelled exactly as SEMANTICS §2
/// spells them (TorchLean's codes); the last group are harness limits and input-format errors.
enum class Code {
  // parse phase (SEMANTICS §2.1)
  unknownCharacter,
  missingArrow,
  duplicateArrow,
  unexpectedToken,
  unbalancedParenthesis,
  nestedParenthesis,
  invalidIdentifier,
  duplicateAxis,
  invalidAnonymousAxis,
  duplicateEllipsis,
  // einsum check phase (SEMANTICS §2.2)
  einsumOperandCountMismatch,
  unsupportedEinsumAxis,
  invalidEllipsis,
  rankMismatch,
  repeatedEinsumDimensionMismatch,
  duplicateEinsumOutputAxis,
  unknownEinsumOutputAxis,
  incompatibleEinsumBroadcast,
  internalInvariant,
  // reduce check phase (SEMANTICS §2.3, §13.6)
  anonymousAxisInRearrange,
  axisMismatch,
  duplicateAxisLength,
  unusedAxisLength,
  dimensionMismatch,
  cannotInferAxis,
  missingAxisLength,
  emptyFiber,
  unsupportedDtype,
  unknownReduction,
  // harness limits and input formats (SEMANTICS §13.4, CASES.md)
  sizeLimitExceeded,
  malformedShape,
  malformedCase,
  invalidArgument,
  // VJP cases (ORACLE §7): harness-level input errors, not SEMANTICS check codes
  notDifferentiable,       ///< a VJP of any/all, or of a non-floating dtype
  cotangentShapeMismatch,  ///< the cotangent's shape is not the forward output's
};

/// The code's name as the spec spells it, e.g. "rankMismatch".
std::string_view code_name(Code code) noexcept;

/// Parses a code name back; false when `name` names no code.
bool code_from_name(std::string_view name, Code& out) noexcept;

/// Marks a diagnostic that points at no column of any pattern (a case file field, a CLI flag).
inline constexpr std::size_t kNoColumn = static_cast<std::size_t>(-1);

/// One bad-input report. `column` is a 0-based byte offset into `source` (0 <= column <=
/// source.size(); == size() means "at the end"), or kNoColumn.
struct Diagnostic {
  Code code;
  std::string message;
  std::size_t column = kNoColumn;
  std::string source;  ///< the text `column` points into (usually the pattern), may be empty
};

/// "error[rankMismatch]: message" followed, when there is a column, by the quoted source and a
/// caret line under the column.
std::string render(const Diagnostic& diagnostic);

/// A value or the diagnostic explaining why there is none. No exceptions cross module boundaries.
template <class T>
class Result {
 public:
  Result(T value) : state_(std::move(value)) {}                     // NOLINT: implicit by design
  Result(Diagnostic diagnostic) : state_(std::move(diagnostic)) {}  // NOLINT: implicit by design

  bool ok() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  const T& value() const& { return std::get<0>(state_); }
  T& value() & { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  const Diagnostic& error() const& { return std::get<1>(state_); }
  Diagnostic&& error() && { return std::get<1>(std::move(state_)); }

 private:
  std::variant<T, Diagnostic> state_;
};

/// One funnel for building diagnostics (fmt's `report_error` idea).
inline Diagnostic make_diagnostic(Code code, std::string message, std::size_t column = kNoColumn,
                                  std::string source = {}) {
  return Diagnostic{code, std::move(message), column, std::move(source)};
}

}  // namespace einfuzz
