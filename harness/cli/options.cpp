// The verdict-deciding options every subcommand that runs cases accepts (check, fuzz, replay,
// shrink, repro): one definition, spelled exactly as verdict_option_args() prints them; and the
// other pieces those subcommands share (their definition, a single named backend).
#include <cmath>
#include <cstdlib>
#include <iostream>

#include "einfuzz/core/precision_text.hpp"
#include "einfuzz/harness/reproduce.hpp"
#include "subcommand.hpp"

namespace einfuzz::cli {

namespace {

/// True when `text` (CLI11's raw argument) starts, after blanks, with a minus sign.
bool negative_text(const std::string& text) {
  const std::size_t first = text.find_first_not_of(" \t");
  return first != std::string::npos && text[first] == '-';
}

}  // namespace

// CLI11 converts "-1" into an unsigned option by wrapping it (to 2^64 - 1); a validator sees the
// text before the conversion, so a sign is refused there.
const CLI::Validator kNotNegative(
    [](std::string& text) { return negative_text(text) ? std::string("must not be negative: ") + text : std::string(); },
    "NOT NEGATIVE", "NotNegative");

CLI::Validator seconds_validator(double max_seconds) {
  return CLI::Validator(
      [max_seconds](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0') return "not a number of seconds: " + text;
        if (!std::isfinite(v) || !(v > 0)) return "must be a positive finite number of seconds: " + text;
        if (v > max_seconds) {
          return "at most " + std::to_string(static_cast<long long>(max_seconds)) + " seconds: " + text;
        }
        return {};
      },
      "SECONDS in (0, " + std::to_string(static_cast<long long>(max_seconds)) + "]", "Seconds");
}

void add_verdict_options(CLI::App* cmd, RunOptions& run, BackendSpecOptions& backend_options) {
  cmd->add_option("--threads", run.exec.threads, "fused threads (0 = hardware concurrency)")
      ->check(kNotNegative)
      ->capture_default_str();
  cmd->add_option("--tile", run.exec.tile_width, "fused tile width: 1, 4 or 8")
      ->check(CLI::IsMember({1, 4, 8}))
      ->capture_default_str();
  cmd->add_option("--tasks", run.exec.tasks,
                  "fused output chunks: 0 = the SEMANTICS §9 policy, else min(TASKS, threads, the first output "
                  "axis's length (einsum) or the output's size (reduce))")
      ->check(kNotNegative)
      ->capture_default_str();
  cmd->add_flag("--strict-nan-payload", run.judge.strict_nan_payload, "compare NaN sign and payload bits too");
  cmd->add_flag("--strict-signed-zero", run.strict_signed_zero,
                "any-order oracle: a wrong sign of zero is a mismatch, not a note");
  cmd->add_option("--shuffle-seed", run.shuffle_seed, "seed of the shuffle backend's choices")
      ->check(kNotNegative)
      ->capture_default_str();
  cmd->add_option("--max-operands", run.limits.max_operands, "limit on the operands of one einsum")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--max-labels", run.limits.max_labels, "limit on the distinct axes of one einsum")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--max-tensor-elements", run.limits.max_tensor_elements, "limit on any one tensor's elements")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--max-materialised-elements", run.limits.max_materialised_elements,
                  "limit on the elements the reference materialises")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--timeout", backend_options.timeout_seconds,
                  "per-case timeout in seconds of cmd:/numpy backends and --isolate workers")
      ->check(seconds_validator(kMaxTimeoutSeconds))
      ->capture_default_str();
  cmd->add_flag("--isolate", backend_options.isolate,
                "run each in-process backend in a forked worker (per-case timeout, address-space limit): "
                "a crash or hang becomes a verdict");
}

void add_profile_option(CLI::App* cmd, RunOptions& run) {
  const CLI::Validator spelled(
      [](std::string& text) {
        if (text == "declared" || profile_from_text(text)) return std::string();
        return "not a precision profile: '" + text + "' (declared, or f16, bf16, f32, f64 optionally +tf32)";
      },
      "PROFILE", "Profile");
  cmd->add_option_function<std::string>(
         "--profile",
         [&run](const std::string& text) {
           if (text == "declared") {
             run.profile.reset();
           } else {
             run.profile = profile_from_text(text);
           }
         },
         "judge any-order float results under P instead of each backend's declared precision profile: "
         "declared (default) | ACC | ACC+tf32, ACC one of f16, bf16, f32, f64 (ORACLE §8; e.g. f32+tf32); it must "
         "be valid for the case's dtype (never narrower; a reduce never rounds its inputs); ordered backends "
         "(fused) and integer/bool cases stay bitwise; an einsum VJP is judged under P as its forward einsum is, a "
         "reduce's VJP under the storage profile")
      ->type_name("P")
      ->check(spelled);
}

CLI::App* add_subcommand(CLI::App& app, const std::string& name, const std::string& description,
                         const std::string& footer) {
  CLI::App* cmd = app.add_subcommand(name, description);
  cmd->footer(footer);
  return cmd;
}

std::optional<Case> read_case_argument(const std::string& file, const Limits& limits) {
  auto c = read_case_file(file, limits);
  if (!c) {
    std::cerr << render(c.error()) << "\n";
    return std::nullopt;
  }
  return std::move(*c);
}

std::unique_ptr<Backend> make_single_backend(const char* command, const std::string& spec, const VerdictFlags& flags) {
  const std::vector<std::string> specs = {spec};
  auto owned = make_backends(specs, flags.run, flags.backend_options);
  if (!owned) {
    std::cerr << render(owned.error()) << "\n";
    return nullptr;
  }
  if (owned->size() != 1) {
    std::cerr << "error[invalidArgument]: " << command << " takes one backend, '" << spec << "' names "
              << owned->size() << "\n";
    return nullptr;
  }
  return std::move(owned->front());
}

}  // namespace einfuzz::cli
