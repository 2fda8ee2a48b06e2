// `einfuzz repro CASE --backend NAME`: a self-contained program, in the library's own language,
// that shows a stored divergence to the library's developers.
#include <fstream>
#include <iostream>
#include <memory>

#include "einfuzz/harness/repro.hpp"
#include "subcommand.hpp"

namespace einfuzz::cli {
namespace {

constexpr const char* kReproFooter = R"(
Writes a program that calls the library as the einfuzz adapter does (same function, same optimize /
path argument, same reshape and transpose for reduce), prints what it returns and what the
semantics require per output element (einfuzz's accepted set: an exact interval, ±0, NaN, ±Inf, a
set of classes, the fibre's extreme, or "anything" where the result is indeterminate), and exits 1
when the divergence shows, 0 when it does not (a fixed library), 2 when it cannot run.

  numpy, numpy-opt, torch, torch-path-right, torch-path-outer: Python (python3 FILE)
  eigen, xtensor: C++ (the build command is in the program's first lines)

Inputs cross exactly (f16 and bf16 as their 16-bit patterns); the header names the dtype and the
precision profile (accumulate, round_inputs) the case is judged under: --profile P when given, else
a profile surprise's origin.profile (as replay judges it), else the backend's declared one. A dtype
the backend does not declare (numpy bf16, xtensor f16/bf16) is never judged on it, so it is refused.
Value mismatches, special-value mismatches, mismatch(shape) and reject-disagree are reproducible;
crashes, timeouts and protocol faults are not (they are the adapter's or the process's).
Exit status: 0 the program was written, 2 bad input (unreadable case, unknown or unavailable
backend, a dtype it does not declare, or a case the adapter answers without calling the
library).)";

}  // namespace

Subcommand add_repro(CLI::App& app) {
  struct State : VerdictFlags {
    std::string case_file;
    std::string backend;
    std::string out;
  };
  auto st = std::make_shared<State>();
  CLI::App* cmd = add_subcommand(app, "repro", "Write a standalone program that reproduces a case on a library backend",
                                  kReproFooter);
  cmd->add_option("case", st->case_file, "the case file (einfuzz-case/1)")->required();
  cmd->add_option("--backend", st->backend, "the library backend: numpy, numpy-opt, torch, torch-path-right, "
                                            "torch-path-outer, eigen or xtensor")->required();
  cmd->add_option("--out", st->out, "write the program to FILE (default: standard output)");
  add_verdict_options(cmd, *st);
  add_profile_option(cmd, st->run);

  return {cmd, [st] {
            const auto c = read_case_argument(st->case_file, st->run.limits);
            if (!c) return 2;
            // The verdict printed beside the program is taken under the profile the program judges with.
            RunOptions judged = st->run;
            judged.profile = repro_profile(*c, st->run);
            if (judged.profile) {
              if (const auto problem = profile_option_problem(*c, *judged.profile)) {
                std::cerr << render(*problem) << "\n";
                return 2;
              }
            }
            const auto owned = make_single_backend("repro", st->backend, *st);
            if (!owned) return 2;
            Backend& backend = *owned;
            ReproOptions options{st->run, st->case_file};
            // The verdict first: it also starts an out-of-process backend, whose capabilities come from its hello.
            Backend* one[] = {&backend};
            const CaseOutcome outcome = run_case(*c, one, judged);
            auto program = make_repro(*c, st->backend, backend.capabilities(), options);
            if (!program) {
              std::cerr << render(program.error()) << "\n";
              return 2;
            }
            if (!outcome.backends.empty()) {
              std::cerr << "einfuzz verdict on " << st->backend << ": " << outcome.backends[0].verdict.label() << "\n";
            }
            if (st->out.empty()) {
              std::cout << program->text;
              return 0;
            }
            {
              std::ofstream out(st->out, std::ios::binary);
              out << program->text;
              out.flush();
              if (!out) {
                std::cerr << "error[invalidArgument]: cannot write '" << st->out << "'\n";
                return 2;
              }
            }
            std::string run = program->run_command;
            if (const auto at = run.find("FILE"); at != std::string::npos) run.replace(at, 4, st->out);
            std::cerr << "wrote " << st->out << "; run: " << run << "\n";
            return 0;
          }};
}

}  // namespace einfuzz::cli
