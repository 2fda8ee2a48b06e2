// The verdict taxonomy of ORACLE.md §6, with the evidence a report shows for one element.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace einfuzz {

enum class VerdictKind {
  pass,                 ///< accepted by the any-order oracle
  pass_bitwise,         ///< identical to the ordered reference, bit for bit
  indeterminate,        ///< the oracle cannot decide (reason in `detail`)
  note_signed_zero,     ///< only the sign of a zero differs
  mismatch_value,
  mismatch_special,
  mismatch_shape,
  reject_disagree,      ///< one side rejects the case, the other accepts
  crash,
  timeout,
  input_modified,
  unsupported,          ///< the backend does not implement this case; never counted as a pass
};

/// Number of VerdictKind values (the columns of the verdict counts).
inline constexpr std::size_t kVerdictKinds = static_cast<std::size_t>(VerdictKind::unsupported) + 1;

/// Bins of |r - s| / B(o) over the any-order judged elements with a finite result, a finite class
/// and a finite bound (the report's accuracy histogram): bin 0 is exactly 0; bin 1 is (0, 2^-20];
/// bin 21 - k is (2^-(k+1), 2^-k] for k = 0 … 19, so bin 21 is (1/2, 1]; bin 22 is > 1 (a failure).
inline constexpr std::size_t kErrorBins = 23;

/// The bin's range as the report prints it: "0", "(0, 2^-20]", "(2^-20, 2^-19]", …, "(1/2, 1]", "> 1".
std::string error_bin_label(std::size_t bin);

/// The name exactly as ORACLE.md §6 spells it ("pass(bitwise)", "mismatch(value)", …).
std::string verdict_name(VerdictKind kind);

/// True for verdicts that make `einfuzz check` exit 1.
bool is_failure(VerdictKind kind) noexcept;

/// How bad a judge's verdict is, for aggregating elements (and a VJP's tensors) into the worst:
/// mismatch(shape) > mismatch(special) > mismatch(value) > a run-boundary kind > note >
/// indeterminate > pass > pass(bitwise).
int verdict_severity(VerdictKind kind) noexcept;

/// One element's evidence.
struct ElementEvidence {
  /// VJP cases: the forward input whose cotangent holds this element (flat_index and coords are
  /// in that input's shape); -1 for a forward case.
  int gradient_of = -1;
  std::int64_t flat_index = 0;
  std::vector<std::int64_t> coords;  ///< row-major coordinates in the output shape
  std::string expected;              ///< hex-float (and decimal) of the oracle's value (ŝ* for any-order)
  /// What `expected` is: "multiset value", "required by the ignore NaN profile", …; empty for the
  /// ordered oracle (the reference's value).
  std::string expected_label;
  std::string actual;                ///< same for the backend's value
  // any-order oracle only (ORACLE.md §6): the exact value, the bound, the distance, the reachable set.
  /// s(o) exactly: an arbitrary-precision hex float ("… / n" for a mean) and 21 significant decimal
  /// digits; "NaN", "+Inf" or "-Inf" for a special class; empty for the ordered oracle and min/max.
  std::string exact;
  double bound = 0;                  ///< B(o), rounded up to a double
  std::string bound_text;            ///< B(o) exactly as the judge used it, spelled as `exact`
  double ulps = 0;                   ///< |r - s| in ulps of ŝ*
  double bound_multiples = 0;        ///< |r - s| / B(o)
  /// The results some valid evaluation can return (ORACLE.md §2–§3): "{+Inf, NaN}",
  /// "{finite within B}", "{NaN, +Inf, -Inf}", …; empty for the ordered oracle and min/max.
  std::string reachable;
};

struct Verdict {
  VerdictKind kind = VerdictKind::pass_bitwise;
  std::string detail;                     ///< human-readable reason (shapes, counts, messages)
  std::optional<ElementEvidence> first;   ///< first element with the worst verdict, when there is one
  std::int64_t differing = 0;             ///< elements with a failing verdict
  std::string reason;                     ///< indeterminate(reason) / mismatch(special: reason)
  std::int64_t indeterminate = 0;         ///< elements judged indeterminate
  std::int64_t notes = 0;                 ///< elements with a note (signed zero)
  /// Per kErrorBins bin, the elements whose |r - s| / B(o) falls in it (any-order judge only; the
  /// ordered judge and min/max leave it zero).
  std::array<std::uint64_t, kErrorBins> error_bins{};

  /// The verdict as ORACLE.md §6 spells it, with its reason: "indeterminate(overflow-possible)",
  /// "mismatch(special: empty-contraction)", "pass(bitwise)", …
  std::string label() const;
};

/// The reason of a `crash` or `timeout` whose backend could not be started (its spawn or hello
/// failed, or its hello did not come in time), so no case caused it; its label is `crash(start)` or
/// `timeout(start)`.
inline constexpr std::string_view kStartReason = "start";

/// A verdict without element evidence.
inline Verdict make_verdict(VerdictKind kind, std::string detail = {}, std::string reason = {}) {
  Verdict v;
  v.kind = kind;
  v.detail = std::move(detail);
  v.reason = std::move(reason);
  return v;
}

}  // namespace einfuzz
