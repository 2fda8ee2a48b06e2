// One `einfuzz` subcommand: its CLI11 definition and the action run when it was parsed.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

#include "einfuzz/harness/backend_registry.hpp"
#include "einfuzz/harness/run.hpp"

namespace einfuzz::cli {

struct Subcommand {
  CLI::App* app;             ///< owned by the top-level app
  std::function<int()> run;  ///< returns the exit status; called only when `app` was parsed
};

/// Each subcommand lives in its own file (harness/src/cli/<name>.cpp).
Subcommand add_check(CLI::App& app);
Subcommand add_fuzz(CLI::App& app);
Subcommand add_shrink(CLI::App& app);
Subcommand add_replay(CLI::App& app);
Subcommand add_backends(CLI::App& app);
Subcommand add_repro(CLI::App& app);

/// Registers the verdict-deciding options (fused knobs, judge strictness, shuffle seed, size limits,
/// --timeout, --isolate) on `cmd`; reproduce commands spell them (reproduce.hpp).
void add_verdict_options(CLI::App* cmd, RunOptions& run, BackendSpecOptions& backend_options);

/// Splits a --backend value: comma-separated names, except that a `cmd:` item extends to the end
/// of the value (PROTOCOL.md A), so its command line may contain commas.
std::vector<std::string> split_backend_list(const std::string& list);

}  // namespace einfuzz::cli
