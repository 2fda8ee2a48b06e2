// `einfuzz replay PATH…`: run stored cases and check their `expect` and every verdict.
#include <fstream>
#include <iostream>
#include <memory>

#include "einfuzz/core/atomic_write.hpp"
#include "einfuzz/harness/backend_registry.hpp"
#include "einfuzz/harness/replay.hpp"
#include "subcommand.hpp"

namespace einfuzz::cli {
namespace {

constexpr const char* kReplayFooter = R"(
PATH is a case file or a directory (searched recursively for *.case.json). A case passes when it
is readable, its `expect` (the reference's conclusion: accept, or an error code) holds, and no
backend gets a failing verdict (an ordered backend such as fused must equal the reference bit
for bit). `--json -` prints the JSON report instead of the table.

A stored divergence (origin: library, backend, verdict) must reproduce its recorded verdict on its
recorded backends; one with `origin.profile` (a profile surprise) is judged there under that
precision profile and must pass there under the declared one. --profile P judges every any-order
backend under P instead (then origin.profile is not used); a P invalid for some case's dtype is
exit 2 before anything runs.

Exit status: 0 every case passed, 1 some case failed, 2 bad usage (a missing path, an unknown
backend), 3 an I/O error (a report could not be written) or an in-process plugin ended the
process. A FIFO, socket, device or dangling symlink among the paths is a failed case, never
opened.)";

bool write_report(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout << text << std::flush;
    if (std::cout) return true;
    std::cerr << "error[io]: cannot write the report to standard output\n";
    return false;
  }
  const std::string error = write_file_atomically(path, text);
  if (error.empty()) return true;
  std::cerr << "error[io]: " << error << "\n";
  return false;
}

}  // namespace

Subcommand add_replay(CLI::App& app) {
  struct State : VerdictFlags {
    std::vector<std::string> paths;
    std::vector<std::string> backend_lists;
    std::string json, junit, html;
  };
  auto st = std::make_shared<State>();
  CLI::App* cmd = add_subcommand(app, "replay", "Replay stored cases: check their expect and every backend's verdict",
                                  kReplayFooter);
  cmd->add_option("paths", st->paths, "case files or directories")->required();
  cmd->add_option("--backend", st->backend_lists, "backends, comma-separated (repeatable; default all)")
      ->allow_extra_args(false);
  cmd->add_option("--json", st->json, "write a JSON report to FILE ('-': standard output, no table)");
  cmd->add_option("--junit", st->junit, "write JUnit XML (one testcase per case) to FILE");
  cmd->add_option("--html", st->html,
                  "write a self-contained HTML report to FILE (verdict matrix, |error|/B histograms, "
                  "failed cases with their tables)");
  add_verdict_options(cmd, *st);
  add_profile_option(cmd, st->run);

  return {cmd, [st] {
            auto files = collect_case_files(st->paths);
            if (!files) {
              std::cerr << render(files.error()) << "\n";
              return 2;
            }
            if (st->run.profile) {  // one invalid for some case's dtype is bad usage: nothing runs
              for (const auto& file : *files) {
                const auto c = read_case_file(file, st->run.limits);
                if (!c) continue;  // replay reports it as unreadable
                if (const auto problem = profile_option_problem(*c, *st->run.profile)) {
                  std::cerr << render(*problem) << " (" << file.string() << ")\n";
                  return 2;
                }
              }
            }
            std::vector<std::string> specs;
            for (const std::string& list : st->backend_lists) {
              for (std::string& b : split_backend_list(list)) specs.push_back(std::move(b));
            }
            if (specs.empty()) specs = {"all"};
            guard_in_process_plugins(specs);
            install_fatal_signal_cleanup();
            auto owned = make_backends(specs, st->run, st->backend_options);
            if (!owned) {
              std::cerr << render(owned.error()) << "\n";
              return finish_guarded(2);
            }
            std::vector<Backend*> backends;
            for (const auto& b : *owned) backends.push_back(b.get());
            const ReplayResult result = replay_cases(*files, backends, st->run);
            const ReproduceContext context{cli_spelling(), expand_backend_specs(specs), st->run, st->backend_options};
            if (st->json != "-") write_replay_table(result, std::cout, context);
            bool ok = true;
            if (!st->json.empty()) ok &= write_report(st->json, replay_report_json(result, context));
            if (!st->junit.empty()) ok &= write_report(st->junit, replay_report_junit(result));
            if (!st->html.empty()) ok &= write_report(st->html, replay_report_html(result, context));
            if (!ok) return finish_guarded(kExitIncomplete);
            return finish_guarded(result.failed > 0 ? 1 : 0);
          }};
}

}  // namespace einfuzz::cli
