// `einfuzz check`: run one case (from flags or a case file) on the reference and the backends.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "einfuzz/harness/backend_registry.hpp"
#include "einfuzz/harness/run.hpp"

namespace einfuzz {

/// The flags of `einfuzz check`, already split by the CLI layer.
struct CheckCommand {
  std::string pattern;                 ///< einsum or reduce pattern (ignored with case_file)
  std::optional<std::string> reduce;   ///< --reduce KIND: the pattern is a reduce pattern
  std::vector<std::string> axes;       ///< --axis NAME=LENGTH, repeatable (reduce only)
  std::optional<std::string> shapes;   ///< "2x3,3x4"; "()" is rank 0; "" is no operand at all
  std::string dtype = "f64";
  std::string values = "random";       ///< random | iota | ones | edge
  std::uint64_t seed = 1;
  /// --vjp: the case is the VJP of the forward case above, with a cotangent of its output's shape.
  bool vjp = false;
  /// --cotangent-values (random | iota | ones | edge; default: --values), seeded like one more operand.
  std::optional<std::string> cotangent_values;
  /// --cotangent-shape: a shape other than the forward output's (to check the rejection).
  std::optional<std::string> cotangent_shape;
  std::string case_file;               ///< --case FILE
  bool json = false;
  std::vector<std::string> backends = {"fused"};
  RunOptions run;
  BackendSpecOptions backend_options;  ///< --isolate, --timeout (cmd:/numpy backends and workers)
  std::string command = "build/einfuzz";  ///< how the reproduce command spells the CLI
};

/// Parses "2x3,(),0x5" into shapes; each length a decimal int64; bad text is `malformedShape`,
/// a length or element count beyond int64 or the limits `sizeLimitExceeded`.
Result<std::vector<Shape>> parse_shapes(std::string_view text, const Limits& limits);

/// Parses "h2=2" into a supplied axis length; anything else is `invalidArgument`.
Result<std::pair<std::string, std::int64_t>> parse_axis_length(std::string_view text);

/// Runs the command; returns the exit status (0 all agree, 1 a mismatch, 2 bad input).
int run_check_command(const CheckCommand& command, std::ostream& out, std::ostream& err);

}  // namespace einfuzz
