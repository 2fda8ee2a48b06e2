// `einfuzz replay`: run stored cases (files, or directories searched for `*.case.json`) on the
// reference and the backends, check each case's `expect` and every verdict; table, JSON, JUnit.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "einfuzz/backends/backend.hpp"
#include "einfuzz/core/case.hpp"
#include "einfuzz/core/diagnostic.hpp"
#include "einfuzz/harness/reproduce.hpp"
#include "einfuzz/harness/run.hpp"

namespace einfuzz {

/// The case files named by `paths`: files as given, directories searched recursively for
/// `*.case.json` (sorted, so the order is stable). A missing path, or a directory without any case,
/// is `invalidArgument`.
Result<std::vector<std::filesystem::path>> collect_case_files(std::span<const std::string> paths);

/// One replayed case file.
struct ReplayEntry {
  std::string file;
  std::optional<Diagnostic> unreadable;  ///< the file is not a readable case (a failure)
  std::string expect;                    ///< "accept", the expected code, or "-" when absent
  std::string reference;                 ///< "accepts" or "rejects <code>"
  std::vector<BackendOutcome> backends;
  /// Per backend: its verdict is the stored divergence's (see replay_cases), not a failure.
  std::vector<bool> known;
  /// A stored divergence that no longer reproduces: per recorded backend, what it gives now.
  std::vector<std::string> stale;
  std::optional<std::string> expect_failure;
  bool passed = false;                   ///< readable, `expect` holds, no backend failed, nothing stale
  std::optional<Case> stored;            ///< the case as read (for the HTML report's tables)
  /// A stored profile surprise's `origin.profile`: its recorded backends were judged under it
  /// (nullopt when absent, or when --profile judged every backend under one profile).
  std::optional<PrecisionProfile> profile;
};

struct ReplayResult {
  std::vector<std::string> backends;
  std::vector<ReplayEntry> entries;
  std::size_t failed = 0;
  double seconds = 0;
  /// Per backend: judged by the any-order oracle (Semantics::any_order), else bitwise.
  std::vector<bool> any_order;
  /// (seconds since the start, cases done) at the start and after every case.
  std::vector<std::pair<double, std::uint64_t>> progress_samples;
};

/// Replays every file on every backend (in order). A case whose `origin` has `library`, `backend` and
/// `verdict` is a stored divergence, like a strict expected failure: on its recorded backends
/// (`origin.backend` and those in `origin.variants`, comma-separated) the verdict must be exactly
/// `origin.verdict` (anything else is `stale`: the library was fixed or changed, update the
/// registry); other backends of the same family (backend_family), and backends of any other family
/// that has stored divergences of its own among `files`, are shown but not judged; every other
/// backend (fused, shuffle, eigen, a plugin) must not fail, as on any case. A divergence with
/// `origin.profile` (a profile surprise) is judged under that profile on its recorded backends
/// only, and must also pass there under their declared profiles (a second run; else `stale`);
/// `options.profile` (--profile) overrides this and judges every any-order backend under it.
ReplayResult replay_cases(std::span<const std::filesystem::path> files, std::span<Backend* const> backends,
                          const RunOptions& options);

/// The command that reproduces a replayed case: its file on `context`'s backends with its options
/// (reproduce.hpp); when `context` names no backend, the result's backend names.
std::string replay_reproduce(const ReplayResult& result, const ReplayEntry& entry, ReproduceContext context);

/// One row per case (expect, the reference's conclusion, each backend's verdict, ok/FAIL), then a
/// line per failure with its reason and the command that reproduces it, then the totals.
void write_replay_table(const ReplayResult& result, std::ostream& out, const ReproduceContext& context);
/// As above, reproducing on the result's backend names with default options.
void write_replay_table(const ReplayResult& result, std::ostream& out);

/// {"cases": n, "failed": n, "backends": […], "entries": [{file, expect, reference, verdicts, status,
/// and for a failed readable case its reproduce command}]}.
std::string replay_report_json(const ReplayResult& result, const ReproduceContext& context);
/// As above, reproducing on the result's backend names with default options.
std::string replay_report_json(const ReplayResult& result);

/// The HTML report (campaign_html.cpp): the campaign page's sections for a replay — the verdict
/// matrix, the |error| / B histograms, cases per second, and each failed case or stored divergence
/// with its reproduce command and its case as tables.
std::string replay_report_html(const ReplayResult& result, const ReproduceContext& context);

/// JUnit XML: one testcase per case file, failing with the reason.
std::string replay_report_junit(const ReplayResult& result);

}  // namespace einfuzz
