// Speed of the fused executor against the reference evaluator and a hand-written §6 loop nest per
// pattern (matmul, batched, diagonal, trace, broadcast, 4 operands, scalar output), f32 and f64;
// the hand loop also with its result moved into a Tensor (naive_tensor), the type fused returns.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/tensor.hpp"
#include "einfuzz/fused/einsum.hpp"
#include "einfuzz/reference/einsum.hpp"

namespace einfuzz {
namespace {

enum class Pattern { matmul, batched, diagonal, trace, broadcast, four, dot };

struct Workload {
  const char* text;          ///< the einsum pattern
  std::vector<Shape> shapes; ///< operand shapes
};

/// size 0 is "small" (fits L1, call overhead visible), size 1 "medium" (~1e6 terms).
Workload workload(Pattern p, int size) {
  const bool m = size == 1;
  switch (p) {
    case Pattern::matmul: {
      const std::int64_t n = m ? 128 : 16;
      return {"a b, b c -> a c", {{n, n}, {n, n}}};
    }
    case Pattern::batched: {
      const std::int64_t b = m ? 8 : 4, n = m ? 64 : 8;
      return {"b i j, b j k -> b i k", {{b, n, n}, {b, n, n}}};
    }
    case Pattern::diagonal: {
      const std::int64_t n = m ? 128 : 16;
      return {"i i j -> i j", {{n, n, n}}};
    }
    case Pattern::trace: {
      const std::int64_t n = m ? 1024 : 64;
      return {"i i ->", {{n, n}}};
    }
    case Pattern::broadcast: {
      const std::int64_t n = m ? 512 : 32;
      return {"a b, b -> a b", {{n, n}, {n}}};
    }
    case Pattern::four: {
      const std::int64_t n = m ? 16 : 4;
      return {"a b, b c, c d, d e -> a e", {{n, n}, {n, n}, {n, n}, {n, n}}};
    }
    case Pattern::dot: {
      const std::int64_t n = m ? (1 << 20) : 1024;
      return {"i, i ->", {{n}, {n}}};
    }
  }
  return {};
}

/// y[a·nb + b] = element(a, b) for the rows a < na and columns b < nb, row-major.
template <class T, class Element>
void fill_rows(std::vector<T>& y, std::int64_t na, std::int64_t nb, Element&& element) {
  y.assign(static_cast<std::size_t>(na * nb), T(0));
  for (std::int64_t a = 0; a < na; ++a)
    for (std::int64_t b = 0; b < nb; ++b) y[static_cast<std::size_t>(a * nb + b)] = element(a, b);
}

/// The hand-written loop nest for each pattern, in the exact §6 order (so it must agree bitwise).
template <class T>
std::vector<T> naive(Pattern p, const std::vector<Shape>& s, const std::vector<const T*>& x) {
  std::vector<T> y;
  switch (p) {
    case Pattern::matmul: {
      const auto na = s[0][0], nb = s[0][1], nc = s[1][1];
      y.assign(static_cast<std::size_t>(na * nc), T(0));
      for (std::int64_t a = 0; a < na; ++a)
        for (std::int64_t c = 0; c < nc; ++c) {
          T acc = 0;
          for (std::int64_t b = 0; b < nb; ++b) acc += x[0][a * nb + b] * x[1][b * nc + c];
          y[static_cast<std::size_t>(a * nc + c)] = acc;
        }
      break;
    }
    case Pattern::batched: {
      const auto nbat = s[0][0], ni = s[0][1], nj = s[0][2], nk = s[1][2];
      y.assign(static_cast<std::size_t>(nbat * ni * nk), T(0));
      for (std::int64_t b = 0; b < nbat; ++b)
        for (std::int64_t i = 0; i < ni; ++i)
          for (std::int64_t k = 0; k < nk; ++k) {
            T acc = 0;
            for (std::int64_t j = 0; j < nj; ++j)
              acc += x[0][(b * ni + i) * nj + j] * x[1][(b * nj + j) * nk + k];
            y[static_cast<std::size_t>((b * ni + i) * nk + k)] = acc;
          }
      break;
    }
    case Pattern::diagonal: {
      const auto ni = s[0][0], nj = s[0][2];
      fill_rows(y, ni, nj, [&](std::int64_t i, std::int64_t j) { return T(0) + x[0][(i * ni + i) * nj + j]; });
      break;
    }
    case Pattern::trace: {
      const auto n = s[0][0];
      T acc = 0;
      for (std::int64_t i = 0; i < n; ++i) acc += x[0][i * n + i];
      y.assign(1, acc);
      break;
    }
    case Pattern::broadcast: {
      const auto na = s[0][0], nb = s[0][1];
      fill_rows(y, na, nb, [&](std::int64_t a, std::int64_t b) { return T(0) + x[0][a * nb + b] * x[1][b]; });
      break;
    }
    case Pattern::four: {
      const auto n = s[0][0];
      y.assign(static_cast<std::size_t>(n * n), T(0));
      for (std::int64_t a = 0; a < n; ++a)
        for (std::int64_t e = 0; e < n; ++e) {
          T acc = 0;
          for (std::int64_t b = 0; b < n; ++b)
            for (std::int64_t c = 0; c < n; ++c)
              for (std::int64_t d = 0; d < n; ++d)
                acc += x[0][a * n + b] * x[1][b * n + c] * x[2][c * n + d] * x[3][d * n + e];
          y[static_cast<std::size_t>(a * n + e)] = acc;
        }
      break;
    }
    case Pattern::dot: {
      const auto n = s[0][0];
      T acc = 0;
      for (std::int64_t i = 0; i < n; ++i) acc += x[0][i] * x[1][i];
      y.assign(1, acc);
      break;
    }
  }
  return y;
}

template <class T>
struct Fixture {
  CheckedEinsum einsum;
  std::vector<Tensor> inputs;
  std::vector<const T*> pointers;
  std::vector<Shape> shapes;

  Fixture(Pattern p, int size) {
    const Workload w = workload(p, size);
    auto checked = check_einsum(w.text, w.shapes);
    if (!checked) throw std::runtime_error(render(checked.error()));
    einsum = std::move(checked).value();
    shapes = w.shapes;
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<T> value(T(-1), T(1));
    for (const Shape& s : w.shapes) {
      std::vector<T> v(static_cast<std::size_t>(checked_element_count(s).value()));
      for (T& e : v) e = value(rng);
      inputs.emplace_back(s, std::move(v));
    }
    for (const Tensor& t : inputs) pointers.push_back(t.values<T>().data());
  }
  std::int64_t terms() const { return einsum.output_size * einsum.contraction_size; }
};

/// naive_tensor: the hand loop's vector moved into a Tensor of the output shape, the type fused
/// returns (its shape is a second allocation): what of fused's time is its output type, not its loops.
/// fused_two_tasks: two chunks forced (threads 2, tasks 2, as the fuzz targets ask on half their
/// inputs), what splitting a small case costs.
enum class Impl { fused, fused_threads, fused_two_tasks, reference, naive, naive_tensor };

template <class T>
void run(benchmark::State& state, Pattern p, Impl impl) {
  const Fixture<T> f(p, static_cast<int>(state.range(0)));
  const fused::EinsumPlan plan = fused::compile(f.einsum);
  // One thread unless asked: the per-core kernel is what the ratios compare.
  const fused::ExecOptions options = impl == Impl::fused_threads     ? fused::ExecOptions{0u}
                                     : impl == Impl::fused_two_tasks ? fused::ExecOptions{2u, 8, 2u}
                                                                     : fused::ExecOptions{1u};

  // Sanity: the fused result must equal the hand-written loop bit for bit.
  const Tensor check = fused::execute(plan, f.inputs, options);
  const std::vector<T> want = naive<T>(p, f.shapes, f.pointers);
  if (want.size() * sizeof(T) != check.bytes().size() ||
      std::memcmp(want.data(), check.bytes().data(), check.bytes().size()) != 0) {
    state.SkipWithError("fused differs from the naive loop nest");
    return;
  }
  for (auto _ : state) {
    switch (impl) {
      case Impl::fused:
      case Impl::fused_threads:
      case Impl::fused_two_tasks: benchmark::DoNotOptimize(fused::execute(plan, f.inputs, options)); break;
      case Impl::reference: benchmark::DoNotOptimize(reference::evaluate_einsum(f.einsum, f.inputs)); break;
      case Impl::naive: benchmark::DoNotOptimize(naive<T>(p, f.shapes, f.pointers)); break;
      case Impl::naive_tensor:
        benchmark::DoNotOptimize(Tensor(f.einsum.output_shape, naive<T>(p, f.shapes, f.pointers)));
        break;
    }
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * f.terms());  // terms of the §6 sums
}

void register_all() {
  const std::pair<Pattern, const char*> patterns[] = {
      {Pattern::matmul, "matmul"}, {Pattern::batched, "batched"},     {Pattern::diagonal, "diagonal"},
      {Pattern::trace, "trace"},   {Pattern::broadcast, "broadcast"}, {Pattern::four, "four_operands"},
      {Pattern::dot, "dot"}};
  const std::pair<Impl, const char*> impls[] = {{Impl::fused, "fused"},
                                                {Impl::fused_threads, "fused_threads"},
                                                {Impl::fused_two_tasks, "fused_two_tasks"},
                                                {Impl::naive, "naive"},
                                                {Impl::naive_tensor, "naive_tensor"},
                                                {Impl::reference, "reference"}};
  for (const auto& [p, pname] : patterns) {
    for (const auto& [impl, iname] : impls) {
      const std::string base = std::string(pname) + "/" + iname;
      benchmark::RegisterBenchmark((base + "/f32").c_str(), [p = p, impl = impl](benchmark::State& s) {
        run<float>(s, p, impl);
      })->Arg(0)->Arg(1);
      benchmark::RegisterBenchmark((base + "/f64").c_str(), [p = p, impl = impl](benchmark::State& s) {
        run<double>(s, p, impl);
      })->Arg(0)->Arg(1);
    }
  }
}

}  // namespace
}  // namespace einfuzz

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  einfuzz::register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
