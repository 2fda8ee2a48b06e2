// The ordered GEMM-class path: recognising a (batched) two-operand contraction in a LoopNest, and
// running one output chunk of it through packed panels and a register-blocked micro-kernel.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernel.hpp"
#include "loop_nest.hpp"

namespace einfuzz::fused::detail {

/// How a two-operand LoopNest is a (batched) GEMM: the last output loop is N (only the column
/// operand moves along it), one earlier output loop is M (only the row operand moves along it), the
/// other output loops are batch loops, and the whole contraction, flattened row-major, is K.
struct GemmShape {
  int row_op = 0;          ///< the operand read along M (its elements are broadcast across a tile row)
  int col_op = 1;          ///< the operand read along N
  std::size_t m_loop = 0;  ///< the output loop that is M (the N loop is the last one)
};

/// True (filling `shape`) when `nest` is a (batched) GEMM in the sense of GemmShape.
bool match_gemm(const LoopNest& nest, GemmShape& shape) noexcept;

/// Evaluates output loop 0 over [args.begin, args.end) with the GEMM kernel. Every output element
/// is S := +0, then S := S + x_0·x_1 over K in row-major order; between K blocks the running sum
/// is stored in the output and loaded again (exact). `simd` allows the runtime-dispatched AVX2
/// micro-kernel (no FMA: the same bits as the baseline one). Defined for float, double, int32, int64.
template <class T>
void run_gemm_chunk(const GemmShape& shape, const ChunkArgs<T>& args, bool simd);

}  // namespace einfuzz::fused::detail
