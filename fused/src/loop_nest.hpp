// The loops the fused kernels run, derived from an EinsumPlan by index arithmetic only (SEMANTICS §9).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "einfuzz/fused/einsum.hpp"

namespace einfuzz::fused::detail {

/// Tag: a SmallArray whose elements the caller writes before reading them.
struct Unfilled {};

/// A runtime-sized array kept inline up to N elements, so the bookkeeping of a small einsum costs
/// no allocation (only the output is allocated); larger ranks or operand counts use the heap.
template <class T, std::size_t N>
class SmallArray {
 public:
  SmallArray() = default;
  explicit SmallArray(std::size_t size, T fill = T{}) { assign(size, fill); }
  /// `size` elements that the caller writes before it reads them: no fill (a fill of a few
  /// elements costs a `rep stos` or memset call, more than a small einsum's loops).
  SmallArray(std::size_t size, Unfilled) { resize_unfilled(size); }
  SmallArray(const SmallArray&) = delete;  // holds no pointers into itself, but copies are never needed
  SmallArray& operator=(const SmallArray&) = delete;

  /// Sets the size and fills every element with `fill`.
  void assign(std::size_t size, T fill) {
    size_ = size;
    if (size > N) {
      heap_.assign(size, fill);
    } else {
      std::fill_n(inline_.begin(), size, fill);
    }
  }
  /// Sets the size; inline elements keep whatever they held (the heap, when size > N, is zeroed).
  void resize_unfilled(std::size_t size) {
    size_ = size;
    if (size > N) heap_.resize(size);
  }
  std::size_t size() const noexcept { return size_; }
  T* data() noexcept { return size_ > N ? heap_.data() : inline_.data(); }
  const T* data() const noexcept { return size_ > N ? heap_.data() : inline_.data(); }
  T& operator[](std::size_t i) noexcept { return data()[i]; }
  const T& operator[](std::size_t i) const noexcept { return data()[i]; }

 private:
  std::array<T, N> inline_;  // only the first size_ elements are ever written or read
  std::vector<T> heap_;
  std::size_t size_ = 0;
};

/// Output and contraction loops after dropping length-1 axes and merging adjacent axes that every
/// operand (and the output) walks contiguously. Merging keeps the row-major enumeration of both
/// spaces, so every output keeps its §6 order. Built only for non-empty outputs and contractions.
struct LoopNest {
  /// Precondition: plan.output_size > 0 and plan.contraction_size > 0.
  explicit LoopNest(const EinsumPlan& plan);

  int operands = 0;                     ///< n, the operand count
  std::size_t out_loops = 0;            ///< output loops in use (>= 1); the last is the tile axis
  SmallArray<std::int64_t, 8> out_len;  ///< output loop lengths, outermost first
  SmallArray<std::int64_t, 8> out_ystep;  ///< output offset step per output loop (the last is 1)
  SmallArray<std::int64_t, 64> out_step;  ///< [loop * n + k]: operand k's step along output loop `loop`
  std::int64_t outer_unit = 1;          ///< positions of output loop 0 per coordinate of O[0] (when L(O[0]) >= 2)
  std::size_t con_loops = 0;            ///< contraction loops in use (>= 1); the last is innermost
  SmallArray<std::int64_t, 8> con_len;  ///< contraction loop lengths, C[0] side first
  SmallArray<std::int64_t, 64> con_step;  ///< [loop * n + k]: operand k's step along contraction loop `loop`
  int hoisted = 0;  ///< leading operands that do not move along the innermost contraction loop (< n)
  int lane_shared = 0;  ///< leading operands that do not move along the tile (last output) loop (< n)
  /// One output element and one contraction loop (a dot, a trace, a full sum): the einsum is a
  /// single §6 fold.
  bool single_fold = false;
  /// Small contractions of several loops (at most kMaxConTable entries): [c * n + k] is operand k's
  /// offset at flat contraction index c, row-major, so a tile walks C as one flat loop (§9) instead
  /// of an odometer whose passes are a few terms long. Empty otherwise.
  std::vector<std::int64_t> con_table;
  static constexpr std::size_t kMaxConTable = 1024;  ///< 8 KiB of offsets: stays in L1 beside the operands

  const std::int64_t* out_steps(std::size_t loop) const noexcept {
    return out_step.data() + loop * static_cast<std::size_t>(operands);
  }
  const std::int64_t* con_steps(std::size_t loop) const noexcept {
    return con_step.data() + loop * static_cast<std::size_t>(operands);
  }
};

}  // namespace einfuzz::fused::detail
