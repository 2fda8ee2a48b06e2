// The any-order VJP judge is sound on the reference's ordered VJP (one valid evaluation order,
// SEMANTICS §13.8): generated einsums (broadcasting, diagonals, ellipses, zero-length axes) and
// reduces with generated cotangents are never judged a failure, factoring or not; answers built
// by the tie rules one and all are accepted under those rules.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "einfuzz/core/case.hpp"
#include "einfuzz/harness/generate.hpp"
#include "harness/oracle_support.hpp"
#include "harness/oracle_vjp_support.hpp"

namespace einfuzz {
namespace {

using oracle_test::kProfiles;
using oracle_test::Profile;
using oracle_test::redraw_values;

Rng case_rng(std::uint64_t salt) {
  const auto seed = *rc::gen::noShrink(rc::gen::resize(100, rc::gen::arbitrary<std::uint64_t>()));
  return Rng(Rng::mix(seed, salt));
}

/// The generator's cotangent values for `shape`, half of the time redrawn from the same profile
/// as the inputs (edge values, every binade, near Ω, …).
Tensor cotangent_for(Rng& rng, DType dtype, const Shape& shape, Profile profile) {
  SeededChoices choices(rng);
  Case holder;
  holder.inputs.push_back(generate_values(choices, dtype, shape));
  if (rng.chance(1, 2)) redraw_values(holder, rng, profile);
  return std::move(holder.inputs.front());
}

std::string describe(const Case& c, const Tensor& g) {
  Case v = c;
  v.cotangent = g;
  return write_case(v);
}

void expect_accepted(const Verdict& v, const Case& c, const Tensor& g) {
  RC_TAG(v.label());
  if (is_failure(v.kind)) RC_FAIL(vjp_test::explain(v) + "\n" + describe(c, g));
}

TEST(OracleVjpSound, ReferenceVjpIsAcceptedOnEinsum) {
  rc::detail::checkGTest([] {
    Rng rng = case_rng(131);
    GenOptions options;
    options.dtypes = {DType::f32, DType::f64};
    options.max_global = 1024;
    Case c = generate_einsum(rng, options);
    const Profile profile = kProfiles[rng.below(std::size(kProfiles))];
    redraw_values(c, rng, profile);
    const CheckedEinsum e = vjp_test::checked_einsum(c.pattern, c.inputs);
    const Tensor g = cotangent_for(rng, c.dtype, e.output_shape, profile);
    const Gradients answer{reference::vjp_einsum(e, c.inputs, g)};
    const reference::MultisetVjp truth = reference::multiset_vjp_einsum(e, c.inputs, g);
    expect_accepted(judge_vjp_any_order(truth, answer, VjpJudgeOptions{false, TieRule::equal_share}), c, g);
  });
}

Case float_reduce(Rng& rng, std::span<const Reduction> kinds) {
  ReduceGenOptions options;
  options.kind = kinds[rng.below(kinds.size())];
  options.dtype = rng.chance(1, 2) ? DType::f32 : DType::f64;
  options.max_elements = 512;
  SeededChoices choices(rng);
  return generate_reduce(choices, options);
}

CheckedReduce checked_of(const Case& c) {
  auto checked = check_reduce(c.pattern, *c.reduction, c.inputs[0].shape(), c.axis_lengths, c.dtype);
  if (!checked) RC_FAIL(render(checked.error()));
  return *checked;
}

TEST(OracleVjpSound, ReferenceVjpIsAcceptedOnReduce) {
  rc::detail::checkGTest([] {
    Rng rng = case_rng(132);
    constexpr Reduction kKinds[] = {Reduction::sum, Reduction::mean, Reduction::prod, Reduction::min, Reduction::max};
    Case c = float_reduce(rng, kKinds);
    const Profile profile = kProfiles[rng.below(std::size(kProfiles))];
    redraw_values(c, rng, profile);
    const CheckedReduce r = checked_of(c);
    const Tensor g = cotangent_for(rng, c.dtype, r.output_shape, profile);
    const Gradients answer{{reference::vjp_reduce(r, c.inputs[0], g)}};
    RC_CLASSIFY(r.kind == Reduction::min || r.kind == Reduction::max, "min/max");
    expect_accepted(judge_vjp_any_order(reference::multiset_vjp_reduce(r, c.inputs[0], g), answer), c, g);
  });
}

/// The answer of a backend with tie rule `one` (g to the last element of each T, ±0 elsewhere)
/// or `all` (g to every element of T), from the truth's tie sets.
template <class T>
Tensor tie_answer(const reference::VjpTies& ties, TieRule rule, Rng& rng) {
  Tensor out(dtype_of_v<T>, ties.input_shape);
  auto values = out.values<T>();
  const auto g = ties.cotangent.values<T>();
  for (T& v : values) v = rng.chance(1, 2) ? T(0) : -T(0);
  for (std::size_t t = 0; t < ties.tie_elements.size(); ++t) {
    const auto flat = static_cast<std::size_t>(ties.tie_elements[t]);
    const auto o = static_cast<std::size_t>(ties.fibre_of[flat]);
    const bool last = t + 1 == ties.tie_elements.size() ||
                      ties.fibre_of[static_cast<std::size_t>(ties.tie_elements[t + 1])] != ties.fibre_of[flat];
    if (rule == TieRule::all || last) values[flat] = g[o];
  }
  return out;
}

TEST(OracleVjpSound, TieRulesOneAndAllAcceptTheirAnswers) {
  rc::detail::checkGTest([] {
    Rng rng = case_rng(133);
    constexpr Reduction kKinds[] = {Reduction::min, Reduction::max};
    Case c = float_reduce(rng, kKinds);
    // Small integers make ties common.
    redraw_values(c, rng, rng.chance(1, 2) ? Profile::small : Profile::mixed);
    const CheckedReduce r = checked_of(c);
    const Tensor g = cotangent_for(rng, c.dtype, r.output_shape, Profile::mixed);
    const reference::MultisetVjp truth = reference::multiset_vjp_reduce(r, c.inputs[0], g);
    for (const TieRule rule : {TieRule::one, TieRule::all}) {
      const Tensor answer = c.dtype == DType::f32 ? tie_answer<float>(*truth.ties, rule, rng)
                                                  : tie_answer<double>(*truth.ties, rule, rng);
      expect_accepted(judge_vjp_any_order(truth, Gradients{{answer}}, VjpJudgeOptions{false, rule}), c, g);
    }
  });
}

}  // namespace
}  // namespace einfuzz
