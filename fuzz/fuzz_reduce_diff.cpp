// libFuzzer target: reduce differential. Either every implementation rejects the case or none does;
// reference and fused agree bit for bit (NaN as NaN); any-order backends that support reduce (the
// shuffle backend) are judged by the multiset oracle, which must also admit the
// ordered reference for sum, mean and prod.
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

int run(std::span<const std::uint8_t> data) {
  const std::optional<Decoded> decoded = decode_case(data, OpChoice::reduce);
  if (!decoded) return 0;
  const Case& c = decoded->c;
  const TargetSetup setup = differential_setup(decoded->exec, data);
  const RunOptions& options = setup.run;

  // The backends einfuzz_artifact_to_case's command names (fused, shuffle), built the CLI's way.
  std::vector<std::unique_ptr<Backend>> owned;
  for (const std::string& name : setup.backends) owned.push_back(make_builtin_backend(name, options));
  std::vector<Backend*> backends;
  for (const auto& b : owned) backends.push_back(b.get());
  const CaseOutcome outcome = run_case(c, backends, options);
  require_no_failure(outcome, c);

  // The ordered fold is one admissible order for sum, mean and prod (min/max follow the ordered
  // NaN profile, which the multiset oracle's profiles do not describe).
  const CheckedReduce* reduce = outcome.checked ? std::get_if<CheckedReduce>(&*outcome.checked) : nullptr;
  if (reduce && outcome.expected && is_float(c.dtype)) {
    const CheckedReduce& r = *reduce;
    if (r.kind == Reduction::sum || r.kind == Reduction::mean || r.kind == Reduction::prod) {
      const reference::MultisetReduce truth =
          outcome.multiset_reduce ? *outcome.multiset_reduce : reference::multiset_reduce(r, c.inputs[0]);
      const Verdict v = judge_any_order(truth, *outcome.expected, NanProfile::propagate);
      if (is_failure(v.kind)) {
        fail("the multiset oracle rejects the ordered reference: " + v.label() + " — " + v.detail, &c);
      }
    }
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
  const ValueLayout layout = value_layout({data, size}, OpChoice::reduce);
  if (const std::size_t n = mutate_value(data, size, max_size, seed, layout)) return n;
  return LLVMFuzzerMutate(data, size, max_size);
}
#endif
