// The fused einsum executor (SEMANTICS §7, §9): stride plans compiled once, operands read in place,
// only the output allocated, width-4/8 tiles along the last output axis, parallel output chunks.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/tensor.hpp"

namespace einfuzz::fused {

/// One entry of TorchLean's `inputFlatIndexPlan` (SEMANTICS §7): a non-singleton physical dimension.
struct PlanTriple {
  bool from_output;      ///< the dimension's label is an output axis (else a contracted axis)
  int position;          ///< index into O (from_output) or into C
  std::int64_t stride;   ///< product of all later physical lengths of this operand
};

/// The compiled plan of one operand.
struct OperandPlan {
  std::vector<PlanTriple> triples;            ///< §7, in physical dimension order
  std::vector<std::int64_t> output_strides;   ///< per output axis: sum of its triples' strides (diagonals add)
  std::vector<std::int64_t> contract_strides; ///< per contracted axis: sum of its triples' strides
};

namespace detail {
struct CompiledLoops;  // the loops, kernel choice and read bounds compile() derives from the plan
}  // namespace detail

/// Everything `execute` needs; compiled once per checked einsum, independent of values.
struct EinsumPlan {
  std::vector<OperandPlan> operands;          ///< in source order
  Shape output_shape;                         ///< O lengths
  Shape contraction_shape;                    ///< C lengths, C[0] outermost
  std::int64_t output_size = 1;               ///< elements of the output
  std::int64_t contraction_size = 1;          ///< terms per output element (0: empty contraction)
  /// What `compile` derived from the fields above, so that `execute` only loops (plan reuse). Shared by
  /// copies; a plan built field by field (or edited after compile) has none and `execute` derives it
  /// per call, with the same bits.
  std::shared_ptr<const detail::CompiledLoops> compiled;
};

/// Execution knobs; none of them may change a single output bit.
struct ExecOptions {
  unsigned threads = 0;  ///< 0: hardware concurrency (the §9 heuristic still picks 1 for small work)
  /// 1 (scalar only), 4 or 8 lanes along the last output axis (others: the next lower, at least 1).
  /// Only 8 has kernels specialised on how each operand moves between lanes (fused/src/kernel.hpp);
  /// 4 is a knob for tests and fuzzing, whose tiles read every operand by its step.
  int tile_width = 8;
  /// 0: the §9 task-count policy; else exactly min(tasks, outer, threads) output chunks (lets tests
  /// exercise chunk boundaries on small inputs).
  unsigned tasks = 0;
  /// true: kernels may use the SIMD extensions the CPU reports at run time (AVX2, never FMA); false:
  /// the baseline (SSE2) kernels only. The same bits either way (tests compare them; benches time them).
  bool simd_dispatch = true;
};

/// Compiles the per-operand stride plans of §7.
EinsumPlan compile(const CheckedEinsum& einsum);

/// Evaluates the plan in the exact order of SEMANTICS §6. Preconditions (checked by the caller):
/// inputs match the checked shapes and share one numeric dtype (f16, bf16, f32, f64, i32, i64); a
/// violation that would read out of bounds or mix dtypes prints and aborts (a harness bug). Empty
/// outputs and empty contractions never read an operand; the result is bitwise equal to the
/// reference (f16/bf16: every + and · rounded to the format, ORACLE §8).
Tensor execute(const EinsumPlan& plan, std::span<const Tensor> inputs, const ExecOptions& options = {});

/// How many contiguous chunks of the first output axis `execute(plan, …, options)` runs (each on its
/// own thread when there are several): 0 when it evaluates nothing (an empty output or contraction),
/// 1 for a rank-0 output or O[0] of length 1, else `tasks` capped by O[0] and the threads, or the
/// §9 policy when `tasks` is 0.
unsigned chunk_count(const EinsumPlan& plan, const ExecOptions& options) noexcept;

/// The §9 task-count policy: 1 task below 1,000,000 units of work, else min(outer, 4 + log2(work/1e6)),
/// capped by `max_threads`.
unsigned task_count(std::int64_t outer, std::int64_t work, unsigned max_threads) noexcept;

}  // namespace einfuzz::fused
