// The one backend interface: capabilities plus `run(case)` → result | rejection | unsupported.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "einfuzz/core/case.hpp"
#include "einfuzz/core/precision.hpp"
#include "einfuzz/core/tensor.hpp"

namespace einfuzz {

/// Which oracle judges a backend (ORACLE.md table).
enum class Semantics { ordered, any_order };
/// How min/max treat NaN (ORACLE.md §5).
enum class NanProfile { ordered, propagate, ignore };

/// Which elements of a min/max fibre's tie set receive the cotangent (ORACLE §7).
enum class TieRule {
  equal_share,  ///< each element of T gets g/|T| (SEMANTICS §13.8; torch amax/amin)
  one,          ///< exactly one element of T gets g (torch max(dim)/min(dim))
  all,          ///< every element of T gets g
};

std::string_view semantics_name(Semantics s) noexcept;
std::string_view nan_profile_name(NanProfile p) noexcept;
/// "equal-share", "one", "all" (the PROTOCOL hello spelling).
std::string_view tie_rule_name(TieRule r) noexcept;
/// The rule spelled `name`, or nullopt.
std::optional<TieRule> tie_rule_from_name(std::string_view name) noexcept;

/// What a backend declares about itself.
struct Capabilities {
  std::vector<Op> ops = {Op::einsum};
  std::vector<DType> dtypes = {DType::f32, DType::f64};
  std::vector<std::string> reductions;
  Semantics semantics = Semantics::any_order;
  NanProfile nan_profile = NanProfile::propagate;
  bool factoring = true;        ///< may factor sums out of products (ORACLE.md §3)
  bool strided_inputs = false;  ///< accepts non-contiguous input layouts
  /// Evaluates VJP cases (PROTOCOL `"vjp"` in `ops`) of the ops, dtypes and reductions above.
  bool vjp = false;
  TieRule tie_rule = TieRule::equal_share;  ///< min/max VJPs, when `vjp` (ORACLE §7)
  /// Per float dtype, the format partial results are held in (PROTOCOL hello `accumulate`); a
  /// dtype without an entry accumulates in itself (ORACLE §8).
  std::vector<std::pair<DType, DType>> accumulate;
  /// Per float dtype, the format einsum inputs are rounded to (hello `round_inputs`); none by default.
  std::vector<std::pair<DType, InputRounding>> round_inputs;
  std::string version;          ///< free text, e.g. a library version

  /// The profile declared for `dtype` (the default profile where nothing is declared).
  PrecisionProfile profile(DType dtype) const noexcept;
};

/// The backend's own rejection of the case (its diagnostic, e.g. a checker error code).
struct Rejected {
  std::string code;     ///< a SEMANTICS diagnostic code when the backend knows it, else empty
  std::string message;
};
/// The case is outside what the backend implements: never a disagreement, never a pass.
struct Unsupported {
  std::string message;
};
/// What kind of misbehaviour a backend adapter detected itself (an out-of-process backend, a plugin
/// or an isolated worker). Backends do not depend on the harness, so this mirrors the verdicts.
enum class FaultKind {
  crash,           ///< exited, was killed by a signal, or ran out of memory
  timeout,         ///< no complete answer within the per-case timeout
  protocol,        ///< broke PROTOCOL.md (malformed JSON, wrong id, payload size, huge shape, …)
  input_modified,  ///< wrote to its inputs (seen by an isolated worker's checksum)
};
std::string_view fault_kind_name(FaultKind k) noexcept;

/// A fault on one case, with the evidence a report shows (exit status or signal, last stderr
/// lines, the offending bytes). The harness turns it into a verdict; the campaign goes on.
struct Fault {
  FaultKind kind = FaultKind::crash;
  std::string evidence;
  bool at_start = false;  ///< the backend could not be started (spawn or hello): no case caused it
};
/// A VJP case's answer: one cotangent per forward input, in input order (ORACLE §7).
struct Gradients {
  std::vector<Tensor> tensors;
};

/// A forward case's answer is a Tensor; a VJP case's is Gradients.
using BackendResult = std::variant<Tensor, Rejected, Unsupported, Fault, Gradients>;

/// A stream fault that belongs to an earlier request than the one that found it: a protocol-A
/// backend sent more after that request's response was complete (a second answer, extra bytes),
/// and the bytes arrived only after its answer had been returned (PROTOCOL A §3: exactly one
/// response). The case that found it is not charged: it runs on a restarted process.
struct LateFault {
  std::int64_t request = 0;  ///< the request id the extra bytes followed (or answered); 0: the hello
  std::string pattern;       ///< late_case's pattern, else empty
  Fault fault;               ///< kind `protocol`, with the evidence
  /// That request's case when it is the last one answered; for the hello (which no case caused),
  /// the case being run when the fault surfaced, so that running it again shows the fault again.
  std::optional<Case> late_case;
};

/// A backend under test. `run` must not modify the case (the harness checks it).
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  virtual const Capabilities& capabilities() const = 0;
  virtual BackendResult run(const Case& c) = 0;

  /// The asynchronous split of `run`: submit(c) starts the case, collect() returns its result (or
  /// throws what `run` would), so a caller can do other work while a backend that runs elsewhere
  /// (another process) works. One case at a time: every submit is followed by one collect. The
  /// defaults keep every adapter synchronous: submit remembers `c`, which must then stay alive and
  /// unchanged until collect, and collect calls run(c).
  virtual void submit(const Case& c);
  virtual BackendResult collect();
  /// True when submit returns before the case is done and the backend no longer reads `c` once
  /// submit has returned (it works on its own copy), so the caller may run other backends, which
  /// might write to their inputs, before collect. False for the defaults.
  virtual bool concurrent() const { return false; }

  /// True when `capabilities()` cover the case's op and dtype (and reduction), and its VJP for a
  /// VJP case.
  bool supports(const Case& c) const;

  /// The faults found since the last call that belong to cases already answered (LateFault), oldest
  /// first. Default: none (an in-process backend's answer is complete when `run` returns).
  virtual std::vector<LateFault> take_late_faults() { return {}; }
  /// Ends what the backend may still be doing for the cases it answered, so that take_late_faults
  /// has seen everything they caused; the next `run` starts it again. Default: nothing.
  virtual void finish() {}
  /// `run(c)` was called on a forked copy of this backend (`--isolate`), whose state went with it:
  /// advance what that call would have advanced here (a plugin's request id). Default: nothing.
  virtual void ran_in_copy(const Case& c) { (void)c; }

 private:
  const Case* submitted_ = nullptr;  // the defaults' case between submit and collect
};

}  // namespace einfuzz
