// ORACLE §8 in the multiset oracle and the judge: the default profile's truth is §2's, the
// profile-aware judge is sound on the shuffle backend under every valid profile (f16, bf16, f32,
// edge values), hand-worked elements under wider accumulators and TF32, and the planted precision
// bugs are each caught within a bounded number of cases.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "einfuzz/backends/shuffle.hpp"
#include "einfuzz/core/half.hpp"
#include "einfuzz/harness/generate.hpp"
#include "harness/oracle_support.hpp"
#include "support/precision_backends.hpp"

namespace einfuzz {
namespace {

using namespace oracle_test;

// ---------------------------------------------------------------------------------------------
// Values and cases in f16 / bf16 (the generator does not draw them yet)

/// One value of the 16-bit format T from a family: random bit patterns (every class, subnormals,
/// NaN payloads), ones, small dyadics, near Ω, subnormals, full-mantissa values in [1/16, 16).
template <class T>
T draw_half(Rng& rng, int family) {
  const float sign = rng.chance(1, 2) ? 1.0f : -1.0f;
  const float omega = static_cast<float>(std::numeric_limits<T>::max());
  const float tiny = static_cast<float>(std::numeric_limits<T>::min());
  constexpr int p = std::numeric_limits<T>::digits;
  const float mantissa = 1.0f + static_cast<float>(rng.below(std::uint64_t{1} << (p - 1))) * std::ldexp(1.0f, 1 - p);
  switch (family) {
    case 0: return T::from_bits(static_cast<std::uint16_t>(rng.next()));
    case 1: return T(1.0f);
    case 2: return T(sign * static_cast<float>(rng.between(0, 8)) / static_cast<float>(1 << rng.below(4)));
    case 3: return T(rng.chance(1, 2) ? sign * omega / static_cast<float>(1 << rng.below(3)) : sign * mantissa);
    case 4: return T(sign * tiny * mantissa * std::ldexp(1.0f, -static_cast<int>(rng.below(p + 1))));
    default: return T(sign * std::ldexp(mantissa, static_cast<int>(rng.between(-4, 3))));
  }
}

/// `c` with every input replaced by one of `dtype` (f16 or bf16) of the same shape, its values
/// drawn from one family per case (or mixed per value).
void make_half(Case& c, DType dtype, Rng& rng) {
  const int family = static_cast<int>(rng.below(7));  // 6: per value
  c.dtype = dtype;
  for (Tensor& t : c.inputs) {
    Tensor h(dtype, t.shape());
    visit_dtype(dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (is_half_type_v<T>) {
        for (T& v : h.values<T>()) v = draw_half<T>(rng, family == 6 ? static_cast<int>(rng.below(6)) : family);
      }
    });
    t = std::move(h);
  }
}

/// The valid profiles of a float dtype (ORACLE §8) a backend could declare.
std::vector<PrecisionProfile> profiles_of(DType dtype) {
  std::vector<PrecisionProfile> out;
  for (const DType a : {DType::f16, DType::bf16, DType::f32, DType::f64}) {
    for (const InputRounding r : {InputRounding::none, InputRounding::tf32}) {
      const PrecisionProfile p{a, r};
      // TF32 holds every f16/bf16 value exactly: its profiles are the same as without.
      if (is_half(dtype) && r == InputRounding::tf32) continue;
      if (is_valid_profile(dtype, p)) out.push_back(p);
    }
  }
  return out;
}

std::string profile_name(const PrecisionProfile& p) {
  return std::string(dtype_name(p.accumulate)) + (p.round_inputs == InputRounding::tf32 ? "+tf32" : "");
}

// ---------------------------------------------------------------------------------------------
// Soundness under every profile

/// Verdict kinds per profile over one property, printed at its end (the verdict mix of CI).
class VerdictMix {
 public:
  void add(const std::string& profile, const Verdict& v) { ++counts_[profile][v.label()]; ++judged_; }
  void print() const {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    std::cout << "[ oracle   ] " << test->test_suite_name() << "." << test->name() << ": " << judged_
              << " backend×case verdicts\n";
    for (const auto& [profile, kinds] : counts_) {
      std::cout << "[ oracle   ]   accumulate " << profile << ":";
      for (const auto& [label, n] : kinds) std::cout << " " << label << " " << n << ";";
      std::cout << "\n";
    }
  }

 private:
  std::map<std::string, std::map<std::string, std::int64_t>> counts_;
  std::int64_t judged_ = 0;
};

/// Runs `c` on one shuffle backend per valid profile of its dtype (each declaring it, factoring
/// or not by the seed), sharing the reference; fails the property on any failing verdict.
void expect_sound_under_profiles(const Case& c, std::uint64_t seed, VerdictMix& mix) {
  std::vector<std::unique_ptr<Backend>> owned;
  std::vector<Backend*> list;
  const std::vector<PrecisionProfile> profiles = profiles_of(c.dtype);
  for (std::size_t i = 0; i < profiles.size(); ++i) {
    ShuffleOptions options;
    options.seed = seed + i;
    options.factoring = ((seed >> i) & 1) != 0;
    options.profiles = {{c.dtype, profiles[i]}};
    owned.push_back(make_shuffle_backend(options));
    list.push_back(owned.back().get());
  }
  const CaseOutcome out = run_case(c, list, {});
  for (std::size_t i = 0; i < profiles.size(); ++i) {
    const Verdict& v = out.backends.at(i).verdict;
    RC_TAG(profile_name(profiles[i]) + " " + v.label());
    if (is_failure(v.kind)) {
      RC_FAIL(explain(v, c) + "shuffle seed " + std::to_string(seed + i) + ", accumulate " +
              profile_name(profiles[i]) + (((seed >> i) & 1) != 0 ? "" : ", factoring off"));
    }
    mix.add(profile_name(profiles[i]), v);
  }
}

Rng profile_case_rng(std::uint64_t salt) {
  const auto seed = *rc::gen::noShrink(rc::gen::resize(100, rc::gen::arbitrary<std::uint64_t>()));
  return Rng(Rng::mix(seed, salt));
}

/// Generator shapes as in the f32 soundness properties, half of them with long contractions (up to
/// ~2000 terms: long f16/bf16 sums cross 2048 and 256).
GenOptions profile_gen_options(Rng& rng) {
  GenOptions options;
  if (rng.chance(1, 2)) {
    options.max_length = 24;
    options.max_axes_per_operand = 3;
    options.max_global = 2048;
  }
  options.dtypes = {DType::f32};
  return options;
}

template <class Draw>
void check_profiles_sound(std::uint64_t salt, Draw&& draw) {
  VerdictMix mix;
  rc::detail::checkGTest([&] {
    Rng rng = profile_case_rng(salt);
    const Case c = draw(rng);
    expect_sound_under_profiles(c, rng.next(), mix);
  });
  mix.print();
}

TEST(OracleProfileSound, ShuffleUnderEveryProfileF16) {
  check_profiles_sound(41, [](Rng& rng) {
    Case c = generate_einsum(rng, profile_gen_options(rng));
    make_half(c, DType::f16, rng);
    return c;
  });
}

TEST(OracleProfileSound, ShuffleUnderEveryProfileBF16) {
  check_profiles_sound(42, [](Rng& rng) {
    Case c = generate_einsum(rng, profile_gen_options(rng));
    make_half(c, DType::bf16, rng);
    return c;
  });
}

// f32 under f32/f64 accumulators with and without TF32 inputs, on the generator's values or one of
// the redrawn edge profiles (every binade, near Ω, subnormals, cancellation, …).
TEST(OracleProfileSound, ShuffleUnderEveryProfileF32EdgeValues) {
  check_profiles_sound(43, [](Rng& rng) {
    Case c = generate_einsum(rng, profile_gen_options(rng));
    redraw_values(c, rng, kProfiles[rng.below(std::size(kProfiles))]);
    return c;
  });
}

TEST(OracleProfileSound, ShuffleUnderEveryProfileReduce) {
  check_profiles_sound(44, [](Rng& rng) {
    constexpr Reduction kKinds[] = {Reduction::sum, Reduction::mean, Reduction::prod, Reduction::min, Reduction::max};
    ReduceGenOptions options;
    options.kind = kKinds[rng.below(std::size(kKinds))];
    options.dtype = DType::f32;
    SeededChoices choices(rng);
    Case c = generate_reduce(choices, options);
    const std::uint64_t d = rng.below(3);
    if (d == 0) make_half(c, DType::f16, rng);
    if (d == 1) make_half(c, DType::bf16, rng);
    if (d == 2) redraw_values(c, rng, kProfiles[rng.below(std::size(kProfiles))]);
    return c;
  });
}

// ---------------------------------------------------------------------------------------------
// The default profile's truth is the two-argument one (ORACLE §2 unchanged)

void expect_same_truth(const ElementTruth& a, const ElementTruth& b, const CaseWhere& where) {
  EXPECT_EQ(a.value_class, b.value_class) << where;
  EXPECT_EQ(a.terms, b.terms) << where;
  EXPECT_EQ(a.no_overflow, b.no_overflow) << where;
  EXPECT_EQ(a.no_overflow_nonfactoring, b.no_overflow_nonfactoring) << where;
  EXPECT_EQ(a.no_inf_underflow, b.no_inf_underflow) << where;
  EXPECT_EQ(compare(a.exact, b.exact), 0) << where;
  EXPECT_EQ(a.bounded, b.bounded) << where;
  EXPECT_EQ(compare(a.scaled_bound, b.scaled_bound), 0) << where;
  EXPECT_EQ(a.bound, b.bound) << where;
}

TEST(OracleProfile, DefaultProfileTruthEqualsTheTwoArgumentOne) {
  Rng rng(1414);
  for (int i = 0; i < 800; ++i) {
    Case c = generate_einsum(rng, profile_gen_options(rng));
    const DType dtype = std::array{DType::f32, DType::f64, DType::f16, DType::bf16}[static_cast<std::size_t>(i % 4)];
    if (is_half(dtype)) {
      make_half(c, dtype, rng);
    } else if (dtype == DType::f64) {
      c.dtype = dtype;
      for (Tensor& t : c.inputs) {
        Tensor d(DType::f64, t.shape());
        for (std::size_t j = 0; j < d.values<double>().size(); ++j) d.values<double>()[j] = t.values<float>()[j];
        t = std::move(d);
      }
      redraw_values(c, rng, kProfiles[rng.below(std::size(kProfiles))]);
    } else {
      redraw_values(c, rng, kProfiles[rng.below(std::size(kProfiles))]);
    }
    const CheckedEinsum e = checked_of(c);
    const MultisetEinsum two = reference::multiset_einsum(e, c.inputs);
    const MultisetEinsum three = reference::multiset_einsum(e, c.inputs, storage_profile(dtype));
    EXPECT_FALSE(three.profile.has_value());
    EXPECT_TRUE(bitwise_equal(two.rounded, three.rounded));
    ASSERT_EQ(two.elements.size(), three.elements.size());
    for (std::size_t o = 0; o < two.elements.size(); ++o) {
      expect_same_truth(two.elements[o], three.elements[o], CaseWhere{c, "element " + std::to_string(o)});
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Hand-worked elements under profiles

/// A backend that returns a fixed tensor and declares `profile` for the case dtype.
class ProfiledFixed final : public Backend {
 public:
  ProfiledFixed(Tensor result, DType dtype, PrecisionProfile profile) : result_(std::move(result)) {
    caps_.ops = {Op::einsum, Op::reduce};
    caps_.reductions = {"sum", "mean", "prod", "min", "max"};
    caps_.dtypes = {dtype};
    caps_.accumulate = {{dtype, profile.accumulate}};
    if (profile.round_inputs != InputRounding::none) caps_.round_inputs = {{dtype, profile.round_inputs}};
  }
  std::string_view name() const override { return "profiled-fixed"; }
  const Capabilities& capabilities() const override { return caps_; }
  BackendResult run(const Case&) override { return result_; }

 private:
  Tensor result_;
  Capabilities caps_;
};

template <class T>
Verdict judged_under(const Case& c, PrecisionProfile profile, float r) {
  ProfiledFixed b(Tensor(Shape{}, std::vector<T>{T(r)}), c.dtype, profile);
  return run_on(c, b);
}

Case ones_case(DType dtype, std::int64_t n, bool reduce) {
  Tensor t(dtype, Shape{n});
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_type_v<T>) {
      for (T& v : t.values<T>()) v = T(1.0f);
    }
  });
  if (reduce) return reduce_case("i ->", "sum", std::move(t));
  Case c;
  c.pattern = "i ->";
  c.dtype = dtype;
  c.inputs.push_back(std::move(t));
  return c;
}

TEST(OracleProfile, LongSumsOfOnesSeparateTheAccumulators) {
  for (const bool reduce : {false, true}) {
    // f16: past 2048 terms (n·u >= 1) the storage profile's γ is (1+u)^n − 1 ≈ 3.3, so 2048 passes;
    // with an f32 accumulator only 3000 itself does.
    const Case f16 = ones_case(DType::f16, 3000, reduce);
    EXPECT_EQ(judged_under<Float16>(f16, storage_profile(DType::f16), 2048).kind, VerdictKind::pass);
    const Verdict stuck = judged_under<Float16>(f16, {DType::f32, InputRounding::none}, 2048);
    EXPECT_EQ(stuck.kind, VerdictKind::mismatch_value) << explain(stuck, f16);
    ASSERT_TRUE(stuck.first);
    EXPECT_NE(stuck.first->expected_label.find("accumulate f32"), std::string::npos) << stuck.first->expected_label;
    EXPECT_EQ(judged_under<Float16>(f16, {DType::f32, InputRounding::none}, 3000).kind, VerdictKind::pass);
    EXPECT_EQ(judged_under<Float16>(f16, {DType::f64, InputRounding::none}, 3000).kind, VerdictKind::pass);
    EXPECT_EQ(judged_under<Float16>(f16, {DType::f32, InputRounding::none}, 3004).kind, VerdictKind::mismatch_value);
    // bf16 stops at 256.
    const Case bf16 = ones_case(DType::bf16, 400, reduce);
    EXPECT_EQ(judged_under<BFloat16>(bf16, {DType::f32, InputRounding::none}, 256).kind, VerdictKind::mismatch_value);
    EXPECT_EQ(judged_under<BFloat16>(bf16, {DType::f32, InputRounding::none}, 400).kind, VerdictKind::pass);
  }
}

TEST(OracleProfile, LongSumsUnderTheStorageProfileStillHaveAnEnclosure) {
  // ORACLE §2: where n·u >= 1, γ_n is (1+u)^n − 1 itself, finite. The sum of n ones in the
  // storage format is at most n·γ_n wide around n; past it a value is a mismatch, however long the
  // sum (before, any finite answer passed there).
  for (const bool reduce : {false, true}) {
    const auto wide = [](std::int64_t n, int digits) {
      return static_cast<double>(n) * reference::gamma_up(n, std::ldexp(1.0, -digits));
    };
    const Case bf16 = ones_case(DType::bf16, 400, reduce);
    const double bf16_reach = 400 + wide(400, 8);  // about 1903
    EXPECT_EQ(judged_under<BFloat16>(bf16, storage_profile(DType::bf16), 256).kind, VerdictKind::pass);
    EXPECT_EQ(judged_under<BFloat16>(bf16, storage_profile(DType::bf16), 1792).kind, VerdictKind::pass);
    ASSERT_LT(bf16_reach, 2048);
    EXPECT_EQ(judged_under<BFloat16>(bf16, storage_profile(DType::bf16), 2048).kind, VerdictKind::mismatch_value);
    EXPECT_EQ(judged_under<BFloat16>(bf16, storage_profile(DType::bf16), 0x1p100f).kind, VerdictKind::mismatch_value);
    EXPECT_EQ(judged_under<BFloat16>(bf16, storage_profile(DType::bf16), -0x1p100f).kind, VerdictKind::mismatch_value);
    const Case f16 = ones_case(DType::f16, 3000, reduce);
    const double f16_reach = 3000 + wide(3000, 11);  // about 12976
    ASSERT_LT(f16_reach, 14000);
    EXPECT_EQ(judged_under<Float16>(f16, storage_profile(DType::f16), 12000).kind, VerdictKind::pass);
    EXPECT_EQ(judged_under<Float16>(f16, storage_profile(DType::f16), 14000).kind, VerdictKind::mismatch_value);
    EXPECT_EQ(judged_under<Float16>(f16, storage_profile(DType::f16), 60000).kind, VerdictKind::mismatch_value);
  }
}

// §8: under a profile `prod` is one term of n factors, its U_a paying for a sub-product's underflow;
// §4's underflow certificate is the profile-free bound's. Six f16 factors 2^-24 under an f32
// accumulator: exact 2^-144, the bound about η_o = 2^-25, so 1 is a mismatch and 0 passes. Before,
// every finite answer was indeterminate(underflow-possible); the same product as an einsum of six
// operands was judged.
TEST(OracleProfile, AProductUnderAProfileIsBoundedThroughItsUnderflow) {
  const Case c = reduce_case("i ->", "prod", Tensor(Shape{6}, std::vector<Float16>(6, Float16(0x1p-24f))));
  const PrecisionProfile f32{DType::f32, InputRounding::none};
  const Verdict one = judged_under<Float16>(c, f32, 1.0f);
  EXPECT_EQ(one.kind, VerdictKind::mismatch_value) << explain(one, c);
  EXPECT_EQ(judged_under<Float16>(c, f32, 0.0f).kind, VerdictKind::pass);
  EXPECT_EQ(judged_under<Float16>(c, f32, 0x1p-24f).kind, VerdictKind::mismatch_value);
  // Without a profile §4 holds: the sub-products underflow f16, no enclosure.
  EXPECT_EQ(judged_under<Float16>(c, storage_profile(DType::f16), 1.0f).label(), "indeterminate(underflow-possible)");
}

// §8's mean: the sum's E_a = ((1+u_a)^(n−1) − 1)·S divided by n, then the quotient's roundings
// relative to |s| + E_a. f16 [60000, −60000, 2.25] under an f32 accumulator: the mean is 0.75, the
// bound ORACLE §8's formula's, 0.005137, to within the two extra accumulator roundings (about
// 2^-24·0.75). It had been 0.0123 (the quotient's roundings times S/n), so 0x1.864p-1, 25 f16 ulps
// off, passed.
TEST(OracleProfile, AMeanUnderAProfileIsBoundedByWhatItDivides) {
  const Case c = reduce_case("i ->", "mean", DType::f16, {{3}, "60000, -60000, 2.25"});
  const PrecisionProfile f32{DType::f32, InputRounding::none};
  EXPECT_EQ(judged_under<Float16>(c, f32, 0.75f).kind, VerdictKind::pass);
  EXPECT_EQ(judged_under<Float16>(c, f32, 0x1.814p-1f).kind, VerdictKind::pass);  // 5 ulps: within 0.0051
  const Verdict off = judged_under<Float16>(c, f32, 0x1.864p-1f);
  EXPECT_EQ(off.kind, VerdictKind::mismatch_value) << explain(off, c);
  const ElementTruth t = reference::multiset_reduce(*check_reduce(c.pattern, *c.reduction, c.inputs[0].shape(),
                                                                  c.axis_lengths, c.dtype),
                                                    c.inputs[0], f32)
                             .elements[0];
  EXPECT_LT(t.bound, 0.005138) << "ORACLE §8's 0.0051372 and the two roundings it leaves out";
  EXPECT_GT(t.bound, 0.005137) << "ORACLE §8's";
}

TEST(OracleProfile, FinalConversionOverflowIsIndeterminate) {
  // f16 60000 + 60000 in an f32 accumulator is 120000, then +Inf in f16: never a finite result.
  const Case c = einsum_case("i ->", DType::f16, {{{2}, "60000, 60000"}});
  const PrecisionProfile f32{DType::f32, InputRounding::none};
  const ElementTruth t = reference::multiset_einsum(checked_of(c), c.inputs, f32).elements[0];
  EXPECT_FALSE(t.no_overflow);
  EXPECT_EQ(judged_under<Float16>(c, f32, INFINITY).label(), "indeterminate(overflow-possible)");
  EXPECT_EQ(judged_under<Float16>(c, f32, 65504).kind, VerdictKind::mismatch_value);
  // 30000 + 30000 = 60000 is certified under both.
  const Case ok = einsum_case("i ->", DType::f16, {{{2}, "30000, 30000"}});
  EXPECT_EQ(judged_under<Float16>(ok, f32, 60000).kind, VerdictKind::pass);
  EXPECT_EQ(judged_under<Float16>(ok, f32, INFINITY).label(), "mismatch(special: non-finite result where the value is finite)");
}

TEST(OracleProfile, Tf32InputRoundingIsDeclaredOrCaught) {
  // (1 + 2^-12)·(1 + 2^-12): TF32 rounds each factor to 1; exact 1 + 2^-11 + 2^-24.
  const Case c = einsum_case("i, i ->", DType::f32, {{{1}, "0x1.001p+0"}, {{1}, "0x1.001p+0"}});
  EXPECT_EQ(judged_under<float>(c, storage_profile(DType::f32), 1.0f).kind, VerdictKind::mismatch_value);
  EXPECT_EQ(judged_under<float>(c, {DType::f32, InputRounding::tf32}, 1.0f).kind, VerdictKind::pass);
  EXPECT_EQ(judged_under<float>(c, {DType::f64, InputRounding::tf32}, 1.0f).kind, VerdictKind::pass);
  EXPECT_EQ(judged_under<float>(c, {DType::f64, InputRounding::none}, 1.0f).kind, VerdictKind::mismatch_value);
  EXPECT_EQ(judged_under<float>(c, {DType::f32, InputRounding::tf32}, 0x1.008p+0f).kind, VerdictKind::mismatch_value);
  // A reduce never rounds its inputs: a declared TF32 profile judges it as the default one.
  const Case sum = reduce_case("i ->", "sum", DType::f32, {{2}, "0x1.001p+0, 0"});
  EXPECT_EQ(judged_under<float>(sum, {DType::f32, InputRounding::tf32}, 1.0f).kind, VerdictKind::mismatch_value);
}

TEST(OracleProfile, Tf32UnderflowOfSubnormalInputsIsCovered) {
  // 2^-140 is a multiple of f32's 2^-149 but below half of TF32's 2^-136: rounded to 0 before the
  // product; the product's own bound would not cover it (ORACLE §8's η_i term does).
  const Case c = einsum_case("i, i ->", DType::f32, {{{1}, "0x1p-140"}, {{1}, "0x1p+20"}});
  EXPECT_EQ(judged_under<float>(c, {DType::f32, InputRounding::tf32}, 0.0f).kind, VerdictKind::pass);
  EXPECT_EQ(judged_under<float>(c, storage_profile(DType::f32), 0.0f).kind, VerdictKind::mismatch_value);
}

TEST(OracleProfile, InvalidDeclaredProfileIsAProtocolFault) {
  EXPECT_TRUE(is_valid_profile(DType::f16, {DType::f32, InputRounding::none}));
  EXPECT_TRUE(is_valid_profile(DType::f32, {DType::f64, InputRounding::tf32}));
  EXPECT_FALSE(is_valid_profile(DType::f16, {DType::bf16, InputRounding::none}));
  EXPECT_FALSE(is_valid_profile(DType::bf16, {DType::f16, InputRounding::none}));
  EXPECT_FALSE(is_valid_profile(DType::f32, {DType::f16, InputRounding::none}));
  EXPECT_FALSE(is_valid_profile(DType::f64, {DType::f64, InputRounding::tf32}));
  EXPECT_FALSE(is_valid_profile(DType::f32, {DType::i32, InputRounding::none}));
  const Case c = einsum_case("i ->", DType::f32, {{{2}, "1, 2"}});
  const Verdict v = judged_under<float>(c, {DType::f16, InputRounding::none}, 3.0f);
  EXPECT_EQ(v.kind, VerdictKind::crash);
  EXPECT_EQ(v.reason, "protocol");
}

TEST(OracleProfile, SeveralProfilesOnOneCaseEachGetTheirOwnTruth) {
  const Case c = ones_case(DType::f16, 3000, false);
  ProfiledFixed storage(Tensor(Shape{}, std::vector<Float16>{Float16(2048.0f)}), DType::f16, storage_profile(DType::f16));
  ProfiledFixed wide(Tensor(Shape{}, std::vector<Float16>{Float16(2048.0f)}), DType::f16, {DType::f32, InputRounding::none});
  ProfiledFixed wider(Tensor(Shape{}, std::vector<Float16>{Float16(3000.0f)}), DType::f16, {DType::f64, InputRounding::none});
  Backend* list[] = {&storage, &wide, &wider};
  const CaseOutcome out = run_case(c, list, {});
  EXPECT_EQ(out.backends[0].verdict.kind, VerdictKind::pass);
  EXPECT_EQ(out.backends[1].verdict.kind, VerdictKind::mismatch_value);
  EXPECT_EQ(out.backends[2].verdict.kind, VerdictKind::pass);
  EXPECT_TRUE(out.multiset.has_value());
  EXPECT_EQ(out.profiled_multiset.size(), 2u);
  // In-process backends: each truth is computed once its backend has answered, none ahead.
  EXPECT_TRUE(out.einsum_profiles.empty());
}

TEST(OracleProfile, TheDefaultProfilesTruthComesWithAnotherOnlyWhenAsked) {
  // fuzz_einsum_diff judges the ordered reference against the default profile's truth while its
  // shuffle is judged under another (RunOptions::storage_truth); a campaign does not pay for it.
  const Case c = ones_case(DType::f16, 3000, false);
  ProfiledFixed wide(Tensor(Shape{}, std::vector<Float16>{Float16(2048.0f)}), DType::f16, {DType::f32, InputRounding::none});
  Backend* list[] = {&wide};
  const CaseOutcome plain = run_case(c, list, {});
  EXPECT_FALSE(plain.multiset.has_value());
  ASSERT_EQ(plain.profiled_multiset.size(), 1u);
  RunOptions asked;
  asked.storage_truth = true;
  const CaseOutcome both = run_case(c, list, asked);
  EXPECT_EQ(both.einsum_profiles,
            (std::vector<PrecisionProfile>{{DType::f32, InputRounding::none}, storage_profile(DType::f16)}));
  ASSERT_TRUE(both.multiset.has_value());
  ASSERT_EQ(both.profiled_multiset.size(), 1u);
  EXPECT_EQ(both.backends[0].verdict.kind, plain.backends[0].verdict.kind);
  EXPECT_EQ(both.backends[0].verdict.kind, VerdictKind::mismatch_value);
  // The same truths as each computed alone: 2048 = the ordered f16 fold, admitted by the default
  // profile's bound and not by the f32 accumulator's.
  const auto checked = check_case(c, {});
  ASSERT_TRUE(checked.ok());
  const CheckedEinsum& e = std::get<CheckedEinsum>(*checked);
  const reference::MultisetEinsum alone = reference::multiset_einsum(e, c.inputs);
  ASSERT_EQ(both.multiset->elements.size(), 1u);
  EXPECT_EQ(compare(both.multiset->elements[0].exact, alone.elements[0].exact), 0);
  EXPECT_EQ(compare(both.multiset->elements[0].scaled_bound, alone.elements[0].scaled_bound), 0);
  EXPECT_EQ(compare(both.profiled_multiset[0].second.elements[0].scaled_bound,
                    plain.profiled_multiset[0].second.elements[0].scaled_bound),
            0);
  const Tensor ordered = both.expected.value();
  EXPECT_EQ(judge_any_order(*both.multiset, ordered, {}).kind, VerdictKind::pass);
  EXPECT_EQ(judge_any_order(both.profiled_multiset[0].second, ordered, {}).kind, VerdictKind::mismatch_value);
}

TEST(OracleProfile, ShuffleDeclaresItsProfilesFromTheSeed) {
  std::set<std::string> seen;
  for (std::uint64_t seed = 1; seed <= 64; ++seed) {
    const auto a = make_shuffle_backend(seed);
    const auto b = make_shuffle_backend(seed);
    const Capabilities& caps = a->capabilities();
    for (const DType d : {DType::f16, DType::bf16, DType::f32, DType::f64}) {
      EXPECT_EQ(caps.profile(d), b->capabilities().profile(d));
      EXPECT_TRUE(is_valid_profile(d, caps.profile(d)));
      seen.insert(std::string(dtype_name(d)) + ":" + profile_name(caps.profile(d)));
    }
    EXPECT_NE(caps.version.find("seed " + std::to_string(seed)), std::string::npos) << caps.version;
    EXPECT_NE(caps.version.find("f16 accumulate " + std::string(dtype_name(caps.profile(DType::f16).accumulate))),
              std::string::npos)
        << caps.version;
  }
  // Every profile of the draw occurs: f16 and bf16 in themselves, f32 or f64; f32 × {none, tf32}.
  EXPECT_EQ(seen.size(), 3u + 3u + 4u + 1u);
}

// ---------------------------------------------------------------------------------------------
// The planted precision bugs, each caught within a bounded number of cases

/// A stream of cases built to separate the profiles (long sums and dot products of ones, of
/// random values in [0, 1), a large head followed by small terms, cancellation series), as einsums.
Case separating_case(Rng& rng, DType dtype) {
  const std::int64_t n = dtype == DType::bf16 ? rng.between(300, 3000) : rng.between(2100, 6000);
  const int family = static_cast<int>(rng.below(4));
  const bool dot = rng.chance(1, 2);
  Case c;
  c.pattern = dot ? "i, i ->" : "i ->";
  c.dtype = dtype;
  for (int m = 0; m < (dot ? 2 : 1); ++m) {
    Tensor t(dtype, Shape{n});
    visit_dtype(dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (is_half_type_v<T>) {
        auto v = t.values<T>();
        for (std::size_t j = 0; j < v.size(); ++j) {
          float x = 1.0f;
          if (m == 0) {
            if (family == 1) x = static_cast<float>(rng.below(1024)) / 1024.0f;
            if (family == 2) x = j == 0 ? 2048.0f : 0.25f * static_cast<float>(1 + rng.below(4));
            if (family == 3) x = (j % 2 == 0 ? 1.0f : -1.0f) * (j % 4 < 2 ? 512.0f : 0.75f);
          }
          v[j] = T(x);
        }
      }
    });
    c.inputs.push_back(std::move(t));
  }
  return c;
}

/// f32 dot products of values in [1, 2) with full mantissas: TF32 inputs lose 13 bits each.
Case tf32_case(Rng& rng) {
  const std::int64_t n = rng.between(1, 64);
  std::vector<float> a(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(n));
  for (float& x : a) x = 1.0f + static_cast<float>(rng.below(1 << 23)) * 0x1p-23f;
  for (float& x : b) x = 1.0f + static_cast<float>(rng.below(1 << 23)) * 0x1p-23f;
  Case c;
  c.pattern = "i, i ->";
  c.dtype = DType::f32;
  c.inputs = {Tensor(Shape{n}, a), Tensor(Shape{n}, b)};
  return c;
}

/// The number of cases of `next` until `backend` first fails (limit + 1: never within the limit);
/// every case also runs on a shuffle declaring `honest`, which must never fail.
template <class Next>
int cases_until_caught(Backend& backend, const PrecisionProfile& honest, int limit, Next&& next) {
  for (int i = 1; i <= limit; ++i) {
    const Case c = next();
    ShuffleOptions options;
    options.seed = static_cast<std::uint64_t>(i);
    options.profiles = {{c.dtype, honest}};
    const auto shuffle = make_shuffle_backend(options);
    Backend* list[] = {&backend, shuffle.get()};
    const CaseOutcome out = run_case(c, list, {});
    EXPECT_FALSE(is_failure(out.backends[1].verdict.kind)) << explain(out.backends[1].verdict, c);
    if (is_failure(out.backends[0].verdict.kind)) {
      EXPECT_EQ(out.backends[0].verdict.kind, VerdictKind::mismatch_value) << explain(out.backends[0].verdict, c);
      return i;
    }
  }
  return limit + 1;
}

TEST(OracleProfilePlanted, HalfSumsDeclaredF32AreCaught) {
  const auto bug = test::make_precision_bug_backend(test::PrecisionBug::half_sums_declared_f32);
  for (const DType dtype : {DType::f16, DType::bf16}) {
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      Rng rng(seed);
      const int n = cases_until_caught(*bug, {DType::f32, InputRounding::none}, 8, [&] { return separating_case(rng, dtype); });
      EXPECT_LE(n, 8) << dtype_name(dtype) << " seed " << seed;
    }
  }
}

TEST(OracleProfilePlanted, UndeclaredTf32IsCaught) {
  const auto bug = test::make_precision_bug_backend(test::PrecisionBug::undeclared_tf32);
  // The textbook case first, then a stream.
  const Case first = einsum_case("i, i ->", DType::f32, {{{1}, "0x1.001p+0"}, {{1}, "0x1.001p+0"}});
  EXPECT_EQ(run_on(first, *bug).kind, VerdictKind::mismatch_value);
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    Rng rng(seed);
    const int n = cases_until_caught(*bug, storage_profile(DType::f32), 4, [&] { return tf32_case(rng); });
    EXPECT_LE(n, 4) << "seed " << seed;
  }
}

TEST(OracleProfilePlanted, HalfChunkAccumulatorDeclaredF32IsCaught) {
  const auto bug = test::make_precision_bug_backend(test::PrecisionBug::half_chunk_accumulator);
  for (const DType dtype : {DType::f16, DType::bf16}) {
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      Rng rng(seed);
      const int n = cases_until_caught(*bug, {DType::f32, InputRounding::none}, 12, [&] { return separating_case(rng, dtype); });
      EXPECT_LE(n, 12) << dtype_name(dtype) << " seed " << seed;
    }
  }
}

}  // namespace
}  // namespace einfuzz
