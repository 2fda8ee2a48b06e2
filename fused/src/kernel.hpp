// The fused hot loops: one output chunk, width-W tiles along the last output loop, §6 order per lane.
#pragma once

#include <bit>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "einfuzz/core/scalar.hpp"
#include "half_arith.hpp"
#include "loop_nest.hpp"

namespace einfuzz::fused::detail {

/// How an operand moves between neighbouring lanes of a tile (its step along the tile axis).
enum class Lane : unsigned char {
  zero,  ///< step 0: every lane reads the same element (broadcast along the tile axis)
  unit,  ///< step 1: lanes read consecutive elements
  any,   ///< any other step, read as offset + lane * step
};

/// One output chunk: output loop 0 restricted to [begin, end).
template <class T>
struct ChunkArgs {
  const LoopNest* nest;     ///< the loops
  const T* const* inputs;   ///< n operand base pointers, source order
  T* output;                ///< output base pointer
  std::int64_t begin;       ///< first position of output loop 0
  std::int64_t end;         ///< one past the last position of output loop 0
  bool* nan_seen;           ///< set to whether the chunk wrote a NaN (whose payload execute repairs)
  /// False when execute proved that no product of a single-term contraction meets two NaN
  /// operands (may_pair_nans in einsum.cpp): its outputs' NaNs are then the reference's already.
  bool may_pair_nans = true;
};

template <class T>
using ChunkFn = void (*)(const ChunkArgs<T>&);

/// The kernel for `operands` operands whose tile-axis steps have `kinds`, at tile `width` 1, 4 or 8.
/// Defined below; instantiated once per dtype in kernel_<dtype>.cpp so they compile in parallel (f16
/// and bf16 as Rounded<11> and Rounded<8>).
template <class T>
ChunkFn<T> select_chunk_fn(int operands, const Lane* kinds, int width);

template <Lane K, class T>
inline T lane_load(const T* x, std::int64_t offset, std::int64_t lane_step, std::int64_t lane) noexcept {
  if constexpr (K == Lane::zero) {
    return x[offset];
  } else if constexpr (K == Lane::unit) {
    return x[offset + lane];
  } else {
    return x[offset + lane * lane_step];
  }
}

template <Lane K>
inline constexpr Lane kAnyLane = Lane::any;

/// A fixed operand count (sizeof...(K)) with compile-time lane kinds: the product unrolls and the
/// offsets live in registers.
template <Lane... K>
struct FixedOps {
  static constexpr int kCount = sizeof...(K);
  static constexpr bool kElementwiseRows = true;
  using Scalar = FixedOps<kAnyLane<K>...>;  // lane kinds are irrelevant for a single lane

  /// P for one lane: x_0 · x_1 · … left to right. P := 1 · x_0 is x_0 itself: 1 · x is exact for
  /// every integer and IEEE value (a signalling NaN is quieted by the next operation either way).
  template <class T>
  static T product(const T* const* x, const std::int64_t* off, const std::int64_t* lane_step,
                   std::int64_t lane) noexcept {
    return product_impl(x, off, lane_step, lane, std::make_index_sequence<kCount>{});
  }

  /// One pass of the innermost contraction loop from offsets `off`: every lane adds its own products.
  template <int W, class T>
  static void inner_pass(T* acc, const LoopNest&, const T* const* x, const std::int64_t* off,
                         const std::int64_t* lane_step, const std::int64_t* inner_step,
                         std::int64_t len, std::int64_t*) noexcept {
    // Local copies: the compiler cannot prove that `acc` does not alias an operand.
    T a[W];
    for (int l = 0; l < W; ++l) a[l] = acc[l];
    std::int64_t o[kCount];
    for (int k = 0; k < kCount; ++k) o[k] = off[k];
    for (std::int64_t t = 0; t < len; ++t) {
      for (int l = 0; l < W; ++l) a[l] = scalar_add_ieee(a[l], product(x, o, lane_step, l));
      for (int k = 0; k < kCount; ++k) o[k] += inner_step[k];
    }
    for (int l = 0; l < W; ++l) acc[l] = a[l];
  }

  /// The whole contraction as one flat loop: term c reads operand k at base[k] + table[c·n + k].
  template <int W, class T>
  static void table_pass(T* acc, const LoopNest&, const T* const* x, const std::int64_t* base,
                         const std::int64_t* lane_step, const std::int64_t* table, std::int64_t count) noexcept {
    T a[W];
    for (int l = 0; l < W; ++l) a[l] = acc[l];
    std::int64_t b[kCount];
    for (int k = 0; k < kCount; ++k) b[k] = base[k];
    for (std::int64_t c = 0; c < count; ++c, table += kCount) {
      std::int64_t o[kCount];
      for (int k = 0; k < kCount; ++k) o[k] = b[k] + table[k];
      for (int l = 0; l < W; ++l) a[l] = scalar_add_ieee(a[l], product(x, o, lane_step, l));
    }
    for (int l = 0; l < W; ++l) acc[l] = a[l];
  }

 private:
  template <class T, std::size_t... I>
  static T product_impl(const T* const* x, const std::int64_t* off, const std::int64_t* lane_step,
                        std::int64_t lane, std::index_sequence<I...>) noexcept {
    constexpr Lane kinds[] = {K...};
    T p{};
    ((p = I == 0 ? lane_load<kinds[I]>(x[I], off[I], lane_step[I], lane)
                 : scalar_mul_ieee(p, lane_load<kinds[I]>(x[I], off[I], lane_step[I], lane))),
     ...);
    return p;
  }
};

template <int W, class T>
inline void load_lanes(T* p, const T* base, std::int64_t lane_step) noexcept {
  if constexpr (W == 1) {
    p[0] = base[0];
  } else if (lane_step == 0) {
    const T v = base[0];
    for (int l = 0; l < W; ++l) p[l] = v;
  } else if (lane_step == 1) {
    for (int l = 0; l < W; ++l) p[l] = base[l];
  } else {
    for (int l = 0; l < W; ++l) p[l] = base[l * lane_step];
  }
}

template <int W, class T>
inline void mul_lanes(T* p, const T* base, std::int64_t lane_step) noexcept {
  if constexpr (W == 1) {
    p[0] = scalar_mul_ieee(p[0], base[0]);
  } else if (lane_step == 0) {
    const T v = base[0];
    for (int l = 0; l < W; ++l) p[l] = scalar_mul_ieee(p[l], v);
  } else if (lane_step == 1) {
    for (int l = 0; l < W; ++l) p[l] = scalar_mul_ieee(p[l], base[l]);
  } else {
    for (int l = 0; l < W; ++l) p[l] = scalar_mul_ieee(p[l], base[l * lane_step]);
  }
}

/// Any operand count with runtime steps: the fallback beyond three operands. The product of the
/// leading operands that do not move along the innermost loop (the prefix) is computed once per
/// pass — the same multiplications in the same order, so every P keeps its bits.
struct AnyOps {
  static constexpr int kCount = 0;
  static constexpr bool kElementwiseRows = false;
  using Scalar = AnyOps;

  template <int W, class T>
  static void inner_pass(T* acc, const LoopNest& nest, const T* const* x, const std::int64_t* off,
                         const std::int64_t* lane_step, const std::int64_t* inner_step,
                         std::int64_t len, std::int64_t* o) noexcept {
    const int n = nest.operands;
    const int h = nest.hoisted;
    T prefix[W];
    if (h > 0) {
      load_lanes<W>(prefix, x[0] + off[0], lane_step[0]);
      for (int k = 1; k < h; ++k) mul_lanes<W>(prefix, x[k] + off[k], lane_step[k]);
      // One or two operands left inside the loop: specialise on their lane kinds.
      const Args<T> args{prefix, x + h, off + h, lane_step + h, inner_step + h, len};
      if (n - h == 1) return dispatch_moving<W, T, 1>(acc, args);
      if (n - h == 2) return dispatch_moving<W, T, 2>(acc, args);
    }
    T a[W];
    for (int l = 0; l < W; ++l) a[l] = acc[l];
    for (int k = 0; k < n; ++k) o[k] = off[k];
    const int first = h > 0 ? h : 1;
    for (std::int64_t t = 0; t < len; ++t) {
      T p[W];
      if (h > 0) {
        for (int l = 0; l < W; ++l) p[l] = prefix[l];
      } else {
        load_lanes<W>(p, x[0] + o[0], lane_step[0]);
      }
      for (int k = first; k < n; ++k) mul_lanes<W>(p, x[k] + o[k], lane_step[k]);
      for (int l = 0; l < W; ++l) a[l] = scalar_add_ieee(a[l], p[l]);
      for (int k = h; k < n; ++k) o[k] += inner_step[k];
    }
    for (int l = 0; l < W; ++l) acc[l] = a[l];
  }

  /// The whole contraction as one flat loop: term c reads operand k at base[k] + table[c·n + k]. No
  /// hoisted prefix: every P is x_0 · x_1 · … again, the same multiplications in the same order.
  template <int W, class T>
  static void table_pass(T* acc, const LoopNest& nest, const T* const* x, const std::int64_t* base,
                         const std::int64_t* lane_step, const std::int64_t* table, std::int64_t count) noexcept {
    const int n = nest.operands;
    if constexpr (W > 1) {
      // Only the last operand moves along the tile (a chain's last factor): the lanes share the
      // product of the others. Computing it once per term is the same multiplications, in the same
      // order, for every lane.
      if (nest.lane_shared == n - 1) {
        if (lane_step[n - 1] == 1) return shared_table_pass<W, T, Lane::unit>(acc, n, x, base, lane_step, table, count);
        return shared_table_pass<W, T, Lane::any>(acc, n, x, base, lane_step, table, count);
      }
    }
    T a[W];
    for (int l = 0; l < W; ++l) a[l] = acc[l];
    for (std::int64_t c = 0; c < count; ++c, table += n) {
      T p[W];
      load_lanes<W>(p, x[0] + base[0] + table[0], lane_step[0]);
      for (int k = 1; k < n; ++k) mul_lanes<W>(p, x[k] + base[k] + table[k], lane_step[k]);
      for (int l = 0; l < W; ++l) a[l] = scalar_add_ieee(a[l], p[l]);
    }
    for (int l = 0; l < W; ++l) acc[l] = a[l];
  }

 private:
  /// table_pass when operands 0 .. n-2 read the same element in every lane and operand n-1 moves as K.
  template <int W, class T, Lane K>
  static void shared_table_pass(T* acc, int n, const T* const* x, const std::int64_t* base,
                                const std::int64_t* lane_step, const std::int64_t* table,
                                std::int64_t count) noexcept {
    const int last = n - 1;
    const T* moving = x[last] + base[last];
    const std::int64_t step = lane_step[last];
    T a[W];
    for (int l = 0; l < W; ++l) a[l] = acc[l];
    for (std::int64_t c = 0; c < count; ++c, table += n) {
      T shared = x[0][base[0] + table[0]];
      for (int k = 1; k < last; ++k) shared = scalar_mul_ieee(shared, x[k][base[k] + table[k]]);
      const T* row = moving + table[last];
      for (int l = 0; l < W; ++l) a[l] = scalar_add_ieee(a[l], scalar_mul_ieee(shared, lane_load<K>(row, 0, step, l)));
    }
    for (int l = 0; l < W; ++l) acc[l] = a[l];
  }

  /// The operands that move along the innermost loop, after the hoisted prefix.
  template <class T>
  struct Args {
    const T* prefix;                  ///< W lanes of the hoisted product
    const T* const* x;                ///< first moving operand
    const std::int64_t* off;          ///< its offset at the start of the pass
    const std::int64_t* lane_step;    ///< its step along the tile axis
    const std::int64_t* inner_step;   ///< its step along the innermost contraction loop
    std::int64_t len;                 ///< length of the innermost contraction loop
  };

  static Lane kind_of(std::int64_t lane_step) noexcept {
    return lane_step == 0 ? Lane::zero : lane_step == 1 ? Lane::unit : Lane::any;
  }

  template <int W, class T, int M, Lane... K>
  static void dispatch_moving(T* acc, const Args<T>& args) noexcept {
    if constexpr (sizeof...(K) == M) {
      moving_pass<W, T, K...>(acc, args, std::make_index_sequence<M>{});
    } else if constexpr (W == 1) {
      dispatch_moving<W, T, M, K..., Lane::any>(acc, args);  // one lane: kinds do not matter
    } else {
      switch (kind_of(args.lane_step[sizeof...(K)])) {
        case Lane::zero: return dispatch_moving<W, T, M, K..., Lane::zero>(acc, args);
        case Lane::unit: return dispatch_moving<W, T, M, K..., Lane::unit>(acc, args);
        case Lane::any: break;
      }
      dispatch_moving<W, T, M, K..., Lane::any>(acc, args);
    }
  }

  template <int W, class T, Lane... K, std::size_t... I>
  static void moving_pass(T* acc, const Args<T>& args, std::index_sequence<I...>) noexcept {
    constexpr int kM = sizeof...(K);
    constexpr Lane kinds[] = {K...};
    T a[W];
    T prefix[W];
    for (int l = 0; l < W; ++l) {
      a[l] = acc[l];
      prefix[l] = args.prefix[l];
    }
    const T* base[kM];
    std::int64_t o[kM];
    for (int i = 0; i < kM; ++i) {
      base[i] = args.x[i];
      o[i] = args.off[i];
    }
    for (std::int64_t t = 0; t < args.len; ++t) {
      for (int l = 0; l < W; ++l) {
        T p = prefix[l];
        ((p = scalar_mul_ieee(p, lane_load<kinds[I]>(base[I], o[I], args.lane_step[I], l))), ...);
        a[l] = scalar_add_ieee(a[l], p);
      }
      for (int i = 0; i < kM; ++i) o[i] += args.inner_step[i];
    }
    for (int l = 0; l < W; ++l) acc[l] = a[l];
  }
};

/// Per-chunk bookkeeping, O(rank + operands): one array, inline for small einsums (a chunk's set-up
/// is part of a small einsum's cost).
class Scratch {
 public:
  // Every part is written before it is read (the kernels set each odometer and offset first).
  explicit Scratch(const LoopNest& nest)
      : n_(static_cast<std::size_t>(nest.operands)),
        q_(nest.con_loops),
        buffer_(4 * n_ + q_ + nest.out_loops, Unfilled{}) {}
  std::int64_t* row() noexcept { return buffer_.data(); }  ///< operand offsets at the start of the current output row
  std::int64_t* tile() noexcept { return buffer_.data() + n_; }  ///< operand offsets at lane 0 of the current tile
  std::int64_t* off() noexcept { return buffer_.data() + 2 * n_; }  ///< operand offsets at the current outer contraction position
  std::int64_t* inner() noexcept { return buffer_.data() + 3 * n_; }  ///< operand offsets inside an inner pass (AnyOps)
  std::int64_t* con_index() noexcept { return buffer_.data() + 4 * n_; }  ///< odometer of the outer contraction loops
  std::int64_t* out_index() noexcept { return buffer_.data() + 4 * n_ + q_; }  ///< odometer of the outer output loops
  bool nan = false;  ///< some output written so far is NaN

 private:
  std::size_t n_, q_;
  SmallArray<std::int64_t, 80> buffer_;
};

/// 1 when `v` may be a NaN (its exponent is all ones: NaN or ±Inf), from its bits: integer
/// equality compares vectorise on baseline SSE2 where `v != v` reductions do not; an Inf costs only
/// a needless look in repair_nan_payloads.
template <class T>
inline std::uint32_t is_nan_bits(T v) noexcept {
  if constexpr (std::is_same_v<T, float>) {
    return (std::bit_cast<std::uint32_t>(v) & 0x7f800000u) == 0x7f800000u;
  } else if constexpr (std::is_same_v<T, double>) {
    // The high word holds the exponent: a 32-bit test (SSE2 has no 64-bit compare).
    const auto hi = static_cast<std::uint32_t>(std::bit_cast<std::uint64_t>(v) >> 32);
    return (hi & 0x7ff00000u) == 0x7ff00000u;
  } else if constexpr (is_rounded_v<T>) {
    return is_nan_bits(v.v);
  } else {
    return 0;
  }
}

/// Whether some of y[0 .. count) is a NaN: four vectors of 16 bytes per step, each pair tested in
/// one unordered compare (true where either is NaN) and ORed into a mask, so the test costs about
/// a load per 16 bytes.
template <class T>
bool any_nan_ieee(const T* y, std::int64_t count) noexcept {
  constexpr int kLanes = 16 / sizeof(T);
  using Vec [[gnu::vector_size(16)]] = T;
  using Mask = decltype(Vec{} != Vec{});
  const auto unordered = [](Vec a, Vec b) {
#if defined(__SSE2__)
    if constexpr (std::is_same_v<T, float>) {
      return reinterpret_cast<Mask>(_mm_cmpunord_ps(a, b));
    } else {
      return reinterpret_cast<Mask>(_mm_cmpunord_pd(a, b));
    }
#else
    return (a != a) | (b != b);
#endif
  };
  Mask m0{}, m1{};
  std::int64_t i = 0;
  for (; i + 4 * kLanes <= count; i += 4 * kLanes) {
    // Four named vectors: an array of them was kept on the stack (four dead stores per step).
    Vec v0, v1, v2, v3;
    std::memcpy(&v0, y + i, sizeof v0);
    std::memcpy(&v1, y + i + kLanes, sizeof v1);
    std::memcpy(&v2, y + i + 2 * kLanes, sizeof v2);
    std::memcpy(&v3, y + i + 3 * kLanes, sizeof v3);
    m0 |= unordered(v0, v1);
    m1 |= unordered(v2, v3);
  }
  const Mask m = m0 | m1;
  bool nan = false;
  for (int l = 0; l < kLanes; ++l) nan |= m[l] != 0;
  for (; i < count; ++i) nan |= y[i] != y[i];
  return nan;
}

/// Whether some of y[0 .. count) is a NaN (f16/bf16: or an infinity, as is_nan_bits).
template <class T>
bool any_nan(const T* y, std::int64_t count) noexcept {
  if constexpr (is_rounded_v<T>) {
    std::uint32_t nan = 0;
    for (std::int64_t i = 0; i < count; ++i) nan |= is_nan_bits(y[i]);
    return nan != 0;
  } else {
    return any_nan_ieee(y, count);
  }
}

/// Evaluates W consecutive outputs (lanes) starting at operand offsets `base`; each lane starts at
/// +0 and adds its own products in row-major contraction order (SEMANTICS §6, §9).
template <class T, int W, class Ops>
void run_tile(const LoopNest& nest, const T* const* x, const std::int64_t* base,
              const std::int64_t* lane_step, T* y, Scratch& scratch) noexcept {
  const int n = nest.operands;
  const std::size_t q = nest.con_loops;
  const std::int64_t inner_len = nest.con_len[q - 1];
  const std::int64_t* inner_step = nest.con_steps(q - 1);

  T acc[W];
  for (int l = 0; l < W; ++l) acc[l] = T{};  // S := +0 in every lane
  if (q == 1) {
    Ops::template inner_pass<W>(acc, nest, x, base, lane_step, inner_step, inner_len, scratch.inner());
  } else if (!nest.con_table.empty()) {
    const auto count = static_cast<std::int64_t>(nest.con_table.size()) / n;
    Ops::template table_pass<W>(acc, nest, x, base, lane_step, nest.con_table.data(), count);
  } else {
    std::int64_t* off = scratch.off();
    std::int64_t* index = scratch.con_index();
    for (int k = 0; k < n; ++k) off[k] = base[k];
    for (std::size_t j = 0; j + 1 < q; ++j) index[j] = 0;
    for (;;) {
      Ops::template inner_pass<W>(acc, nest, x, off, lane_step, inner_step, inner_len, scratch.inner());
      // Advance the odometer of the outer contraction loops (the last of them moves fastest).
      std::size_t j = q - 1;
      for (; j-- > 0;) {
        const std::int64_t* step = nest.con_steps(j);
        for (int k = 0; k < n; ++k) off[k] += step[k];
        if (++index[j] < nest.con_len[j]) break;
        index[j] = 0;
        for (int k = 0; k < n; ++k) off[k] -= nest.con_len[j] * step[k];
      }
      if (j == static_cast<std::size_t>(-1)) break;
    }
  }
  for (int l = 0; l < W; ++l) {
    y[l] = acc[l];
    scratch.nan |= acc[l] != acc[l];  // in registers: cheaper than a pass over the output
  }
}

/// One output row of a single-term contraction: every output is +0 + its product, one elementwise
/// loop without accumulators. Blocks of W outputs: all W read, then all W written, so the compiler
/// keeps a block in vector registers without proving that y does not alias an operand (no per-row
/// alias check for rows as short as a small einsum's). The NaN test is left to one pass over the
/// chunk's outputs (run_chunk_rows): ORing a block's NaN lanes into a mask here made GCC split the
/// block into scalar and vector parts (5-7x slower).
template <class T, int W, class Ops>
[[gnu::always_inline]] inline void elementwise_row(const T* const* x, const std::int64_t* row, std::int64_t len,
                                                   const std::int64_t* lane_step, T* y) noexcept {
  std::int64_t j = 0;
  for (; j + W <= len; j += W) {
    T v[W];
    for (int l = 0; l < W; ++l) v[l] = scalar_add_ieee(T{}, Ops::product(x, row, lane_step, j + l));
    for (int l = 0; l < W; ++l) y[j + l] = v[l];
  }
  for (; j < len; ++j) y[j] = scalar_add_ieee(T{}, Ops::product(x, row, lane_step, j));
}

/// `rows` rows of a single-term contraction over two output loops (the row loop, then the tile
/// axis), the first at offsets `first_row`, in one call: a small einsum's rows are short (16 outputs in the bench's diagonal),
/// and a call per row cost about as much as the row itself. The offsets live in registers.
template <class T, int W, class Ops>
[[gnu::noinline]] void elementwise_rows(const T* const* x, const std::int64_t* first_row, const std::int64_t* step,
                                        std::int64_t rows, std::int64_t len, const std::int64_t* lane_step, T* y,
                                        std::int64_t ystep) noexcept {
  std::int64_t row[Ops::kCount];
  for (int k = 0; k < Ops::kCount; ++k) row[k] = first_row[k];
  for (std::int64_t i = 0; i < rows; ++i, y += ystep) {
    elementwise_row<T, W, Ops>(x, row, len, lane_step, y);
    for (int k = 0; k < Ops::kCount; ++k) row[k] += step[k];
  }
}

/// One output row along the tile axis: full tiles of W lanes (then one 4-lane tile when W is 8 and
/// at least 4 outputs remain), the rest through the scalar path. Lanes never mix, so the grouping
/// cannot change a bit. A single-term contraction (Elementwise) needs no accumulators: the row is
/// one elementwise loop. Not inlined: run_rows calls it from three places, and one copy instead of
/// three took 40-50% off the kernels' compile time, for a call per row (docs/performance.md).
template <class T, int W, class Ops, bool Elementwise>
[[gnu::noinline]] void run_row(const LoopNest& nest, const T* const* x, const std::int64_t* row, std::int64_t len,
             const std::int64_t* lane_step, T* y, Scratch& scratch) noexcept {
  if constexpr (Elementwise) {
    elementwise_row<T, W, Ops>(x, row, len, lane_step, y);
    return;
  }
  const int n = nest.operands;
  std::int64_t* tile = scratch.tile();
  std::int64_t j = 0;
  if constexpr (W > 1) {
    for (; j + W <= len; j += W) {
      for (int k = 0; k < n; ++k) tile[k] = row[k] + j * lane_step[k];
      run_tile<T, W, Ops>(nest, x, tile, lane_step, y + j, scratch);
    }
  }
  if constexpr (W == 8) {
    if (j + 4 <= len) {
      for (int k = 0; k < n; ++k) tile[k] = row[k] + j * lane_step[k];
      run_tile<T, 4, Ops>(nest, x, tile, lane_step, y + j, scratch);
      j += 4;
    }
  }
  for (; j < len; ++j) {
    for (int k = 0; k < n; ++k) tile[k] = row[k] + j * lane_step[k];
    run_tile<T, 1, typename Ops::Scalar>(nest, x, tile, lane_step, y + j, scratch);
  }
}

/// Walks output loop 0 over [begin, end) and every other output loop in full, one row at a time.
/// Elementwise: every row is a single-term contraction (decided once per chunk, not per row).
template <class T, int W, class Ops, bool Elementwise>
[[gnu::always_inline]] inline void run_rows(const ChunkArgs<T>& args, Scratch& scratch) {
  const LoopNest& nest = *args.nest;
  // A fixed operand count is a constant, so the offset updates unroll.
  const auto n = static_cast<std::size_t>(Ops::kCount > 0 ? Ops::kCount : nest.operands);
  const std::size_t r = nest.out_loops;
  const std::int64_t* lane_step = nest.out_steps(r - 1);
  std::int64_t* row = scratch.row();
  for (std::size_t k = 0; k < n; ++k) row[k] = args.begin * nest.out_step[k];
  std::int64_t y = args.begin * nest.out_ystep[0];

  if (r == 1) {  // the tile axis is loop 0 itself
    run_row<T, W, Ops, Elementwise>(nest, args.inputs, row, args.end - args.begin, lane_step, args.output + y,
                       scratch);
    return;
  }
  const std::int64_t row_len = nest.out_len[r - 1];
  if (r == 2) {  // one loop of rows: no odometer (most small einsums)
    const std::int64_t* step = nest.out_steps(0);
    const std::int64_t ystep = nest.out_ystep[0];
    if constexpr (Elementwise && Ops::kCount <= 2) {  // three operands: a call per row (compile time)
      elementwise_rows<T, W, Ops>(args.inputs, row, step, args.end - args.begin, row_len, lane_step, args.output + y,
                                  ystep);
      return;
    }
    for (std::int64_t i = args.begin; i < args.end; ++i) {
      run_row<T, W, Ops, Elementwise>(nest, args.inputs, row, row_len, lane_step, args.output + y, scratch);
      for (std::size_t k = 0; k < n; ++k) row[k] += step[k];
      y += ystep;
    }
    return;
  }
  // Odometer over output loops 0 .. r-2 (loop 0 from begin to end); each position is one row.
  std::int64_t* index = scratch.out_index();
  index[0] = args.begin;
  for (std::size_t i = 1; i + 1 < r; ++i) index[i] = 0;
  for (;;) {
    run_row<T, W, Ops, Elementwise>(nest, args.inputs, row, row_len, lane_step, args.output + y, scratch);
    std::size_t i = r - 1;
    for (; i-- > 0;) {
      const std::int64_t* step = nest.out_steps(i);
      for (std::size_t k = 0; k < n; ++k) row[k] += step[k];
      y += nest.out_ystep[i];
      const std::int64_t stop = i == 0 ? args.end : nest.out_len[i];
      if (++index[i] < stop) break;
      if (i == 0) return;
      index[i] = 0;
      for (std::size_t k = 0; k < n; ++k) row[k] -= nest.out_len[i] * step[k];
      y -= nest.out_len[i] * nest.out_ystep[i];
    }
  }
}

/// Evaluates output loop 0 over [begin, end) and every other output loop in full.
template <class T, int W, class Ops>
void run_chunk_rows(const ChunkArgs<T>& args, Scratch& scratch) {
  const LoopNest& nest = *args.nest;
  const bool elementwise = nest.con_loops == 1 && nest.con_len[0] == 1;
  if constexpr (W > 1 && Ops::kElementwiseRows) {
    if (elementwise) {
      run_rows<T, W, Ops, true>(args, scratch);
    } else {
      run_rows<T, W, Ops, false>(args, scratch);
    }
  } else {
    run_rows<T, W, Ops, false>(args, scratch);
  }
  if constexpr (W > 1 && Ops::kElementwiseRows && (is_float_type_v<T> || is_rounded_v<T>)) {
    // One f32/f64 operand: every output is +0 + x, whose NaN (if any) is x's as scalar_add returns
    // it, so there is nothing to repair. With more operands a product of two NaNs may be either.
    // (f16/bf16 outputs are tested always: their repair re-evaluates in the 16-bit format.)
    if ((Ops::kCount > 1 || is_rounded_v<T>) && elementwise && args.may_pair_nans) {
      // The elementwise rows wrote without a NaN test: the chunk's outputs, a contiguous range of
      // y, are tested in one pass.
      const std::int64_t first = args.begin * nest.out_ystep[0];
      scratch.nan |= any_nan(args.output + first, (args.end - args.begin) * nest.out_ystep[0]);
    }
  }
}

/// The one output of a single fold (nest.single_fold): one inner pass of a single lane from
/// offsets 0, +0 then every term in order. Ops is a FixedOps (a fixed operand count).
template <class Ops, class T>
T single_fold_sum(const LoopNest& nest, const T* const* x) noexcept {
  const std::int64_t origin[Ops::kCount] = {};
  T acc[1] = {T{}};
  Ops::Scalar::template inner_pass<1>(acc, nest, x, origin, nest.out_steps(0), nest.con_steps(0), nest.con_len[0],
                                      nullptr);
  return acc[0];
}

/// run_chunk_rows, then reports whether the chunk wrote a NaN.
template <class T, int W, class Ops>
void run_chunk(const ChunkArgs<T>& args) {
  const LoopNest& nest = *args.nest;
  if constexpr (Ops::kCount > 0) {
    if (nest.single_fold) {
      // The whole einsum is one fold from offsets 0: no row, tile or scratch set-up (which cost
      // a small dot or trace more than its terms). execute folds f32, f64, i32 and i64 of up to
      // three operands itself (fold_once); this one folds f16 and bf16 (Rounded).
      const T sum = single_fold_sum<Ops>(nest, args.inputs);
      args.output[0] = sum;
      *args.nan_seen = sum != sum;
      return;
    }
  }
  Scratch scratch(nest);
  run_chunk_rows<T, W, Ops>(args, scratch);
  *args.nan_seen = scratch.nan;
}

/// The 8-lane kernel for N operands whose lane kinds are `kinds` (K: the kinds chosen so far).
template <class T, int W, int N, Lane... K>
ChunkFn<T> select_fixed(const Lane* kinds) {
  if constexpr (sizeof...(K) == N) {
    return &run_chunk<T, W, FixedOps<K...>>;
  } else {
    switch (kinds[sizeof...(K)]) {
      case Lane::zero: return select_fixed<T, W, N, K..., Lane::zero>(kinds);
      case Lane::unit: return select_fixed<T, W, N, K..., Lane::unit>(kinds);
      case Lane::any: break;
    }
    return select_fixed<T, W, N, K..., Lane::any>(kinds);
  }
}

template <class T, int W>
ChunkFn<T> select_width(int operands, const Lane* kinds) {
  switch (operands) {
    case 1: return select_fixed<T, W, 1>(kinds);
    case 2: return select_fixed<T, W, 2>(kinds);
    case 3: return select_fixed<T, W, 3>(kinds);
    default: return &run_chunk<T, W, AnyOps>;
  }
}

/// One lane kind for every operand: the kernels of a width that is a tile option only.
template <class T, int W>
ChunkFn<T> select_any_lanes(int operands) {
  switch (operands) {
    case 1: return &run_chunk<T, W, FixedOps<Lane::any>>;
    case 2: return &run_chunk<T, W, FixedOps<Lane::any, Lane::any>>;
    case 3: return &run_chunk<T, W, FixedOps<Lane::any, Lane::any, Lane::any>>;
    default: return &run_chunk<T, W, AnyOps>;
  }
}

/// Whether the 8-lane kernels of T are compiled for every combination of lane kinds (3^N of them for
/// N operands), or read every operand as `any` (the same bits: a lane kind changes only how an
/// offset is computed). f32 and f64 are the dtypes whose speed the benchmarks and the GEMM-class
/// paths are about; i32, i64, f16 and bf16 keep one 8-lane kernel per operand count, which cuts their
/// files' compile time by more than half (the sanitized fuzzers' build most: docs/performance.md).
template <class T>
inline constexpr bool kLaneKindKernels = std::is_same_v<T, float> || std::is_same_v<T, double>;

template <class T>
ChunkFn<T> select_chunk_fn(int operands, const Lane* kinds, int width) {
  if (width >= 8) {
    if constexpr (kLaneKindKernels<T>) {
      return select_width<T, 8>(operands, kinds);
    } else {
      return select_any_lanes<T, 8>(operands);
    }
  }
  // Tiles of 4 (--tile 4) read every operand as `any`: the same bits, with fewer kernels to
  // compile. The 8-lane kernels end a row with a 4-lane tile of their own lane kinds.
  if (width >= 4) return select_any_lanes<T, 4>(operands);
  // The scalar path reads one lane: lane kinds do not matter.
  return select_any_lanes<T, 1>(operands);
}

}  // namespace einfuzz::fused::detail
