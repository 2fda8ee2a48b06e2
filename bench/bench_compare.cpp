// One comparison target: fused vs Eigen vs xtensor vs libtorch on the same einsums, f32 and f64,
// through the project's own backend adapters (what a campaign measures), with a ratio table at the end.
//
// Every library is called through its einfuzz backend (fused: make_fused_backend; eigen, xtensor;
// torch through the loadable module, skipped with a message when it is not there), so each row
// includes the adapter's work a campaign pays too (the checker, views, the output copy). One thread
// everywhere: fused with ExecOptions::threads = 1, torch with OMP_NUM_THREADS=1 / MKL_NUM_THREADS=1
// set before the module is loaded; run it under `taskset -c 1` (docs/performance.md has the command).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "einfuzz/backends/eigen.hpp"
#include "einfuzz/backends/torch.hpp"
#include "einfuzz/backends/xtensor.hpp"
#include "einfuzz/core/case.hpp"
#include "einfuzz/harness/run.hpp"

namespace einfuzz {
namespace {

/// One row of the table: a name, the pattern and the operand shapes.
struct Shapes {
  const char* name;
  const char* pattern;
  std::vector<Shape> shapes;
};

const std::vector<Shapes>& rows() {
  static const std::vector<Shapes> r = {
      {"matmul64", "a b, b c -> a c", {{64, 64}, {64, 64}}},
      {"matmul256", "a b, b c -> a c", {{256, 256}, {256, 256}}},
      {"batched", "b i j, b j k -> b i k", {{8, 64, 64}, {8, 64, 64}}},
      {"diagonal", "i i j -> i j", {{128, 128, 128}}},
      {"broadcast", "a b, b -> a b", {{512, 512}, {512}}},
      {"four", "a b, b c, c d, d e -> a e", {{16, 16}, {16, 16}, {16, 16}, {16, 16}}},
      {"dot", "i, i ->", {{1 << 20}, {1 << 20}}},
      {"tiny3", "a b, b c, c -> a", {{4, 4}, {4, 4}, {4}}},
  };
  return r;
}

const char* const kLibraries[] = {"fused", "eigen", "xtensor", "torch"};

/// The case of `row` in `dtype`, values uniform in [-1, 1) from a fixed seed.
Case make_case(const Shapes& row, DType dtype) {
  Case c;
  c.pattern = row.pattern;
  c.dtype = dtype;
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (const Shape& s : row.shapes) {
    std::int64_t n = 1;
    for (std::int64_t d : s) n *= d;
    if (dtype == DType::f32) {
      std::vector<float> v(static_cast<std::size_t>(n));
      for (float& x : v) x = static_cast<float>(u(rng));
      c.inputs.emplace_back(s, std::move(v));
    } else {
      std::vector<double> v(static_cast<std::size_t>(n));
      for (double& x : v) x = u(rng);
      c.inputs.emplace_back(s, std::move(v));
    }
  }
  return c;
}

/// Terms of the plain loop nest over every label (output × contraction elements): the GFLOP/s
/// counter counts a multiply and an add per term, whatever order a library contracts in.
double terms(const Case& c) {
  auto checked = check_case(c, Limits{});
  if (!checked) return 0;
  const auto* e = std::get_if<CheckedEinsum>(&*checked);
  if (e == nullptr) return 0;
  return static_cast<double>(e->output_size) * static_cast<double>(e->contraction_size);
}

/// The backends, made once (the torch module loads once per process).
std::map<std::string, std::unique_ptr<Backend>>& backends() {
  static std::map<std::string, std::unique_ptr<Backend>> b = [] {
    std::map<std::string, std::unique_ptr<Backend>> m;
    RunOptions o;
    o.exec.threads = 1;
    m["fused"] = make_fused_backend(o);
    m["eigen"] = make_eigen_backend();
    m["xtensor"] = make_xtensor_backend();
    if (auto t = make_torch_backend()) {
      m["torch"] = std::move(t);
    } else {
      std::fprintf(stderr, "bench_compare: torch rows skipped: %s\n", torch_unavailable_reason().c_str());
    }
    return m;
  }();
  return b;
}

void run_one(benchmark::State& state, const std::string& library, const Shapes& row, DType dtype) {
  auto& all = backends();
  const auto it = all.find(library);
  if (it == all.end()) {
    state.SkipWithError("not available in this build (see the message above)");
    return;
  }
  Backend& backend = *it->second;
  const Case c = make_case(row, dtype);
  {
    const BackendResult first = backend.run(c);
    if (const auto* u = std::get_if<Unsupported>(&first)) {
      state.SkipWithError(("unsupported: " + u->message).c_str());
      return;
    }
    if (const auto* r = std::get_if<Rejected>(&first)) {
      state.SkipWithError(("rejected: " + r->message).c_str());
      return;
    }
    if (std::holds_alternative<Fault>(first)) {
      state.SkipWithError("fault");
      return;
    }
  }
  for (auto _ : state) {
    BackendResult r = backend.run(c);
    benchmark::DoNotOptimize(r);
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2 * terms(c) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

/// The console output, and the median (or only) CPU time of every run kept for the table: the
/// process's CPU time, so a library's own threads count, and not wall time, which on a shared
/// machine also counts the time the process waited for a core.
class TableReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      const bool aggregate = r.run_type == Run::RT_Aggregate;
      if (aggregate && r.aggregate_name != "median") continue;
      times_[r.run_name.function_name] = r.GetAdjustedCPUTime();  // the registered name, no suffixes
    }
  }

  /// One line per shape and dtype: fused's time, then each library's time over fused's.
  void print_table() const {
    std::printf("\nratios: library CPU time / fused CPU time (> 1: fused is faster); median of the repetitions\n");
    std::printf("%-10s %-4s %14s", "shape", "type", "fused");
    for (std::size_t k = 1; k < std::size(kLibraries); ++k) std::printf(" %9s", kLibraries[k]);
    std::printf("\n");
    for (const Shapes& row : rows()) {
      for (const char* type : {"f32", "f64"}) {
        const auto fused = times_.find(key("fused", row.name, type));
        std::printf("%-10s %-4s", row.name, type);
        if (fused == times_.end()) {
          std::printf(" %14s", "n/a");
        } else {
          std::printf(" %11.3g us", fused->second / 1e3);  // ns → µs (the benchmarks' unit is ns)
        }
        for (std::size_t k = 1; k < std::size(kLibraries); ++k) {
          const auto lib = times_.find(key(kLibraries[k], row.name, type));
          if (fused == times_.end() || lib == times_.end()) {
            std::printf(" %9s", "n/a");
          } else {
            std::printf(" %8.2fx", lib->second / fused->second);
          }
        }
        std::printf("\n");
      }
    }
  }

  static std::string key(const std::string& library, const std::string& row, const std::string& type) {
    return library + "/" + row + "/" + type;
  }

 private:
  std::map<std::string, double> times_;
};

}  // namespace
}  // namespace einfuzz

int main(int argc, char** argv) {
  using namespace einfuzz;
  // Before libtorch is loaded (it reads them when its thread pools start): one thread, as fused.
  ::setenv("OMP_NUM_THREADS", "1", 0);
  ::setenv("MKL_NUM_THREADS", "1", 0);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  for (const Shapes& row : rows()) {
    for (const auto& [type, dtype] : {std::pair{"f32", DType::f32}, std::pair{"f64", DType::f64}}) {
      for (const char* library : kLibraries) {
        const std::string name = TableReporter::key(library, row.name, type);
        benchmark::RegisterBenchmark(name.c_str(), [library = std::string(library), &row, dtype = dtype](benchmark::State& s) {
          run_one(s, library, row, dtype);
        })->Unit(benchmark::kNanosecond)->MeasureProcessCPUTime();  // every thread a library starts counts
      }
    }
  }
  TableReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_table();
  benchmark::Shutdown();
  return 0;
}
