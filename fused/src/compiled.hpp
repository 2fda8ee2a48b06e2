// What compile() derives from an EinsumPlan once so that execute() only loops: the LoopNest, whether
// it is a GEMM, and the largest flat index each operand's plan reads.
#pragma once

#include <cstdint>
#include <vector>

#include "einfuzz/fused/einsum.hpp"
#include "gemm.hpp"
#include "loop_nest.hpp"

namespace einfuzz::fused::detail {

/// Built only for plans that evaluate something (a non-empty output and contraction).
struct CompiledLoops {
  explicit CompiledLoops(const EinsumPlan& plan);

  LoopNest nest;                       ///< the loops the kernels run
  bool is_gemm = false;                ///< the nest is a (batched) GEMM (match_gemm)
  GemmShape gemm;                      ///< its roles, when is_gemm
  std::vector<std::int64_t> last_read; ///< per operand: the largest flat index it reads; -1: overflows
};

}  // namespace einfuzz::fused::detail
