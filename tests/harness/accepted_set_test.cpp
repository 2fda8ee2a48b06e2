// accepted_sets (judge.hpp) against judge_any_order itself: an element's set contains a result
// exactly when the judge does not call it a failure, for generated float einsums and reduces and
// results drawn around each element's truth (bounds ± 1 ulp, zeros of both signs, NaN, ±Inf).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "einfuzz/core/choice.hpp"
#include "einfuzz/harness/generate.hpp"
#include "einfuzz/harness/judge.hpp"
#include "einfuzz/harness/run.hpp"

namespace einfuzz {
namespace {

/// Results worth trying for one element: the truth's rounding and its neighbours, the rounded
/// interval ends and their neighbours, both zeros, the specials and a random bit pattern.
template <class T>
std::vector<T> candidates(const AcceptedSet& a, T rounded, Rng& rng) {
  constexpr T inf = std::numeric_limits<T>::infinity();
  std::vector<T> out = {rounded, T(0), -T(0), std::numeric_limits<T>::quiet_NaN(), inf, -inf};
  const auto around = [&](T x) {
    if (!std::isfinite(x)) return;
    out.push_back(x);
    out.push_back(std::nextafter(x, inf));
    out.push_back(std::nextafter(x, -inf));
  };
  around(rounded);
  if (a.finite == AcceptedSet::Finite::interval) {
    around(a.low.template round_quotient<T>(a.divisor, reference::Rounding::up));
    around(a.low.template round_quotient<T>(a.divisor, reference::Rounding::down));
    around(a.high.template round_quotient<T>(a.divisor, reference::Rounding::up));
    around(a.high.template round_quotient<T>(a.divisor, reference::Rounding::down));
  }
  if constexpr (std::is_same_v<T, float>) {
    const auto bits = static_cast<std::uint32_t>(rng.next());
    out.push_back(std::bit_cast<float>(bits));
  } else {
    out.push_back(std::bit_cast<double>(rng.next()));
  }
  return out;
}

/// For every element and candidate: the other elements hold their ŝ*, this one the candidate.
template <class T>
void check_agreement(const Tensor& rounded, const std::vector<AcceptedSet>& sets, Rng& rng,
                     const std::function<Verdict(const Tensor&)>& judge) {
  const auto base = rounded.values<T>();
  std::vector<bool> base_ok(base.size());
  for (std::size_t i = 0; i < base.size(); ++i) base_ok[i] = sets[i].contains(static_cast<double>(base[i]));
  for (std::size_t i = 0; i < base.size() && i < 6; ++i) {
    for (const T r : candidates<T>(sets[i], base[i], rng)) {
      Tensor actual = rounded;
      actual.values<T>()[i] = r;
      bool predicted = sets[i].contains(static_cast<double>(r));
      for (std::size_t j = 0; j < base.size(); ++j) predicted = predicted && (j == i || base_ok[j]);
      const Verdict v = judge(actual);
      RC_ASSERT(predicted == !is_failure(v.kind));
    }
  }
}

void check_case_agreement(const Case& c, Rng& rng) {
  auto checked = check_case(c, Limits{});
  RC_PRE(checked.ok());
  RC_PRE(is_float(c.dtype));
  if (const auto* e = std::get_if<CheckedEinsum>(&*checked)) {
    const auto truth = reference::multiset_einsum(*e, c.inputs);
    for (const bool factoring : {false, true}) {
      for (const bool strict : {false, true}) {
        const AnyOrderJudgeOptions o{factoring, strict};
        const auto sets = accepted_sets(truth, o);
        RC_ASSERT(sets.size() == static_cast<std::size_t>(truth.rounded.size()));
        visit_dtype(c.dtype, [&](auto tag) {
          using T = decltype(tag);
          if constexpr (std::is_floating_point_v<T>) {
            check_agreement<T>(truth.rounded, sets, rng, [&](const Tensor& a) { return judge_any_order(truth, a, o); });
          }
        });
      }
    }
    return;
  }
  const auto& r = std::get<CheckedReduce>(*checked);
  RC_PRE(r.kind != Reduction::any && r.kind != Reduction::all);
  const auto truth = reference::multiset_reduce(r, c.inputs[0]);
  for (const NanProfile profile : {NanProfile::propagate, NanProfile::ignore}) {
    for (const bool strict : {false, true}) {
      const auto sets = accepted_sets(truth, profile, strict);
      RC_ASSERT(sets.size() == static_cast<std::size_t>(truth.rounded.size()));
      visit_dtype(c.dtype, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_floating_point_v<T>) {
          check_agreement<T>(truth.rounded, sets, rng,
                             [&](const Tensor& a) { return judge_any_order(truth, a, profile, strict); });
        }
      });
    }
  }
}

RC_GTEST_PROP(AcceptedSets, EinsumSetsAreWhatTheJudgeAccepts, (std::uint64_t seed)) {
  Rng rng(seed);
  GenOptions options;
  options.dtypes = {DType::f32, DType::f64};
  options.max_global = 256;
  check_case_agreement(generate_einsum(rng, options), rng);
}

RC_GTEST_PROP(AcceptedSets, ReduceSetsAreWhatTheJudgeAccepts, (std::uint64_t seed)) {
  Rng rng(seed);
  SeededChoices choices(seed);
  ReduceGenOptions options;
  options.max_elements = 256;
  check_case_agreement(generate_reduce(choices, options), rng);
}

TEST(AcceptedSets, EmptyContractionAcceptsOnlyZero) {
  Case c;
  c.pattern = "i, j ->";
  c.dtype = DType::f64;
  c.inputs = {Tensor(Shape{1}, std::vector<double>{std::numeric_limits<double>::infinity()}),
              Tensor(Shape{0}, std::vector<double>{})};
  const auto checked = check_case(c, Limits{});
  ASSERT_TRUE(checked.ok());
  const auto truth = reference::multiset_einsum(std::get<CheckedEinsum>(*checked), c.inputs);
  const auto sets = accepted_sets(truth, {true, false});
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_TRUE(sets[0].contains(0.0));
  EXPECT_TRUE(sets[0].contains(-0.0));
  EXPECT_FALSE(sets[0].contains(std::nan("")));
  EXPECT_FALSE(sets[0].contains(0x1p-1074));
  EXPECT_FALSE(accepted_sets(truth, {true, true})[0].contains(-0.0));
}

}  // namespace
}  // namespace einfuzz
