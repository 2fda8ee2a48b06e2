// Fused's GEMM-class einsums side by side with Eigen Tensor contraction (one thread, default device):
// matmul, batched and transposed patterns at 64³ and 256³, f32 and f64, GFLOP/s counters and the
// fused / Eigen ratio of each pair printed at the end of the same run.
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <unsupported/Eigen/CXX11/Tensor>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/tensor.hpp"
#include "einfuzz/fused/einsum.hpp"
#include "einfuzz/reference/einsum.hpp"

namespace einfuzz {
namespace {

/// A GEMM-class einsum at size n: its pattern, operand shapes and Eigen's contracted index pair.
struct Gemm {
  const char* name;
  const char* text;
  bool batched;             ///< "z …": a leading batch axis of length kBatch
  bool a_transposed;        ///< operand 0 is [k, m] instead of [m, k]
  bool b_transposed;        ///< operand 1 is [n, k] instead of [k, n]
};

constexpr std::int64_t kBatch = 4;

constexpr Gemm kGemms[] = {
    {"matmul", "a b, b c -> a c", false, false, false},
    {"batched", "z a b, z b c -> z a c", true, false, false},
    {"lhs_transposed", "b a, b c -> a c", false, true, false},
    {"rhs_transposed", "a b, c b -> a c", false, false, true},
    {"both_transposed", "b a, c b -> a c", false, true, true},
};

enum class Impl { fused, fused_baseline, eigen };

template <class T>
struct Fixture {
  CheckedEinsum einsum;
  std::vector<Tensor> inputs;
  std::int64_t n = 0;

  Fixture(const Gemm& g, std::int64_t size) : n(size) {
    Shape a{n, n};  // square: a transposed operand has the same shape, only other labels
    Shape b{n, n};
    if (g.batched) {
      a.insert(a.begin(), kBatch);
      b.insert(b.begin(), kBatch);
    }
    const std::vector<Shape> shapes{a, b};
    Limits limits;  // the reference (which materialises the product tensor) only checks the small sizes
    limits.max_materialised_elements = std::numeric_limits<std::int64_t>::max();
    auto checked = check_einsum(g.text, shapes, limits);
    if (!checked) throw std::runtime_error(render(checked.error()));
    einsum = std::move(checked).value();
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<T> value(T(-1), T(1));
    for (const Shape& s : shapes) {
      std::vector<T> v(static_cast<std::size_t>(checked_element_count(s).value()));
      for (T& e : v) e = value(rng);
      inputs.emplace_back(s, std::move(v));
    }
  }
  double flops() const { return 2.0 * static_cast<double>(einsum.output_size * einsum.contraction_size); }
};

/// Eigen's contraction of one (batch) slice: row-major maps over the same storage fused reads.
template <class T>
void eigen_slice(const Gemm& g, std::int64_t n, const T* a, const T* b, T* c) {
  using In = Eigen::TensorMap<Eigen::Tensor<const T, 2, Eigen::RowMajor>>;
  using Out = Eigen::TensorMap<Eigen::Tensor<T, 2, Eigen::RowMajor>>;
  const In x(a, n, n);
  const In y(b, n, n);
  Out z(c, n, n);
  const std::array<Eigen::IndexPair<int>, 1> dims{
      Eigen::IndexPair<int>(g.a_transposed ? 0 : 1, g.b_transposed ? 1 : 0)};
  z = x.contract(y, dims);
}

/// Asks for the baseline (SSE2) kernels only, where the build has the knob (a "before" build has not).
template <class Options>
void baseline_only(Options& options) {
  if constexpr (requires { options.simd_dispatch = false; }) options.simd_dispatch = false;
}

template <class T>
void run(benchmark::State& state, const Gemm& g, Impl impl) {
  const Fixture<T> f(g, state.range(0));
  const fused::EinsumPlan plan = fused::compile(f.einsum);
  fused::ExecOptions options{1u};
  if (impl == Impl::fused_baseline) baseline_only(options);

  const std::int64_t batches = g.batched ? kBatch : 1;
  const std::int64_t slice = f.n * f.n;
  std::vector<T> eigen_out(static_cast<std::size_t>(batches * slice));
  const T* a = f.inputs[0].template values<T>().data();
  const T* b = f.inputs[1].template values<T>().data();
  const auto eigen_all = [&] {
    for (std::int64_t z = 0; z < batches; ++z)
      eigen_slice<T>(g, f.n, a + z * slice, b + z * slice, eigen_out.data() + z * slice);
  };

  // Sanity: fused equals the ordered reference bit for bit (Eigen is only timed).
  if (state.range(0) <= 64) {
    const Tensor got = fused::execute(plan, f.inputs, options);
    if (!bitwise_equal(got, reference::evaluate_einsum(f.einsum, f.inputs))) {
      state.SkipWithError("fused differs from the reference");
      return;
    }
  }
  for (auto _ : state) {
    if (impl == Impl::eigen) {
      eigen_all();
      benchmark::DoNotOptimize(eigen_out.data());
    } else {
      benchmark::DoNotOptimize(fused::execute(plan, f.inputs, options));
    }
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(f.flops() * 1e-9 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

/// The console output, plus a table of fused / Eigen GFLOP/s ratios from the median runs.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      const bool aggregate = r.run_type == Run::RT_Aggregate;
      if (aggregate && r.aggregate_name != "median") continue;
      const auto it = r.counters.find("GFLOP/s");
      if (it == r.counters.end()) continue;
      // Names look like "matmul/fused/f32/256[_median]": key without the impl.
      std::string name = r.run_name.str();
      const auto first = name.find('/');
      const auto second = name.find('/', first + 1);
      if (first == std::string::npos || second == std::string::npos) continue;
      const std::string impl = name.substr(first + 1, second - first - 1);
      const std::string key = name.substr(0, first) + name.substr(second);
      rates_[key][impl] = it->second.value;
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf("\n%-32s %10s %10s %10s %8s %8s\n", "case", "fused", "baseline", "eigen", "fused/E", "base/E");
    for (const auto& [key, by_impl] : rates_) {
      const auto get = [&](const char* k) {
        const auto it = by_impl.find(k);
        return it == by_impl.end() ? 0.0 : it->second;
      };
      const double fu = get("fused"), ba = get("fused_baseline"), ei = get("eigen");
      std::printf("%-32s %10.2f %10.2f %10.2f %8.2f %8.2f\n", key.c_str(), fu, ba, ei, ei > 0 ? fu / ei : 0.0,
                  ei > 0 ? ba / ei : 0.0);
    }
  }

 private:
  std::map<std::string, std::map<std::string, double>> rates_;
};

void register_all() {
  const std::pair<Impl, const char*> impls[] = {
      {Impl::fused, "fused"}, {Impl::fused_baseline, "fused_baseline"}, {Impl::eigen, "eigen"}};
  for (const Gemm& g : kGemms) {
    for (const auto& [impl, iname] : impls) {
      const std::string base = std::string(g.name) + "/" + iname;
      benchmark::RegisterBenchmark((base + "/f32").c_str(), [&g, impl = impl](benchmark::State& s) {
        run<float>(s, g, impl);
      })->Arg(64)->Arg(256)->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark((base + "/f64").c_str(), [&g, impl = impl](benchmark::State& s) {
        run<double>(s, g, impl);
      })->Arg(64)->Arg(256)->Unit(benchmark::kMicrosecond);
    }
  }
}

}  // namespace
}  // namespace einfuzz

int main(int argc, char** argv) {
  Eigen::setNbThreads(1);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  einfuzz::register_all();
  einfuzz::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
