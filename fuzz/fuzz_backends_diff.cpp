// libFuzzer target: the Eigen and xtensor backends against the oracles, on einsum and reduce cases.
// Either every implementation rejects the case or none does (a backend may also declare it
// unsupported), and no backend gets a failing verdict — except xtensor's recorded min/max fold,
// recognised exactly (backends/xtensor_divergence.hpp).
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <variant>
#include <vector>

#include "einfuzz/backends/eigen.hpp"
#include "einfuzz/backends/xtensor.hpp"
#include "einfuzz/backends/xtensor_divergence.hpp"
#include "einfuzz/harness/run.hpp"
#include "differential.hpp"
#include "fuzz_input.hpp"

namespace einfuzz::fuzz {
namespace {

/// xtensor 0.24's amin/amax fold (corpus/divergences/README.md) is a known divergence, accepted only
/// where xtensor's result is exactly that fold (the predicate backend_tests checks against the
/// stored divergences): any other failing xtensor result, min/max included, is a finding.
bool known_divergence(const BackendOutcome& b, const Case& c, Backend& xtensor) {
  if (b.backend != "xtensor" || !is_failure(b.verdict.kind)) return false;
  const BackendResult again = xtensor.run(c);  // deterministic; run_case keeps only the verdict
  const auto* t = std::get_if<Tensor>(&again);
  return t != nullptr && is_xtensor_extreme_divergence(c, *t);
}

int run(std::span<const std::uint8_t> data, OpChoice op) {
  const std::optional<Decoded> decoded = decode_case(data, op);
  if (!decoded) return 0;
  RunOptions options;
  options.limits = fuzz_limits();
  const std::unique_ptr<Backend> eigen = make_eigen_backend(options.limits);
  const std::unique_ptr<Backend> xtensor = make_xtensor_backend(options.limits);
  const std::vector<Backend*> backends = {eigen.get(), xtensor.get()};
  // The reference's own checks belong to fuzz_einsum_diff and fuzz_reduce_diff.
  DifferentialChecks checks;
  checks.known_divergence = [&](const BackendOutcome& b) { return known_divergence(b, decoded->c, *xtensor); };
  checks.reference_admitted = false;
  run_differential(decoded->c, backends, options, checks);
  return 0;
}

}  // namespace
}  // namespace einfuzz::fuzz

EINFUZZ_DIFFERENTIAL_TARGET(einfuzz::fuzz::run, einfuzz::fuzz::OpChoice::any)
