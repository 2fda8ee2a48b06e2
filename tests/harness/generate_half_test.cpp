// The generator's f16/bf16 (issue 14): the campaign draws f16 and bf16 einsums and reduces, the
// property tests' default options do not; `--dtypes` (restrict_dtypes) keeps every case inside its
// list; each format's edge values are what they claim (subnormals, largest finite, half-ulp ties
// that round down, up and to infinity); runs of ones make long sums saturate in the storage type.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "einfuzz/core/check_case.hpp"
#include "einfuzz/harness/campaign.hpp"
#include "einfuzz/harness/generate.hpp"
#include "einfuzz/harness/run.hpp"
#include "einfuzz/harness/values.hpp"

namespace einfuzz {
namespace {

Case draw(std::uint64_t seed, std::uint64_t i, const GenOptions& o) {
  SeededChoices s(Rng::mix(seed, i));
  return generate_case(s, o);
}

TEST(GenerateHalf, CampaignDrawsF16AndBf16EinsumsAndReduces) {
  int einsum16 = 0, reduce16 = 0, einsumb = 0, reduceb = 0;
  for (std::uint64_t i = 0; i < 3000; ++i) {
    const Case c = draw(7, i, campaign_gen_options());
    if (c.dtype == DType::f16) (c.op == Op::einsum ? einsum16 : reduce16)++;
    if (c.dtype == DType::bf16) (c.op == Op::einsum ? einsumb : reduceb)++;
  }
  EXPECT_GT(einsum16, 0);
  EXPECT_GT(reduce16, 0);
  EXPECT_GT(einsumb, 0);
  EXPECT_GT(reduceb, 0);
}

TEST(GenerateHalf, DefaultOptionsDrawNoHalfTypes) {
  for (std::uint64_t i = 0; i < 2000; ++i) {
    const Case c = draw(3, i, GenOptions{});
    EXPECT_FALSE(is_half(c.dtype)) << i;
  }
}

/// Every non-empty subset of the dtypes, the one numbered `mask` (1 …) at index mask − 1.
std::vector<std::vector<DType>> every_dtype_subset() {
  const std::vector<DType> all = {DType::f32, DType::f64, DType::i32, DType::i64, DType::boolean, DType::f16, DType::bf16};
  std::vector<std::vector<DType>> subsets;
  for (unsigned mask = 1; mask < (1u << all.size()); ++mask) {
    std::vector<DType>& list = subsets.emplace_back();
    for (std::size_t k = 0; k < all.size(); ++k) {
      if (mask & (1u << k)) list.push_back(all[k]);
    }
  }
  return subsets;
}

// Every non-empty subset of the dtypes, invalid cases included (the dtype-changing mutations too).
TEST(GenerateHalf, RestrictDtypesKeepsEveryCaseInTheList) {
  const auto subsets = every_dtype_subset();
  for (unsigned mask = 1; mask <= subsets.size(); ++mask) {
    const std::vector<DType>& list = subsets[mask - 1];
    GenOptions o = campaign_gen_options();
    o.invalid_percent = 50;
    restrict_dtypes(o, list);
    for (std::uint64_t i = 0; i < 40; ++i) {
      const Case c = draw(mask, i, o);
      ASSERT_NE(std::find(list.begin(), list.end(), c.dtype), list.end()) << "mask " << mask << " case " << i;
    }
  }
}

// The same for VJP campaigns (`--vjp-percent`, which needs f32 or f64 in the list): the invalid VJP
// cases' integer and any/all mutations stay inside the list too, inputs and cotangent included.
TEST(GenerateHalf, RestrictDtypesKeepsEveryVjpCaseInTheList) {
  const auto subsets = every_dtype_subset();
  for (unsigned mask = 1; mask <= subsets.size(); ++mask) {
    const std::vector<DType>& list = subsets[mask - 1];
    if (std::none_of(list.begin(), list.end(), [](DType d) { return d == DType::f32 || d == DType::f64; })) continue;
    GenOptions o = campaign_gen_options();
    o.invalid_percent = 50;
    o.vjp_percent = 100;
    restrict_dtypes(o, list);
    const auto listed = [&](DType d) { return std::find(list.begin(), list.end(), d) != list.end(); };
    for (std::uint64_t i = 0; i < 40; ++i) {
      const Case c = draw(mask, i, o);
      ASSERT_TRUE(c.is_vjp()) << "mask " << mask << " case " << i;
      ASSERT_TRUE(listed(c.dtype)) << "mask " << mask << " case " << i << ": " << dtype_name(c.dtype);
      for (const Tensor& t : c.inputs) ASSERT_TRUE(listed(t.dtype())) << "mask " << mask << " case " << i;
      ASSERT_TRUE(listed(c.cotangent->dtype())) << "mask " << mask << " case " << i;
    }
  }
}

TEST(GenerateHalf, DtypeListsParseAndBadNamesAreDiagnostics) {
  auto ok = parse_dtype_list("f16,bf16,f32", "--dtypes");
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok, (std::vector<DType>{DType::f16, DType::bf16, DType::f32}));
  for (const char* bad : {"f8", "", "f16,", "f16,f16", "F16"}) {
    auto r = parse_dtype_list(bad, "--dtypes");
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, Code::invalidArgument);
    EXPECT_NE(r.error().message.find("--dtypes"), std::string::npos);
  }
}

template <class T>
void edge_values_are_what_they_claim(std::uint16_t largest_subnormal, std::uint16_t max_bits) {
  using L = std::numeric_limits<T>;
  const std::vector<T> edges = edge_values<T>();
  const auto has_bits = [&](std::uint16_t b) {
    return std::any_of(edges.begin(), edges.end(), [&](T v) { return v.bits() == b; });
  };
  EXPECT_TRUE(has_bits(0x0001));              // the smallest subnormal
  EXPECT_TRUE(has_bits(largest_subnormal));   // the largest subnormal
  EXPECT_TRUE(has_bits(L::min().bits()));     // the smallest normal
  EXPECT_TRUE(has_bits(max_bits));            // the largest finite
  const float one = 1, ulp = static_cast<float>(next_toward(T(1), T(2))) - 1;
  const auto has = [&](float x) {
    return std::any_of(edges.begin(), edges.end(), [&](T v) { return static_cast<float>(v) == x; });
  };
  // 2^-p: 1 + it is exactly between 1 and 1 + ulp (rounds down to even), (1 + ulp) + it exactly
  // between 1 + ulp and 1 + 2 ulp (rounds up to even).
  const float half = ulp / 2;
  ASSERT_TRUE(has(half));
  ASSERT_TRUE(has(one + ulp));
  EXPECT_EQ(static_cast<float>(T(one + half)), one);
  EXPECT_EQ(static_cast<float>(T(one + ulp + half)), one + 2 * ulp);
  // 2^(emax - p): the largest finite plus it is the overflow threshold, which rounds to infinity.
  const float max = static_cast<float>(L::max());
  const float threshold_step = std::ldexp(1.0f, L::max_exponent - 1 - L::digits);
  ASSERT_TRUE(has(threshold_step));
  EXPECT_TRUE(std::isinf(static_cast<float>(T(static_cast<double>(max) + threshold_step))));
  EXPECT_FALSE(std::isinf(static_cast<float>(T(static_cast<double>(max) + threshold_step / 2))));
  // 2^p: adding 1 to it is a tie lost to even (the saturation point of a sum of ones).
  const float big = std::ldexp(1.0f, L::digits);
  ASSERT_TRUE(has(big));
  EXPECT_EQ(static_cast<float>(T(big + 1)), big);
}

TEST(GenerateHalf, F16EdgeValuesAreWhatTheyClaim) { edge_values_are_what_they_claim<Float16>(0x03ff, 0x7bff); }
TEST(GenerateHalf, Bf16EdgeValuesAreWhatTheyClaim) { edge_values_are_what_they_claim<BFloat16>(0x007f, 0x7f7f); }

// Runs of ones: some long f16 / bf16 tensors are all ones, and their ordered sum saturates at 2^p.
TEST(GenerateHalf, RunsOfOnesSaturateTheStorageSum) {
  for (DType d : {DType::f16, DType::bf16}) {
    const double saturated = d == DType::f16 ? 2048 : 256;
    bool found = false;
    for (std::uint64_t seed = 0; seed < 400 && !found; ++seed) {
      SeededChoices s(seed);
      Case c;
      c.op = Op::einsum;
      c.pattern = "i ->";
      c.dtype = d;
      c.inputs.push_back(generate_values(s, d, {3000}));
      const Tensor out = evaluate_reference(*check_case(c, Limits{}), c.inputs);
      const double sum = visit_dtype(d, [&](auto tag) -> double {
        using T = decltype(tag);
        if constexpr (is_half_type_v<T>) return static_cast<float>(out.values<T>()[0]);
        return 0;
      });
      found = sum == saturated;
    }
    EXPECT_TRUE(found) << dtype_name(d);
  }
}

}  // namespace
}  // namespace einfuzz
