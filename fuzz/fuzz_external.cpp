// libFuzzer target: any backend — the one EINFUZZ_BACKEND names (`cmd:COMMAND` or `plugin:PATH.so`,
// PROTOCOL.md) — judged against the reference by the einsum/reduce oracles on the differential
// targets' inputs; a plugin built with -fsanitize=fuzzer-no-link feeds libFuzzer its own coverage.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <vector>

#include "einfuzz/backends/process.hpp"
#include "einfuzz/harness/backend_registry.hpp"
#include "einfuzz/harness/run.hpp"
#include "differential.hpp"
#include "fuzz_input.hpp"

namespace einfuzz::fuzz {
namespace {

/// ClusterFuzzLite's $OUT holds the fuzzers and, from .clusterfuzzlite/build.sh, this plugin: with
/// EINFUZZ_BACKEND unset the target fuzzes it, so the ClusterFuzzLite build works out of the box.
constexpr const char* kDefaultPlugin = "einfuzz_example_plugin.so";

constexpr const char* kUsage = "EINFUZZ_BACKEND='cmd:COMMAND' or EINFUZZ_BACKEND='plugin:PATH.so' (PROTOCOL.md)";

/// A configuration error is the user's, not a finding: one line and exit 2, before any input runs.
[[noreturn]] void refuse(std::string why) {
  std::replace(why.begin(), why.end(), '\n', ' ');  // a process's stderr evidence may span lines
  std::fprintf(stderr, "fuzz_external: %s; set %s\n", why.c_str(), kUsage);
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

int run(std::span<const std::uint8_t> data, OpChoice op) {
  Backend& b = backend();
  const std::optional<Decoded> decoded = decode_case(data, op, kExternalLayoutPercent);
  if (!decoded) return 0;
  Backend* const backends[] = {&b};
  // Only the backend is judged (ordered or any-order as it declares; undeclared cases are
  // unsupported, never a finding): the reference's own checks belong to fuzz_einsum_diff and
  // fuzz_reduce_diff.
  DifferentialChecks checks;
  checks.reference_admitted = false;
  run_differential(decoded->c, backends, run_options(), checks);
  return 0;
}

}  // namespace
}  // namespace einfuzz::fuzz

/// Builds the backend before the first input, so a bad EINFUZZ_BACKEND stops the run at start-up and
/// a plugin's coverage counters are registered when libFuzzer counts its modules.
extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  einfuzz::fuzz::backend();
  return 0;
}

EINFUZZ_DIFFERENTIAL_TARGET(einfuzz::fuzz::run, einfuzz::fuzz::OpChoice::any)
