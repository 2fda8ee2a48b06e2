// `einfuzz shrink CASE`: shrink a failing case file on one backend, keeping its verdict class.
#include <fstream>
#include <iostream>
#include <memory>

#include "einfuzz/harness/backend_registry.hpp"
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

Exit status: 0 the shrunk case was written, 2 bad input (unreadable case, unknown backend, or a
case that does not fail on the backend: nothing to shrink).)";

std::string summary(const Case& c) {
  std::int64_t elements = 0;
  for (const Tensor& t : c.inputs) elements += t.size();
  return std::to_string(c.inputs.size()) + (c.inputs.size() == 1 ? " input, " : " inputs, ") +
         std::to_string(elements) + " elements, '" + c.pattern + "'";
}

}  // namespace

Subcommand add_shrink(CLI::App& app) {
  struct State {
    std::string case_file;
    std::string backend = "fused";
    std::string out;
    ShrinkOptions shrink;
    RunOptions run;
    BackendSpecOptions backend_options;
  };
  auto st = std::make_shared<State>();
  CLI::App* cmd = app.add_subcommand("shrink", "Shrink a failing case file, keeping its verdict class on one backend");
  cmd->footer(kShrinkFooter);
  cmd->add_option("case", st->case_file, "the failing case file (einfuzz-case/1)")->required();
  cmd->add_option("--backend", st->backend, "the backend it fails on")->capture_default_str();
  cmd->add_option("--out", st->out, "write the shrunk case to FILE (default: standard output)");
  cmd->add_option("--max-attempts", st->shrink.max_attempts, "candidates to try at most")->capture_default_str();
  add_verdict_options(cmd, st->run, st->backend_options);

  return {cmd, [st] {
            auto c = read_case_file(st->case_file, st->run.limits);
            if (!c) {
              std::cerr << render(c.error()) << "\n";
              return 2;
            }
            const std::vector<std::string> specs = {st->backend};
            auto owned = make_backends(specs, st->run, st->backend_options);
            if (!owned) {
              std::cerr << render(owned.error()) << "\n";
              return 2;
            }
            if (owned->size() != 1) {
              std::cerr << "error[invalidArgument]: shrink takes one backend, '" << st->backend << "' names "
                        << owned->size() << "\n";
              return 2;
            }
            Backend& backend = *owned->front();
            Backend* one[] = {&backend};
            const CaseOutcome before = run_case(*c, one, st->run);
            const Verdict& verdict = before.backends.at(0).verdict;
            if (!is_failure(verdict.kind)) {
              std::cerr << "error[invalidArgument]: " << st->case_file << " does not fail on " << backend.name()
                        << " (verdict " << verdict.label() << "): nothing to shrink\n";
              return 2;
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
            const std::string text = write_case(shrunk);
            if (st->out.empty()) {
              std::cout << text;
              return 0;
            }
            std::ofstream out(st->out, std::ios::binary);
            out << text;
            if (!out) {
              std::cerr << "error[invalidArgument]: cannot write '" << st->out << "'\n";
              return 2;
            }
            std::cerr << "reproduce: "
                      << reproduce_command(st->out, {"build/einfuzz", {st->backend}, st->run, st->backend_options})
                      << "\n";
            return 0;
          }};
}

}  // namespace einfuzz::cli
