// fused on f16 and bf16 against the reference, bit for bit with NaN payloads (ORACLE §8's ordered
// semantics): generated einsums and reduces with the formats' edge values, long sums of ones that
// saturate, half-ulp ties, every pair of f16 operands, and a planted float-accumulator bug.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "einfuzz/core/case.hpp"
#include "einfuzz/core/check.hpp"
#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/core/half.hpp"
#include "einfuzz/fused/einsum.hpp"
#include "einfuzz/fused/reduce.hpp"
#include "einfuzz/harness/generate.hpp"
#include "einfuzz/harness/values.hpp"
#include "einfuzz/reference/einsum.hpp"
#include "einfuzz/reference/reduce.hpp"
#include "support/compare.hpp"
#include "support/reduce_gen.hpp"

namespace einfuzz {
namespace {

/// How one tensor's values are drawn: each profile aims at one way a 16-bit result can go wrong.
enum class HalfProfile { mixture, ones, ties, tiny, raw_bits };

/// 2^e · m/128 with e around the format's emin: products of two are subnormal or underflow to ±0.
template <class T>
T tiny_value(Rng& rng) {
  using L = std::numeric_limits<T>;
  const int emin = L::min_exponent - 1;
  const double m = static_cast<double>(rng.between(128, 255)) / 128.0;
  const T v(std::ldexp(m, emin / 2 + static_cast<int>(rng.between(-(L::digits + 2), 2))));
  return rng.chance(1, 2) ? v : -v;
}

/// One value of the mixture: small binary fractions (exact short sums), the formats' edge values
/// (±0, ±inf, subnormals, the smallest normal, the largest finite, 1 ± ulp, 2^p), NaNs with
/// payloads (signalling ones too), values 1 + 2^-k whose products and sums land on half-ulp ties,
/// and tiny values whose products are subnormal or underflow.
template <class T>
T mixture_value(Rng& rng, const std::vector<T>& edges) {
  using L = std::numeric_limits<T>;
  constexpr int p = L::digits;
  switch (rng.below(8)) {
    case 0:
    case 1: return T(static_cast<double>(rng.between(-8, 8)) / static_cast<double>(1 << rng.below(3)));
    case 2: return edges[rng.below(edges.size())];
    case 3: {  // a NaN: random sign and payload, quiet or signalling (payload nonzero)
      const auto exp_mask = static_cast<std::uint16_t>(L::infinity().bits());
      const auto payload = static_cast<std::uint16_t>(1 + rng.below((1u << (p - 1)) - 1));
      return T::from_bits(static_cast<std::uint16_t>((rng.chance(1, 2) ? 0x8000u : 0u) | exp_mask | payload));
    }
    case 4: {  // 1 + 2^-k (k < p), ±: (1 + 2^-a)(1 + 2^-b) with a + b = p is a half-ulp tie
      const T v(1.0 + std::ldexp(1.0, -static_cast<int>(rng.between(1, p - 1))));
      return rng.chance(1, 2) ? v : -v;
    }
    case 5: {  // large: 2^(p..p+3) absorbs ones (a sum's tie), near Ω overflows
      const T v = rng.chance(1, 2) ? T(std::ldexp(1.0, p + static_cast<int>(rng.below(4)))) : L::max();
      return rng.chance(1, 2) ? v : -v;
    }
    case 6: return tiny_value<T>(rng);
    default: return T::from_bits(static_cast<std::uint16_t>(rng.next()));
  }
}

template <class T>
void fill_half(Tensor& t, Rng& rng, HalfProfile profile) {
  static const std::vector<T> edges = edge_values<T>();
  for (T& x : t.values<T>()) {
    switch (profile) {
      case HalfProfile::ones: x = rng.chance(1, 50) ? mixture_value<T>(rng, edges) : T(1); break;
      case HalfProfile::ties: x = T(1.0 + std::ldexp(1.0, -static_cast<int>(rng.between(1, std::numeric_limits<T>::digits - 1)))); break;
      case HalfProfile::tiny: x = rng.chance(1, 8) ? mixture_value<T>(rng, edges) : tiny_value<T>(rng); break;
      case HalfProfile::raw_bits: x = T::from_bits(static_cast<std::uint16_t>(rng.next())); break;
      case HalfProfile::mixture: x = mixture_value<T>(rng, edges); break;
    }
  }
}

/// Refills `t` (f16 or bf16) from one profile drawn for the whole tensor.
void refill(Tensor& t, Rng& rng) {
  const auto profile = static_cast<HalfProfile>(rng.below(5));
  if (t.dtype() == DType::f16) fill_half<Float16>(t, rng, profile);
  if (t.dtype() == DType::bf16) fill_half<BFloat16>(t, rng, profile);
}

using EinsumExecutor = std::function<Tensor(const CheckedEinsum&, std::span<const Tensor>, const fused::ExecOptions&)>;

Tensor fused_einsum(const CheckedEinsum& e, std::span<const Tensor> inputs, const fused::ExecOptions& options) {
  return fused::execute(fused::compile(e), inputs, options);
}

/// fused-vs-reference on generated f16/bf16 einsums (the generator's patterns: broadcasts,
/// diagonals, ellipses, empty axes, one long axis in a third of them), values from the generator
/// or (mostly) from a HalfProfile; false when some draw differs.
bool half_einsums_equal_the_reference(const EinsumExecutor& execute) {
  return rc::check("fused equals the reference on f16/bf16 einsums", [&] {
    Rng rng(*rc::gen::arbitrary<std::uint64_t>());
    GenOptions gen;
    gen.dtypes = {DType::f16, DType::bf16};
    gen.long_axis_percent = 35;
    Case c = generate_einsum(rng, gen);
    if (rng.chance(3, 4)) {
      for (Tensor& t : c.inputs) refill(t, rng);
    }
    std::vector<Shape> shapes;
    for (const Tensor& t : c.inputs) shapes.push_back(t.shape());
    auto e = check_einsum(c.pattern, shapes);
    RC_ASSERT(e.ok());
    fused::ExecOptions options;
    options.threads = static_cast<unsigned>(*rc::gen::inRange(1, 4));
    options.tile_width = *rc::gen::element(1, 4, 8);
    options.tasks = static_cast<unsigned>(*rc::gen::inRange(0, 5));
    RC_CLASSIFY(e->contraction_size > 256, "long contraction");
    RC_CLASSIFY(c.dtype == DType::f16, "f16");
    const Tensor want = reference::evaluate_einsum(*e, c.inputs);
    const auto same = test::bitwise_same(want, execute(*e, c.inputs, options), /*strict_nan=*/true);
    if (!same) RC_FAIL(std::string(same.message()) + "\ncase:\n" + write_case(c));
  });
}

TEST(FusedHalf, GeneratedEinsumsEqualTheReferenceBitwise) {
  EXPECT_TRUE(half_einsums_equal_the_reference(fused_einsum));
}

/// Test-only defect, the bug class of ORACLE §8: f16/bf16 products and partial sums held in binary32
/// and rounded to the format only at the end (what a backend declaring `accumulate: f32` may do,
/// but not the ordered semantics).
Tensor accumulates_in_float(const CheckedEinsum& e, std::span<const Tensor> inputs, const fused::ExecOptions& options) {
  std::vector<Tensor> wide;
  for (const Tensor& t : inputs) {
    Tensor w(DType::f32, t.shape());
    visit_dtype(t.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (is_half_type_v<T>) {
        const auto src = t.values<T>();
        const auto dst = w.values<float>();
        for (std::size_t i = 0; i < src.size(); ++i) dst[i] = static_cast<float>(src[i]);
      }
    });
    wide.push_back(std::move(w));
  }
  const Tensor out = fused::execute(fused::compile(e), wide, options);
  Tensor narrow(inputs[0].dtype(), out.shape());
  visit_dtype(narrow.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_half_type_v<T>) {
      const auto src = out.values<float>();
      const auto dst = narrow.values<T>();
      for (std::size_t i = 0; i < src.size(); ++i) dst[i] = T(src[i]);
    }
  });
  return narrow;
}

TEST(FusedHalf, APlantedFloatAccumulatorIsCaught) {
  EXPECT_FALSE(half_einsums_equal_the_reference(accumulates_in_float));
}

TEST(FusedHalf, EveryF16OperandTimesAndPlusSampledOperandsRoundsLikeTheReference) {
  // All 65536 f16 bit patterns against 64 drawn partners: "i, i -> i" is one product (and 0 + P),
  // "i, j -> i" with j = 2 is a product sum of two terms; every width, so every kernel path.
  Rng rng(14);
  Tensor a(DType::f16, Shape{65536}), b(DType::f16, Shape{65536}), pair(DType::f16, Shape{65536, 2});
  for (std::uint32_t i = 0; i < 65536; ++i) a.values<Float16>()[i] = Float16::from_bits(static_cast<std::uint16_t>(i));
  for (int round = 0; round < 64; ++round) {
    const auto partner = Float16::from_bits(static_cast<std::uint16_t>(rng.next()));
    for (Float16& x : b.values<Float16>()) x = partner;
    for (std::uint32_t i = 0; i < 65536; ++i) {
      pair.values<Float16>()[2 * i] = Float16::from_bits(static_cast<std::uint16_t>(i));
      pair.values<Float16>()[2 * i + 1] = Float16::from_bits(static_cast<std::uint16_t>(rng.next()));
    }
    const std::vector<Tensor> products{a, b};
    const auto mul = check_einsum("i, i -> i", std::vector<Shape>{{65536}, {65536}});
    const auto sum = check_einsum("i j -> i", std::vector<Shape>{{65536, 2}});
    ASSERT_TRUE(mul.ok() && sum.ok());
    const Tensor want_mul = reference::evaluate_einsum(*mul, products);
    const Tensor want_sum = reference::evaluate_einsum(*sum, std::vector<Tensor>{pair});
    for (int width : {1, 8}) {
      const fused::ExecOptions options{1, width, 0};
      ASSERT_TRUE(test::bitwise_same(want_mul, fused_einsum(*mul, products, options), true)) << "partner " << partner.bits();
      ASSERT_TRUE(test::bitwise_same(want_sum, fused_einsum(*sum, std::vector<Tensor>{pair}, options), true));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Reduces: the generator's patterns in f16/bf16, and long fibres of one or two axes.

RC_GTEST_PROP(FusedHalfReduce, GeneratedReducesEqualTheReferenceBitwise, ()) {
  Rng rng(*rc::gen::arbitrary<std::uint64_t>());
  test::ReduceGenOptions gen;
  gen.kind = *rc::gen::element(Reduction::sum, Reduction::prod, Reduction::mean, Reduction::min, Reduction::max);
  gen.dtype = *rc::gen::element(DType::f16, DType::bf16);
  test::ReduceCase c = test::generate_reduce_case(rng, gen);
  if (rng.chance(3, 4)) refill(c.input, rng);
  auto r = check_reduce(c.pattern, reduction_name(c.kind), c.shape, c.axis_lengths, c.dtype);
  if (!r.ok()) RC_FAIL(c.describe() + ": " + render(r.error()));
  fused::ExecOptions options;
  options.threads = static_cast<unsigned>(*rc::gen::inRange(1, 4));
  options.tasks = static_cast<unsigned>(*rc::gen::inRange(0, 5));
  const auto same = test::bitwise_same(reference::evaluate_reduce(*r, c.input),
                                       fused::execute_reduce(*r, c.input, options), true);
  if (!same) RC_FAIL(c.describe() + ": " + same.message());
}

RC_GTEST_PROP(FusedHalfReduce, LongFibresEqualTheReferenceBitwise, ()) {
  // Fibres of up to 3000 elements along the outer or the inner axis: ones saturate (f16 at 2048,
  // bf16 at 256), means divide by an n that is not representable.
  Rng rng(*rc::gen::arbitrary<std::uint64_t>());
  const Reduction kind = *rc::gen::element(Reduction::sum, Reduction::mean, Reduction::prod, Reduction::max);
  const DType dtype = *rc::gen::element(DType::f16, DType::bf16);
  const std::int64_t rows = *rc::gen::inRange<std::int64_t>(1, 4);
  const std::int64_t n = *rc::gen::inRange<std::int64_t>(1, 3001);
  const bool outer = *rc::gen::arbitrary<bool>();
  const Shape shape = outer ? Shape{n, rows} : Shape{rows, n};
  Tensor input(dtype, shape);
  refill(input, rng);
  auto r = check_reduce(outer ? "n r -> r" : "r n -> r", reduction_name(kind), shape, {}, dtype);
  RC_ASSERT(r.ok());
  const auto same = test::bitwise_same(reference::evaluate_reduce(*r, input), fused::execute_reduce(*r, input), true);
  if (!same) RC_FAIL(std::string(reduction_name(kind)) + " " + std::string(dtype_name(dtype)) + " on " +
                     format_shape(shape) + ": " + same.message());
}

}  // namespace
}  // namespace einfuzz
