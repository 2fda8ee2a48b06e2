// One `einfuzz` subcommand: its CLI11 definition and the action run when it was parsed.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "einfuzz/harness/backend_registry.hpp"
#include "einfuzz/harness/run.hpp"

namespace einfuzz::cli {

struct Subcommand {
  CLI::App* app;             ///< owned by the top-level app
  std::function<int()> run;  ///< returns the exit status; called only when `app` was parsed
};

/// Each subcommand lives in its own file (harness/cli/<name>.cpp).
Subcommand add_check(CLI::App& app);
Subcommand add_fuzz(CLI::App& app);
Subcommand add_shrink(CLI::App& app);
Subcommand add_replay(CLI::App& app);
Subcommand add_backends(CLI::App& app);
Subcommand add_repro(CLI::App& app);
Subcommand add_merge(CLI::App& app);
Subcommand add_profile(CLI::App& app);

/// What decides a verdict besides the case and the backends: the State of every subcommand that
/// runs cases (replay, shrink, repro) derives from it.
struct VerdictFlags {
  RunOptions run;
  BackendSpecOptions backend_options;
};

/// `app`'s subcommand `name` with its one-line description and its footer (the long help).
CLI::App* add_subcommand(CLI::App& app, const std::string& name, const std::string& description,
                         const std::string& footer);

/// The case in `file` (a subcommand's case argument), or nullopt after printing why it cannot be
/// read (exit 2).
std::optional<Case> read_case_argument(const std::string& file, const Limits& limits);

/// Builds the single backend `spec` names for `command` (shrink, repro take exactly one); on a bad
/// spec or one that names several backends prints the diagnostic and returns nullptr (exit 2).
std::unique_ptr<Backend> make_single_backend(const char* command, const std::string& spec, const VerdictFlags& flags);

/// Registers the verdict-deciding options (fused knobs, judge strictness, shuffle seed, size limits,
/// --timeout, --isolate) on `cmd`; reproduce commands spell them (reproduce.hpp).
void add_verdict_options(CLI::App* cmd, RunOptions& run, BackendSpecOptions& backend_options);
inline void add_verdict_options(CLI::App* cmd, VerdictFlags& flags) {
  add_verdict_options(cmd, flags.run, flags.backend_options);
}

/// Registers `--profile P` (check, replay): RunOptions::profile, "declared" (the default) leaving
/// it unset; a P that is no profile is bad usage here, one invalid for a case's dtype is refused
/// by the subcommand before it runs anything (profile_option_problem).
void add_profile_option(CLI::App* cmd, RunOptions& run);

/// Refuses a leading minus sign on an unsigned option (CLI11 would wrap "-1" to 2^64 - 1).
extern const CLI::Validator kNotNegative;

/// --timeout: one case may take a day at most; --seconds: a campaign may run 30 days at most.
/// Past these a steady_clock deadline computed from them is still exact, and nobody means more.
inline constexpr double kMaxTimeoutSeconds = 86400;
inline constexpr double kMaxCampaignSeconds = 30 * 86400.0;

/// Accepts a finite number of seconds in (0, max_seconds]: rejects nan, inf, 0, negatives and
/// absurd budgets (e.g. 1e10, which overflowed the campaign's deadline into the past).
CLI::Validator seconds_validator(double max_seconds);

/// Exit status of a run whose results are incomplete: a report, corpus case or shrunk case could
/// not be written (an I/O error, named on stderr), or an in-process plugin ended the process.
inline constexpr int kExitIncomplete = 3;

/// When `specs` name a `plugin:` (loaded into this process, with or without --isolate), forks once: the
/// child returns and does the work; the parent waits (forwarding SIGINT/SIGTERM/SIGHUP) and exits
/// with the status the child passed to finish_guarded, or, when the child ended without calling
/// it (the plugin called exit or _exit, or crashed), says so and exits kExitIncomplete. Call before
/// any backend is built (the process has one thread then).
void guard_in_process_plugins(const std::vector<std::string>& specs);

/// SIGINT/SIGTERM/SIGHUP kill every `cmd:` backend's process group, then end the process with
/// that signal as before (check, replay, shrink; fuzz stops cleanly instead).
void install_fatal_signal_cleanup();

/// Returns `status`, first handing it to a guarding parent (guard_in_process_plugins), if any.
int finish_guarded(int status);

/// How the reproduce commands this process prints spell the CLI: argv[0] as it was typed (a path,
/// relative to the working directory as the printed case files are, or a name found on PATH),
/// shell-quoted when a shell would split or expand it; "einfuzz" when argv[0] is empty. A command
/// printed by `build/einfuzz` run from the repository root starts `build/einfuzz check`, as before;
/// one printed by `../einfuzz/build/einfuzz` or an `einfuzz` on PATH runs where it was printed.
const std::string& cli_spelling();
void set_cli_spelling(const char* argv0);

/// Splits a --backend value: comma-separated names, except that a `cmd:` item extends to the end
/// of the value (PROTOCOL.md A), so its command line may contain commas.
std::vector<std::string> split_backend_list(const std::string& list);

}  // namespace einfuzz::cli
