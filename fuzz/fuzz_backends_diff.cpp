// libFuzzer target: the Eigen and xtensor backends against the oracles, on einsum and reduce cases.
// Either every implementation rejects the case or none does (a backend may also declare it
// unsupported), and no backend gets a failing verdict — except xtensor's recorded min/max fold,
// recognised exactly (backends/xtensor_divergence.hpp).
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "einfuzz/backends/eigen.hpp"
#include "einfuzz/backends/xtensor.hpp"
#include "einfuzz/backends/xtensor_divergence.hpp"
#include "einfuzz/harness/run.hpp"
#include "differential.hpp"
#include "fuzz_input.hpp"
#include "ieee_mutator.hpp"

namespace einfuzz::fuzz {
namespace {

/// As in fuzz_einsum_diff: bigger cases are skipped to keep the executions per second up.
constexpr double kMaxWork = 1 << 16;

/// xtensor 0.24's amin/amax fold (corpus/divergences/README.md) is a known divergence, accepted only
/// where xtensor's result is exactly that fold (the predicate backend_tests checks against the
/// stored divergences): any other failing xtensor result, min/max included, is a finding.
bool known_divergence(const BackendOutcome& b, const Case& c, Backend& xtensor) {
  if (b.backend != "xtensor" || !is_failure(b.verdict.kind)) return false;
  const BackendResult again = xtensor.run(c);  // deterministic; run_case keeps only the verdict
  const auto* t = std::get_if<Tensor>(&again);
  return t != nullptr && is_xtensor_extreme_divergence(c, *t);
}

int run(std::span<const std::uint8_t> data) {
  const std::optional<Decoded> decoded = decode_case(data, OpChoice::any);
  if (!decoded) return 0;
  const Case& c = decoded->c;
  RunOptions options;
  options.limits = fuzz_limits();

  const Result<CheckedCase> checked = check_case(c, options.limits);
  if (checked) {
    if (const auto* e = std::get_if<CheckedEinsum>(&*checked)) {
      const double global = static_cast<double>(e->output_size) * static_cast<double>(e->contraction_size);
      if (global * static_cast<double>(e->operands.size() + 1) > kMaxWork) return 0;
    }
  }

  const std::unique_ptr<Backend> eigen = make_eigen_backend(options.limits);
  const std::unique_ptr<Backend> xtensor = make_xtensor_backend(options.limits);
  const std::vector<Backend*> backends = {eigen.get(), xtensor.get()};
  CaseOutcome outcome = run_case(c, backends, options);
  std::erase_if(outcome.backends, [&](const BackendOutcome& b) { return known_divergence(b, c, *xtensor); });
  require_no_failure(outcome, c);
  return 0;
}

}  // namespace
}  // namespace einfuzz::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return einfuzz::fuzz::run({data, size});
}

#ifdef EINFUZZ_LIBFUZZER
extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size,
                                               unsigned int seed) {
  using namespace einfuzz::fuzz;
  const ValueLayout layout = value_layout({data, size}, OpChoice::any);
  if (const std::size_t n = mutate_value(data, size, max_size, seed, layout)) return n;
  return LLVMFuzzerMutate(data, size, max_size);
}
#endif
