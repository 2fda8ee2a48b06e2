// The fused reduce executor (SEMANTICS §8, §9, §13.5): a stride plan compiled once per checked
// reduce, then executed on any input of that shape — the input read in place, only the output
// allocated, contiguous chunks of output elements run in parallel.
#pragma once

#include <cstdint>
#include <vector>

#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/core/tensor.hpp"
#include "einfuzz/fused/einsum.hpp"

namespace einfuzz::fused {

/// One loop of a reduce stride plan.
struct ReduceLoop {
  std::int64_t length;  ///< trip count (>= 2 after simplification)
  std::int64_t stride;  ///< input elements between consecutive iterations
};

/// Everything `execute` needs to reduce one input; compiled once per checked reduce, independent of
/// values (HPTT's plan-then-execute shape, like EinsumPlan).
struct ReducePlan {
  Reduction kind = Reduction::sum;     ///< the §8.3 fold
  DType dtype = DType::f64;            ///< of the input and the result
  Shape input_shape;                   ///< the checked input shape (execute's precondition)
  Shape output_shape;                  ///< the result's shape
  std::vector<ReduceLoop> output_loops;  ///< output elementary axes, row-major (last fastest); empty when nothing is read
  std::vector<ReduceLoop> fibre_loops;   ///< reduced axes, row-major (last fastest); empty when nothing is read
  std::int64_t output_size = 0;        ///< elements of the output (0: nothing is read)
  std::int64_t fibre_size = 0;         ///< elements of each fibre (0: the identity, nothing is read)
  std::int64_t max_offset = 0;         ///< largest input offset the loops reach (0 when nothing is read)
};

/// Compiles the stride plan of a checked reduce: per-elementary-axis strides of the row-major
/// input, length-1 loops dropped, loops that walk one progression merged (same offsets, same folds).
/// An empty output or empty fibres give a plan without loops (its strides could overflow).
ReducePlan compile(const CheckedReduce& reduce);

/// Evaluates the plan on `input`; bitwise equal to reference::evaluate_reduce. Each fibre is folded
/// sequentially in row-major order over the reduced axes; parallelism only splits the output into
/// contiguous chunks (options.threads / options.tasks; tile_width is ignored). Empty outputs read
/// nothing; empty fibres give sum +0, prod 1, any false, all true. Precondition: `input` has the
/// plan's dtype and input shape (else a harness bug: abort).
Tensor execute(const ReducePlan& plan, const Tensor& input, const ExecOptions& options = {});

/// compile + execute in one call, for callers that reduce one input per checked reduce.
Tensor execute_reduce(const CheckedReduce& reduce, const Tensor& input, const ExecOptions& options = {});

}  // namespace einfuzz::fused
