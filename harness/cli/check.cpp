// `einfuzz check`: flags → CheckCommand → run_check_command.
#include <iostream>
#include <memory>

#include "einfuzz/harness/check_command.hpp"
#include "subcommand.hpp"

namespace einfuzz::cli {
namespace {

constexpr const char* kCheckFooter = R"(
Reduce: einfuzz check --reduce max 'b (h 2) (w 2) -> b h w' --shapes 1x2x4
        einfuzz check --reduce sum '(a b) c -> a c' --axis b=2 --shapes 4x2
        einfuzz check --reduce any 'a b -> a' --shapes 2x3 --dtype bool

VJP:    einfuzz check 'i j, j k -> i k' --shapes 2x3,3x4 --vjp --cotangent-values edge
        einfuzz check --reduce max 'a b -> a' --shapes 2x3 --values edge --vjp

Shapes: comma-separated, lengths joined by 'x'; a rank-0 operand is '()', a zero-length axis 0.
  --shapes '2x3,3x4'    two matrices        --shapes '2x0,(),5'   empty, scalar, vector
  --shapes ''           no operand at all (for patterns checked against zero tensors)

Backends: `einfuzz backends` lists them with their capabilities; a process speaking PROTOCOL A:
  --backend 'cmd:python3 my_backend.py --flag' (one --backend per cmd:, it extends to the end);
  a C plugin: --backend plugin:./libmine.so; --isolate forks a worker per case (crash/hang → verdict).

Patterns starting with '-' (e.g. '->') must follow '--':  einfuzz check --shapes '()' -- '->'

Precision profile: --profile P judges any-order float results under P (ORACLE §8) instead of each
backend's declaration, e.g. the evidence `einfuzz profile` prints for an excluded profile:
  einfuzz check --case FILE --backend torch --profile f32   (exit 1: torch broke the f32 bound)
P is declared (the default), f16, bf16, f32 or f64, optionally +tf32; a P narrower than the case's
dtype (or TF32 outside its exponent range, or any P on an integer/bool case) is exit 2 before
anything runs. Ordered backends (fused) stay bitwise; a reduce never rounds its inputs.

Exit status: 0 every backend agrees with the reference, 1 a mismatch (or a case file's `expect`
does not hold), 2 bad input (the diagnostic is printed with a caret under the column), 3 an
in-process plugin ended the process (exit, abort, crash) before the verdicts were printed.
Every failure prints the one command that reproduces it.)";

}  // namespace

std::vector<std::string> split_backend_list(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    if (list.compare(start, 4, "cmd:") == 0) {
      out.push_back(list.substr(start));
      break;
    }
    const std::size_t comma = std::min(list.find(',', start), list.size());
    out.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

Subcommand add_check(CLI::App& app) {
  auto check = std::make_shared<CheckCommand>();
  auto backend_lists = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = app.add_subcommand(
      "check", "Run one einsum or reduce on the reference and the selected backends and judge it");
  cmd->footer(kCheckFooter);
  cmd->add_option("pattern", check->pattern,
                  "einsum pattern, e.g. 'b i j, b j k -> b i k', or with --reduce a reduce pattern, "
                  "e.g. 'b c (h 2) (w 2) -> b c h w'");
  cmd->add_option("--reduce", check->reduce, "reduce with KIND: sum | prod | mean | min | max | any | all");
  cmd->add_option("--axis", check->axes, "supplied reduce axis length NAME=LENGTH (repeatable), e.g. --axis h2=2")
      ->allow_extra_args(false);  // one value per --axis, so the pattern is never swallowed
  cmd->add_option("--shapes", check->shapes, "operand shapes, e.g. '2x3,3x4' (required unless --case)");
  cmd->add_option("--dtype", check->dtype, "f32 | f64 | i32 | i64 | bool | f16 | bf16 (bool only for reduce any/all)")
      ->capture_default_str();
  cmd->add_option("--values", check->values, "random | iota | ones | edge")->capture_default_str();
  cmd->add_option("--seed", check->seed, "seed of the value generator")->check(kNotNegative)->capture_default_str();
  cmd->add_flag("--vjp", check->vjp,
                "check the VJP of the case: a cotangent of the forward output's shape (f32/f64; not any/all)");
  cmd->add_option("--cotangent-values", check->cotangent_values,
                  "with --vjp: random | iota | ones | edge (default: as --values)");
  cmd->add_option("--cotangent-shape", check->cotangent_shape,
                  "with --vjp: the cotangent's shape instead of the forward output's, e.g. '2x3' or '()'");
  cmd->add_option("--case", check->case_file, "run a case file (einfuzz-case/1) instead of the flags above");
  cmd->add_option("--backend", *backend_lists,
                  "backends to judge, comma-separated (repeatable; default fused; see `einfuzz backends`)")
      ->allow_extra_args(false);
  cmd->add_flag("--json", check->json, "print one JSON document instead of the table");
  add_verdict_options(cmd, check->run, check->backend_options);
  add_profile_option(cmd, check->run);

  return {cmd, [cmd, check, backend_lists] {
            if (check->case_file.empty() && cmd->count("pattern") == 0) {
              std::cerr << "error[invalidArgument]: a pattern is required unless --case is given\n"
                        << "Run with --help for more information.\n";
              return 2;
            }
            if (!backend_lists->empty()) {
              check->backends.clear();
              for (const std::string& list : *backend_lists) {
                for (std::string& b : split_backend_list(list)) check->backends.push_back(std::move(b));
              }
            }
            check->command = cli_spelling();
            guard_in_process_plugins(check->backends);
            install_fatal_signal_cleanup();
            return finish_guarded(run_check_command(*check, std::cout, std::cerr));
          }};
}

}  // namespace einfuzz::cli
