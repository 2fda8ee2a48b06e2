// `einfuzz repro`: a self-contained program in a library's own language (Python for numpy and
// torch, C++ for Eigen and xtensor) that calls the library as the einfuzz adapter does on one
// case, prints what it returns and what the semantics require, and exits 1 when they disagree.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "einfuzz/backends/backend.hpp"
#include "einfuzz/core/case.hpp"
#include "einfuzz/core/diagnostic.hpp"
#include "einfuzz/harness/run.hpp"

namespace einfuzz {

enum class ReproLanguage { python, cpp };

/// A generated reproducer.
struct ReproProgram {
  ReproLanguage language = ReproLanguage::python;
  std::string text;  ///< the whole program
  /// How to run it once written to `file` (a shell command line; "FILE" stands for the path).
  std::string run_command;
};

struct ReproOptions {
  RunOptions run;          ///< limits and judge strictness (--strict-signed-zero) as for `check`
  std::string case_label;  ///< how the program's header names the case (its file path)
};

/// The backends `repro` writes programs for: numpy, numpy-opt, torch, torch-path-right,
/// torch-path-outer (Python), eigen, xtensor (C++).
std::vector<std::string> repro_backend_names();

/// The precision profile make_repro judges a float case `c` under instead of the backend's declared
/// one (ORACLE §8): `run.profile` (--profile) when set, else a profile surprise's origin.profile;
/// nullopt for the declared one.
std::optional<PrecisionProfile> repro_profile(const Case& c, const RunOptions& run);

/// The program for case `c` on library backend `backend`, whose declared capabilities are `caps`
/// (factoring and NaN profile decide what the semantics accept, as in the judge). Per output element
/// it embeds the set judge_any_order accepts (accepted_sets), exact values for integers and bools,
/// or, when the reference rejects the case, the diagnostic the library should raise too.
/// f16/bf16 values cross as bit patterns. `invalidArgument` for a backend that is not a library
/// backend, a dtype `caps` does not declare, and a case the adapter answers without calling the
/// library (nothing to reproduce upstream: a rejection the adapter decides, an empty output or
/// contraction that Eigen/xtensor adapters fill themselves). Crashes, timeouts and protocol faults
/// are out of scope.
Result<ReproProgram> make_repro(const Case& c, std::string_view backend, const Capabilities& caps,
                                const ReproOptions& options);

}  // namespace einfuzz
