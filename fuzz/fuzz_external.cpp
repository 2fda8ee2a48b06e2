// libFuzzer target: any backend — the one EINFUZZ_BACKEND names (`cmd:COMMAND` or `plugin:PATH.so`,
// PROTOCOL.md) — judged against the reference by the einsum/reduce oracles on the differential
// targets' inputs; a plugin built with -fsanitize=fuzzer-no-link feeds libFuzzer its own coverage.
// EINFUZZ_KNOWN names stored divergences (as `einfuzz fuzz --known`): a failure that shrinks into one
// of their groups is not a finding, so a backend with recorded divergences can be fuzzed for long.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <vector>

#include "einfuzz/backends/process.hpp"
#include "einfuzz/harness/backend_registry.hpp"
#include "einfuzz/harness/campaign.hpp"
#include "einfuzz/harness/group.hpp"
#include "einfuzz/harness/run.hpp"
#include "einfuzz/harness/shrink.hpp"
#include "differential.hpp"
#include "fuzz_input.hpp"

namespace einfuzz::fuzz {
namespace {

/// ClusterFuzzLite's $OUT holds the fuzzers and, from .clusterfuzzlite/build.sh, this plugin: with
/// EINFUZZ_BACKEND unset the target fuzzes it, so the ClusterFuzzLite build works out of the box.
constexpr const char* kDefaultPlugin = "einfuzz_example_plugin.so";

constexpr const char* kUsage = "EINFUZZ_BACKEND='cmd:COMMAND' or EINFUZZ_BACKEND='plugin:PATH.so' (PROTOCOL.md)";
constexpr const char* kKnownUsage =
    "EINFUZZ_KNOWN to stored divergences, ':'-separated case files or directories (as einfuzz fuzz --known)";

/// A configuration error is the user's, not a finding: one line and exit 2, before any input runs.
[[noreturn]] void refuse(std::string why, const char* usage = kUsage) {
  std::replace(why.begin(), why.end(), '\n', ' ');  // a process's stderr evidence may span lines
  std::fprintf(stderr, "fuzz_external: %s; set %s\n", why.c_str(), usage);
  std::fflush(stderr);
  std::_Exit(2);
}

/// The backend spec: EINFUZZ_BACKEND, else the plugin next to the executable, else refuse().
std::string backend_spec() {
  const char* env = std::getenv("EINFUZZ_BACKEND");
  if (env != nullptr && *env != '\0') {
    const std::string spec = env;
    const bool cmd = spec.starts_with("cmd:") && spec.size() > 4;
    const bool plugin = spec.starts_with("plugin:") && spec.size() > 7;
    if (!cmd && !plugin) refuse("EINFUZZ_BACKEND is '" + spec + "', neither cmd:COMMAND nor plugin:PATH");
    return spec;
  }
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path next_to = self.parent_path() / kDefaultPlugin;
    if (std::filesystem::is_regular_file(next_to, ec)) return "plugin:" + next_to.string();
  }
  refuse(std::string("EINFUZZ_BACKEND is not set and no ") + kDefaultPlugin + " lies next to the executable");
}

/// The options every input runs with (fuzz_limits, as the other differential targets).
const RunOptions& run_options() {
  static const RunOptions options = [] {
    RunOptions o;
    o.limits = fuzz_limits();
    return o;
  }();
  return options;
}

/// The backend under test, built once per process (PROTOCOL A processes and dlopen'ed plugins are
/// expensive to start, and a plugin's coverage counters must register before fuzzing begins).
Backend& backend() {
  static const std::unique_ptr<Backend> built = [] {
    const std::vector<std::string> specs = {backend_spec()};
    Result<std::vector<std::unique_ptr<Backend>>> made = make_backends(specs, run_options());
    if (!made) refuse("cannot load " + specs[0] + ": " + made.error().message);
    std::unique_ptr<Backend> b = std::move(made->front());
    // make_backends reports a process that never said hello only as a crash verdict on each case:
    // under libFuzzer that would be a "finding" on the first input, so it is refused here instead.
    if (const auto* p = dynamic_cast<const ProcessBackend*>(b.get()); p != nullptr && p->start_failure()) {
      refuse("cannot start " + specs[0] + ": " + p->start_failure()->evidence);
    }
    return b;
  }();
  return *built;
}

/// The stored divergences EINFUZZ_KNOWN names: ':'-separated case files or directories, read as
/// `einfuzz fuzz --known` reads them. Empty when it is unset; refuse() when one cannot be read.
const KnownDivergences& known_divergences() {
  static const KnownDivergences known = [] {
    const char* env = std::getenv("EINFUZZ_KNOWN");
    std::vector<std::filesystem::path> paths;
    for (std::string_view rest = env != nullptr ? env : ""; !rest.empty();) {
      const std::size_t colon = rest.find(':');
      if (colon != 0) paths.emplace_back(rest.substr(0, colon));
      rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
    }
    std::vector<std::string> errors;
    KnownDivergences k = load_known_divergences(paths, run_options(), errors);
    if (!errors.empty()) refuse("EINFUZZ_KNOWN: " + errors.front(), kKnownUsage);
    if (paths.empty()) return k;
    if (k.files == 0) {
      refuse("EINFUZZ_KNOWN names no stored divergence (a *.case.json with origin.backend and origin.verdict)",
             kKnownUsage);
    }
    std::fprintf(stderr, "fuzz_external: %zu stored divergences known (EINFUZZ_KNOWN)\n", k.files);
    return k;
  }();
  return known;
}

/// Whether the backend's failing verdict `failure` on `c` is a stored divergence: the case shrunk and
/// grouped as a campaign shrinks and groups it (the shrink capped at 10 s, as a timed campaign's), its
/// group one of known_divergences(). As a campaign counts later failures under the group the first one
/// of their pre-shrink signature found, a later failure with a known failure's pre-shrink signature is
/// known without another shrink. A failure that its shrunk case does not repeat is dropped too, as a
/// campaign drops it (unconfirmed). An unknown group, or no EINFUZZ_KNOWN, returns false: the input is
/// a finding.
bool known_or_unconfirmed(const Case& c, const BackendOutcome& failure) {
  if (known_divergences().signatures.empty()) return false;
  static std::map<std::string, std::filesystem::path> known_pre;  // pre-shrink signature → its file
  const std::string family = backend_family(failure.backend);
  const auto& checked = *check_case_shared(c, run_options().limits);
  const std::string reference =
      checked ? std::string("accepts") : "rejects " + std::string(code_name(checked.error().code));
  const std::string pre = pre_shrink_signature(c, family, failure.verdict.label(), reference);
  if (known_pre.contains(pre)) return true;
  ShrinkOptions options;
  options.max_seconds = 10;
  const ShrinkResult shrunk = shrink_case(c, backend(), failure.verdict.kind, run_options(), options);
  Backend* const one[] = {&backend()};
  const CaseOutcome final_outcome = run_case(shrunk.shrunk, one, run_options());
  if (final_outcome.backends.empty()) return false;
  const Verdict& v = final_outcome.backends.front().verdict;
  if (v.kind != failure.verdict.kind) {
    // As a campaign: a failure its shrunk case does not repeat on the same backend is a flaky or
    // stateful backend's (numpy reading memory behind an empty operand crashes only in some
    // processes), and no case file would reproduce it: not a finding. Later ones are shrunk again.
    std::fprintf(stderr,
                 "fuzz_external: %s: %s did not fail again when its shrunk case was re-run (a flaky or stateful "
                 "backend): not a finding\n",
                 failure.backend.c_str(), failure.verdict.label().c_str());
    return true;
  }
  const auto& signatures = known_divergences().signatures;
  const auto it = signatures.find(group_signature(shrunk.shrunk, family, v.label()));
  if (it == signatures.end()) return false;
  std::fprintf(stderr, "fuzz_external: %s: %s is the stored divergence %s, not a finding\n", failure.backend.c_str(),
               v.label().c_str(), it->second.string().c_str());
  known_pre.emplace(pre, it->second);
  return true;
}

/// Before a finding is reported: runs its case on a new instance of the backend (EINFUZZ_BACKEND
/// made again: a new process for cmd:) and, when that does not fail the same way, says so. The
/// failure then depends on what the backend ran before this input, and the case file that
/// einfuzz_artifact_to_case makes may not reproduce it alone; it is still reported (the campaign and
/// EINFUZZ_KNOWN runs drop such failures as unconfirmed, libFuzzer's artifact keeps it).
void warn_unless_repeated_fresh(const Case& c, const BackendOutcome& failure) {
  const std::vector<std::string> specs = {backend_spec()};
  Result<std::vector<std::unique_ptr<Backend>>> made = make_backends(specs, run_options());
  if (!made || made->empty()) return;
  Backend* const one[] = {made->front().get()};
  const CaseOutcome again = run_case(c, one, run_options());
  if (!again.backends.empty() && again.backends.front().verdict.kind == failure.verdict.kind) return;
  std::fprintf(stderr,
               "fuzz_external: %s: %s did not repeat on a new instance of the backend: it depends on what the "
               "backend ran before this input, and the case below alone may not reproduce it\n",
               failure.backend.c_str(), failure.verdict.label().c_str());
}

int run(std::span<const std::uint8_t> data, OpChoice op) {
  Backend& b = backend();
  const std::optional<Decoded> decoded = decode_case(data, op, kExternalLayoutPercent);
  if (!decoded) return 0;
  const Case& c = decoded->c;
  Backend* const backends[] = {&b};
  // Only the backend is judged (ordered or any-order as it declares; undeclared cases are
  // unsupported, never a finding): the reference's own checks belong to fuzz_einsum_diff and
  // fuzz_reduce_diff.
  DifferentialChecks checks;
  checks.reference_admitted = false;
  checks.known_divergence = [&c](const BackendOutcome& outcome) {
    if (!is_failure(outcome.verdict.kind)) return false;
    // A hang is reported as it is: shrinking it or running it on a new instance would spend a whole
    // backend timeout per run, past libFuzzer's own -timeout, which would report the input instead.
    if (outcome.verdict.kind == VerdictKind::timeout) return false;
    if (known_or_unconfirmed(c, outcome)) return true;
    warn_unless_repeated_fresh(c, outcome);
    return false;  // a finding
  };
  run_differential(c, backends, run_options(), checks);
  return 0;
}

}  // namespace
}  // namespace einfuzz::fuzz

/// Builds the backend and reads EINFUZZ_KNOWN before the first input, so a bad EINFUZZ_BACKEND or
/// EINFUZZ_KNOWN stops the run at start-up and a plugin's coverage counters are registered when
/// libFuzzer counts its modules.
extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  einfuzz::fuzz::backend();
  einfuzz::fuzz::known_divergences();
  return 0;
}

EINFUZZ_DIFFERENTIAL_TARGET(einfuzz::fuzz::run, einfuzz::fuzz::OpChoice::any)
