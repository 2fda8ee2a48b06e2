// Cost of the multiset oracle (exact values, enclosures, classes) relative to the reference's
// ordered fold on small cases — the goal is at most 5× — and the cost of judging a VJP case
// relative to judging its forward case (issue 13: at most 5×).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/choice.hpp"
#include "einfuzz/reference/einsum.hpp"
#include "einfuzz/harness/judge.hpp"
#include "einfuzz/harness/judge_vjp.hpp"
#include "einfuzz/reference/multiset.hpp"
#include "einfuzz/reference/multiset_vjp.hpp"
#include "einfuzz/reference/vjp.hpp"

namespace einfuzz {
namespace {

struct Small {
  const char* pattern;
  std::vector<Shape> shapes;
};

const std::vector<Small>& cases() {
  static const std::vector<Small> all = {
      {"a b, b c -> a c", {{8, 8}, {8, 8}}},
      {"b i j, b j k -> b i k", {{2, 4, 8}, {2, 8, 4}}},
      {"i i j -> i j", {{6, 6, 6}}},
      {"a b, b c, c d -> a d", {{4, 4}, {4, 4}, {4, 4}}},
      {"i, i ->", {{256}, {256}}},
  };
  return all;
}

/// Random doubles with varied exponents (the oracle's exact sums pay for exponent spread).
template <class T>
std::vector<Tensor> inputs(const Small& s, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<Tensor> out;
  for (const Shape& shape : s.shapes) {
    Tensor t(dtype_of_v<T>, shape);
    for (T& v : t.values<T>()) {
      v = static_cast<T>(static_cast<double>(rng.between(-1000, 1000)) / 64.0 *
                         static_cast<double>(std::int64_t{1} << rng.below(8)));
    }
    out.push_back(std::move(t));
  }
  return out;
}

template <class T, bool kMultiset>
void run(benchmark::State& state) {
  const Small& s = cases()[static_cast<std::size_t>(state.range(0))];
  const auto checked = check_einsum(s.pattern, s.shapes);
  const auto x = inputs<T>(s, 7);
  for (auto _ : state) {
    if constexpr (kMultiset) {
      benchmark::DoNotOptimize(reference::multiset_einsum(*checked, x));
    } else {
      benchmark::DoNotOptimize(reference::evaluate_einsum(*checked, x));
    }
  }
  state.SetLabel(s.pattern);
}

/// Judging one case as the any-order path does: the reference's answer (ordered forward result, or
/// ordered VJP with a cotangent of the output's shape), the multiset truth, the judge on that answer.
template <class T, bool kVjp>
void judge_case(benchmark::State& state) {
  const Small& s = cases()[static_cast<std::size_t>(state.range(0))];
  const auto checked = check_einsum(s.pattern, s.shapes);
  const auto x = inputs<T>(s, 7);
  const Small g_shape{s.pattern, {checked->output_shape}};
  const Tensor g = inputs<T>(g_shape, 11).front();
  for (auto _ : state) {
    if constexpr (kVjp) {
      const Gradients answer{reference::vjp_einsum(*checked, x, g)};
      const reference::MultisetVjp truth = reference::multiset_vjp_einsum(*checked, x, g);
      benchmark::DoNotOptimize(judge_vjp_any_order(truth, answer));
    } else {
      const Tensor answer = reference::evaluate_einsum(*checked, x);
      const reference::MultisetEinsum truth = reference::multiset_einsum(*checked, x);
      benchmark::DoNotOptimize(judge_any_order(truth, answer));
    }
  }
  state.SetLabel(s.pattern);
}

BENCHMARK(judge_case<double, false>)->Name("judge_forward_f64")->DenseRange(0, 4);
BENCHMARK(judge_case<double, true>)->Name("judge_vjp_f64")->DenseRange(0, 4);
BENCHMARK(judge_case<float, false>)->Name("judge_forward_f32")->DenseRange(0, 4);
BENCHMARK(judge_case<float, true>)->Name("judge_vjp_f32")->DenseRange(0, 4);

BENCHMARK(run<double, false>)->Name("ordered_f64")->DenseRange(0, 4);
BENCHMARK(run<double, true>)->Name("multiset_f64")->DenseRange(0, 4);
BENCHMARK(run<float, false>)->Name("ordered_f32")->DenseRange(0, 4);
BENCHMARK(run<float, true>)->Name("multiset_f32")->DenseRange(0, 4);

}  // namespace
}  // namespace einfuzz

BENCHMARK_MAIN();
