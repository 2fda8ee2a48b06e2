// The fused GEMM-class path (issue 15) equals the reference bit for bit at every block and tile
// boundary: M, N, K around the micro-tile and cache-block sizes, K = 0 and 1, M or N = 1, empty
// axes, batched, transposed and broadcast operands, NaN/Inf/−0/subnormal values, both ISA paths.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/tensor.hpp"
#include "einfuzz/fused/einsum.hpp"
#include "einfuzz/reference/einsum.hpp"
#include "support/compare.hpp"
#include "support/fused_support.hpp"

namespace einfuzz {
namespace {

using namespace fused_test;

/// Lengths next to every block size of the GEMM path: micro-tile rows (6) and columns (4, 8, 16
/// lanes × 2), the M block (96), the N blocks (128, 256) and the K block (256), plus 0 and 1.
const std::vector<std::int64_t> kBoundaries{0,  1,  2,  3,  4,  5,  6,  7,  8,  9,   15,  16,  17,  31,
                                            32, 33, 95, 96, 97, 127, 128, 129, 255, 256, 257, 513};

/// One GEMM-class einsum: a pattern whose operands are built from the lengths of m, n, k (and a
/// batch z); `broadcast` makes one operand's batch axis length 1.
struct GemmForm {
  const char* pattern;
  int layout;  ///< how the shapes are laid out from (z, m, n, k)
};

const GemmForm kForms[] = {
    {"a b, b c -> a c", 0},           // row-major A and B
    {"b a, b c -> a c", 1},           // A transposed
    {"a b, c b -> a c", 2},           // B transposed
    {"b a, c b -> a c", 3},           // both
    {"a b, b c -> c a", 0},           // the output transposed: the roles of the operands swap
    {"z a b, z b c -> z a c", 4},     // batched
    {"z a b, z b c -> a z c", 4},     // batch axis between M and N
    {"a z b, z b c -> z a c", 5},     // batch and contraction strides interleaved
    {"a b d, b d c -> a c", 6},       // two contraction axes (K walks them row-major)
    {"a b b, b c -> a c", 7},         // a diagonal inside the GEMM
};

std::vector<Shape> shapes_of(int layout, std::int64_t z, std::int64_t m, std::int64_t n, std::int64_t k,
                             bool broadcast) {
  const std::int64_t za = broadcast ? 1 : z;
  switch (layout) {
    case 0: return {{m, k}, {k, n}};
    case 1: return {{k, m}, {k, n}};
    case 2: return {{m, k}, {n, k}};
    case 3: return {{k, m}, {n, k}};
    case 4: return {{za, m, k}, {z, k, n}};
    case 5: return {{m, za, k}, {z, k, n}};
    case 6: return {{m, k, 3}, {k, 3, n}};
    default: return {{m, k, k}, {k, n}};
  }
}

/// fused (both ISA paths, one and three chunks) equals the reference with NaN payloads compared.
void expect_reference_bits(const CheckedEinsum& e, const std::vector<Tensor>& inputs, const std::string& what) {
  const Tensor want = reference::evaluate_einsum(e, inputs);
  const fused::EinsumPlan plan = fused::compile(e);
  for (bool simd : {true, false}) {
    for (unsigned tasks : {1u, 3u}) {
      fused::ExecOptions options{tasks, 8, tasks};
      options.simd_dispatch = simd;
      const auto same = test::bitwise_same(want, fused::execute(plan, inputs, options), /*strict_nan=*/true);
      if (!same) {
        RC_FAIL(what + (simd ? " simd" : " baseline") + " tasks " + std::to_string(tasks) + ": " + same.message());
      }
    }
  }
}

RC_GTEST_PROP(FusedGemm, BlockAndTileBoundariesEqualTheReference, ()) {
  const auto dims = *rc::gen::suchThat(
      rc::gen::tuple(rc::gen::elementOf(kBoundaries), rc::gen::elementOf(kBoundaries),
                     rc::gen::elementOf(kBoundaries)),
      [](const auto& t) {
        const auto [m, n, k] = t;
        return m * n * k <= 200'000 && m * k <= 40'000 && n * k <= 40'000;
      });
  const auto [m, n, k] = dims;
  const GemmForm form = *rc::gen::elementOf(std::vector<GemmForm>(std::begin(kForms), std::end(kForms)));
  const std::int64_t z = *rc::gen::element<std::int64_t>(1, 2, 3);
  const bool broadcast = *rc::gen::arbitrary<bool>();
  const DType dtype = *rc::gen::element(DType::f32, DType::f64, DType::i32, DType::i64);
  const std::int64_t kk = form.layout == 7 ? std::min<std::int64_t>(k, 40) : k;  // diagonal: k² elements
  const CheckedEinsum e = checked(form.pattern, shapes_of(form.layout, z, m, n, kk, broadcast));
  std::mt19937_64 rng(*rc::gen::arbitrary<std::uint64_t>());
  const std::vector<Tensor> inputs = random_inputs(e, dtype, rng);
  expect_reference_bits(e, inputs,
                        std::string(form.pattern) + " z " + std::to_string(z) + " m " + std::to_string(m) +
                            " n " + std::to_string(n) + " k " + std::to_string(kk) + " " +
                            std::string(dtype_name(dtype)));
}

TEST(FusedGemm, KBlocksKeepTheSumSequential) {
  // binary32: 2^24 then 1s: every 1 is lost when added in order, none when blocks restarted at 0
  // and were added afterwards. K spans three K blocks.
  const std::int64_t k = 3 * 256 + 5;
  std::vector<float> a(static_cast<std::size_t>(2 * k), 1.0f);
  a[0] = 16777216.0f;
  a[static_cast<std::size_t>(k)] = 16777216.0f;
  std::vector<float> b(static_cast<std::size_t>(k * 17), 1.0f);
  const CheckedEinsum e = checked("a b, b c -> a c", {{2, k}, {k, 17}});
  const std::vector<Tensor> inputs{Tensor(Shape{2, k}, a), Tensor(Shape{k, 17}, b)};
  const Tensor want(Shape{2, 17}, std::vector<float>(34, 16777216.0f));
  for (bool simd : {true, false}) {
    fused::ExecOptions options{1, 8, 0};
    options.simd_dispatch = simd;
    EXPECT_TRUE(same_values(fused::execute(fused::compile(e), inputs, options), want));
  }
}

}  // namespace
}  // namespace einfuzz
