// Runs one case on the reference and on every selected backend, catching every backend failure at
// this boundary, and judges each result.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "einfuzz/backends/backend.hpp"
#include "einfuzz/core/case.hpp"
#include "einfuzz/core/check.hpp"
#include "einfuzz/fused/einsum.hpp"
#include "einfuzz/harness/judge.hpp"

namespace einfuzz {

struct RunOptions {
  Limits limits;
  fused::ExecOptions exec;
  OrderedJudgeOptions judge;
};

/// The checker's view of a case: the inputs agree with the pattern, dtype and limits, or the first
/// diagnostic. (Reduce cases arrive with the reduce issue; until then they are `invalidArgument`.)
Result<CheckedEinsum> check_case(const Case& c, const Limits& limits);

struct BackendOutcome {
  std::string backend;
  Verdict verdict;
};

struct CaseOutcome {
  std::optional<Diagnostic> rejection;  ///< the reference's diagnostic when the case is bad input
  std::optional<Tensor> expected;       ///< the reference's ordered result otherwise
  std::vector<BackendOutcome> backends;
  /// `expect` in the case disagrees with the reference's conclusion (a stale or wrong case file).
  std::optional<std::string> expect_failure;

  /// True when some backend failed or the case's `expect` does not hold.
  bool failed() const;
};

/// Runs the reference, then each backend; judges with the ordered oracle (ORACLE.md) for `ordered`
/// backends. A backend that throws is a `crash`, one that writes to its inputs `input-modified`.
CaseOutcome run_case(const Case& c, std::span<Backend* const> backends, const RunOptions& options);

/// The fused executor as a backend (ordered semantics).
std::unique_ptr<Backend> make_fused_backend(const RunOptions& options);

/// Built-in backend by name ("fused"), or nullptr when unknown.
std::unique_ptr<Backend> make_builtin_backend(std::string_view name, const RunOptions& options);

/// Names accepted by make_builtin_backend.
std::vector<std::string> builtin_backend_names();

}  // namespace einfuzz
