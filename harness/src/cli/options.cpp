// The verdict-deciding options every subcommand that runs cases accepts (check, fuzz, replay,
// shrink): one definition, spelled exactly as verdict_option_args() prints them.
#include "einfuzz/harness/reproduce.hpp"
#include "subcommand.hpp"

namespace einfuzz::cli {

void add_verdict_options(CLI::App* cmd, RunOptions& run, BackendSpecOptions& backend_options) {
  cmd->add_option("--threads", run.exec.threads, "fused threads (0 = hardware concurrency)")->capture_default_str();
  cmd->add_option("--tile", run.exec.tile_width, "fused tile width: 1, 4 or 8")
      ->check(CLI::IsMember({1, 4, 8}))
      ->capture_default_str();
  cmd->add_option("--tasks", run.exec.tasks,
                  "fused output chunks: 0 = the SEMANTICS §9 policy, else min(TASKS, threads, the first output "
                  "axis's length (einsum) or the output's size (reduce))")
      ->capture_default_str();
  cmd->add_flag("--strict-nan-payload", run.judge.strict_nan_payload, "compare NaN sign and payload bits too");
  cmd->add_flag("--strict-signed-zero", run.strict_signed_zero,
                "any-order oracle: a wrong sign of zero is a mismatch, not a note");
  cmd->add_option("--shuffle-seed", run.shuffle_seed, "seed of the shuffle backend's choices")->capture_default_str();
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
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_flag("--isolate", backend_options.isolate,
                "run each in-process backend in a forked worker (per-case timeout, address-space limit): "
                "a crash or hang becomes a verdict");
}

}  // namespace einfuzz::cli
