// The one backend interface: capabilities plus `run(case)` → result | rejection | unsupported.
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "einfuzz/core/case.hpp"
#include "einfuzz/core/tensor.hpp"

namespace einfuzz {

/// Which oracle judges a backend (ORACLE.md table).
enum class Semantics { ordered, any_order };
/// How min/max treat NaN (ORACLE.md §5).
enum class NanProfile { ordered, propagate, ignore };

std::string_view semantics_name(Semantics s) noexcept;
std::string_view nan_profile_name(NanProfile p) noexcept;

/// What a backend declares about itself.
struct Capabilities {
  std::vector<Op> ops = {Op::einsum};
  std::vector<DType> dtypes = {DType::f32, DType::f64};
  std::vector<std::string> reductions;
  Semantics semantics = Semantics::any_order;
  NanProfile nan_profile = NanProfile::propagate;
  bool factoring = true;        ///< may factor sums out of products (ORACLE.md §3)
  bool strided_inputs = false;  ///< accepts non-contiguous input layouts
  std::string version;          ///< free text, e.g. a library version
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
};
using BackendResult = std::variant<Tensor, Rejected, Unsupported, Fault>;

/// A backend under test. `run` must not modify the case (the harness checks it).
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  virtual const Capabilities& capabilities() const = 0;
  virtual BackendResult run(const Case& c) = 0;

  /// True when `capabilities()` cover the case's op and dtype (and reduction).
  bool supports(const Case& c) const;
};

}  // namespace einfuzz
