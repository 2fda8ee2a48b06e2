// The ordered GEMM-class path (issue 15): packed panels, K blocks that reload the running sums, and
// a register-blocked micro-kernel per output tile, baseline SSE2 or runtime-dispatched AVX2.
#include "gemm.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#if defined(__x86_64__)
#include <immintrin.h>  // the AVX2 micro-kernel's broadcasts
#endif
#include <memory>
#include <type_traits>

namespace einfuzz::fused::detail {
namespace {

/// The arithmetic type of the kernel: integers wrap, so they run in the unsigned type (which may
/// alias the signed one).
template <class T>
using Arith = std::conditional_t<std::is_same_v<T, std::int32_t>, std::uint32_t,
                                 std::conditional_t<std::is_same_v<T, std::int64_t>, std::uint64_t, T>>;

/// GCC vector types (vector_size cannot apply to a dependent type): Bytes / sizeof(T) lanes of T.
template <class T, int Bytes>
struct VecOf;
#define EINFUZZ_GEMM_VEC(T, BYTES) \
  template <>                        \
  struct VecOf<T, BYTES> {           \
    typedef T type __attribute__((vector_size(BYTES))); \
  };
EINFUZZ_GEMM_VEC(float, 16)
EINFUZZ_GEMM_VEC(float, 32)
EINFUZZ_GEMM_VEC(double, 16)
EINFUZZ_GEMM_VEC(double, 32)
EINFUZZ_GEMM_VEC(std::uint32_t, 16)
EINFUZZ_GEMM_VEC(std::uint32_t, 32)
EINFUZZ_GEMM_VEC(std::uint64_t, 16)
EINFUZZ_GEMM_VEC(std::uint64_t, 32)
#undef EINFUZZ_GEMM_VEC

/// K block (terms added per pass over a tile) and how many M rows / N columns are packed at once.
constexpr std::int64_t kKC = 256;
template <class T>
constexpr std::int64_t kMC = 96;
template <class T>
constexpr std::int64_t kNC = sizeof(T) == 4 ? 256 : 128;

/// A per-thread packing buffer, grown once and then reused (execute allocates nothing else for it).
unsigned char* scratch_bytes(std::size_t bytes) {
  thread_local std::unique_ptr<unsigned char[]> buffer;
  thread_local std::size_t capacity = 0;
  if (capacity < bytes) {
    buffer.reset(new unsigned char[bytes + 64]);
    capacity = bytes;
  }
  auto p = reinterpret_cast<std::uintptr_t>(buffer.get());
  return reinterpret_cast<unsigned char*>((p + 63) & ~std::uintptr_t{63});
}

/// One GEMM over a batch position: C[m·ldc + n] += Σ_k A(m, k)·B(k, n) in k order, with
/// A(m, k) = a[m·sa + koff_a(k)] and B(k, n) = b[n·sb + koff_b(k)]; koff walks the contraction
/// loops row-major.
template <class U>
struct Problem {
  const U* a;
  std::int64_t sa;
  const U* b;
  std::int64_t sb;
  U* c;
  std::int64_t ldc;
  std::int64_t m;
  std::int64_t n;
};

/// The contraction loops, flattened: the offsets of both operands for k in [k0, k0 + kc).
struct KWalk {
  const LoopNest* nest;
  int a_op;
  int b_op;

  void offsets(std::int64_t k0, std::int64_t kc, std::int64_t* ka, std::int64_t* kb) const noexcept {
    const LoopNest& ln = *nest;
    const std::size_t q = ln.con_loops;
    SmallArray<std::int64_t, 16> index(q);  // inline up to 16 contraction loops
    std::int64_t* idx = index.data();
    // Decode k0 into the row-major odometer (last loop fastest).
    std::int64_t rest = k0, oa = 0, ob = 0;
    for (std::size_t j = q; j-- > 0;) {
      idx[j] = rest % ln.con_len[j];
      rest /= ln.con_len[j];
      oa += idx[j] * ln.con_steps(j)[a_op];
      ob += idx[j] * ln.con_steps(j)[b_op];
    }
    for (std::int64_t t = 0; t < kc; ++t) {
      ka[t] = oa;
      kb[t] = ob;
      for (std::size_t j = q; j-- > 0;) {
        const std::int64_t* step = ln.con_steps(j);
        oa += step[a_op];
        ob += step[b_op];
        if (++idx[j] < ln.con_len[j]) break;
        oa -= ln.con_len[j] * step[a_op];
        ob -= ln.con_len[j] * step[b_op];
        idx[j] = 0;
      }
    }
  }
};

}  // namespace

namespace baseline {
#include "gemm_micro.inc"
}  // namespace baseline

#if defined(__x86_64__) && defined(__GNUC__)
#define EINFUZZ_GEMM_AVX2 1
#pragma GCC push_options
#pragma GCC target("avx2")
// GCC's target pragma does not define __AVX__; clang ignores the pragma (its AVX intrinsics would not
// compile here), so the broadcast intrinsics are GCC's only.
#if !defined(__clang__)
#define EINFUZZ_GEMM_MICRO_AVX 1
#endif
namespace avx2 {
#include "gemm_micro.inc"
}  // namespace avx2
#undef EINFUZZ_GEMM_MICRO_AVX
#pragma GCC pop_options
#endif

namespace {

/// The micro-kernel shapes: 6 rows × 2 vectors, 12 accumulators (16 vector registers in all).
template <class U, bool Wide>
void gemm_dispatch(const Problem<U>& p, const KWalk& walk, std::int64_t k_total);

template <class U>
constexpr int kLanes128 = static_cast<int>(16 / sizeof(U));

template <>
void gemm_dispatch<float, false>(const Problem<float>& p, const KWalk& w, std::int64_t k) {
  baseline::gemm<float, baseline::Micro<float, 4, 6, 2>, 6>(p, w, k);
}
template <>
void gemm_dispatch<double, false>(const Problem<double>& p, const KWalk& w, std::int64_t k) {
  baseline::gemm<double, baseline::Micro<double, 2, 6, 2>, 6>(p, w, k);
}
template <>
void gemm_dispatch<std::uint32_t, false>(const Problem<std::uint32_t>& p, const KWalk& w, std::int64_t k) {
  baseline::gemm<std::uint32_t, baseline::Micro<std::uint32_t, 4, 6, 2>, 6>(p, w, k);
}
template <>
void gemm_dispatch<std::uint64_t, false>(const Problem<std::uint64_t>& p, const KWalk& w, std::int64_t k) {
  baseline::gemm<std::uint64_t, baseline::Micro<std::uint64_t, 2, 6, 2>, 6>(p, w, k);
}

#ifdef EINFUZZ_GEMM_AVX2
#pragma GCC push_options
#pragma GCC target("avx2")
__attribute__((noinline)) void gemm_avx2(const Problem<float>& p, const KWalk& w, std::int64_t k) {
  avx2::gemm<float, avx2::Micro<float, 8, 6, 2>, 6>(p, w, k);
}
__attribute__((noinline)) void gemm_avx2(const Problem<double>& p, const KWalk& w, std::int64_t k) {
  avx2::gemm<double, avx2::Micro<double, 4, 6, 2>, 6>(p, w, k);
}
__attribute__((noinline)) void gemm_avx2(const Problem<std::uint32_t>& p, const KWalk& w, std::int64_t k) {
  avx2::gemm<std::uint32_t, avx2::Micro<std::uint32_t, 8, 6, 2>, 6>(p, w, k);
}
__attribute__((noinline)) void gemm_avx2(const Problem<std::uint64_t>& p, const KWalk& w, std::int64_t k) {
  avx2::gemm<std::uint64_t, avx2::Micro<std::uint64_t, 4, 6, 2>, 6>(p, w, k);
}
#pragma GCC pop_options

bool has_avx2() noexcept {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}
#endif

template <class U>
void gemm_any(const Problem<U>& p, const KWalk& walk, std::int64_t k_total, bool simd) {
#ifdef EINFUZZ_GEMM_AVX2
  if (simd && has_avx2()) return gemm_avx2(p, walk, k_total);
#endif
  gemm_dispatch<U, false>(p, walk, k_total);
}

}  // namespace

/// M·N·K of one batch position from which the GEMM path pays off (bench_einsum: 8³ does not, 16³ does).
constexpr std::int64_t kMinGemmTerms = 2048;

bool match_gemm(const LoopNest& nest, GemmShape& shape) noexcept {
  if (nest.operands != 2 || nest.out_loops < 2) return false;
  const std::size_t n_loop = nest.out_loops - 1;
  const std::int64_t* sn = nest.out_steps(n_loop);
  if ((sn[0] == 0) == (sn[1] == 0)) return false;  // exactly one operand moves along N
  const int col = sn[0] != 0 ? 0 : 1;
  const int row = 1 - col;
  for (std::size_t i = n_loop; i-- > 0;) {
    const std::int64_t* s = nest.out_steps(i);
    if (s[col] == 0 && s[row] != 0) {
      // Below a few thousand terms per batch position, packing costs more than the loop nest spends.
      std::int64_t k = 1;
      for (std::size_t j = 0; j < nest.con_loops; ++j) k *= nest.con_len[j];
      if (nest.out_len[i] * nest.out_len[n_loop] * k < kMinGemmTerms) return false;
      shape = GemmShape{row, col, i};
      return true;
    }
  }
  return false;
}

template <class T>
void run_gemm_chunk(const GemmShape& shape, const ChunkArgs<T>& args, bool simd) {
  using U = Arith<T>;
  const LoopNest& nest = *args.nest;
  const std::size_t r = nest.out_loops;
  const std::size_t n_loop = r - 1;
  const int ra = shape.row_op;
  const int cb = shape.col_op;
  const U* xa = reinterpret_cast<const U*>(args.inputs[ra]);
  const U* xb = reinterpret_cast<const U*>(args.inputs[cb]);
  U* const y = reinterpret_cast<U*>(args.output);
  const KWalk walk{&nest, ra, cb};
  const std::int64_t k_total = [&] {
    std::int64_t k = 1;
    for (std::size_t j = 0; j < nest.con_loops; ++j) k *= nest.con_len[j];
    return k;
  }();

  // Batch odometer over every output loop but M and N; loop 0 runs over [begin, end) whichever it is.
  std::int64_t lo[8], hi[8], idx[8];
  SmallArray<std::int64_t, 8> lo_h(r), hi_h(r), idx_h(r);
  std::int64_t* lo_p = r <= 8 ? lo : lo_h.data();
  std::int64_t* hi_p = r <= 8 ? hi : hi_h.data();
  std::int64_t* ix = r <= 8 ? idx : idx_h.data();
  for (std::size_t i = 0; i < r; ++i) {
    lo_p[i] = i == 0 ? args.begin : 0;
    hi_p[i] = i == 0 ? args.end : nest.out_len[i];
  }
  const std::size_t m_loop = shape.m_loop;
  std::int64_t oa = 0, ob = 0, oy = 0;
  for (std::size_t i = 0; i < r; ++i) {
    ix[i] = (i == m_loop || i == n_loop) ? 0 : lo_p[i];
    oa += ix[i] * nest.out_steps(i)[ra];
    ob += ix[i] * nest.out_steps(i)[cb];
    oy += ix[i] * nest.out_ystep[i];
  }
  const std::int64_t m_lo = lo_p[m_loop];
  const std::int64_t sa = nest.out_steps(m_loop)[ra];
  for (;;) {
    const Problem<U> p{xa + oa + m_lo * sa, sa, xb + ob, nest.out_steps(n_loop)[cb],
                       y + oy + m_lo * nest.out_ystep[m_loop], nest.out_ystep[m_loop],
                       hi_p[m_loop] - m_lo, nest.out_len[n_loop]};
    if (p.m > 0) gemm_any<U>(p, walk, k_total, simd);
    // Next batch position (the last batch loop moves fastest).
    std::size_t i = n_loop;
    for (; i-- > 0;) {
      if (i == m_loop) continue;
      const std::int64_t* step = nest.out_steps(i);
      oa += step[ra];
      ob += step[cb];
      oy += nest.out_ystep[i];
      if (++ix[i] < hi_p[i]) break;
      oa -= (ix[i] - lo_p[i]) * step[ra];
      ob -= (ix[i] - lo_p[i]) * step[cb];
      oy -= (ix[i] - lo_p[i]) * nest.out_ystep[i];
      ix[i] = lo_p[i];
    }
    if (i == static_cast<std::size_t>(-1)) break;
  }

  if constexpr (is_float_type_v<T>) {
    // Whether the chunk wrote a NaN (execute then repairs those elements' payloads): its outputs
    // are one contiguous range, since loop 0 is outermost.
    const std::int64_t first = args.begin * nest.out_ystep[0];
    const std::int64_t last = args.end * nest.out_ystep[0];
    std::uint32_t nan = 0;
    for (std::int64_t o = first; o < last; ++o) nan |= is_nan_bits(args.output[o]);
    *args.nan_seen = nan != 0;
  } else {
    *args.nan_seen = false;
  }
}

template void run_gemm_chunk<float>(const GemmShape&, const ChunkArgs<float>&, bool);
template void run_gemm_chunk<double>(const GemmShape&, const ChunkArgs<double>&, bool);
template void run_gemm_chunk<std::int32_t>(const GemmShape&, const ChunkArgs<std::int32_t>&, bool);
template void run_gemm_chunk<std::int64_t>(const GemmShape&, const ChunkArgs<std::int64_t>&, bool);

}  // namespace einfuzz::fused::detail
