// The fuzz campaign behind `einfuzz fuzz`: generate case i from (seed, i), run it on every backend,
// shrink the first failure of every new pre-shrink signature, group the shrunk failures by their
// group signature (one group per root cause, group.hpp), recognise the known divergences, store the
// new groups in the corpus and say how to reproduce them; live progress, summary, JSON and JUnit.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "einfuzz/backends/backend.hpp"
#include "einfuzz/harness/backend_registry.hpp"
#include "einfuzz/harness/generate.hpp"
#include "einfuzz/harness/run.hpp"
#include "einfuzz/harness/shrink.hpp"
#include "einfuzz/harness/verdict.hpp"

namespace einfuzz {

/// The generator settings of a campaign: the defaults plus long axes (contractions into thousands).
GenOptions campaign_gen_options();

struct CampaignOptions {
  std::optional<double> seconds;         ///< time budget; 60 s when neither this nor `cases` is set
  std::optional<std::uint64_t> cases;    ///< run exactly cases 0 … cases−1 (deterministic)
  std::uint64_t seed = 1;                ///< case i is drawn from SeededChoices(Rng::mix(seed, i))
  unsigned jobs = 1;                     ///< worker threads; worker w runs the shard's cases w, w + jobs, …
  /// Sharding (`--shard K/N`): only the cases i ≡ shard (mod shards) run, so N campaigns of one seed
  /// with shards 0 … N−1 run disjoint sets of cases that together are the unsharded campaign's.
  std::uint64_t shard = 0;
  std::uint64_t shards = 1;              ///< 1: unsharded
  std::filesystem::path corpus = "corpus/found";  ///< where shrunk findings are stored
  bool store = true;                     ///< write findings into `corpus` (never overwriting a file)
  GenOptions gen = campaign_gen_options();
  /// `--dtypes` as given when it restricted `gen` (restrict_dtypes), else empty: a finding's `origin`
  /// records it, since case i of the seed depends on it.
  std::string dtypes;
  RunOptions run;
  /// Shrinking per group; with a time budget (no `cases`) and no max_seconds of its own, each shrink
  /// is also capped at 10 s and all shrinking ends `shrink_grace` after the budget (group.hpp).
  ShrinkOptions shrink;
  /// Per pre-shrink signature, failures shrunk until one of them is confirmed (its shrunk case fails
  /// again): the first failure of every new signature is shrunk, later ones only counted.
  int shrink_limit = 3;
  /// With a time budget: seconds after it in which shrinks still run (a failure of a new pre-shrink
  /// signature met later is counted as unshrunk). Negative: 10 % of the budget, between 2 and 30 s.
  double shrink_grace = -1;
  std::uint64_t max_findings = 0;        ///< stop after this many groups (0: never)
  /// Stored divergences (`*.case.json` files or directories of them): a group is `known` when its
  /// signature equals group_signature(stored case, backend_family(origin.backend), origin.verdict)
  /// of one of them (`replay` checks that each still reproduces its recorded verdict).
  std::vector<std::filesystem::path> known;
  bool record_verdicts = false;          ///< keep every case's verdict labels (tests, determinism)
  std::string command = "build/einfuzz"; ///< how reproduce commands spell the CLI
  /// Per backend (in the factory's order), the spec that builds it (`all` expanded): what reproduce
  /// commands name. Empty: the backends' names.
  std::vector<std::string> backend_specs;
  BackendSpecOptions backend_options;    ///< how the factory runs them (--timeout): also reproduced
  double progress_interval = 0.5;        ///< seconds between progress updates
};

/// The failures of one pre-shrink signature that a group holds: which case of it was shrunk into the
/// group, and how many failures it brought. `einfuzz merge` reads them back so that shards, which each
/// shrink their own first case of a signature, merge into the groups of one unsharded campaign.
struct PreShrinkShare {
  std::string signature;        ///< pre_shrink_signature (group.hpp)
  std::uint64_t first_case = 0; ///< the case whose shrink gave the group
  std::uint64_t count = 0;      ///< failures of this signature attributed to the group
};

/// One group (one root cause), after shrinking: its shrunk case, re-run on the same backend, got a
/// failing verdict of the same kind (a case that no longer fails is never a finding).
struct Finding {
  std::uint64_t case_index = 0;   ///< the generated case it was first seen on
  std::string backend;            ///< the backend it was shrunk on
  std::string family;             ///< backend_family(backend)
  std::string signature;          ///< group_signature(shrunk, family, verdict)
  /// The variants of the family that reproduce the group (the same signature on the shrunk case),
  /// in backend order.
  std::vector<std::string> backends;
  std::uint64_t count = 0;        ///< failing verdicts attributed to it (via their pre-shrink signature)
  std::vector<PreShrinkShare> pre_shrink;  ///< where `count` came from, one entry per pre-shrink signature
  bool known = false;             ///< matches a stored divergence (CampaignOptions::known): not stored
  std::filesystem::path known_file;  ///< that divergence; `reproduce` then names it
  /// A new group: the stored divergences of its kind (signature_kind: family, verdict, op, dtype),
  /// at most three, in signature order. Where to start reading it; it stays new.
  std::vector<std::filesystem::path> resembles;
  VerdictKind kind = VerdictKind::crash;
  std::string verdict;            ///< the shrunk case's verdict, Verdict::label() (ORACLE.md §6)
  std::string original_verdict;   ///< the generated case's verdict label
  std::string detail;             ///< the shrunk case's verdict detail
  std::optional<ElementEvidence> first;  ///< the shrunk case's first differing element, if any
  Case shrunk;                    ///< with `expect` (the reference's conclusion) and `origin`
  std::filesystem::path file;     ///< corpus / case_file_name(shrunk), or known_file
  std::string reproduce;          ///< the one command that reproduces it
  std::string store_error;        ///< why the file could not be written, if it could not
  int shrink_steps = 0;
  int shrink_attempts = 0;
};

/// A backend that sent more after a complete answer (LateFault: PROTOCOL A §3, exactly one
/// response), found once the campaign's next request to it was due or when it was told bye. Not a
/// group (nothing to shrink: the bytes came after the case was judged) but a fault found: it makes
/// `einfuzz fuzz` exit 1, and `check` charges it to the case (finish_and_charge_late_faults).
struct LateFaultReport {
  std::string backend;
  std::uint64_t count = 0;                  ///< late faults of this backend in the campaign
  std::optional<std::uint64_t> case_index;  ///< the case of the first one, when the campaign knows it
  std::string evidence;                     ///< the first one's
  std::optional<Case> late_case;            ///< the first one's case, when the backend named it
  std::filesystem::path file;               ///< corpus / case_file_name(late_case), stored unless --no-store
  std::string reproduce;                    ///< `einfuzz check --case FILE --backend SPEC`
  std::string store_error;
};

/// One case's verdict labels, per backend (CampaignOptions::record_verdicts).
struct CaseRecord {
  std::uint64_t index = 0;
  std::string name;                 ///< case_file_name of the generated case
  std::vector<std::string> labels;  ///< per backend, in backend order
};

struct CampaignResult {
  std::vector<std::string> backends;
  std::uint64_t cases = 0;
  double seconds = 0;
  std::vector<std::array<std::uint64_t, kVerdictKinds>> counts;  ///< per backend, per VerdictKind
  /// Per backend, Verdict::error_bins summed over its verdicts (the report's accuracy histogram).
  std::vector<std::array<std::uint64_t, kErrorBins>> error_bins;
  /// Per backend: judged by the any-order oracle (Semantics::any_order), else bitwise.
  std::vector<bool> any_order;
  /// (seconds since the start, cases done) at the start, at every progress tick and at the end.
  std::vector<std::pair<double, std::uint64_t>> progress_samples;
  std::vector<Finding> findings;    ///< the groups, ordered by case index
  std::vector<LateFaultReport> late_faults;  ///< one per backend that sent more after an answer
  std::uint64_t failures = 0;       ///< failing verdicts, before grouping
  /// Failures of a pre-shrink signature that had no group yet and could not be shrunk: over the
  /// shrink limit, or after the shrink time ended.
  std::uint64_t unshrunk = 0;
  std::size_t known_loaded = 0;     ///< stored divergences read from CampaignOptions::known
  std::vector<std::string> known_errors;  ///< unreadable stored divergences (named, not fatal)
  std::uint64_t skipped = 0;        ///< cases over a harness limit (SEMANTICS §13.4): run on no backend
  /// Shrunk failures whose re-run on the same backend, or (for a new group) on a fresh instance of it
  /// from the factory, was not a failing verdict of the same kind: not findings, not stored (a flaky
  /// or stateful backend).
  std::uint64_t unconfirmed = 0;
  /// `unconfirmed` by the backend whose failure it was (the sum is `unconfirmed`): which backend
  /// is flaky or stateful.
  std::map<std::string, std::uint64_t> unconfirmed_by_backend;
  /// Failures of a signature that no group covers and that were not shrunk because no time was left
  /// (a late hang, the shrink deadline passed): nothing shows they are known, so they count as new.
  std::uint64_t unexamined = 0;
  std::vector<CaseRecord> records;  ///< ordered by case index, when recorded
  /// The signal (SIGINT, SIGTERM) that stopped the campaign early (request_stop), else 0. The case
  /// in flight when it arrived is not counted; everything before it is, findings included.
  int stopped_by_signal = 0;
  std::uint64_t store_failures = 0;  ///< findings and late faults whose case file could not be written (I/O error)

  double cases_per_second() const { return seconds > 0 ? static_cast<double>(cases) / seconds : 0; }
  /// Groups that match no stored divergence.
  std::size_t new_groups() const;
  /// Something may be new: a new group, a failure never examined for lack of time (`unexamined`),
  /// or a backend that answered more than once (`late_faults`). What makes `einfuzz fuzz` exit 1.
  bool found_new() const { return new_groups() > 0 || unexamined > 0 || !late_faults.empty(); }
};

/// Builds one set of backends (called once per worker, before any case runs).
using BackendFactory = std::function<Result<std::vector<std::unique_ptr<Backend>>>()>;

/// Where progress goes: a line on `out` every progress_interval (rewritten with '\r' when `tty`,
/// else a new line at most every 5 s), and a message per finding. Null `out`: silent.
struct ProgressSink {
  std::ostream* out = nullptr;
  bool tty = false;
  std::size_t width = 0;  ///< tty only: the terminal's columns (the line is cut to fit); 0: no limit
};

/// The number of cases 0 … cases−1 that shard `shard` of `shards` runs (those i ≡ shard mod shards).
std::uint64_t shard_case_count(std::uint64_t cases, std::uint64_t shard, std::uint64_t shards);

/// Runs the campaign. Bad options or a failing factory are a diagnostic; backend faults are
/// verdicts. Deterministic for a fixed `cases` and `jobs` (case i depends only on seed and i).
Result<CampaignResult> run_campaign(const CampaignOptions& options, const BackendFactory& factory,
                                    ProgressSink progress = {});

/// Group signature → file, for every stored divergence under `known` (case files, or directories
/// searched for *.case.json): group_signature(stored case, backend_family(origin.backend),
/// origin.verdict), the signature a campaign's finding of the same root cause shrinks to (`replay`
/// checks that each still reproduces its verdict). Cases without both origin fields are not
/// divergences and are skipped, and so are profile surprises (`origin.profile`) unless `run` judges
/// under that profile: under the declared one such a case passes, and its signature must not hide a
/// real failure. What cannot be listed or read is appended to `errors`.
struct KnownDivergences {
  /// Signature → the first file (in path order) with it: several files may share one (an empty
  /// contraction's group, group.hpp).
  std::map<std::string, std::filesystem::path> signatures;
  std::size_t files = 0;  ///< stored divergences read (each contributes its signature)
};
KnownDivergences load_known_divergences(std::span<const std::filesystem::path> known, const RunOptions& run,
                                        std::vector<std::string>& errors);

/// The final summary: backend × verdict counts, cases/s, and each group (new or known) with its
/// backends, count, file and command.
void write_campaign_summary(const CampaignResult& result, const CampaignOptions& options, std::ostream& out);

/// Why a new finding's case file (the one its reproduce command reads) was not written, for the
/// progress output and the summary: under --no-store, or the store's I/O error. Empty when it was
/// written, and for a known finding (whose file is the stored divergence).
std::string not_stored_note(const Finding& finding, const CampaignOptions& options);

/// The JSON report: totals, counts per backend keyed by verdict name, and a `groups` array (signature,
/// verdict, op, dtype, backends, count, case_file, reproduce, known).
std::string campaign_report_json(const CampaignResult& result, const CampaignOptions& options);

/// JUnit XML: one testcase per group, failing when the group is new (a campaign without groups has
/// one passing testcase).
std::string campaign_report_junit(const CampaignResult& result);

/// The HTML report (campaign_html.cpp): one self-contained page (inline CSS and SVG, no script) with
/// the verdict matrix, per backend the histogram of |error| / B, cases per second over time and the
/// groups with their reproduce commands and minimal cases.
std::string campaign_report_html(const CampaignResult& result, const CampaignOptions& options);

/// Escapes `s` for XML text and attribute values.
std::string xml_escape(std::string_view s);

}  // namespace einfuzz
