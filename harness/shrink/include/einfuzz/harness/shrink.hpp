// Greedy shrinking of a failing case (RapidCheck's src/detail/Testing.cpp): list the candidates one
// step smaller than the current case, take the first one that still fails the same way, restart
// from it; stop when none does. Candidates are valid by construction: drop operands, drop or merge
// labels, shorten lengths towards 0 and 1, simplify values towards 0, ±1 and fewer special values,
// shorten names.
#pragma once

#include <cstdint>
#include <functional>

#include "einfuzz/backends/backend.hpp"
#include "einfuzz/core/case.hpp"
#include "einfuzz/harness/run.hpp"
#include "einfuzz/harness/verdict.hpp"

namespace einfuzz {

struct ShrinkOptions {
  int max_attempts = 3000;  ///< candidates evaluated before stopping with the smallest case so far
  /// Wall-clock budget in seconds (0: none); like max_attempts it keeps the smallest case so far.
  /// Makes the result depend on speed, so deterministic runs leave it at 0.
  double max_seconds = 0;
  /// Every candidate's tensors are checked against these before anything is allocated: a candidate
  /// over them is never built (dropping the zero-length axis of an empty operand can otherwise ask
  /// for a huge tensor). The backend overload of shrink_case uses the run's limits.
  Limits limits;
};

struct ShrinkResult {
  Case shrunk;       ///< the smallest case found that still fails the same way (the input if none)
  int attempts = 0;  ///< candidates evaluated
  int steps = 0;     ///< candidates accepted (each one restarted the search)
  bool exhausted = false;  ///< stopped at max_attempts or max_seconds rather than at a local minimum
};

/// True when a candidate still fails the same way.
using StillFails = std::function<bool(const Case&)>;

/// Greedy shrinking with an arbitrary predicate. A candidate is accepted only when it is strictly
/// smaller than the current case (operands + ranks + elements, then distinct labels, value
/// complexity, pattern length, supplied lengths), so shrinking always terminates. Last, the result is
/// made canonical (group.hpp: canonical_operand_order, then canonical_names — first-appearance
/// names, canonical spacing), each step kept when the predicate still holds, so failures that
/// differ only by names, spacing or operand order shrink to one case.
ShrinkResult shrink_case(const Case& failing, const StillFails& still_fails, const ShrinkOptions& options = {});

/// Shrinks keeping the verdict class: `backend` must still get `kind` on every accepted candidate.
ShrinkResult shrink_case(const Case& failing, Backend& backend, VerdictKind kind, const RunOptions& run,
                         const ShrinkOptions& options = {});

/// Calls `visit` with each candidate one step smaller than `c`, simplest-first, until it returns
/// true. Einsum and reduce structure is shrunk when the reference accepts `c`; otherwise only the
/// inputs, the supplied lengths, the pattern text and the values.
/// No candidate has a tensor over `limits` (none is even allocated).
void for_each_shrink_candidate(const Case& c, const std::function<bool(Case&&)>& visit, const Limits& limits = {});

/// Total order used for acceptance: true when `a` is strictly smaller than `b`.
bool smaller_case(const Case& a, const Case& b);

}  // namespace einfuzz
