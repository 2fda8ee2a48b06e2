// Profile detection (`einfuzz profile`, ORACLE §8): cases built to separate precision profiles run
// through one backend, each result judged under every candidate profile; the most precise profile
// every result satisfied is compared with the one the backend declares.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "einfuzz/backends/backend.hpp"
#include "einfuzz/core/precision.hpp"
#include "einfuzz/core/precision_text.hpp"
#include "einfuzz/harness/run.hpp"
#include "einfuzz/harness/verdict.hpp"

namespace einfuzz {

/// One case of the battery.
struct ProfileProbe {
  std::string name;       ///< "<series>/<feed>", e.g. "ones/outer-sum"
  std::string separates;  ///< what its series separates, in words
  Case c;                 ///< a valid case (`expect` acceptance), values exact in its dtype
};

/// The candidate profiles of a float `dtype`, the most precise first: round_inputs none before tf32
/// (tf32 for f32 only), and within each accumulate f64, f32, then the dtype (only formats at least
/// as wide as the dtype). f64 has one candidate, its storage profile.
std::vector<PrecisionProfile> candidate_profiles(DType dtype);

/// The battery for a float `dtype`: long sums of ones (f16 saturates at 2048, bf16 at 256 in the
/// storage type), 2^p followed by ones, cancellation series 2^e + x − 2^e with x a half-ulp of 2^e
/// in each narrower candidate accumulator, half-ulp ties 1 + 2^-p + …, and for f32 TF32-sensitive
/// products ((1 + 2^-12)² and (1 + 2^-11)·1 summed). Each series is fed as an einsum sum, an
/// outer-axis sum, a dot product and a matmul, and (not the product series) as reduce sums over
/// the inner and the outer axis and an outer-axis mean. Deterministic; empty for non-float dtypes.
std::vector<ProfileProbe> profile_probes(DType dtype);

/// The first probe whose result breaks one profile's bound.
struct ProfileExclusion {
  PrecisionProfile profile;
  std::string probe;
  Case c;
  Verdict verdict;  ///< the any-order judge's verdict under `profile` (a failure)
};

/// A probe the backend gave no result to judge: unsupported (not a finding), or a fault, a
/// rejection of the valid case, a result of another shape or dtype (findings).
struct ProbeProblem {
  std::string probe;
  Case c;
  Verdict verdict;
};

/// What detection found for one dtype.
struct DtypeProfileReport {
  DType dtype = DType::f32;
  bool declared_dtype = true;               ///< the backend declares the dtype (else nothing ran)
  PrecisionProfile declared;                ///< Capabilities::profile(dtype)
  std::optional<PrecisionProfile> detected; ///< the most precise candidate every judged result satisfied
  std::vector<PrecisionProfile> satisfied;  ///< every candidate satisfied, in candidate order
  /// Per excluded candidate (candidate order), then the declared profile when it is not a
  /// candidate and is excluded: the first probe that excludes it.
  std::vector<ProfileExclusion> excluded;
  std::vector<ProbeProblem> problems;       ///< probes without a result to judge
  std::size_t judged = 0;                   ///< probes whose result was judged
  bool declared_holds = true;               ///< no judged result breaks the declared profile's bound

  /// True when a probe failed other than unsupported (a fault, a rejection, a wrong shape).
  bool faulted() const;
  /// A finding: the declared profile is broken, detection differs from the declaration, or a
  /// probe faulted. Never for a dtype the backend does not declare.
  bool finding() const;
};

/// Runs `probes` through `backend` (each in its own copy, exceptions and writes to the inputs
/// caught) and judges every result with reference::multiset_einsum / multiset_reduce under each
/// candidate profile of `dtype` and the declared one. A dtype the backend does not declare runs
/// nothing (`declared_dtype` false).
DtypeProfileReport detect_profile(Backend& backend, DType dtype, const std::vector<ProfileProbe>& probes,
                                  const RunOptions& options);

}  // namespace einfuzz
