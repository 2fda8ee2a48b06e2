// The seed's differential laws (ORACLE §7) as RapidCheck properties of the reference, in exact
// arithmetic (Dyadic sums, never a tolerance): the adjoint identity for every einsum operand and for
// sum and mean, a sum reduction preserving the total, equal-share weights summing to 1 per nonempty
// fibre, and mean's VJP being the pullback times 1/n.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "einfuzz/core/case.hpp"
#include "einfuzz/harness/generate.hpp"
#include "einfuzz/reference/exact.hpp"
#include "einfuzz/reference/multiset.hpp"
#include "einfuzz/reference/multiset_vjp.hpp"
#include "einfuzz/reference/vjp.hpp"
#include "harness/oracle_support.hpp"

namespace einfuzz {
namespace {

using oracle_test::Profile;
using oracle_test::redraw_values;
using reference::Dyadic;

Rng laws_rng(std::uint64_t salt) {
  const auto seed = *rc::gen::noShrink(rc::gen::resize(100, rc::gen::arbitrary<std::uint64_t>()));
  return Rng(Rng::mix(seed, salt));
}

/// Finite values only (the laws are about the exact values of finite classes): every binade,
/// subnormals included, or small binary fractions, or cancellation pairs.
Profile finite_profile(Rng& rng) {
  constexpr Profile kFinite[] = {Profile::full_range, Profile::small, Profile::cancellation, Profile::tiny};
  return kFinite[rng.below(std::size(kFinite))];
}

Tensor finite_values(Rng& rng, DType dtype, const Shape& shape, Profile profile) {
  Case holder;
  holder.inputs.emplace_back(dtype, shape);
  redraw_values(holder, rng, profile);
  return std::move(holder.inputs.front());
}

/// Σ_i v_i · exact_i over per-element truths (all divisors 1).
Dyadic dot_exact(const Tensor& v, const std::vector<reference::ElementTruth>& truth) {
  reference::ExactAccumulator sum;
  visit_dtype(v.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const auto x = v.values<T>();
      for (std::size_t i = 0; i < x.size(); ++i) {
        RC_ASSERT(truth[i].divisor == 1);
        sum.add(Dyadic::of(x[i]) * truth[i].exact);
      }
    }
  });
  return sum.value();
}

std::string text(const Dyadic& d) { return std::to_string(d.approx()); }

// ⟨f(x with x_m ← v), w⟩ = ⟨v, vjp_m(w)⟩ for every operand m: einsum is linear in each operand,
// and both sides are the same sum of w[out(a)]·v[idx_m(a)]·Π_{q≠m} x_q[idx_q(a)] over G.
TEST(VjpLaws, AdjointIdentityForEveryEinsumOperand) {
  rc::detail::checkGTest([] {
    Rng rng = laws_rng(231);
    GenOptions options;
    options.dtypes = {DType::f32, DType::f64};
    options.max_global = 512;
    Case c = generate_einsum(rng, options);
    const Profile profile = finite_profile(rng);
    redraw_values(c, rng, profile);
    std::vector<Shape> shapes;
    for (const Tensor& t : c.inputs) shapes.push_back(t.shape());
    const CheckedEinsum e = *check_einsum(c.pattern, shapes);
    const Tensor w = finite_values(rng, c.dtype, e.output_shape, profile);
    const reference::MultisetVjp vjp = reference::multiset_vjp_einsum(e, c.inputs, w);
    RC_TAG(c.inputs.size());
    for (std::size_t m = 0; m < c.inputs.size(); ++m) {
      std::vector<Tensor> replaced = c.inputs;
      replaced[m] = finite_values(rng, c.dtype, c.inputs[m].shape(), profile);
      const reference::MultisetEinsum forward = reference::multiset_einsum(e, replaced);
      const Dyadic lhs = dot_exact(w, forward.elements);
      const Dyadic rhs = dot_exact(replaced[m], vjp.inputs[m].elements);
      if (compare(lhs, rhs) != 0) RC_FAIL(c.pattern + ": operand " + std::to_string(m) + " " + text(lhs) + " vs " + text(rhs));
    }
  });
}

Case laws_float_reduce(Rng& rng, Reduction kind) {
  ReduceGenOptions options;
  options.kind = kind;
  options.dtype = rng.chance(1, 2) ? DType::f32 : DType::f64;
  options.max_elements = 512;
  SeededChoices choices(rng);
  return generate_reduce(choices, options);
}

CheckedReduce checked_as(const Case& c, const std::string& kind) {
  auto checked = check_reduce(c.pattern, kind, c.inputs[0].shape(), c.axis_lengths, c.dtype);
  if (!checked) RC_FAIL(render(checked.error()));
  return *checked;
}

// sum and mean are linear: ⟨f(v), w⟩ = ⟨v, vjp(w)⟩ with f's exact multiset value. For mean both
// sides carry the divisor n: Σ_o (Σ_fibre v)/n · w_o = Σ_p v_p · w_out(p)/n.
TEST(VjpLaws, AdjointIdentityForSumAndMean) {
  rc::detail::checkGTest([] {
    Rng rng = laws_rng(232);
    Case c = laws_float_reduce(rng, Reduction::mean);  // mean's generator keeps its fibres nonempty
    const Profile profile = finite_profile(rng);
    redraw_values(c, rng, profile);
    for (const std::string kind : {"sum", "mean"}) {
      const CheckedReduce r = checked_as(c, kind);
      const Tensor w = finite_values(rng, c.dtype, r.output_shape, profile);
      const Tensor v = finite_values(rng, c.dtype, r.input_shape, profile);
      const reference::MultisetReduce forward = reference::multiset_reduce(r, v);
      const reference::MultisetVjp vjp = reference::multiset_vjp_reduce(r, c.inputs[0], w);
      const std::int64_t n = kind == "mean" ? std::max<std::int64_t>(r.fibre_size, 1) : 1;
      std::vector<reference::ElementTruth> forward_numerators = forward.elements;
      std::vector<reference::ElementTruth> vjp_numerators = vjp.inputs[0].elements;
      for (auto& t : forward_numerators) { RC_ASSERT(t.divisor == n); t.divisor = 1; }
      for (auto& t : vjp_numerators) { RC_ASSERT(t.divisor == n); t.divisor = 1; }
      RC_ASSERT(compare(dot_exact(w, forward_numerators), dot_exact(v, vjp_numerators)) == 0);
    }
  });
}

// A sum reduction preserves the total: forward, Σ_o s(o) = Σ_p x_p (every input element lies in
// exactly one fibre); backward, Σ_p vjp(g)_p = n · Σ_o g_o (each of a fibre's n elements gets g_o).
TEST(VjpLaws, SumPreservesTheTotal) {
  rc::detail::checkGTest([] {
    Rng rng = laws_rng(233);
    Case c = laws_float_reduce(rng, Reduction::sum);
    const Profile profile = finite_profile(rng);
    redraw_values(c, rng, profile);
    const CheckedReduce r = checked_as(c, "sum");
    const reference::MultisetReduce forward = reference::multiset_reduce(r, c.inputs[0]);
    reference::ExactAccumulator outputs, inputs;
    for (const auto& t : forward.elements) outputs.add(t.exact);
    visit_dtype(c.dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_floating_point_v<T>) {
        for (const T x : c.inputs[0].values<T>()) inputs.add(Dyadic::of(x));
      }
    });
    RC_ASSERT(compare(outputs.value(), inputs.value()) == 0);

    const Tensor g = finite_values(rng, c.dtype, r.output_shape, profile);
    const reference::MultisetVjp vjp = reference::multiset_vjp_reduce(r, c.inputs[0], g);
    reference::ExactAccumulator cotangent_total, g_total;
    for (const auto& t : vjp.inputs[0].elements) cotangent_total.add(t.exact);
    visit_dtype(c.dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_floating_point_v<T>) {
        for (const T x : g.values<T>()) g_total.add(Dyadic::of(x) * Dyadic(r.fibre_size, 0));
      }
    });
    RC_ASSERT(compare(cotangent_total.value(), g_total.value()) == 0);
  });
}

// Equal-share weights (the VJP with g = 1) sum to 1 over every nonempty fibre without a NaN:
// exactly from the multiset truth (|T| shares of 1/|T|), and from the reference's ordered VJP where
// 1/|T| is exact (|T| a power of two) — there the weights are also zero outside T.
TEST(VjpLaws, EqualShareWeightsSumToOne) {
  rc::detail::checkGTest([] {
    Rng rng = laws_rng(234);
    Case c = laws_float_reduce(rng, rng.chance(1, 2) ? Reduction::max : Reduction::min);
    redraw_values(c, rng, rng.chance(2, 3) ? Profile::small : Profile::edges);  // ties are common
    const CheckedReduce r = checked_as(c, *c.reduction);
    Tensor g(c.dtype, r.output_shape);
    visit_dtype(c.dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_floating_point_v<T>) {
        for (T& v : g.values<T>()) v = T(1);
      }
    });
    const reference::MultisetVjp truth = reference::multiset_vjp_reduce(r, c.inputs[0], g);
    const reference::VjpTies& ties = *truth.ties;
    const Tensor ordered = reference::vjp_reduce(r, c.inputs[0], g);
    // Per fibre: Σ_T exact/divisor = 1, i.e. Σ_T exact = divisor = |T| (every share has |T| as divisor).
    std::vector<std::int64_t> count(static_cast<std::size_t>(r.output_size), 0);
    for (const std::int64_t flat : ties.tie_elements) ++count[static_cast<std::size_t>(ties.fibre_of[static_cast<std::size_t>(flat)])];
    std::vector<reference::ExactAccumulator> shares(count.size()), weights(count.size());
    for (std::size_t t = 0; t < ties.tie_elements.size(); ++t) {
      const auto o = static_cast<std::size_t>(ties.fibre_of[static_cast<std::size_t>(ties.tie_elements[t])]);
      RC_ASSERT(ties.share.elements[t].divisor == count[o]);
      shares[o].add(ties.share.elements[t].exact);
    }
    visit_dtype(c.dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_floating_point_v<T>) {
        const auto w = ordered.values<T>();
        for (std::size_t p = 0; p < w.size(); ++p) weights[static_cast<std::size_t>(ties.fibre_of[p])].add(Dyadic::of(w[p]));
      }
    });
    for (std::size_t o = 0; o < count.size(); ++o) {
      if (ties.nan_fibre[o] || r.fibre_size == 0) continue;
      RC_ASSERT(count[o] >= 1);
      RC_ASSERT(compare(shares[o].value(), Dyadic(count[o], 0)) == 0);
      if ((count[o] & (count[o] - 1)) == 0) RC_ASSERT(compare(weights[o].value(), Dyadic(1, 0)) == 0);
    }
  });
}

// mean's VJP is the pullback scaled by 1/n: element by element the same numerator g_out(p) as
// sum's (its exact copy) over the divisor n; and the reference's ordered answers agree where g/n
// is exact (n a power of two): mean = sum · (1/n).
TEST(VjpLaws, MeanIsThePullbackTimesOneOverN) {
  rc::detail::checkGTest([] {
    Rng rng = laws_rng(235);
    Case c = laws_float_reduce(rng, Reduction::mean);
    const Profile profile = finite_profile(rng);
    redraw_values(c, rng, profile);
    const CheckedReduce mean = checked_as(c, "mean"), sum = checked_as(c, "sum");
    const Tensor g = finite_values(rng, c.dtype, mean.output_shape, Profile::small);
    const auto m = reference::multiset_vjp_reduce(mean, c.inputs[0], g);
    const auto s = reference::multiset_vjp_reduce(sum, c.inputs[0], g);
    const std::int64_t n = mean.fibre_size;
    for (std::size_t p = 0; p < m.inputs[0].elements.size(); ++p) {
      const auto& mt = m.inputs[0].elements[p];
      const auto& st = s.inputs[0].elements[p];
      RC_ASSERT(st.divisor == 1);
      RC_ASSERT(mt.divisor == n);
      RC_ASSERT(compare(mt.exact, st.exact) == 0);
    }
    if ((n & (n - 1)) != 0) return;
    const Tensor om = reference::vjp_reduce(mean, c.inputs[0], g), os = reference::vjp_reduce(sum, c.inputs[0], g);
    visit_dtype(c.dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_floating_point_v<T>) {
        const auto a = om.values<T>(), b = os.values<T>();
        for (std::size_t p = 0; p < a.size(); ++p) {
          RC_ASSERT(compare(Dyadic::of(a[p]) * Dyadic(n, 0), Dyadic::of(b[p])) == 0);
        }
      }
    });
  });
}

}  // namespace
}  // namespace einfuzz
