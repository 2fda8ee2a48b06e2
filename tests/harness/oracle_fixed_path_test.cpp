// The oracle's machine-integer fast path (exact_fixed.hpp, ExactPath::fixed) against the GMP path
// it replaces: the same truths, field for field, and the same verdicts on the same results, on
// random one-term and few-term elements and sum/mean fibres with edge values; and its 192-bit
// arithmetic against GMP.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/harness/judge.hpp"
#include "einfuzz/harness/judge_vjp.hpp"
#include "einfuzz/reference/exact_fixed.hpp"
#include "einfuzz/reference/multiset.hpp"
#include "einfuzz/reference/multiset_vjp.hpp"
#include "exact_sum.hpp"  // reference/src
#include "harness/oracle_support.hpp"

namespace einfuzz {
namespace {

using namespace oracle_test;
using reference::Dyadic;
using reference::ExactPath;
using reference::FixedDyadic;
using reference::Rounding;
using reference::U192;
using reference::u128;

/// Patterns whose elements have one term (K = 1: products, outer products, diagonals, passthroughs)
/// or a few (up to 12), so the one-term and few-term fixed paths and the general one all meet.
struct Pattern {
  const char* text;
  std::vector<Shape> shapes;
};
const std::vector<Pattern>& patterns() {
  static const std::vector<Pattern> all = {
      {"i, i -> i", {{5}, {5}}},          {"i, j -> i j", {{3}, {4}}},       {"i -> i", {{6}}},
      {"i i -> i", {{3, 3}}},             {"a, a, a -> a", {{4}, {4}, {4}}}, {"a, a, a, a -> a", {{3}, {3}, {3}, {3}}},
      {"i, i ->", {{4}, {4}}},            {"a b, b -> a", {{2, 3}, {3}}},    {"i j -> j", {{1, 4}}},
      {"i, -> i", {{4}, {}}},             {"i, j -> i", {{3}, {0}}},
      // Longer contractions: the few-term fixed path's carries and windows.
      {"i j, j -> i", {{2, 9}, {9}}},     {"a b c, b c -> a", {{2, 3, 4}, {3, 4}}},
      {"a b, b c, c -> a", {{2, 3}, {3, 2}, {2}}},
  };
  return all;
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0 || (std::isnan(a) && std::isnan(b));
}

/// Every field of two truths of one element, exactly (values compared as numbers, doubles bitwise).
void expect_same_truth(const ElementTruth& f, const ElementTruth& g, const std::string& where) {
  RC_ASSERT(f.value_class == g.value_class);
  RC_ASSERT(f.terms == g.terms);
  RC_ASSERT(f.factors == g.factors);
  RC_ASSERT(f.nan_input == g.nan_input);
  RC_ASSERT(f.zero_times_inf == g.zero_times_inf);
  RC_ASSERT(f.mixed_inf == g.mixed_inf);
  RC_ASSERT(f.no_overflow == g.no_overflow);
  RC_ASSERT(f.no_overflow_nonfactoring == g.no_overflow_nonfactoring);
  RC_ASSERT(f.no_inf_underflow == g.no_inf_underflow);
  RC_ASSERT(f.divisor == g.divisor);
  RC_ASSERT(f.zero_negative == g.zero_negative);
  RC_ASSERT(f.bounded == g.bounded);
  if (compare(f.exact, g.exact) != 0) RC_FAIL(where + ": exact " + dyadic_hex(f.exact) + " vs " + dyadic_hex(g.exact));
  if (compare(f.scaled_bound, g.scaled_bound) != 0) {
    RC_FAIL(where + ": bound " + dyadic_hex(f.scaled_bound) + " vs " + dyadic_hex(g.scaled_bound));
  }
  RC_ASSERT(same_bits(f.abs_sum, g.abs_sum));
  RC_ASSERT(same_bits(f.magnitude, g.magnitude));
  RC_ASSERT(same_bits(f.bound, g.bound));
}

void expect_same_verdict(const Verdict& a, const Verdict& b, const std::string& where) {
  if (a.label() != b.label() || a.detail != b.detail || a.differing != b.differing ||
      a.indeterminate != b.indeterminate || a.notes != b.notes || a.error_bins != b.error_bins) {
    RC_FAIL(where + ": fixed " + test::explain(a) + " | general " + test::explain(b));
  }
  RC_ASSERT(a.first.has_value() == b.first.has_value());
  if (!a.first) return;
  const ElementEvidence &x = *a.first, &y = *b.first;
  RC_ASSERT(x.flat_index == y.flat_index);
  RC_ASSERT(x.exact == y.exact);
  RC_ASSERT(x.bound_text == y.bound_text);
  RC_ASSERT(x.reachable == y.reachable);
  RC_ASSERT(same_bits(x.bound, y.bound));
  RC_ASSERT(same_bits(x.ulps, y.ulps));
  RC_ASSERT(same_bits(x.bound_multiples, y.bound_multiples));
}

/// One value: the oracle's edge profiles (subnormals, near Ω, ±0, every binade, NaN / ±Inf), or
/// ±(1 + 2^-a)·2^e, whose products are a T plus a tiny tail: results whose distance is any small
/// fraction of the bound, so every error bin is met. A 16-bit format draws any bit pattern of its
/// own (its subnormals, Ω, NaN and ±Inf), the second kind, or a float of those profiles rounded.
template <class T>
T draw(Rng& rng) {
  if constexpr (is_half_type_v<T>) {
    if (rng.chance(1, 4)) return T::from_bits(static_cast<std::uint16_t>(rng.next()));
    if (rng.chance(1, 3)) {
      const int a = static_cast<int>(rng.between(1, std::numeric_limits<T>::digits - 1));
      const float v = std::ldexp(1.0f + std::ldexp(1.0f, -a), static_cast<int>(rng.between(-4, 4)));
      return T(rng.chance(1, 2) ? v : -v);
    }
    return T(draw_value<float>(rng, kProfiles[1 + rng.below(std::size(kProfiles) - 1)]));
  } else {
  if (rng.chance(1, 4)) {
    const int a = static_cast<int>(rng.between(1, std::numeric_limits<T>::digits - 1));
    const T v = std::ldexp(T(1) + std::ldexp(T(1), -a), static_cast<int>(rng.between(-4, 4)));
    return rng.chance(1, 2) ? v : -v;
  }
  return draw_value<T>(rng, kProfiles[1 + rng.below(std::size(kProfiles) - 1)]);
  }
}

/// Inputs of T for pattern `p`, every value drawn.
template <class T>
std::vector<Tensor> draw_inputs(const Pattern& p, Rng& rng) {
  std::vector<Tensor> x;
  for (const Shape& s : p.shapes) {
    Tensor t(dtype_of_v<T>, s);
    for (T& v : t.values<T>()) v = draw<T>(rng);
    x.push_back(std::move(t));
  }
  return x;
}

/// Results to judge near ŝ* (0–3 ulps either side, its negation, ±0) or anywhere (another draw).
template <class T>
T candidate(Rng& rng, T rounded) {
  const T inf = std::numeric_limits<T>::infinity();
  T r = std::isfinite(rounded) ? rounded : draw<T>(rng);
  switch (rng.below(8)) {
    case 0: return r;
    case 1: case 2: {
      const int steps = static_cast<int>(rng.below(4));
      for (int s = 0; s < steps; ++s) r = next_toward(r, rng.chance(1, 2) ? inf : -inf);
      return r;
    }
    case 3: return -r;
    case 4: return rng.chance(1, 2) ? T(0) : -T(0);
    case 5: {
      using W = std::conditional_t<is_half_type_v<T>, float, T>;  // the 16-bit formats multiply in float
      const W scale = W(1) + std::ldexp(W(1), -static_cast<int>(rng.between(1, std::numeric_limits<T>::digits)));
      return T(static_cast<W>(r) * scale);
    }
    default: return draw<T>(rng);
  }
}

/// The same results judged against both truths of one tensor, with every judge option.
template <class T>
void judge_both(const MultisetEinsum& fixed, const MultisetEinsum& general, Rng& rng, const std::string& where) {
  for (int round = 0; round < 4; ++round) {
    Tensor actual = fixed.rounded;
    for (T& v : actual.values<T>()) v = candidate<T>(rng, v);
    for (const bool factoring : {false, true}) {
      for (const bool strict : {false, true}) {
        const AnyOrderJudgeOptions o{factoring, strict};
        expect_same_verdict(judge_any_order(fixed, actual, o), judge_any_order(general, actual, o), where);
      }
    }
  }
}

/// A random precision profile valid for T (ORACLE §8): a wider accumulator, sometimes TF32 inputs;
/// none (the dtype's default, §2) when none is drawn or valid.
template <class T>
std::optional<PrecisionProfile> draw_profile(Rng& rng) {
  if (rng.chance(1, 2)) return std::nullopt;
  const DType accumulators[] = {DType::f32, DType::f64};
  PrecisionProfile p{accumulators[rng.below(2)], rng.chance(1, 4) ? InputRounding::tf32 : InputRounding::none};
  if (!is_valid_profile(dtype_of_v<T>, p) || p == storage_profile(dtype_of_v<T>)) return std::nullopt;
  return p;
}

template <class T>
void both_paths_agree(std::uint64_t seed, bool vjp) {
  Rng rng(seed);
  const Pattern& p = patterns()[rng.below(patterns().size())];
  const auto checked = check_einsum(p.text, p.shapes);
  RC_ASSERT(checked.ok());
  const std::vector<Tensor> x = draw_inputs<T>(p, rng);
  const std::string where = std::string(p.text) + (vjp ? " (vjp)" : "") + " seed " + std::to_string(seed);
  std::vector<std::pair<MultisetEinsum, MultisetEinsum>> truths;
  bool profiled = false, tf32 = false;
  if (vjp) {
    Tensor g(dtype_of_v<T>, checked->output_shape);
    for (T& v : g.values<T>()) v = draw<T>(rng);
    reference::MultisetVjp f = reference::multiset_vjp_einsum(*checked, x, g, ExactPath::fixed);
    reference::MultisetVjp h = reference::multiset_vjp_einsum(*checked, x, g, ExactPath::general);
    for (std::size_t m = 0; m < f.inputs.size(); ++m) truths.emplace_back(std::move(f.inputs[m]), std::move(h.inputs[m]));
  } else if (const std::optional<PrecisionProfile> profile = draw_profile<T>(rng)) {
    profiled = true;
    tf32 = profile->round_inputs == InputRounding::tf32;
    truths.emplace_back(reference::multiset_einsum(*checked, x, *profile, ExactPath::fixed),
                        reference::multiset_einsum(*checked, x, *profile, ExactPath::general));
  } else {
    truths.emplace_back(reference::multiset_einsum(*checked, x, ExactPath::fixed),
                        reference::multiset_einsum(*checked, x, ExactPath::general));
  }
  std::size_t fixed = 0, total = 0;
  for (const auto& [f, g] : truths) {
    RC_ASSERT(f.elements.size() == g.elements.size());
    total += f.elements.size();
    const auto fr = f.rounded.template values<T>(), gr = g.rounded.template values<T>();
    for (std::size_t i = 0; i < f.elements.size(); ++i) {
      RC_ASSERT(!g.elements[i].exact.is_fixed());  // the general path never takes the fast one
      if (f.elements[i].exact.is_fixed() && f.elements[i].scaled_bound.is_fixed()) ++fixed;
      expect_same_truth(f.elements[i], g.elements[i], where + " element " + std::to_string(i));
      RC_ASSERT(same_bits(fr[i], gr[i]));
    }
    judge_both<T>(f, g, rng, where);
  }
  RC_CLASSIFY(fixed > 0, "some elements fixed");
  RC_CLASSIFY(fixed < total, "some elements general");
  RC_CLASSIFY(profiled && fixed > 0, "profiled, some elements fixed");
  RC_CLASSIFY(tf32 && fixed > 0, "TF32 inputs, some elements fixed");
}

RC_GTEST_PROP(OracleFixedPath, TruthsAndVerdictsEqualTheGeneralPathF64, ()) {
  both_paths_agree<double>(*rc::gen::arbitrary<std::uint64_t>(), *rc::gen::arbitrary<bool>());
}

RC_GTEST_PROP(OracleFixedPath, TruthsAndVerdictsEqualTheGeneralPathF32, ()) {
  both_paths_agree<float>(*rc::gen::arbitrary<std::uint64_t>(), *rc::gen::arbitrary<bool>());
}

RC_GTEST_PROP(OracleFixedPath, TruthsAndVerdictsEqualTheGeneralPathF16, ()) {
  both_paths_agree<Float16>(*rc::gen::arbitrary<std::uint64_t>(), false);  // VJPs are f32/f64 (ORACLE §7)
}

RC_GTEST_PROP(OracleFixedPath, TruthsAndVerdictsEqualTheGeneralPathBF16, ()) {
  both_paths_agree<BFloat16>(*rc::gen::arbitrary<std::uint64_t>(), false);  // VJPs are f32/f64 (ORACLE §7)
}

/// multiset_einsum under several profiles at once (one walk over each element's terms, a bound per
/// profile: TermTruth::compute_again) against each profile's multiset_einsum alone: the same truths,
/// field for field, the same ŝ* and the same profile, along both exact paths. The list mixes the
/// dtype's default with drawn §8 profiles in any order (TF32 input rounding, whose Ω and underflow
/// floor differ from the first profile's), repeats included.
template <class T>
void shared_profiles_agree(std::uint64_t seed) {
  Rng rng(seed);
  const Pattern& p = patterns()[rng.below(patterns().size())];
  const auto checked = check_einsum(p.text, p.shapes);
  RC_ASSERT(checked.ok());
  const std::vector<Tensor> x = draw_inputs<T>(p, rng);
  std::vector<PrecisionProfile> profiles;
  const auto n = static_cast<std::size_t>(rng.between(2, 4));
  while (profiles.size() < n) profiles.push_back(draw_profile<T>(rng).value_or(storage_profile(dtype_of_v<T>)));
  const ExactPath path = rng.chance(1, 4) ? ExactPath::general : ExactPath::fixed;
  const std::vector<MultisetEinsum> shared =
      reference::multiset_einsum(*checked, reference::broadcast_einsum(*checked, x), profiles, path);
  RC_ASSERT(shared.size() == profiles.size());
  bool profiles_differ = false;
  for (std::size_t i = 0; i < profiles.size(); ++i) {
    profiles_differ |= !(profiles[i] == profiles[0]);
    const std::string where = std::string(p.text) + " seed " + std::to_string(seed) + " profile " + std::to_string(i);
    const MultisetEinsum alone = reference::multiset_einsum(*checked, x, profiles[i], path);
    RC_ASSERT(shared[i].profile == alone.profile);
    RC_ASSERT(shared[i].elements.size() == alone.elements.size());
    const auto sr = shared[i].rounded.template values<T>(), ar = alone.rounded.template values<T>();
    for (std::size_t e = 0; e < alone.elements.size(); ++e) {
      expect_same_truth(shared[i].elements[e], alone.elements[e], where + " element " + std::to_string(e));
      RC_ASSERT(same_bits(sr[e], ar[e]));
    }
  }
  RC_CLASSIFY(profiles_differ, "profiles differ");
}

RC_GTEST_PROP(OracleSharedProfiles, SeveralProfilesAtOnceEqualEachAloneF32, ()) {
  shared_profiles_agree<float>(*rc::gen::arbitrary<std::uint64_t>());
}

RC_GTEST_PROP(OracleSharedProfiles, SeveralProfilesAtOnceEqualEachAloneF64, ()) {
  shared_profiles_agree<double>(*rc::gen::arbitrary<std::uint64_t>());
}

RC_GTEST_PROP(OracleSharedProfiles, SeveralProfilesAtOnceEqualEachAloneF16, ()) {
  shared_profiles_agree<Float16>(*rc::gen::arbitrary<std::uint64_t>());
}

RC_GTEST_PROP(OracleSharedProfiles, SeveralProfilesAtOnceEqualEachAloneBF16, ()) {
  shared_profiles_agree<BFloat16>(*rc::gen::arbitrary<std::uint64_t>());
}

/// sum and mean reductions, both paths, with and without a profile: the same truths and verdicts
/// (the fixed path sums the fibre in 192-bit integers when its window allows).
template <class T>
void reduce_paths_agree(std::uint64_t seed) {
  Rng rng(seed);
  static const std::vector<std::pair<const char*, Shape>> patterns = {
      {"a b -> a", {3, 4}}, {"a b -> b", {5, 2}}, {"a b c -> a c", {2, 7, 2}}, {"a -> ", {1}}, {"a b -> a", {2, 0}}};
  const auto& [pattern, shape] = patterns[rng.below(patterns.size())];
  const char* kind = rng.chance(1, 2) ? "sum" : "mean";
  const std::vector<std::pair<std::string, std::int64_t>> no_lengths;
  const auto checked = check_reduce(pattern, kind, shape, no_lengths, dtype_of_v<T>);
  if (!checked.ok()) return;  // mean over an empty fibre
  Tensor x(dtype_of_v<T>, shape);
  for (T& v : x.values<T>()) v = draw<T>(rng);
  const std::string where = std::string(pattern) + " " + kind + " seed " + std::to_string(seed);
  const std::optional<PrecisionProfile> profile = draw_profile<T>(rng);  // reductions ignore TF32
  const reference::MultisetReduce f = profile ? reference::multiset_reduce(*checked, x, *profile, ExactPath::fixed)
                                              : reference::multiset_reduce(*checked, x, ExactPath::fixed);
  const reference::MultisetReduce g = profile ? reference::multiset_reduce(*checked, x, *profile, ExactPath::general)
                                              : reference::multiset_reduce(*checked, x, ExactPath::general);
  RC_ASSERT(f.elements.size() == g.elements.size());
  const auto fr = f.rounded.template values<T>(), gr = g.rounded.template values<T>();
  std::size_t fixed = 0;
  for (std::size_t i = 0; i < f.elements.size(); ++i) {
    RC_ASSERT(!g.elements[i].exact.is_fixed());
    if (f.elements[i].exact.is_fixed()) ++fixed;
    expect_same_truth(f.elements[i], g.elements[i], where + " element " + std::to_string(i));
    RC_ASSERT(same_bits(fr[i], gr[i]));
  }
  for (int round = 0; round < 4; ++round) {
    Tensor actual = f.rounded;
    for (T& v : actual.values<T>()) v = candidate<T>(rng, v);
    for (const bool strict : {false, true}) {
      expect_same_verdict(judge_any_order(f, actual, NanProfile::propagate, strict),
                          judge_any_order(g, actual, NanProfile::propagate, strict), where);
    }
  }
  RC_CLASSIFY(fixed > 0, "some elements fixed");
  RC_CLASSIFY(fixed < f.elements.size(), "some elements general");
  RC_CLASSIFY(profile && fixed > 0, "profiled, some elements fixed");
}

RC_GTEST_PROP(OracleFixedPath, ReduceTruthsAndVerdictsEqualTheGeneralPathF64, ()) {
  reduce_paths_agree<double>(*rc::gen::arbitrary<std::uint64_t>());
}
RC_GTEST_PROP(OracleFixedPath, ReduceTruthsAndVerdictsEqualTheGeneralPathF32, ()) {
  reduce_paths_agree<float>(*rc::gen::arbitrary<std::uint64_t>());
}
RC_GTEST_PROP(OracleFixedPath, ReduceTruthsAndVerdictsEqualTheGeneralPathF16, ()) {
  reduce_paths_agree<Float16>(*rc::gen::arbitrary<std::uint64_t>());
}
RC_GTEST_PROP(OracleFixedPath, ReduceTruthsAndVerdictsEqualTheGeneralPathBF16, ()) {
  reduce_paths_agree<BFloat16>(*rc::gen::arbitrary<std::uint64_t>());
}

TEST(OracleFixedPath, TheDotVjpTakesTheFixedPath) {
  // The benchmark's judge_vjp_*/4 case: every cotangent element has one term.
  const std::vector<Shape> shapes = {{256}, {256}};
  const auto checked = check_einsum("i, i ->", shapes);
  ASSERT_TRUE(checked.ok());
  std::vector<Tensor> x = {Tensor(DType::f64, {256}), Tensor(DType::f64, {256})};
  for (Tensor& t : x) {
    double v = 0.75;
    for (double& e : t.values<double>()) e = (v *= -1.5);
  }
  Tensor g(DType::f64, {});
  g.values<double>()[0] = 3.25;
  const reference::MultisetVjp truth = reference::multiset_vjp_einsum(*checked, x, g);
  for (const MultisetEinsum& m : truth.inputs) {
    for (const ElementTruth& t : m.elements) {
      EXPECT_TRUE(t.exact.is_fixed());
      EXPECT_TRUE(t.scaled_bound.is_fixed());
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The 192-bit arithmetic against GMP

/// A random mantissa of up to `bits` bits (often all ones or a power of two: carries and ties).
U192 draw_mantissa(Rng& rng, int bits) {
  U192 m;
  for (auto& w : m.w) w = rng.next();
  switch (rng.below(4)) {
    case 0: m = U192{{~0ull, ~0ull, ~0ull}}; break;
    case 1: m = U192{{1, 0, 0}}.shifted_left(static_cast<int>(rng.below(static_cast<std::uint64_t>(bits)))); bits = 192; break;
    default: break;
  }
  bool sticky = false;
  return bits >= 192 ? m : m.shifted_right(192 - bits, sticky);
}

FixedDyadic draw_fixed(Rng& rng, long e_lo, long e_hi) {
  return {draw_mantissa(rng, static_cast<int>(rng.between(0, 192))), static_cast<long>(rng.between(e_lo, e_hi))};
}

RC_GTEST_PROP(OracleFixedPath, FixedArithmeticEqualsGmp, ()) {
  Rng rng(*rc::gen::arbitrary<std::uint64_t>());
  const long e0 = static_cast<long>(rng.between(-1300, 1100));
  const FixedDyadic a = draw_fixed(rng, e0 - 200, e0 + 50);
  // A second part close below the first (so close that the decisions must give up), or far below.
  const FixedDyadic low = rng.chance(1, 2) ? draw_fixed(rng, a.e - 250, a.e) : draw_fixed(rng, a.e - 1400, a.e - 300);
  FixedDyadic b = draw_fixed(rng, e0 - 200, e0 + 50);
  if (rng.chance(1, 3) && !low.is_zero() && !a.is_zero() && a.e >= low.e && a.top() - low.e <= 190) {
    // b in [a, a + low]: a plus low with some of its last bits dropped (the lattice decision's edge).
    const int drop = static_cast<int>(rng.below(static_cast<std::uint64_t>(low.m.bit_length()) + 1));
    bool sticky = false;
    const U192 kept = drop >= 192 ? U192{} : low.m.shifted_right(drop, sticky).shifted_left(drop);
    b = {a.m.shifted_left(static_cast<int>(a.e - low.e)) + kept, low.e};
  }
  const Dyadic da = a.dyadic(), db = b.dyadic();
  RC_ASSERT(compare(a, b) == compare(da, db));

  const bool negative = rng.chance(1, 2);
  reference::ExactBound two;
  two.set_fixed({a, low}, negative);
  const Dyadic sum = negative ? -(da + low.dyadic()) : da + low.dyadic();
  RC_ASSERT(compare(two.dyadic(), sum) == 0);
  for (const Rounding mode : {Rounding::nearest_even, Rounding::up, Rounding::down}) {
    RC_ASSERT(same_bits(two.round<double>(mode), sum.round<double>(mode)));
    RC_ASSERT(same_bits(two.round<float>(mode), sum.round<float>(mode)));
  }
  reference::ExactBound bound;
  bound.set_fixed({a, low}, false);
  const std::optional<bool> at_most = reference::fixed_at_most(b, bound);
  if (at_most) RC_ASSERT(*at_most == (compare(db, da + low.dyadic()) <= 0));
  RC_CLASSIFY(at_most.has_value(), "at_most decided");

  // |r − s| for a double r near s or anywhere.
  reference::Exact s;
  const FixedDyadic sm{draw_mantissa(rng, static_cast<int>(rng.between(0, 127))), static_cast<long>(rng.between(-1200, 1000))};
  s.set_fixed({sm}, rng.chance(1, 2));
  // One part rounded to the 16-bit formats, near their ranges (up to 192 bits: the 120-bit cut).
  reference::Exact h;
  const int h_bits = static_cast<int>(rng.between(0, 192));
  h.set_fixed({FixedDyadic{draw_mantissa(rng, h_bits), static_cast<long>(rng.between(-170, 130)) - h_bits}}, rng.chance(1, 2));
  for (const Rounding mode : {Rounding::nearest_even, Rounding::up, Rounding::down}) {
    RC_ASSERT(same_bits(h.round<Float16>(mode), h.dyadic().round<Float16>(mode)));
    RC_ASSERT(same_bits(h.round<BFloat16>(mode), h.dyadic().round<BFloat16>(mode)));
  }
  const double approx = s.round<double>(Rounding::nearest_even);
  double r = std::isfinite(approx) ? approx : std::numeric_limits<double>::max();
  if (rng.chance(1, 2)) r = std::nextafter(r, rng.chance(1, 2) ? 0.0 : -r);
  if (rng.chance(1, 4)) r = draw<double>(rng);
  if (!std::isfinite(r)) return;
  const std::optional<FixedDyadic> d = reference::fixed_distance(s, r);
  if (d) RC_ASSERT(compare(d->dyadic(), (Dyadic::of(r) - s.dyadic()).abs()) == 0);
}

/// compare(a, b) decides by sign and top bit before it shifts (exact.cpp): it must agree with the
/// sign of the exact difference, for equal values written with other exponents, for values that
/// share their top bit, for zeros and for mixed signs.
RC_GTEST_PROP(OracleExact, CompareIsTheSignOfTheDifference, ()) {
  Rng rng(*rc::gen::arbitrary<std::uint64_t>());
  const auto signed_dyadic = [&](const FixedDyadic& f) {
    const Dyadic d = f.dyadic();
    return rng.chance(1, 2) ? -d : d;
  };
  const long e0 = static_cast<long>(rng.between(-1300, 1100));
  const Dyadic a = signed_dyadic(draw_fixed(rng, e0 - 100, e0 + 100));
  Dyadic b;
  switch (rng.below(4)) {
    case 0: b = signed_dyadic(draw_fixed(rng, e0 - 100, e0 + 100)); break;  // anywhere near
    case 1: {  // the same value (or its negation) with a smaller exponent: equal top bits
      const long s = static_cast<long>(rng.between(0, 70));
      mpz_class m;
      mpz_mul_2exp(m.get_mpz_t(), a.mantissa().get_mpz_t(), static_cast<mp_bitcnt_t>(s));
      b = Dyadic(rng.chance(1, 2) ? m : mpz_class(-m), a.exponent() - s);
      break;
    }
    case 2: b = a + Dyadic(rng.chance(1, 2) ? 1 : -1, a.exponent() - static_cast<long>(rng.between(0, 40))); break;
    default: b = Dyadic(); break;  // zero
  }
  const int expected = (a - b).sign();
  RC_ASSERT(compare(a, b) == expected);
  RC_ASSERT(compare(b, a) == -expected);
  RC_ASSERT(compare(a, a) == 0);
}

/// The digit accumulator's exact sum (32-bit digits packed into GMP limbs) against GMP's own sum of
/// the same terms, for term counts and windows that carry across digits and limbs.
RC_GTEST_PROP(OracleExact, DigitAccumulatorEqualsGmpSum, ()) {
  Rng rng(*rc::gen::arbitrary<std::uint64_t>());
  const long base = static_cast<long>(rng.between(-1200, 1000));
  const long span = static_cast<long>(rng.between(0, 400));
  reference::detail::DigitAccumulator acc;
  acc.reset(base, span + 128);
  Dyadic expected;
  const auto n = rng.below(20);
  for (std::uint64_t i = 0; i < n; ++i) {
    const u128 m = rng.chance(1, 4) ? ~u128(0) >> rng.below(128) : (u128(rng.next()) << 64 | rng.next()) >> rng.below(128);
    const long e = base + static_cast<long>(rng.below(static_cast<std::uint64_t>(span) + 1));
    acc.add(m, e);
    expected = expected + Dyadic::of_u128(m, e, false);
  }
  const Dyadic got = acc.value();
  RC_ASSERT(compare(got, expected) == 0);
  RC_ASSERT(got.exponent() == base);
}


// ---------------------------------------------------------------------------------------------
// Dyadic::round, which reads the mantissa's limbs in place, against the copy it used to round

/// What Dyadic::round computed before it read the limbs in place: |m| copied, its top 120 bits and
/// a sticky bit (when longer), exported and rounded once.
template <class T>
T round_by_copy(const Dyadic& x, Rounding mode) {
  if (x.is_zero()) return T(0);
  mpz_class mag = ::abs(x.mantissa());
  long exponent = x.exponent();
  const long bits = static_cast<long>(mpz_sizeinbase(mag.get_mpz_t(), 2));
  if (bits > 120) {
    const long drop = bits - 120;
    const bool sticky = mpz_scan1(mag.get_mpz_t(), 0) < static_cast<mp_bitcnt_t>(drop);
    mpz_fdiv_q_2exp(mag.get_mpz_t(), mag.get_mpz_t(), static_cast<mp_bitcnt_t>(drop));
    mpz_mul_2exp(mag.get_mpz_t(), mag.get_mpz_t(), 1);
    if (sticky) mag += 1;
    exponent += drop - 1;
  }
  std::uint64_t words[2] = {0, 0};
  mpz_export(words, nullptr, -1, sizeof(std::uint64_t), 0, 0, mag.get_mpz_t());
  return reference::round_binary<T>((u128(words[1]) << 64) | words[0], exponent, x.sign() < 0, mode);
}

/// Mantissas of 1 to 400 bits (all ones, one bit, a 120-bit head with a tail of zeros or of one low
/// bit, or random limbs), either sign, exponents that put the value anywhere from below T's
/// subnormals to above its overflow threshold, every mode.
RC_GTEST_PROP(DyadicRound, ReadsTheLimbsAsTheCopyDid, ()) {
  Rng rng(*rc::gen::arbitrary<std::uint64_t>());
  const int bits = static_cast<int>(rng.between(1, 400));
  mpz_class m;
  switch (rng.below(5)) {
    case 0: m = (mpz_class(1) << bits) - 1; break;
    case 1: m = mpz_class(1) << (bits - 1); break;
    case 2: {  // 121 significant bits, then zeros or one low bit: the cut's sticky bit
      const mpz_class head = (mpz_class(std::to_string(rng.next())) << 56) + mpz_class(std::to_string(rng.next() >> 8));
      m = (((head | (mpz_class(1) << 120)) & ((mpz_class(1) << 121) - 1)) << bits) + (rng.chance(1, 2) ? 1 : 0);
      break;
    }
    default:  // random limbs, `bits` bits at most
      for (int i = 0; i < (bits + 63) / 64; ++i) m = (m << 64) + mpz_class(std::to_string(rng.next()));
      m >>= (64 - bits % 64) % 64;
      break;
  }
  if (m == 0) m = 1;
  if (rng.chance(1, 2)) m = -m;
  const long length = static_cast<long>(mpz_sizeinbase(m.get_mpz_t(), 2));
  // The value's top bit anywhere in [-1200, 1100] (f64's subnormals start at -1074, overflow at 1024).
  const Dyadic x(m, static_cast<long>(rng.between(-1200, 1100)) - length);
  for (const Rounding mode : {Rounding::nearest_even, Rounding::up, Rounding::down}) {
    RC_ASSERT(same_bits(x.round<double>(mode), round_by_copy<double>(x, mode)));
    RC_ASSERT(same_bits(x.round<float>(mode), round_by_copy<float>(x, mode)));
    RC_ASSERT(same_bits(x.round<Float16>(mode), round_by_copy<Float16>(x, mode)));
    RC_ASSERT(same_bits(x.round<BFloat16>(mode), round_by_copy<BFloat16>(x, mode)));
  }
  RC_CLASSIFY(length > 120, "longer than the 120-bit cut");
}

}  // namespace
}  // namespace einfuzz
