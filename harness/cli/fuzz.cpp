// `einfuzz fuzz`: flags → CampaignOptions → run_campaign, then the summary and the reports.
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "einfuzz/backends/process.hpp"
#include "einfuzz/core/atomic_write.hpp"
#include "einfuzz/harness/backend_registry.hpp"
#include "einfuzz/harness/campaign.hpp"
#include "einfuzz/harness/reproduce.hpp"
#include "subcommand.hpp"

namespace einfuzz::cli {
namespace {

constexpr const char* kFuzzFooter = R"(
Case i is generated from (seed, i) alone (and --dtypes, which findings record in their origin):
the same --seed, --dtypes and --cases give the same cases and verdicts (with --jobs J, worker w runs cases w, w+J, …; reports are ordered by case index).
The first failing verdict (mismatch, reject-disagree, crash, timeout, input-modified) of every new
pre-shrink signature is shrunk and grouped by its group signature (one group per root cause; the
variants of one library share groups, docs/fuzzing.md). A group that matches a stored divergence
under --known is `known` (shown with its file); a new group is stored under --corpus (file name =
content hash, `expect` = the reference's conclusion, `origin` = seed, case, generator, backend,
verdict, date) and printed with the one command that reproduces it.

With --shard K/N only the cases i ≡ K (mod N) run (with --cases M: those below M): N campaigns of
one seed, shards 0/N … N-1/N, run disjoint cases that together are the unsharded campaign's, and
`einfuzz merge` adds up their --report files (docs/scale.md).

Examples:  einfuzz fuzz                                  60 s over every built-in backend
           einfuzz fuzz --backend fused --cases 20000 --seed 7 --report fuzz.json
           einfuzz fuzz --backend all --seconds 600 --jobs 2 --junit fuzz.xml
           einfuzz fuzz --cases 300 --html report.html   the HTML report (docs/fuzzing.md)
           einfuzz fuzz --shard 2/8 --seconds 3600 --report shard-2.json
           einfuzz fuzz --dtypes f16,bf16 --backend numpy   only half-precision cases

SIGINT or SIGTERM stops the campaign cleanly: the case in flight is dropped, backend processes are
killed, the summary and the reports are written, and the exit status is 130 or 143. A second
signal ends it at once, without reports (an in-process backend that hangs cannot be interrupted
without --isolate).

Exit status: 0 no new group (nothing found, or only known divergences), 1 a new group, 2 bad usage,
3 an I/O error (a report or a finding's case file could not be written: the message names it),
130 / 143 stopped by SIGINT / SIGTERM.)";

bool write_file(const std::string& path, const std::string& text, const char* what) {
  const std::string error = write_file_atomically(path, text);
  if (error.empty()) return true;
  std::cerr << "error[io]: cannot write the " << what << ": " << error << "\n";
  return false;
}

void on_stop_signal(int sig) {
  if (stop_requested() == 0) {
    request_stop(sig);
    return;
  }
  // A second signal: something does not stop (an in-process backend that hangs, which only
  // --isolate can interrupt). Kill the backend processes and end now, without reports.
  kill_backend_process_groups();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

/// SIGINT/SIGTERM ask the campaign to stop (request_stop) instead of killing the process.
void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

std::size_t terminal_width() {
  winsize w{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 0) return w.ws_col;
  return 0;
}

/// Parses "K/N" (0 <= K < N) into `shard` and `shards`; false on anything else.
bool parse_shard(const std::string& text, std::uint64_t& shard, std::uint64_t& shards) {
  const auto slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size()) return false;
  const auto number = [](const std::string& digits, std::uint64_t& out) {
    if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos) return false;
    out = std::stoull(digits);
    return true;
  };
  return number(text.substr(0, slash), shard) && number(text.substr(slash + 1), shards) && shards >= 1 &&
         shard < shards;
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

}  // namespace

Subcommand add_fuzz(CLI::App& app) {
  struct State {
    CampaignOptions options;
    std::vector<std::string> backend_lists;
    double seconds = 0;
    std::uint64_t cases = 0;
    std::string corpus = "corpus/found";
    std::string report, junit, html;
    std::string shard;
    std::optional<std::string> dtypes;
    bool no_store = false, quiet = false;
    std::vector<std::string> known;
  };
  auto st = std::make_shared<State>();
  CLI::App* cmd = app.add_subcommand("fuzz", "Run a fuzz campaign: generate, run, judge, shrink and store every failure");
  cmd->footer(kFuzzFooter);
  cmd->add_option("--backend", st->backend_lists, "backends, comma-separated (repeatable; default all)")
      ->allow_extra_args(false);
  auto* seconds = cmd->add_option("--seconds", st->seconds, "time budget in seconds (default 60)")
                      ->check(seconds_validator(kMaxCampaignSeconds));
  auto* cases = cmd->add_option("--cases", st->cases, "run exactly this many cases instead of a time budget")
                    ->check(kNotNegative);
  seconds->excludes(cases);
  cases->excludes(seconds);
  cmd->add_option("--seed", st->options.seed, "campaign seed")->check(kNotNegative)->capture_default_str();
  cmd->add_option("--jobs", st->options.jobs, "worker threads")
      ->check(kNotNegative & CLI::Range(1u, 256u))
      ->capture_default_str();
  cmd->add_option("--shard", st->shard, "run only the cases i ≡ K (mod N) of the seed (0 <= K < N)")
      ->type_name("K/N");
  cmd->add_option("--corpus", st->corpus, "directory for shrunk findings")->capture_default_str();
  cmd->add_flag("--no-store", st->no_store, "do not write findings into the corpus");
  cmd->add_option("--report", st->report, "write a JSON report to FILE");
  cmd->add_option("--junit", st->junit, "write JUnit XML (one testcase per group) to FILE");
  cmd->add_option("--html", st->html,
                  "write a self-contained HTML report to FILE (verdict matrix, |error|/B histograms, cases/s, "
                  "groups with their minimal cases)");
  cmd->add_option("--invalid-percent", st->options.gen.invalid_percent, "percent of deliberately invalid cases")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  cmd->add_option("--reduce-percent", st->options.gen.reduce_percent, "percent of reduce cases")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  cmd->add_option("--vjp-percent", st->options.gen.vjp_percent,
                  "percent of VJP cases (a cotangent with a differentiable f32/f64 einsum or reduce); backends "
                  "without VJPs answer them unsupported")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  cmd->add_option("--layout-percent", st->options.gen.layout_percent,
                  "percent of cases whose inputs are strided views of a storage buffer (permuted, gapped, reversed, "
                  "expanded, offset); only backends declaring strided_inputs see the layouts")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  cmd->add_option("--dtypes", st->dtypes,
                  "generate only these dtypes, comma-separated (f32,f64,i32,i64,bool,f16,bf16; default all); "
                  "a backend that does not declare a case's dtype answers it unsupported")
      ->type_name("LIST");
  cmd->add_option("--known", st->known,
                  "stored divergences: a directory or case file (repeatable; default corpus/divergences if it exists)")
      ->allow_extra_args(false);
  cmd->add_option("--shrink-limit", st->options.shrink_limit,
                  "per pre-shrink signature, failures shrunk until one is confirmed (later ones are counted)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--max-shrink-attempts", st->options.shrink.max_attempts, "candidates tried per shrink")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--max-findings", st->options.max_findings, "stop after this many distinct findings (0: never)")
      ->check(kNotNegative)
      ->capture_default_str();
  add_verdict_options(cmd, st->options.run, st->options.backend_options);
  cmd->add_flag("--quiet", st->quiet, "no progress line");

  return {cmd, [st, seconds, cases] {
            CampaignOptions& o = st->options;
            o.command = cli_spelling();
            if (seconds->count() && !(st->seconds > 0)) {
              std::cerr << "error[invalidArgument]: --seconds must be a positive number\n";
              return 2;
            }
            if (cases->count() && st->cases == 0) {
              std::cerr << "error[invalidArgument]: --cases must be at least 1\n";
              return 2;
            }
            if (!st->shard.empty() && !parse_shard(st->shard, o.shard, o.shards)) {
              std::cerr << "error[invalidArgument]: --shard '" << st->shard
                        << "' is not K/N with 0 <= K < N (e.g. --shard 0/4 … --shard 3/4)\n";
              return 2;
            }
            if (st->dtypes) {
              auto dtypes = parse_dtype_list(*st->dtypes, "--dtypes");
              if (!dtypes) {
                std::cerr << render(dtypes.error()) << "\n";
                return 2;
              }
              const bool differentiable = std::any_of(dtypes->begin(), dtypes->end(), [](DType d) {
                return d == DType::f32 || d == DType::f64;
              });
              if (o.gen.vjp_percent > 0 && !differentiable) {
                std::cerr << "error[invalidArgument]: --vjp-percent needs f32 or f64 in --dtypes '" << *st->dtypes
                          << "' (VJP cases are f32/f64 only)\n";
                return 2;
              }
              restrict_dtypes(o.gen, *dtypes);
              o.dtypes = *st->dtypes;
            }
            if (st->known.empty() && std::filesystem::is_directory("corpus/divergences")) {
              st->known.push_back("corpus/divergences");
            }
            o.known.clear();
            for (const std::string& k : st->known) {
              if (!std::filesystem::exists(k)) {
                std::cerr << "error[invalidArgument]: --known '" << k << "' does not exist\n";
                return 2;
              }
              o.known.emplace_back(k);
            }
            if (seconds->count()) o.seconds = st->seconds;
            if (cases->count()) o.cases = st->cases;
            o.corpus = st->corpus;
            o.store = !st->no_store;
            std::vector<std::string> specs;
            for (const std::string& list : st->backend_lists) {
              for (std::string& b : split_backend_list(list)) specs.push_back(std::move(b));
            }
            if (specs.empty()) specs = {"all"};
            guard_in_process_plugins(specs);
            o.backend_specs = expand_backend_specs(specs);
            // Build once up front, so a bad spec is reported before anything runs.
            if (auto probe = make_backends(specs, o.run, o.backend_options); !probe) {
              std::cerr << render(probe.error()) << "\n";
              return finish_guarded(2);
            }
            install_stop_handlers();
            std::cerr << "einfuzz fuzz: seed " << o.seed << ", "
                      << (o.shards > 1 ? "shard " + std::to_string(o.shard) + "/" + std::to_string(o.shards) + ", "
                                       : std::string())
                      << (o.cases ? std::to_string(*o.cases) + " cases" +
                                        (o.shards > 1 ? " (this shard runs " +
                                                            std::to_string(shard_case_count(*o.cases, o.shard, o.shards)) + ")"
                                                      : std::string())
                                  : seconds_text(o.seconds.value_or(60)))
                      << (o.dtypes.empty() ? std::string() : ", dtypes " + o.dtypes) << ", " << o.jobs
                      << (o.jobs == 1 ? " job" : " jobs") << ", corpus "
                      << (o.store ? o.corpus.string() : std::string("(not stored)")) << "\n";
            auto result = run_campaign(
                o, [&] { return make_backends(specs, o.run, o.backend_options); },
                {st->quiet ? nullptr : &std::cerr, ::isatty(STDERR_FILENO) != 0, terminal_width()});
            if (!result) {
              std::cerr << render(result.error()) << "\n";
              return finish_guarded(2);
            }
            write_campaign_summary(*result, o, std::cout);
            bool ok = true;
            if (!st->report.empty()) ok &= write_file(st->report, campaign_report_json(*result, o), "JSON report");
            if (!st->junit.empty()) ok &= write_file(st->junit, campaign_report_junit(*result), "JUnit report");
            if (!st->html.empty()) ok &= write_file(st->html, campaign_report_html(*result, o), "HTML report");
            if (result->stopped_by_signal) {
              std::cerr << "einfuzz fuzz: stopped by signal " << result->stopped_by_signal << " after "
                        << result->cases << " cases\n";
              return finish_guarded(128 + result->stopped_by_signal);
            }
            if (result->store_failures > 0) {
              std::cerr << "error[io]: " << result->store_failures << " finding(s) could not be stored in "
                        << o.corpus.string() << " (see 'not stored' above)\n";
              ok = false;
            }
            if (!ok) return finish_guarded(kExitIncomplete);
            return finish_guarded(result->found_new() ? 1 : 0);
          }};
}

}  // namespace einfuzz::cli
