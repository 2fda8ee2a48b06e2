// libFuzzer target: einsum differential. Either every implementation rejects the case or none does;
// reference and fused agree bit for bit (NaN as NaN), the shuffle backend never gets a failing
// verdict from the multiset oracle, and the ordered reference lies in the multiset enclosure.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "einfuzz/harness/run.hpp"
#include "differential.hpp"
#include "fuzz_input.hpp"
#include "ieee_mutator.hpp"

namespace einfuzz::fuzz {
namespace {

/// Work the reference may do per input (materialised global axis space × (operands + 1)); larger
/// cases are skipped so that the target keeps thousands of executions per second.
constexpr double kMaxWork = 1 << 16;

int run(std::span<const std::uint8_t> data) {
  const std::optional<Decoded> decoded = decode_case(data, OpChoice::einsum);
  if (!decoded) return 0;
  const Case& c = decoded->c;
  const TargetSetup setup = differential_setup(decoded->exec, data);
  const RunOptions& options = setup.run;

  const Result<CheckedCase> checked = check_case(c, options.limits);
  if (const CheckedEinsum* e = checked ? std::get_if<CheckedEinsum>(&*checked) : nullptr) {
    const double global = static_cast<double>(e->output_size) * static_cast<double>(e->contraction_size);
    if (global * static_cast<double>(e->operands.size() + 1) > kMaxWork) return 0;
  }

  // The backends einfuzz_artifact_to_case's command names (fused, shuffle), built the CLI's way.
  std::vector<std::unique_ptr<Backend>> owned;
  for (const std::string& name : setup.backends) owned.push_back(make_builtin_backend(name, options));
  std::vector<Backend*> backends;
  for (const auto& b : owned) backends.push_back(b.get());
  const CaseOutcome outcome = run_case(c, backends, options);
  require(outcome.rejection.has_value() != checked.ok(), "run_case and check_case disagree on rejection", &c);
  require_no_failure(outcome, c);

  // The ordered fold is one of the orders the multiset oracle must admit.
  const CheckedEinsum* e = outcome.checked ? std::get_if<CheckedEinsum>(&*outcome.checked) : nullptr;
  if (e && outcome.expected && is_float(c.dtype)) {
    const reference::MultisetEinsum truth =
        outcome.multiset ? *outcome.multiset : reference::multiset_einsum(*e, c.inputs);
    const Verdict v = judge_any_order(truth, *outcome.expected, {.factoring = false});
    if (is_failure(v.kind)) fail("the multiset oracle rejects the ordered reference: " + v.label() + " — " + v.detail, &c);
  }
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
  const ValueLayout layout = value_layout({data, size}, OpChoice::einsum);
  if (const std::size_t n = mutate_value(data, size, max_size, seed, layout)) return n;
  return LLVMFuzzerMutate(data, size, max_size);
}
#endif
