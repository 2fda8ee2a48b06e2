// Runs one case on the reference and on every selected backend, catching every backend failure at
// this boundary, and judges each result.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <utility>
#include <vector>

#include "einfuzz/backends/backend.hpp"
#include "einfuzz/core/case.hpp"
#include "einfuzz/core/check_case.hpp"  // re-exported: CheckedCase, check_case
#include "einfuzz/core/check.hpp"
#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/fused/einsum.hpp"
#include "einfuzz/harness/judge.hpp"
#include "einfuzz/reference/multiset.hpp"
#include "einfuzz/reference/multiset_vjp.hpp"

namespace einfuzz {

struct RunOptions {
  Limits limits;
  fused::ExecOptions exec;
  OrderedJudgeOptions judge;
  bool strict_signed_zero = false;  ///< any-order oracle: a wrong zero sign is a mismatch
  std::uint64_t shuffle_seed = 1;   ///< seed of the built-in `shuffle` backend
  /// `--profile`: any-order float results are judged under this precision profile (ORACLE §8)
  /// instead of the backend's declaration (a reduce still never rounds its inputs); ordered
  /// backends and integer/bool results stay exact. Must be valid for the case's dtype
  /// (profile_problem: the caller checks before running; run_case treats it as a harness bug).
  std::optional<PrecisionProfile> profile;
  /// The backends (by name) `profile` applies to; empty: every any-order backend. A stored
  /// profile surprise (`origin.profile`) is judged so on its recorded backends only.
  std::vector<std::string> profile_backends;
  /// A forward float einsum's truth under the dtype's default profile (CaseOutcome::multiset) is
  /// computed whenever another profile's is, even with no backend judged under it: the differential
  /// fuzz targets judge the ordered reference against it. One pass over the terms serves both.
  bool storage_truth = false;
};

/// `invalidArgument` naming `--profile` when `profile` is not a valid precision profile for the
/// dtype of `c` (profile_problem: narrower than the dtype, TF32 beyond its exponent range, an
/// integer or bool case); nullopt when it is. Checked before running, by check and replay.
std::optional<Diagnostic> profile_option_problem(const Case& c, const PrecisionProfile& profile);

/// The reference's ordered result of a checked case.
Tensor evaluate_reference(const CheckedCase& checked, std::span<const Tensor> inputs);

/// The reference's ordered VJP of a checked VJP case (SEMANTICS §13.8): one cotangent per forward
/// input, in input order.
std::vector<Tensor> evaluate_reference_vjp(const CheckedCase& checked, std::span<const Tensor> inputs,
                                           const Tensor& cotangent);

struct BackendOutcome {
  std::string backend;
  Verdict verdict;
};

struct CaseOutcome {
  std::optional<Diagnostic> rejection;  ///< the reference's diagnostic when the case is bad input
  /// The case exceeds a harness limit (SEMANTICS §13.4, `sizeLimitExceeded`): a verdict on nobody.
  /// No backend runs (`backends` stays empty); `check` exits 2 naming the limit, a campaign counts
  /// the case as skipped. Also set in `rejection`.
  std::optional<Diagnostic> skipped;
  /// The checked case otherwise (check_case_shared's: the checker memo's, shared with the in-process
  /// backends' checks of the same case).
  std::shared_ptr<const CheckedCase> checked;
  std::optional<Tensor> expected;       ///< the reference's ordered (forward) result otherwise
  /// A forward float einsum: the operands the reference broadcast for `expected`, kept for the
  /// multiset oracles of the same inputs while run_case judges (dropped when a backend wrote to the
  /// inputs, and before run_case returns).
  std::optional<reference::BroadcastOperands> broadcast;
  /// A VJP case: the reference's ordered VJP, one cotangent per forward input.
  std::optional<std::vector<Tensor>> expected_gradients;
  /// A VJP case: the multiset VJP truth, computed when an any-order backend needs it.
  std::optional<reference::MultisetVjp> multiset_vjp;
  /// An einsum VJP: the same under the non-default profiles the any-order backends declared.
  std::vector<std::pair<PrecisionProfile, reference::MultisetVjp>> profiled_multiset_vjp;
  /// The multiset oracle of a float einsum, computed when an any-order backend needs it.
  std::optional<reference::MultisetEinsum> multiset;
  /// The multiset oracle of a float reduce, computed when an any-order backend needs it.
  std::optional<reference::MultisetReduce> multiset_reduce;
  /// The same two under the non-default precision profiles the any-order backends declared for
  /// the case's dtype (ORACLE §8), one per distinct profile; `multiset`/`multiset_reduce` hold the
  /// dtype's default profile's.
  std::vector<std::pair<PrecisionProfile, reference::MultisetEinsum>> profiled_multiset;
  std::vector<std::pair<PrecisionProfile, reference::MultisetReduce>> profiled_multiset_reduce;
  /// A forward float einsum: the profiles whose truths are certainly wanted (the concurrent
  /// any-order backends'; under RunOptions::storage_truth also the in-process ones' and the default
  /// one). The first einsum truth run_case needs is computed with all of them at once: the terms
  /// are walked and summed once, the bounds per profile.
  std::vector<PrecisionProfile> einsum_profiles;
  std::vector<BackendOutcome> backends;
  /// `expect` in the case disagrees with the reference's conclusion (a stale or wrong case file).
  std::optional<std::string> expect_failure;

  /// True when some backend failed or the case's `expect` does not hold.
  bool failed() const;
};

/// Runs the reference, then each backend; judges with the ordered oracle (ORACLE.md) for `ordered`
/// backends. A backend that throws is a `crash`, one that writes to its inputs `input-modified`.
/// A case over a harness limit runs on no backend (`skipped`). Judging happens outside the
/// boundary that catches backend exceptions: an exception in the oracle is a harness bug and aborts.
CaseOutcome run_case(const Case& c, std::span<Backend* const> backends, const RunOptions& options);

/// Ends every backend's work (Backend::finish) and charges to `c` the late faults that belong to
/// it: a backend that sent more after its complete answer to `c` (PROTOCOL A §3: exactly one
/// response) gets `crash`, "protocol violation after the complete answer: …", whatever its answer
/// was judged. For a command that runs `c` alone (`check`), so a late second response is a verdict
/// on the case that caused it. Returns the number of verdicts it changed.
int finish_and_charge_late_faults(CaseOutcome& outcome, std::span<Backend* const> backends, const Case& c);

/// The fused executor as a backend (ordered semantics).
std::unique_ptr<Backend> make_fused_backend(const RunOptions& options);

}  // namespace einfuzz
