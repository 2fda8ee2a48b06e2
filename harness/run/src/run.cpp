// The run boundary: reference first, then every backend, each judged; backend faults become verdicts.
#include "einfuzz/core/reduction.hpp"
#include "einfuzz/harness/run.hpp"

#include <algorithm>
#include <exception>
#include <optional>
#include <utility>
#include <vector>

#include "einfuzz/core/harness_bug.hpp"
#include "einfuzz/core/precision_text.hpp"

#include "einfuzz/reference/einsum.hpp"
#include "einfuzz/reference/reduce.hpp"
#include "einfuzz/reference/vjp.hpp"
#include "einfuzz/harness/judge_vjp.hpp"
#include "inputs_snapshot.hpp"

namespace einfuzz {

std::optional<Diagnostic> profile_option_problem(const Case& c, const PrecisionProfile& profile) {
  const std::string why = profile_problem(c.dtype, profile);
  if (why.empty()) return std::nullopt;
  return make_diagnostic(Code::invalidArgument, "--profile " + profile_text(profile) + " cannot judge a " +
                                                    std::string(dtype_name(c.dtype)) + " case: " + why);
}

Tensor evaluate_reference(const CheckedCase& checked, std::span<const Tensor> inputs) {
  if (const auto* e = std::get_if<CheckedEinsum>(&checked)) return reference::evaluate_einsum(*e, inputs);
  return reference::evaluate_reduce(std::get<CheckedReduce>(checked), inputs[0]);
}

std::vector<Tensor> evaluate_reference_vjp(const CheckedCase& checked, std::span<const Tensor> inputs,
                                           const Tensor& cotangent) {
  if (const auto* e = std::get_if<CheckedEinsum>(&checked)) return reference::vjp_einsum(*e, inputs, cotangent);
  return {reference::vjp_reduce(std::get<CheckedReduce>(checked), inputs[0], cotangent)};
}

bool CaseOutcome::failed() const {
  if (expect_failure) return true;
  for (const BackendOutcome& b : backends) {
    if (is_failure(b.verdict.kind)) return true;
  }
  return false;
}

namespace {

/// A fault the adapter detected (an out-of-process backend, a plugin, an isolated worker).
Verdict fault_verdict(const Fault& f) {
  if (f.at_start) {  // one cause whatever the case: one group (group.hpp)
    if (f.kind == FaultKind::timeout) return make_verdict(VerdictKind::timeout, f.evidence, std::string(kStartReason));
    const bool protocol = f.kind == FaultKind::protocol;
    return make_verdict(VerdictKind::crash, (protocol ? "protocol violation: " : "") + f.evidence, std::string(kStartReason));
  }
  switch (f.kind) {
    case FaultKind::timeout: return make_verdict(VerdictKind::timeout, f.evidence);
    case FaultKind::input_modified: return make_verdict(VerdictKind::input_modified, f.evidence);
    case FaultKind::protocol: return make_verdict(VerdictKind::crash, "protocol violation: " + f.evidence, "protocol");
    case FaultKind::crash: break;
  }
  return make_verdict(VerdictKind::crash, f.evidence);
}

/// The multiset VJP truth of a checked VJP case.
reference::MultisetVjp multiset_vjp_of(const CheckedCase& checked, const Case& c) {
  if (const auto* e = std::get_if<CheckedEinsum>(&checked)) return reference::multiset_vjp_einsum(*e, c.inputs, *c.cotangent);
  return reference::multiset_vjp_reduce(std::get<CheckedReduce>(checked), c.inputs[0], *c.cotangent);
}

/// A VJP case's answer: the ordered judge for ordered backends, else the multiset VJP oracle. An
/// einsum VJP is an einsum (SEMANTICS §13.8): it is judged under `profile`, the backend's precision
/// profile for the dtype (ORACLE §8), as its forward einsum is; a reduce's VJP under the storage
/// profile (a wider accumulator only narrows its error, and none rounds its inputs).
Verdict judge_vjp_backend(CaseOutcome& reference, const Case& c, const BackendResult& result, const Capabilities& caps,
                          const PrecisionProfile& profile, const RunOptions& options) {
  const auto* gradients = std::get_if<Gradients>(&result);
  if (!gradients) return make_verdict(VerdictKind::mismatch_shape, "a forward result (one tensor) to a VJP case");
  if (caps.semantics == Semantics::ordered) return judge_vjp_ordered(*reference.expected_gradients, *gradients, options.judge);
  const VjpJudgeOptions judge{options.strict_signed_zero, caps.tie_rule, caps.nan_profile};
  const auto* e = std::get_if<CheckedEinsum>(&*reference.checked);
  if (e && !is_storage_profile(c.dtype, profile)) {
    for (const auto& [p, truth] : reference.profiled_multiset_vjp) {
      if (p == profile) return judge_vjp_any_order(truth, *gradients, judge);
    }
    const auto& held = reference.profiled_multiset_vjp.emplace_back(
        profile, reference::multiset_vjp_einsum(*e, c.inputs, *c.cotangent, profile));
    return judge_vjp_any_order(held.second, *gradients, judge);
  }
  if (!reference.multiset_vjp) reference.multiset_vjp = multiset_vjp_of(*reference.checked, c);
  return judge_vjp_any_order(*reference.multiset_vjp, *gradients, judge);
}

/// True when `options.profile` overrides the declaration of the backend called `name`.
bool overridden(const RunOptions& options, std::string_view name) {
  if (!options.profile) return false;
  const auto& only = options.profile_backends;
  return only.empty() || std::find(only.begin(), only.end(), name) != only.end();
}

/// The profile an any-order backend's float result is judged under (ORACLE §8): `options.profile`
/// when it applies to the backend, else its declared profile for the case's dtype; a reduce never
/// rounds its inputs, so that part is dropped there.
PrecisionProfile judged_profile(const Case& c, const Backend& backend, const RunOptions& options) {
  const bool over = overridden(options, backend.name());
  PrecisionProfile p = over ? *options.profile : backend.capabilities().profile(c.dtype);
  if (over && is_float(c.dtype) && !is_valid_profile(c.dtype, p)) {
    harness_bug("run_case: --profile " + profile_text(p) + " for a " + std::string(dtype_name(c.dtype)) +
                " case: " + profile_problem(c.dtype, p) + " (callers check it before running)");
  }
  if (c.op == Op::reduce) p.round_inputs = InputRounding::none;
  return p;
}

/// `v` with the profile it was judged under named in its detail, when RunOptions::profile (--profile,
/// or a stored profile surprise's origin.profile) chose it.
Verdict naming_profile(Verdict v, const Case& c, const Backend& backend, const RunOptions& options) {
  const bool judged = v.kind == VerdictKind::pass || v.kind == VerdictKind::indeterminate ||
                      v.kind == VerdictKind::note_signed_zero || v.kind == VerdictKind::mismatch_value ||
                      v.kind == VerdictKind::mismatch_special;
  if (!judged || !overridden(options, backend.name()) || !is_float(c.dtype) || c.is_vjp() ||
      backend.capabilities().semantics == Semantics::ordered) {
    return v;
  }
  const std::string note = "judged under profile " + profile_text(judged_profile(c, backend, options)) +
                           " (declared " + profile_text(backend.capabilities().profile(c.dtype)) + ")";
  v.detail = v.detail.empty() ? note : v.detail + "; " + note;
  return v;
}

/// The einsum truth under `p` that `out` holds already, else null.
const reference::MultisetEinsum* held_einsum_truth(const CaseOutcome& out, const Case& c, const PrecisionProfile& p) {
  if (is_storage_profile(c.dtype, p)) return out.multiset ? &*out.multiset : nullptr;
  for (const auto& [q, truth] : out.profiled_multiset) {
    if (q == p) return &truth;
  }
  return nullptr;
}

/// `truth`, the einsum truth under `p`, kept in `out` (the default profile's as `multiset`).
const reference::MultisetEinsum& hold_einsum_truth(CaseOutcome& out, const Case& c, const PrecisionProfile& p,
                                                   reference::MultisetEinsum truth) {
  if (is_storage_profile(c.dtype, p)) return out.multiset.emplace(std::move(truth));
  return out.profiled_multiset.emplace_back(p, std::move(truth)).second;
}

/// The memoised multiset truth of a checked einsum (or reduce) under `p`: one per distinct profile.
/// An einsum's first one is computed together with every other profile of out.einsum_profiles.
const reference::MultisetEinsum& einsum_truth(CaseOutcome& out, const CheckedEinsum& e, const Case& c,
                                              const PrecisionProfile& p) {
  if (const reference::MultisetEinsum* held = held_einsum_truth(out, c, p)) return *held;
  if (out.einsum_profiles.size() < 2) {  // one any-order backend (or profile): nothing to share
    return hold_einsum_truth(out, c, p,
                             out.broadcast ? reference::multiset_einsum(e, *out.broadcast, p)
                                           : reference::multiset_einsum(e, c.inputs, p));
  }
  std::vector<PrecisionProfile> batch{p};
  for (const PrecisionProfile& q : out.einsum_profiles) {
    if (!held_einsum_truth(out, c, q) && std::find(batch.begin(), batch.end(), q) == batch.end()) batch.push_back(q);
  }
  std::optional<reference::BroadcastOperands> own;  // the inputs again, when a backend wrote to them
  const reference::BroadcastOperands& broadcast =
      out.broadcast ? *out.broadcast : own.emplace(reference::broadcast_einsum(e, c.inputs));
  std::vector<reference::MultisetEinsum> truths = reference::multiset_einsum(e, broadcast, batch);
  for (std::size_t i = 0; i < batch.size(); ++i) hold_einsum_truth(out, c, batch[i], std::move(truths[i]));
  return *held_einsum_truth(out, c, p);
}

const reference::MultisetReduce& reduce_truth(CaseOutcome& out, const CheckedReduce& r, const Case& c,
                                              const PrecisionProfile& p) {
  if (is_storage_profile(c.dtype, p)) {
    if (!out.multiset_reduce) out.multiset_reduce = reference::multiset_reduce(r, c.inputs[0]);
    return *out.multiset_reduce;
  }
  for (const auto& [q, truth] : out.profiled_multiset_reduce) {
    if (q == p) return truth;
  }
  return out.profiled_multiset_reduce.emplace_back(p, reference::multiset_reduce(r, c.inputs[0], p)).second;
}

/// Why a bool answer breaks PROTOCOL A's encoding (one byte, 0 or 1), else nullopt. Any other byte
/// is no value: read as one it was "true", and a mismatch of two equal-looking values.
std::optional<std::string> bool_encoding_fault(const Tensor& t) {
  if (t.dtype() != DType::boolean) return std::nullopt;
  const auto bytes = t.bytes();
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (const auto b = std::to_integer<unsigned>(bytes[i]); b > 1) {
      return "bool element " + std::to_string(i) + " of the answer is the byte " + std::to_string(b) +
             " (a bool is one byte, 0 or 1)";
    }
  }
  return std::nullopt;
}

Verdict judge_backend(CaseOutcome& reference, const Case& c, const BackendResult& result, const Backend& backend,
                      const RunOptions& options) {
  if (const auto* f = std::get_if<Fault>(&result)) return fault_verdict(*f);
  if (const auto* u = std::get_if<Unsupported>(&result)) {
    return make_verdict(VerdictKind::unsupported, u->message);
  }
  if (const auto* r = std::get_if<Rejected>(&result)) {
    if (reference.rejection) {
      const std::string expected(code_name(reference.rejection->code));
      if (r->code.empty() || r->code == expected) return make_verdict(VerdictKind::pass, "both reject: " + expected);
      return make_verdict(VerdictKind::reject_disagree, "reference rejects with " + expected + ", backend with " + r->code + ": " + r->message);
    }
    // An adapter's own size limit is not a semantic rejection (SEMANTICS §13.4): nothing to judge.
    if (r->code == code_name(Code::sizeLimitExceeded)) {
      return make_verdict(VerdictKind::unsupported, "over the backend's own size limit: " + r->message);
    }
    return make_verdict(VerdictKind::reject_disagree, "backend rejects an accepted case: " + r->message);
  }
  if (reference.rejection) {
    return make_verdict(VerdictKind::reject_disagree, "backend accepts a case the reference rejects with " +
                       std::string(code_name(reference.rejection->code)));
  }
  const Capabilities& caps = backend.capabilities();
  const bool exact = !is_float(c.dtype);  // integers wrap and bools are exact: bitwise on every order
  const bool any_order = caps.semantics != Semantics::ordered && !exact;
  // A profile no backend may declare (ORACLE §8) has no bound: the declaration is the fault.
  const PrecisionProfile profile = judged_profile(c, backend, options);
  if (any_order && !is_valid_profile(c.dtype, profile)) {
    return make_verdict(VerdictKind::crash,
                        "protocol violation: declares accumulate " + std::string(dtype_name(profile.accumulate)) +
                            ", round_inputs " + std::string(input_rounding_name(profile.round_inputs)) + " for " +
                            std::string(dtype_name(c.dtype)) + ", not a valid precision profile (ORACLE §8)",
                        "protocol");
  }
  if (c.is_vjp()) return judge_vjp_backend(reference, c, result, caps, profile, options);
  const auto* forward = std::get_if<Tensor>(&result);
  if (!forward) return make_verdict(VerdictKind::mismatch_shape, "a VJP's answer (several tensors) to a forward case");
  const Tensor& actual = *forward;
  if (auto bad = bool_encoding_fault(actual)) return make_verdict(VerdictKind::crash, "protocol violation: " + *bad, "protocol");
  if (!any_order) return judge_ordered(*reference.expected, actual, options.judge);
  if (const auto* e = std::get_if<CheckedEinsum>(&*reference.checked)) {
    return judge_any_order(einsum_truth(reference, *e, c, profile), actual, {caps.factoring, options.strict_signed_zero});
  }
  const auto& r = std::get<CheckedReduce>(*reference.checked);
  if (caps.nan_profile == NanProfile::ordered && (r.kind == Reduction::min || r.kind == Reduction::max)) {
    return judge_ordered(*reference.expected, actual, options.judge);
  }
  return judge_any_order(reduce_truth(reference, r, c, profile), actual, caps.nan_profile, options.strict_signed_zero);
}

/// judge_backend, with any exception it throws treated as the harness bug it is: print and abort.
Verdict judge_or_abort(CaseOutcome& reference, const Case& c, const BackendResult& result, const Backend& backend,
                       const RunOptions& options) {
  try {
    return naming_profile(judge_backend(reference, c, result, backend, options), c, backend, options);
  } catch (const std::exception& e) {
    harness_bug(std::string("judging ") + std::string(backend.name()) + "'s result threw: " + e.what());
  } catch (...) {
    harness_bug("judging " + std::string(backend.name()) + "'s result threw a non-standard exception");
  }
}

/// The multiset oracle judge_backend would compute for the answer of a backend with these
/// capabilities, computed now: while the requests are in flight, and before an in-process backend
/// could write to the inputs it reads.
void prepare_multiset(CaseOutcome& out, const Case& c, Semantics semantics, NanProfile nan_profile,
                      const PrecisionProfile& profile) {
  if (!out.checked || semantics == Semantics::ordered || !is_float(c.dtype)) return;
  if (c.is_vjp()) {
    if (!out.multiset_vjp) out.multiset_vjp = multiset_vjp_of(*out.checked, c);
    return;
  }
  if (!is_valid_profile(c.dtype, profile)) return;  // judged as the protocol violation it is
  if (const auto* e = std::get_if<CheckedEinsum>(&*out.checked)) {
    einsum_truth(out, *e, c, profile);
    return;
  }
  const auto& r = std::get<CheckedReduce>(*out.checked);
  if (nan_profile == NanProfile::ordered && (r.kind == Reduction::min || r.kind == Reduction::max)) return;
  reduce_truth(out, r, c, profile);
}

/// The boundary around one backend call (submit, collect or run): a backend that throws is a crash.
template <class Call>
std::optional<Verdict> guarded(Call call) {
  try {
    call();
  } catch (const std::exception& e) {
    return make_verdict(VerdictKind::crash, std::string("the backend threw: ") + e.what());
  } catch (...) {
    return make_verdict(VerdictKind::crash, "the backend threw a non-standard exception");
  }
  return std::nullopt;
}

}  // namespace

CaseOutcome run_case(const Case& c, std::span<Backend* const> backends, const RunOptions& options) {
  CaseOutcome out;
  const auto shared = check_case_shared(c, options.limits);
  const Result<CheckedCase>& checked = *shared;
  if (!checked) {
    out.rejection = checked.error();
    if (out.rejection->code == Code::sizeLimitExceeded) out.skipped = out.rejection;
  }
  if (c.expect_error) {
    const std::string got = out.rejection ? std::string(code_name(out.rejection->code)) : std::string();
    if (got != *c.expect_error) {
      out.expect_failure = "the case expects " + (c.expect_error->empty() ? "acceptance" : *c.expect_error) +
                           " but the reference concludes " + (got.empty() ? "acceptance" : got);
    }
  }
  if (out.skipped) return out;  // a harness limit decides nothing about any backend (SEMANTICS §13.4)

  // Only the backend's own code runs inside the guarded boundary: an exception from the judge or
  // the oracle is the harness's, and must not be blamed on the backend (ORACLE.md §6).
  std::vector<std::optional<Verdict>> verdicts(backends.size());
  std::vector<std::optional<BackendResult>> results(backends.size());
  std::vector<bool> submitted(backends.size(), false);
  // Read before the submit: a backend in flight is not asked anything until it is collected.
  struct JudgedAs {
    Semantics semantics = Semantics::any_order;
    NanProfile nan_profile = NanProfile::propagate;
    PrecisionProfile profile;
  };
  std::vector<JudgedAs> judged_as(backends.size());
  // The bytes the backends read (inputs, cotangent), copied once per case (not hashed twice per
  // backend). A backend that wrote to them is input-modified and the copy is put back, so the next
  // backend is given, and judged on, the case as it was (and the oracles computed from it hold).
  InputsSnapshot inputs;
  bool inputs_taken = false;
  const auto take_inputs = [&] {
    if (!inputs_taken) inputs.take(c);
    inputs_taken = true;
  };
  const auto inputs_modified = [&] {
    const bool modified = !inputs.unchanged(c);
    if (modified && !inputs.restore(c)) {
      inputs_taken = false;  // reshaped, not only written: what is there now is what the next one gets
      out.broadcast.reset();  // of the inputs before: a multiset from now on reads them again
    }
    return modified;
  };
  const auto supported = [&](std::size_t i) {
    if (backends[i]->supports(c)) return true;
    verdicts[i] = make_verdict(VerdictKind::unsupported, "outside the backend's declared capabilities");
    return false;
  };
  // Concurrent backends (PROTOCOL A processes) first: their requests go out now, and they work
  // while the reference and the in-process backends run here. Each works on its own copy of the
  // case once submit returned, so only submit itself can touch the inputs.
  for (std::size_t i = 0; i < backends.size(); ++i) {
    if (!backends[i]->concurrent() || !supported(i)) continue;
    const Capabilities& caps = backends[i]->capabilities();
    judged_as[i] = {caps.semantics, caps.nan_profile, judged_profile(c, *backends[i], options)};
    take_inputs();
    verdicts[i] = guarded([&] { backends[i]->submit(c); });
    submitted[i] = !verdicts[i];
    if (inputs_modified() && submitted[i]) {
      verdicts[i] = make_verdict(VerdictKind::input_modified, "the backend wrote to its inputs");
    }
  }
  if (checked) {
    const auto* einsum = std::get_if<CheckedEinsum>(&*checked);
    if (einsum && !c.is_vjp() && is_float(c.inputs.front().dtype())) {
      // Broadcast once: the multiset oracles of any-order backends start from the same operands.
      out.broadcast = reference::broadcast_einsum(*einsum, c.inputs);
      out.expected = reference::evaluate_einsum(*einsum, *out.broadcast);
    } else {
      out.expected = evaluate_reference(*checked, c.inputs);
    }
    if (c.is_vjp()) out.expected_gradients = evaluate_reference_vjp(*checked, c.inputs, *c.cotangent);
    out.checked = std::shared_ptr<const CheckedCase>(shared, &*checked);  // aliasing: shares the memo's
    if (out.broadcast) {
      // A forward float einsum: the profiles whose truths are certainly wanted, computed together at
      // the first need. The concurrent backends' (prepare_multiset computes them now anyway) and,
      // under storage_truth, the in-process any-order backends' and the default one; an in-process
      // backend's alone waits until it has answered (it may not: unsupported, a crash).
      const auto want = [&](const PrecisionProfile& p) {
        if (is_valid_profile(c.dtype, p) &&
            std::find(out.einsum_profiles.begin(), out.einsum_profiles.end(), p) == out.einsum_profiles.end()) {
          out.einsum_profiles.push_back(p);
        }
      };
      for (std::size_t i = 0; i < backends.size(); ++i) {
        if (submitted[i] && judged_as[i].semantics != Semantics::ordered) want(judged_as[i].profile);
        if (options.storage_truth && !backends[i]->concurrent() &&
            backends[i]->capabilities().semantics != Semantics::ordered && backends[i]->supports(c)) {
          want(judged_profile(c, *backends[i], options));
        }
      }
      if (options.storage_truth && !out.einsum_profiles.empty()) want(storage_profile(c.dtype));
    }
    for (std::size_t i = 0; i < backends.size(); ++i) {
      if (submitted[i]) prepare_multiset(out, c, judged_as[i].semantics, judged_as[i].nan_profile, judged_as[i].profile);
    }
  }
  const auto judge = [&](std::size_t i) {
    if (results[i]) verdicts[i] = judge_or_abort(out, c, *results[i], *backends[i], options);
  };
  for (std::size_t i = 0; i < backends.size(); ++i) {
    if (backends[i]->concurrent() || !supported(i)) continue;
    take_inputs();
    verdicts[i] = guarded([&] { results[i].emplace(backends[i]->run(c)); });
    if (inputs_modified() && results[i]) {
      results[i].reset();
      verdicts[i] = make_verdict(VerdictKind::input_modified, "the backend wrote to its inputs");
    }
    judge(i);
  }
  // Collected in order; a concurrent backend's own thread kept its timeout from its send.
  for (std::size_t i = 0; i < backends.size(); ++i) {
    if (!submitted[i]) continue;
    const bool modified = verdicts[i].has_value();  // input_modified, decided at submit
    std::optional<Verdict> threw = guarded([&] { results[i].emplace(backends[i]->collect()); });
    if (threw) verdicts[i] = std::move(threw);
    if (modified) results[i].reset();
    judge(i);
  }
  out.broadcast.reset();  // the oracles are all computed: no need to carry |G| × k values out
  out.backends.reserve(backends.size());
  for (std::size_t i = 0; i < backends.size(); ++i) {
    out.backends.push_back(BackendOutcome{std::string(backends[i]->name()), std::move(*verdicts[i])});
  }
  return out;
}

int finish_and_charge_late_faults(CaseOutcome& outcome, std::span<Backend* const> backends, const Case& c) {
  int changed = 0;
  const std::string name = case_file_name(c);
  for (Backend* b : backends) {
    b->finish();
    for (const LateFault& late : b->take_late_faults()) {
      if (!late.late_case || case_file_name(*late.late_case) != name) continue;
      for (BackendOutcome& o : outcome.backends) {
        if (o.backend != b->name() || o.verdict.kind == VerdictKind::crash) continue;
        o.verdict = make_verdict(VerdictKind::crash, "protocol violation after the complete answer: " + late.fault.evidence,
                                 "protocol");
        ++changed;
      }
    }
  }
  return changed;
}

}  // namespace einfuzz
