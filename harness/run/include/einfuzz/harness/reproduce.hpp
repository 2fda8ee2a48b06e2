// The reproduce command builder: the one place that spells `einfuzz check` for a case, its backends
// and every verdict-deciding option (CASES.md: the printed command gets the same verdict label on
// any machine, in any order of cases). check, fuzz, replay, shrink and the fuzz-artifact converter
// all print what this builds.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "einfuzz/harness/backend_registry.hpp"
#include "einfuzz/harness/run.hpp"

namespace einfuzz {

/// A case given by `einfuzz check`'s generating flags instead of a file.
struct CaseFlags {
  std::string pattern;
  std::optional<std::string> reduce;  ///< --reduce KIND
  std::vector<std::string> axes;      ///< --axis NAME=LENGTH, as given
  std::string shapes;                 ///< --shapes text, as given
  std::string dtype = "f64";
  std::string values = "random";
  std::uint64_t seed = 1;
  bool vjp = false;                              ///< --vjp
  std::optional<std::string> cotangent_values;   ///< --cotangent-values, as given
  std::optional<std::string> cotangent_shape;    ///< --cotangent-shape, as given
};

/// A stored case file (`--case FILE`, the path as it is to be typed) or the generating flags.
using CaseSource = std::variant<std::string, CaseFlags>;

/// Everything besides the case that decides a verdict.
struct ReproduceContext {
  std::string command = "build/einfuzz";      ///< how the CLI is spelled
  std::vector<std::string> backends = {"fused"};  ///< backend specs, in order (`check`'s default omitted)
  RunOptions run;                             ///< limits, fused knobs, judge and shuffle options
  BackendSpecOptions backend_options;         ///< --timeout, --isolate
};

/// The verdict-deciding options that differ from their defaults, as CLI arguments (unquoted), in a
/// fixed order: --threads --tile --tasks --strict-nan-payload --strict-signed-zero --shuffle-seed
/// --max-operands --max-labels --max-tensor-elements --max-materialised-elements --timeout --isolate
/// --profile. Every one of them is accepted by check, fuzz, replay and shrink (cli/options.cpp),
/// except --profile (check and replay: only they set RunOptions::profile, which it spells whatever
/// RunOptions::profile_backends says: name those backends alone).
std::vector<std::string> verdict_option_args(const RunOptions& run, const BackendSpecOptions& backend_options);

/// `COMMAND check <case> [--backend …] <verdict options>`, each argument shell-quoted where needed;
/// one `--backend` per `cmd:` spec (it extends to the end of its argument), the others joined by ','.
std::string reproduce_command(const CaseSource& source, const ReproduceContext& context);

/// Expands `all` to the built-in names it stands for (builtin_backend_names()), so a reproduce
/// command names exactly the backend that failed; other specs are kept as given.
std::vector<std::string> expand_backend_specs(std::span<const std::string> specs);

}  // namespace einfuzz
