// Shared parts of the backend interface.
#include "einfuzz/backends/backend.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace einfuzz {

std::string_view semantics_name(Semantics s) noexcept {
  return s == Semantics::ordered ? "ordered" : "any-order";
}

std::string_view nan_profile_name(NanProfile p) noexcept {
  switch (p) {
    case NanProfile::ordered: return "ordered";
    case NanProfile::propagate: return "propagate";
    case NanProfile::ignore: return "ignore";
  }
  return "?";
}

std::string_view tie_rule_name(TieRule r) noexcept {
  switch (r) {
    case TieRule::equal_share: return "equal-share";
    case TieRule::one: return "one";
    case TieRule::all: return "all";
  }
  return "?";
}

std::optional<TieRule> tie_rule_from_name(std::string_view name) noexcept {
  for (const TieRule r : {TieRule::equal_share, TieRule::one, TieRule::all}) {
    if (tie_rule_name(r) == name) return r;
  }
  return std::nullopt;
}

std::string_view fault_kind_name(FaultKind k) noexcept {
  switch (k) {
    case FaultKind::crash: return "crash";
    case FaultKind::timeout: return "timeout";
    case FaultKind::protocol: return "protocol";
    case FaultKind::input_modified: return "input-modified";
  }
  return "?";
}

PrecisionProfile Capabilities::profile(DType dtype) const noexcept {
  PrecisionProfile p = storage_profile(dtype);
  for (const auto& [d, a] : accumulate) {
    if (d == dtype) p.accumulate = a;
  }
  for (const auto& [d, r] : round_inputs) {
    if (d == dtype) p.round_inputs = r;
  }
  return p;
}

void Backend::submit(const Case& c) { submitted_ = &c; }

BackendResult Backend::collect() {
  const Case* c = std::exchange(submitted_, nullptr);
  if (c == nullptr) throw std::logic_error("Backend::collect without a submitted case");
  return run(*c);
}

bool Backend::supports(const Case& c) const {
  const Capabilities& caps = capabilities();
  auto has = [](const auto& list, const auto& x) { return std::find(list.begin(), list.end(), x) != list.end(); };
  if (!has(caps.ops, c.op) || !has(caps.dtypes, c.dtype)) return false;
  if (c.is_vjp() && !caps.vjp) return false;
  // f16/bf16 VJPs are differentiable but not judged here (check_case rejects them as a harness
  // limit): a backend that computes one must not be told it disagrees, so it is never sent one.
  if (c.is_vjp() && is_half(c.dtype)) return false;
  return c.op != Op::reduce || (c.reduction && has(caps.reductions, *c.reduction));
}

}  // namespace einfuzz
