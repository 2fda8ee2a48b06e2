// `einfuzz shrink CASE`: shrink a failing case file on one backend, keeping its verdict class.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "einfuzz/core/atomic_write.hpp"
#include "einfuzz/harness/backend_registry.hpp"
#include "einfuzz/harness/campaign.hpp"
#include "einfuzz/harness/group.hpp"
#include "einfuzz/harness/reproduce.hpp"
#include "einfuzz/harness/shrink.hpp"
#include "subcommand.hpp"

namespace einfuzz::cli {
namespace {

constexpr const char* kShrinkFooter = R"(
Greedy and valid by construction: drop operands, drop or merge labels, shorten lengths towards 0
and 1, simplify values towards 0, ±1 and fewer special values, shorten names; the first smaller
candidate that still gets the same verdict class on the backend is taken and shrinking restarts
from it. The shrunk case gets `expect` = the reference's conclusion.

Then its group, as `fuzz` would name it: `group: known <file>` when a stored divergence under
--known (default corpus/divergences if it exists) has the shrunk case's group signature, else
`group: new` and the signature. A stored divergence shrunk on its own backend lands in a stored
group (the tests corpus/divergences-fixpoint-*).

Exit status: 0 the shrunk case was written, 2 bad input (unreadable case, unknown backend, or a
case that does not fail on the backend: nothing to shrink), 3 the shrunk case could not be
written (--out or standard output: a full disk, a read-only directory), or an in-process plugin
ended the process. --out is written to a temporary file and renamed: never a partial case.)";

std::string summary(const Case& c) {
  std::int64_t elements = 0;
  for (const Tensor& t : c.inputs) elements += t.size();
  return std::to_string(c.inputs.size()) + (c.inputs.size() == 1 ? " input, " : " inputs, ") +
         std::to_string(elements) + " elements, '" + c.pattern + "'";
}

}  // namespace

Subcommand add_shrink(CLI::App& app) {
  struct State : VerdictFlags {
    std::string case_file;
    std::string backend = "fused";
    std::string out;
    std::vector<std::string> known;
    ShrinkOptions shrink;
  };
  auto st = std::make_shared<State>();
  CLI::App* cmd = add_subcommand(app, "shrink", "Shrink a failing case file, keeping its verdict class on one backend",
                                  kShrinkFooter);
  cmd->add_option("case", st->case_file, "the failing case file (einfuzz-case/1)")->required();
  cmd->add_option("--backend", st->backend, "the backend it fails on")->capture_default_str();
  cmd->add_option("--out", st->out, "write the shrunk case to FILE (default: standard output)");
  cmd->add_option("--max-attempts", st->shrink.max_attempts, "candidates to try at most")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--known", st->known,
                  "stored divergences: a directory or case file (repeatable; default corpus/divergences if it exists)")
      ->allow_extra_args(false);
  add_verdict_options(cmd, *st);
  add_profile_option(cmd, st->run);

  return {cmd, [st] {
            const auto c = read_case_argument(st->case_file, st->run.limits);
            if (!c) return 2;
            if (st->known.empty() && std::filesystem::is_directory("corpus/divergences")) {
              st->known.push_back("corpus/divergences");
            }
            std::vector<std::filesystem::path> known_paths;
            for (const std::string& k : st->known) {
              if (!std::filesystem::exists(k)) {
                std::cerr << "error[invalidArgument]: --known '" << k << "' does not exist\n";
                return 2;
              }
              known_paths.emplace_back(k);
            }
            guard_in_process_plugins({st->backend});
            install_fatal_signal_cleanup();
            const auto owned = make_single_backend("shrink", st->backend, *st);
            if (!owned) return finish_guarded(2);
            Backend& backend = *owned;
            Backend* one[] = {&backend};
            const CaseOutcome before = run_case(*c, one, st->run);
            if (before.skipped) {  // over a harness limit: no backend ran, there is no verdict to keep
              std::cerr << "error[sizeLimitExceeded]: " << st->case_file
                        << " is over a harness limit, a verdict on nobody (SEMANTICS 13.4): "
                        << before.skipped->message << "\n";
              return 2;
            }
            const Verdict& verdict = before.backends.at(0).verdict;
            if (!is_failure(verdict.kind)) {
              std::cerr << "error[invalidArgument]: " << st->case_file << " does not fail on " << backend.name()
                        << " (verdict " << verdict.label() << "): nothing to shrink\n";
              return finish_guarded(2);
            }
            const ShrinkResult result = shrink_case(*c, backend, verdict.kind, st->run, st->shrink);
            Case shrunk = result.shrunk;
            const CaseOutcome after = run_case(shrunk, one, st->run);
            shrunk.expect_error = after.rejection ? std::string(code_name(after.rejection->code)) : "";
            std::erase_if(shrunk.origin, [](const auto& kv) { return kv.first == "verdict" || kv.first == "backend"; });
            shrunk.origin.emplace_back("backend", std::string(backend.name()));
            shrunk.origin.emplace_back("verdict", after.backends.at(0).verdict.label());
            std::cerr << "shrunk " << summary(*c) << "\n    to " << summary(shrunk) << "\n    in " << result.steps
                      << " steps (" << result.attempts << " candidates" << (result.exhausted ? ", attempt limit reached" : "")
                      << "); verdict " << verdict.label() << " -> " << after.backends.at(0).verdict.label() << "\n";
            if (!known_paths.empty()) {
              std::vector<std::string> errors;
              const auto known = load_known_divergences(known_paths, st->run, errors);
              for (const std::string& e : errors) std::cerr << "known divergence not read: " << e << "\n";
              const std::string signature =
                  group_signature(shrunk, backend_family(backend.name()), after.backends.at(0).verdict.label());
              if (const auto it = known.signatures.find(signature); it != known.signatures.end()) {
                std::cerr << "group: known " << it->second.string() << "\n";
              } else {
                std::cerr << "group: new (no stored divergence under --known has the signature '" << signature
                          << "')\n";
              }
            }
            const std::string text = write_case(shrunk);
            if (st->out.empty()) {
              std::cout << text << std::flush;
              if (std::cout) return finish_guarded(0);
              std::cerr << "error[io]: cannot write the shrunk case to standard output\n";
              return finish_guarded(kExitIncomplete);
            }
            if (const std::string error = write_file_atomically(st->out, text); !error.empty()) {
              std::cerr << "error[io]: cannot write the shrunk case: " << error << "\n";
              return finish_guarded(kExitIncomplete);
            }
            std::cerr << "reproduce: "
                      << reproduce_command(st->out, {cli_spelling(), {st->backend}, st->run, st->backend_options})
                      << "\n";
            return finish_guarded(0);
          }};
}

}  // namespace einfuzz::cli
