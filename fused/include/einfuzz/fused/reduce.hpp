// The fused reduce executor (SEMANTICS §8, §9, §13.5): per-elementary-axis strides, the input read
// in place, only the output allocated, contiguous chunks of output elements run in parallel.
#pragma once

#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/core/tensor.hpp"
#include "einfuzz/fused/einsum.hpp"

namespace einfuzz::fused {

/// Evaluates a checked reduce; bitwise equal to reference::evaluate_reduce. Each fibre is folded
/// sequentially in row-major order over the reduced axes; parallelism only splits the output into
/// contiguous chunks (options.threads / options.tasks; tile_width is ignored). The result has the
/// input's dtype. Empty outputs read nothing; empty fibres give sum +0, prod 1, any false, all true.
/// Precondition: `input` has the checked dtype and shape (else a harness bug: abort).
Tensor execute_reduce(const CheckedReduce& reduce, const Tensor& input, const ExecOptions& options = {});

}  // namespace einfuzz::fused
