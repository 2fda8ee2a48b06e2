// The fused executor (fused/) as an ordered backend: check the case, compile, execute; a VJP case
// answered with fused's ordered VJPs (SEMANTICS §13.8), one cotangent per forward input.
#include <algorithm>
#include <memory>
#include <thread>
#include <string>

#include "einfuzz/backends/adapter.hpp"
#include "einfuzz/fused/einsum.hpp"
#include "einfuzz/fused/reduce.hpp"
#include "einfuzz/fused/vjp.hpp"
#include "einfuzz/harness/run.hpp"

namespace einfuzz {

namespace {

/// The standard dtypes and f16/bf16: fused evaluates them in the ordered semantics too (one binary32
/// operation rounded once to the format, ORACLE §8), so their accumulator is the dtype itself (the
/// default profile). VJPs stay f32/f64: check_case says notDifferentiable for the 16-bit formats.
Evaluates evaluates() {
  Evaluates e = standard_evaluates();
  e.dtypes.insert(e.dtypes.begin(), {DType::f16, DType::bf16});
  return e;
}

/// What fused declares, whatever its options: built once (the fuzz targets build a backend per input).
const Capabilities& fused_capabilities() {
  static const Capabilities caps = [] {
    Capabilities c = full_capabilities(Semantics::ordered, NanProfile::ordered, /*factoring=*/false,
                                       "einfuzz fused executor", evaluates());
    c.vjp = true;  // ordered VJPs: the ordered judge compares them bit for bit with the reference's
    c.tie_rule = TieRule::equal_share;
    return c;
  }();
  return caps;
}

class FusedBackend final : public Backend {
 public:
  explicit FusedBackend(const RunOptions& options) : options_(options) {
    // threads = 0 means the hardware concurrency: asked once here, not on every execute (glibc reads
    // /sys on each std::thread::hardware_concurrency() call).
    // The fuzz targets build a backend per input, so the answer is kept for the process.
    static const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
    if (options_.exec.threads == 0) options_.exec.threads = hardware;
  }
  std::string_view name() const override { return "fused"; }
  const Capabilities& capabilities() const override { return fused_capabilities(); }
  BackendResult run(const Case& c) override {
    const auto shared = check_case_shared(c, options_.limits);  // the run boundary's check, not a copy
    const Result<CheckedCase>& checked = *shared;
    if (!checked) return rejected(checked.error());
    if (c.is_vjp()) {
      if (const auto* e = std::get_if<CheckedEinsum>(&*checked)) return Gradients{fused::vjp_einsum(*e, c.inputs, *c.cotangent, options_.exec)};
      return Gradients{{fused::vjp_reduce(std::get<CheckedReduce>(*checked), c.inputs[0], *c.cotangent, options_.exec)}};
    }
    if (const auto* e = std::get_if<CheckedEinsum>(&*checked)) {
      return fused::execute(fused::compile(*e), c.inputs, options_.exec);
    }
    return fused::execute_reduce(std::get<CheckedReduce>(*checked), c.inputs[0], options_.exec);
  }

 private:
  RunOptions options_;
};

}  // namespace

std::unique_ptr<Backend> make_fused_backend(const RunOptions& options) {
  return std::make_unique<FusedBackend>(options);
}

}  // namespace einfuzz
