// Code names (the spec's spelling) and the compiler-style rendering of a diagnostic.
#include "einfuzz/core/diagnostic.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>

#include "einfuzz/core/harness_bug.hpp"

namespace einfuzz {
namespace {

constexpr std::array<std::string_view, 35> kCodeNames = {
    "unknownCharacter",
    "missingArrow",
    "duplicateArrow",
    "unexpectedToken",
    "unbalancedParenthesis",
    "nestedParenthesis",
    "invalidIdentifier",
    "duplicateAxis",
    "invalidAnonymousAxis",
    "duplicateEllipsis",
    "einsumOperandCountMismatch",
    "unsupportedEinsumAxis",
    "invalidEllipsis",
    "rankMismatch",
    "repeatedEinsumDimensionMismatch",
    "duplicateEinsumOutputAxis",
    "unknownEinsumOutputAxis",
    "incompatibleEinsumBroadcast",
    "internalInvariant",
    "anonymousAxisInRearrange",
    "axisMismatch",
    "duplicateAxisLength",
    "unusedAxisLength",
    "dimensionMismatch",
    "cannotInferAxis",
    "missingAxisLength",
    "emptyFiber",
    "unsupportedDtype",
    "unknownReduction",
    "sizeLimitExceeded",
    "malformedShape",
    "malformedCase",
    "invalidArgument",
    "notDifferentiable",
    "cotangentShapeMismatch",
};
static_assert(kCodeNames.size() == static_cast<std::size_t>(Code::cotangentShapeMismatch) + 1);

}  // namespace

std::string_view code_name(Code code) noexcept { return kCodeNames[static_cast<std::size_t>(code)]; }

bool code_from_name(std::string_view name, Code& out) noexcept {
  for (std::size_t i = 0; i < kCodeNames.size(); ++i) {
    if (kCodeNames[i] == name) {
      out = static_cast<Code>(i);
      return true;
    }
  }
  return false;
}

std::string render(const Diagnostic& d) {
  std::string out = "error[";
  out += code_name(d.code);
  out += "]: ";
  out += d.message;
  if (d.column != kNoColumn && d.column <= d.source.size()) {
    out += "\n  ";
    out += d.source;
    out += "\n  ";
    out.append(d.column, ' ');
    out += '^';
  }
  return out;
}

}  // namespace einfuzz

namespace einfuzz {

void harness_bug(std::string_view what) noexcept {
  std::fprintf(stderr, "einfuzz: harness bug: %.*s\n", static_cast<int>(what.size()), what.data());
  std::fflush(stderr);
  std::abort();
}

}  // namespace einfuzz
