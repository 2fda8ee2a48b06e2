// The fused executor's ordered VJPs (SEMANTICS §13.8): per einsum operand a stride plan compiled
// once, then loops only; reduce VJPs walking the forward reduce's stride plan. Bit for bit what
// reference::vjp_einsum / reference::vjp_reduce produce.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/core/tensor.hpp"
#include "einfuzz/fused/einsum.hpp"

namespace einfuzz::fused {

/// One loop of an einsum VJP plan: a global axis (or, for free loops, several adjacent global axes
/// merged because every stream walks them as one progression).
struct VjpLoop {
  std::int64_t length = 1;              ///< trip count
  std::int64_t target_stride = 0;       ///< step in operand m (and its cotangent); 0 on free loops
  std::vector<std::int64_t> strides;    ///< per stream: the other operands in source order, then g
};

/// The compiled VJP of one einsum operand m; independent of values and dtype.
struct EinsumVjpPlan {
  std::size_t operand = 0;              ///< m
  std::vector<std::size_t> others;      ///< the streams' operands: every operand but m, in source order
  Shape target_shape;                   ///< operand m's physical shape (the result's shape)
  Shape output_shape;                   ///< the cotangent g's shape
  /// Global axes operand m holds in a dimension of length > 1, in global order: each coordinate of
  /// them names one element of m (a repeated label adds its strides: only the diagonal is reached).
  std::vector<VjpLoop> bound;
  /// The remaining global axes of length > 1 (m's size-1 broadcast dims, other operands' axes,
  /// omitted ellipsis slots), in global order, outermost first, adjacent ones merged when possible.
  std::vector<VjpLoop> free;
  bool empty = false;                   ///< some global axis has length 0: no assignment, all +0
};

/// Compiles operand m's VJP plan. Precondition: m < einsum.operands.size() (else a harness bug).
EinsumVjpPlan compile_vjp(const CheckedEinsum& einsum, std::size_t m);

/// Operand m's cotangent: element p is S := +0, then S := S + g[out(a)] · P for every global
/// assignment a reaching p in row-major order of the global axes, P := ((1 · x_q0) · x_q1) · … over
/// the other operands in source order. Preconditions: inputs and g have the checked shapes and one
/// floating dtype (f32/f64); a violation is a harness bug (abort). Contiguous chunks of m's reached
/// elements may run on threads (options.threads / options.tasks as for the forward einsum, the §9
/// policy over elements × terms; tile_width is ignored): no chunking changes a bit.
Tensor execute_vjp(const EinsumVjpPlan& plan, std::span<const Tensor> inputs, const Tensor& cotangent,
                   const ExecOptions& options = {});

/// Every operand's cotangent (compile_vjp + execute_vjp per operand); bitwise equal to
/// reference::vjp_einsum.
std::vector<Tensor> vjp_einsum(const CheckedEinsum& einsum, std::span<const Tensor> inputs, const Tensor& cotangent,
                               const ExecOptions& options = {});

/// The input's cotangent of a checked float reduce of a differentiable kind (sum, mean, prod, min,
/// max), walking the forward ReducePlan's loops; bitwise equal to reference::vjp_reduce. min/max
/// take their tie sets against fused's own forward result (bitwise the reference's).
/// Preconditions as above; any/all are a harness bug (the checker says notDifferentiable first).
Tensor vjp_reduce(const CheckedReduce& reduce, const Tensor& input, const Tensor& cotangent,
                  const ExecOptions& options = {});

}  // namespace einfuzz::fused
