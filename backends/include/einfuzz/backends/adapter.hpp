// The shared front of an in-process adapter: capabilities for "every op, dtype and reduction", the
// checks a case passes before it is evaluated (input dtypes, the checker) and the dispatch to the
// case dtype's C++ type, so each backend writes only its evaluation.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "einfuzz/backends/backend.hpp"
#include "einfuzz/core/check.hpp"
#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/core/diagnostic.hpp"
#include "einfuzz/core/dtype.hpp"
#include "einfuzz/core/limits.hpp"

namespace einfuzz {

/// The dtypes and reduction kinds an adapter evaluates, spelled out: a row added to core's dtype or
/// reduction table is not claimed by any backend until its adapter implements it and a capability test
/// against the library shows it (tests/backends/declared_capabilities_test.cpp).
struct Evaluates {
  std::vector<DType> dtypes;
  std::vector<Reduction> reductions;
};

/// f32, f64, i32, i64, bool and sum, prod, mean, min, max, any, all: what every built-in in-process
/// adapter evaluates (fused, shuffle, eigen, xtensor, torch).
Evaluates standard_evaluates();

/// Capabilities of a backend that runs einsum and reduce on `evaluates`, judged as `semantics` /
/// `nan_profile` say (`strided_inputs` stays false).
Capabilities full_capabilities(Semantics semantics, NanProfile nan_profile, bool factoring, std::string version,
                               const Evaluates& evaluates = standard_evaluates());

/// A checker diagnostic as the backend's own rejection: its code's name and its message.
Rejected rejected(const Diagnostic& d);

/// invalidArgument for the first input whose dtype is not the case's dtype, else nullopt.
std::optional<Rejected> reject_mixed_dtypes(const Case& c);

/// check_einsum of the case's pattern over its input shapes under `limits` (the checker memo's
/// shared result, not a copy), or its diagnostic.
std::variant<std::shared_ptr<const CheckedEinsum>, Rejected> checked_einsum_or_reject(const Case& c,
                                                                                      const Limits& limits);

/// invalidArgument unless the case has exactly one input, then check_reduce (pattern, reduction,
/// supplied lengths, dtype) under `limits` (shared, as above), or its diagnostic.
std::variant<std::shared_ptr<const CheckedReduce>, Rejected> checked_reduce_or_reject(const Case& c,
                                                                                      const Limits& limits);

/// The rejection of a checked einsum on bool: unsupportedDtype (bool is only for any/all, SEMANTICS §13).
Rejected einsum_on_bool();

/// "BACKEND: KIND on DTYPE": a reduction the backend does not run on that dtype (mean on an
/// integer dtype; any/all elsewhere than bool, which the checker rejects before).
Unsupported unsupported_reduction(std::string_view backend, Reduction kind, DType dtype);

/// Whether a numeric (non-bool) reduce kernel on T has `kind`: sum, prod, min and max on every T,
/// mean on floating-point T only; any/all are bool's.
template <class T>
constexpr bool numeric_reduction(Reduction kind) {
  if (kind == Reduction::mean) return is_float_type_v<T>;
  return kind != Reduction::any && kind != Reduction::all;
}

/// The whole prelude of an in-process adapter, in this order: reject_mixed_dtypes, then for an
/// einsum checked_einsum_or_reject and einsum_on_bool, for a reduce checked_reduce_or_reject; then
/// `einsum(tag, checked, c)` or `reduce(tag, checked, c)` with `tag` a value of the C++ type of
/// `c.dtype` (generic callables: the type is decltype(tag); Bool8 reaches only `reduce`). The
/// 16-bit float types reach the callables only when `kHalfTypes` (an adapter that evaluates them);
/// otherwise such a case is unsupported without instantiating them.
template <bool kHalfTypes = false, class Einsum, class Reduce>
BackendResult run_checked(const Case& c, const Limits& limits, Einsum&& einsum, Reduce&& reduce) {
  if (!kHalfTypes && is_half(c.dtype)) {
    return Unsupported{"this adapter does not evaluate " + std::string(dtype_name(c.dtype))};
  }
  if (auto mixed = reject_mixed_dtypes(c)) return *std::move(mixed);
  if (c.op == Op::einsum) {
    auto checked = checked_einsum_or_reject(c, limits);
    if (auto* r = std::get_if<Rejected>(&checked)) return std::move(*r);
    const CheckedEinsum& e = *std::get<std::shared_ptr<const CheckedEinsum>>(checked);
    return visit_dtype(c.dtype, [&](auto tag) -> BackendResult {
      if constexpr (std::is_same_v<decltype(tag), Bool8>) {
        return einsum_on_bool();
      } else if constexpr (is_half_type_v<decltype(tag)> && !kHalfTypes) {
        return Unsupported{};  // not reached: returned above
      } else {
        return einsum(tag, e, c);
      }
    });
  }
  auto checked = checked_reduce_or_reject(c, limits);
  if (auto* r = std::get_if<Rejected>(&checked)) return std::move(*r);
  const CheckedReduce& r = *std::get<std::shared_ptr<const CheckedReduce>>(checked);
  return visit_dtype(c.dtype, [&](auto tag) -> BackendResult {
    if constexpr (is_half_type_v<decltype(tag)> && !kHalfTypes) {
      return Unsupported{};  // not reached: returned above
    } else {
      return reduce(tag, r, c);
    }
  });
}

}  // namespace einfuzz
