// The one routine of the differential targets, in the manner of simdjson's
// fuzz/fuzz_implementations.cpp: every implementation runs on the case, all reject or none does, no
// verdict fails; plus the libFuzzer entry points they all define the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>

#include "einfuzz/core/check_case.hpp"
#include "einfuzz/harness/run.hpp"
#include "fuzz_input.hpp"

namespace einfuzz::fuzz {

/// FNV-1a of the input bytes: the same input always gives the shuffle backend the same choices.
std::uint64_t input_hash(std::span<const std::uint8_t> data) noexcept;

/// fail() with the backend, the verdict label, its detail and first element, and the case, when
/// some backend of `outcome` has a failing verdict (ORACLE.md §6).
void require_no_failure(const CaseOutcome& outcome, const Case& c);

/// What a differential target adds to the shared routine.
struct DifferentialChecks {
  /// True for a failing backend verdict that is a recorded divergence (xtensor's min/max fold);
  /// such outcomes are dropped before require_no_failure. Empty: none is.
  std::function<bool(const BackendOutcome&)> known_divergence;
  /// Also require the multiset oracle to admit the ordered reference (float einsum; float reduce
  /// sum, mean, prod): the targets that judge the reference itself.
  bool reference_admitted = true;
};

/// The shared routine: skips an einsum whose reference work (output × contraction × (operands + 1))
/// exceeds 2^16 so that a target keeps thousands of executions per second; otherwise runs
/// `backends` through run_case, requires that run_case and check_case agree on rejection, that no
/// backend gets a failing verdict (known divergences aside) and, when asked, that the multiset
/// oracle admits the ordered reference. Any violation is fail(): a finding, with the case.
void run_differential(const Case& c, std::span<Backend* const> backends, const RunOptions& options,
                      const DifferentialChecks& checks = {});

/// fuzz_einsum_diff and fuzz_reduce_diff: decodes `data` as `op` (an undecodable input is skipped)
/// and runs it on the backends differential_setup names, built the CLI's way (make_own_backend: the
/// registry's own rows), so that einfuzz_artifact_to_case's command reproduces the verdicts.
/// Returns 0 (libFuzzer's "keep").
int run_builtin_differential(std::span<const std::uint8_t> data, OpChoice op);

/// fuzz_vjp_diff's input: decode_case(data, any) made a VJP case, its cotangent of the forward
/// output's shape (rank 0 when the forward case is rejected) read from the bytes after the inputs'
/// values (little-endian, the dtype's width), continuing with 1, 2, 3, 1, … when they run out.
/// nullopt as decode_case, or when the cotangent would exceed kMaxFuzzElements.
std::optional<Decoded> decode_vjp_case(std::span<const std::uint8_t> data);

/// fuzz_vjp_diff: decode_vjp_case, then run_differential on differential_setup's backends (the
/// reference's ordered VJP always; fused and shuffle judged once they answer VJP cases, else
/// `unsupported`). `op` is OpChoice::any (the target macro passes it). Returns 0.
int run_vjp_differential(std::span<const std::uint8_t> data, OpChoice op = OpChoice::any);

/// The value-aware mutation of a differential target's input (ieee_mutator.hpp), falling back to
/// libFuzzer's `fallback` (LLVMFuzzerMutate) when the input has no value bytes to mutate.
std::size_t mutate_input(std::uint8_t* data, std::size_t size, std::size_t max_size, unsigned seed, OpChoice op,
                         std::size_t (*fallback)(std::uint8_t*, std::size_t, std::size_t));

}  // namespace einfuzz::fuzz

/// Defines the libFuzzer entry points of a differential target whose inputs decode as `op`:
/// LLVMFuzzerTestOneInput returns `run(std::span<const std::uint8_t>, op)` after dropping the
/// checkers' memos (release_check_memos: an input frees what it allocated), and under libFuzzer
/// LLVMFuzzerCustomMutator mutates the input's values. A macro for the reason libprotobuf-mutator's
/// DEFINE_PROTO_FUZZER is one: the extern "C" names must be defined in each target's own object.
#ifdef EINFUZZ_LIBFUZZER
#define EINFUZZ_DIFFERENTIAL_MUTATOR(op)                                                                  \
  extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);   \
  extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size, \
                                                 unsigned int seed) {                                     \
    return einfuzz::fuzz::mutate_input(data, size, max_size, seed, op, LLVMFuzzerMutate);                \
  }
#else
#define EINFUZZ_DIFFERENTIAL_MUTATOR(op)
#endif
#define EINFUZZ_DIFFERENTIAL_TARGET(run, op)                                           \
  extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) { \
    const int rc = run({data, size}, op);                                             \
    einfuzz::release_check_memos();                                                   \
    return rc;                                                                        \
  }                                                                                   \
  EINFUZZ_DIFFERENTIAL_MUTATOR(op)
