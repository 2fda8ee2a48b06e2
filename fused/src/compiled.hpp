// What compile() derives from an EinsumPlan once so that execute() only loops: the LoopNest, whether
// it is a GEMM, the largest flat index each operand's plan reads, the lanes' kinds, and the kernels
// chosen so far.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "einfuzz/fused/einsum.hpp"
#include "gemm.hpp"
#include "kernel.hpp"
#include "loop_nest.hpp"

namespace einfuzz::fused::detail {

/// Built only for plans that evaluate something (a non-empty output and contraction).
struct CompiledLoops {
  explicit CompiledLoops(const EinsumPlan& plan);

  LoopNest nest;                       ///< the loops the kernels run
  bool is_gemm = false;                ///< the nest is a (batched) GEMM (match_gemm)
  GemmShape gemm;                      ///< its roles, when is_gemm
  std::vector<std::int64_t> last_read; ///< per operand: the largest flat index it reads; -1: overflows
  SmallArray<Lane, 16> lane_kinds;     ///< per operand: how it moves between the lanes of a tile
  /// The §9 policy gives one task whatever the core count (O[0] has one coordinate, or the work is
  /// below the parallel threshold): execute need not ask how many cores there are.
  bool serial_by_policy = false;

  /// The kernel select_chunk_fn<T> picks for these lane kinds at tile `width`, chosen on first use
  /// and kept (a small einsum's selection costs as much as its loops). Thread-safe: concurrent
  /// first uses store the same pointer.
  template <class T>
  ChunkFn<T> chunk_fn(int width) const noexcept {
    std::atomic<void (*)()>& slot = chunk_fns_[dtype_slot<T>() * 3 + width_slot(width)];
    void (*erased)() = slot.load(std::memory_order_relaxed);
    if (erased == nullptr) {
      erased = reinterpret_cast<void (*)()>(select_chunk_fn<T>(nest.operands, lane_kinds.data(), width));
      slot.store(erased, std::memory_order_relaxed);
    }
    return reinterpret_cast<ChunkFn<T>>(erased);
  }

 private:
  static int width_slot(int width) noexcept { return width >= 8 ? 2 : width >= 4 ? 1 : 0; }
  template <class T>
  static constexpr int dtype_slot() noexcept {
    if constexpr (std::is_same_v<T, float>) return 0;
    else if constexpr (std::is_same_v<T, double>) return 1;
    else if constexpr (std::is_same_v<T, std::int32_t>) return 2;
    else if constexpr (std::is_same_v<T, std::int64_t>) return 3;
    else if constexpr (std::is_same_v<T, Rounded<11>>) return 4;
    else return 5;  // Rounded<8>
  }
  mutable std::array<std::atomic<void (*)()>, 18> chunk_fns_{};  ///< [dtype * 3 + width]
};

}  // namespace einfuzz::fused::detail
