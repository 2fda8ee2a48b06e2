// The shared front of the in-process adapters (adapter.hpp): capabilities, dtype and checker gates.
#include "einfuzz/backends/adapter.hpp"

#include <utility>
#include <vector>

#include "einfuzz/core/check_case.hpp"

namespace einfuzz {

Evaluates standard_evaluates() {
  return {{DType::f32, DType::f64, DType::i32, DType::i64, DType::boolean},
          {Reduction::sum, Reduction::prod, Reduction::mean, Reduction::min, Reduction::max, Reduction::any,
           Reduction::all}};
}

Capabilities full_capabilities(Semantics semantics, NanProfile nan_profile, bool factoring, std::string version,
                               const Evaluates& evaluates) {
  Capabilities caps;
  caps.ops = {Op::einsum, Op::reduce};
  caps.dtypes = evaluates.dtypes;
  caps.reductions.clear();
  for (const Reduction r : evaluates.reductions) caps.reductions.emplace_back(reduction_name(r));
  caps.semantics = semantics;
  caps.nan_profile = nan_profile;
  caps.factoring = factoring;
  caps.version = std::move(version);
  return caps;
}

Rejected rejected(const Diagnostic& d) { return Rejected{std::string(code_name(d.code)), d.message}; }

std::optional<Rejected> reject_mixed_dtypes(const Case& c) {
  for (std::size_t k = 0; k < c.inputs.size(); ++k) {
    if (c.inputs[k].dtype() != c.dtype) {
      return Rejected{"invalidArgument", "input " + std::to_string(k) + " is not " + std::string(dtype_name(c.dtype))};
    }
  }
  return std::nullopt;
}

namespace {

/// The run boundary's checked einsum or reduce (T) of this very case under `limits`, shared rather
/// than checked or copied again; null when the run boundary has not checked it or rejected it.
template <class T>
std::shared_ptr<const T> accepted_by_run_boundary(const Case& c, const Limits& limits) {
  const auto whole = check_case_memoised(c, limits);
  if (!whole || !whole->ok()) return nullptr;
  const T* checked = std::get_if<T>(&**whole);
  return checked ? std::shared_ptr<const T>(whole, checked) : nullptr;  // aliasing: shares the memo's
}

}  // namespace

std::variant<std::shared_ptr<const CheckedEinsum>, Rejected> checked_einsum_or_reject(const Case& c,
                                                                                      const Limits& limits) {
  if (auto shared = accepted_by_run_boundary<CheckedEinsum>(c, limits)) return shared;
  // Reused per thread, as check_case's: the copies would cost an allocation per operand a call.
  thread_local std::vector<Shape> shapes;
  shapes.resize(c.inputs.size());
  for (std::size_t k = 0; k < c.inputs.size(); ++k) shapes[k] = c.inputs[k].shape();
  auto checked = check_einsum_shared(c.pattern, shapes, limits);
  if (!*checked) return rejected(checked->error());
  return std::shared_ptr<const CheckedEinsum>(checked, &**checked);  // aliasing: shares the memo's result
}

std::variant<std::shared_ptr<const CheckedReduce>, Rejected> checked_reduce_or_reject(const Case& c,
                                                                                      const Limits& limits) {
  if (c.inputs.size() != 1) return Rejected{"invalidArgument", "a reduce case has exactly one input"};
  if (auto shared = accepted_by_run_boundary<CheckedReduce>(c, limits)) return shared;
  auto checked =
      check_reduce_shared(c.pattern, c.reduction.value_or(""), c.inputs[0].shape(), c.axis_lengths, c.dtype, limits);
  if (!*checked) return rejected(checked->error());
  return std::shared_ptr<const CheckedReduce>(checked, &**checked);
}

Unsupported unsupported_reduction(std::string_view backend, Reduction kind, DType dtype) {
  return Unsupported{std::string(backend) + ": " + std::string(reduction_name(kind)) + " on " +
                     std::string(dtype_name(dtype))};
}

Rejected einsum_on_bool() { return Rejected{"unsupportedDtype", "einsum on bool"}; }

}  // namespace einfuzz
