// The shared routine and helpers of the differential fuzz targets (see differential.hpp).
#include "differential.hpp"

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "einfuzz/harness/backend_registry.hpp"
#include "einfuzz/harness/generate.hpp"
#include "ieee_mutator.hpp"

namespace einfuzz::fuzz {
namespace {

/// Work the reference may do per input (materialised global axis space × (operands + 1)); larger
/// cases are skipped so that a target keeps thousands of executions per second.
constexpr double kMaxWork = 1 << 16;

bool too_much_work(const Result<CheckedCase>& checked) {
  const CheckedEinsum* e = checked ? std::get_if<CheckedEinsum>(&*checked) : nullptr;
  if (e == nullptr) return false;
  const double global = static_cast<double>(e->output_size) * static_cast<double>(e->contraction_size);
  return global * static_cast<double>(e->operands.size() + 1) > kMaxWork;
}

/// The ordered fold is one of the orders the multiset oracle must admit: for a float einsum, and
/// for a float reduce's sum, mean and prod (min/max follow the ordered NaN profile, which the
/// multiset oracle's profiles do not describe).
void require_reference_admitted(const CaseOutcome& outcome, const Case& c) {
  if (!outcome.checked || !outcome.expected || !is_float(c.dtype)) return;
  Verdict v;
  // The run's own truth when it computed the storage profile's (shared, not copied), else one here.
  if (const auto* e = std::get_if<CheckedEinsum>(&*outcome.checked)) {
    std::optional<reference::MultisetEinsum> own;
    const reference::MultisetEinsum& truth =
        outcome.multiset ? *outcome.multiset : own.emplace(reference::multiset_einsum(*e, c.inputs));
    v = judge_any_order(truth, *outcome.expected, {.factoring = false});
  } else {
    const CheckedReduce& r = std::get<CheckedReduce>(*outcome.checked);
    if (r.kind != Reduction::sum && r.kind != Reduction::mean && r.kind != Reduction::prod) return;
    std::optional<reference::MultisetReduce> own;
    const reference::MultisetReduce& truth =
        outcome.multiset_reduce ? *outcome.multiset_reduce : own.emplace(reference::multiset_reduce(r, c.inputs[0]));
    v = judge_any_order(truth, *outcome.expected, NanProfile::propagate);
  }
  if (is_failure(v.kind)) fail("the multiset oracle rejects the ordered reference: " + v.label() + " — " + v.detail, &c);
}

/// One of differential_setup's backends ("fused", "shuffle"), built as the CLI builds them
/// (make_own_backend is the registry's own rows), without linking the registry's library backends.
std::unique_ptr<Backend> make_target_backend(const std::string& name, const RunOptions& options) {
  std::unique_ptr<Backend> b = make_own_backend(name, options);
  if (!b) fail("harness bug: differential_setup names '" + name + "', which is not one of the harness's own backends");
  return b;
}

/// run_differential once `checked` is check_case(c, options.limits).
void run_differential_checked(const Case& c, const Result<CheckedCase>& checked, std::span<Backend* const> backends,
                              const RunOptions& options, const DifferentialChecks& checks) {
  if (too_much_work(checked)) return;
  CaseOutcome outcome = run_case(c, backends, options);
  require(outcome.rejection.has_value() != checked.ok(), "run_case and check_case disagree on rejection", &c);
  if (checks.known_divergence) std::erase_if(outcome.backends, checks.known_divergence);
  require_no_failure(outcome, c);
  if (checks.reference_admitted) require_reference_admitted(outcome, c);
}

}  // namespace

std::uint64_t input_hash(std::span<const std::uint8_t> data) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::uint8_t b : data) h = (h ^ b) * 0x100000001b3ULL;
  return h;
}

void require_no_failure(const CaseOutcome& outcome, const Case& c) {
  for (const BackendOutcome& b : outcome.backends) {
    if (!is_failure(b.verdict.kind)) continue;
    std::string message = b.backend + ": " + b.verdict.label() + " — " + b.verdict.detail;
    if (b.verdict.first) {
      message += "\n  first element " + std::to_string(b.verdict.first->flat_index) + ": expected " +
                 b.verdict.first->expected + ", actual " + b.verdict.first->actual;
    }
    fail(message, &c);
  }
}

void run_differential(const Case& c, std::span<Backend* const> backends, const RunOptions& options,
                      const DifferentialChecks& checks) {
  run_differential_checked(c, check_case(c, options.limits), backends, options, checks);
}

int run_builtin_differential(std::span<const std::uint8_t> data, OpChoice op) {
  const std::optional<Decoded> decoded = decode_case(data, op);
  if (!decoded) return 0;
  const Case& c = decoded->c;
  const TargetSetup setup = differential_setup(decoded->exec, data);
  // Cheap first: a case over the work bound builds no backend; the check is made once here, and
  // run_case and the backends share the checker memo's result.
  const auto checked = check_case_shared(c, setup.run.limits);
  if (too_much_work(*checked)) return 0;
  std::vector<std::unique_ptr<Backend>> owned;
  for (const std::string& name : setup.backends) owned.push_back(make_target_backend(name, setup.run));
  std::vector<Backend*> backends;
  for (const auto& b : owned) backends.push_back(b.get());
  run_differential_checked(c, *checked, backends, setup.run, {});
  return 0;
}

std::optional<Decoded> decode_vjp_case(std::span<const std::uint8_t> data) {
  std::optional<Decoded> decoded = decode_case(data, OpChoice::any);
  if (!decoded) return std::nullopt;
  Case& c = decoded->c;
  const Shape shape = forward_output_shape(c).value_or(Shape{});
  if (element_count(shape) > kMaxFuzzElements) return std::nullopt;
  const Structure s = decode_structure(data, OpChoice::any);
  std::size_t at = s.value_offset;
  const std::size_t width = dtype_size(c.dtype);
  for (const Tensor& t : c.inputs) at += static_cast<std::size_t>(t.size()) * width;
  Tensor g(c.dtype, shape);
  visit_dtype(c.dtype, [&](auto tag) {
    using T = decltype(tag);
    auto values = g.values<T>();
    for (std::size_t i = 0; i < values.size(); ++i, at += width) {
      if (at + width <= data.size()) {
        if constexpr (std::is_same_v<T, Bool8>) {
          values[i] = Bool8(data[at] & 1);
        } else {
          std::memcpy(&values[i], data.data() + at, sizeof(T));  // little-endian hosts only, as decode_case
        }
      } else {
        values[i] = static_cast<T>(1 + i % 3);
      }
    }
  });
  c.cotangent = std::move(g);
  return decoded;
}

int run_vjp_differential(std::span<const std::uint8_t> data, OpChoice /*op: always any*/) {
  const std::optional<Decoded> decoded = decode_vjp_case(data);
  if (!decoded) return 0;
  const TargetSetup setup = differential_setup(decoded->exec, data);
  std::vector<std::unique_ptr<Backend>> owned;
  for (const std::string& name : setup.backends) owned.push_back(make_target_backend(name, setup.run));
  std::vector<Backend*> backends;
  for (const auto& b : owned) backends.push_back(b.get());
  // The multiset check of the forward reference belongs to the forward targets.
  run_differential(decoded->c, backends, setup.run, {.known_divergence = {}, .reference_admitted = false});
  return 0;
}

std::size_t mutate_input(std::uint8_t* data, std::size_t size, std::size_t max_size, unsigned seed, OpChoice op,
                         std::size_t (*fallback)(std::uint8_t*, std::size_t, std::size_t)) {
  const ValueLayout layout = value_layout({data, size}, op);
  if (const std::size_t n = mutate_value(data, size, max_size, seed, layout)) return n;
  return fallback(data, size, max_size);
}

}  // namespace einfuzz::fuzz
