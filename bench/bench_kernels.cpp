// The fused kernels einfuzz_bench does not reach: three operands whose lanes step 0 (broadcast
// along the tile axis), and rows tiled by 4 (`--tile 4`) instead of the default 8. Each of
// fused/src/kernel.hpp's kernel choices costs compile time; these rows show what a choice buys.
#include <benchmark/benchmark.h>

#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/tensor.hpp"
#include "einfuzz/fused/einsum.hpp"

namespace einfuzz {
namespace {

struct Workload {
  const char* name;          ///< the benchmark's name; the letters name each operand's lane kind
  const char* text;          ///< the einsum pattern
  std::vector<Shape> shapes; ///< operand shapes
  int tile;                  ///< ExecOptions::tile_width
};

// Lane kinds along the last output axis: u steps 1, z steps 0, a any other step.
const Workload kWorkloads[] = {
    {"broadcast3_uzu/16", "a b, a, b -> a b", {{16, 16}, {16}, {16}}, 8},
    {"broadcast3_uzu/256", "a b, a, b -> a b", {{256, 256}, {256}, {256}}, 8},
    {"broadcast3_uuz/16", "a b, b, a -> a b", {{16, 16}, {16}, {16}}, 8},
    {"contract3_azz/8", "a b c, a c, c -> a b", {{8, 8, 8}, {8, 8}, {8}}, 8},
    {"contract3_azz/64", "a b c, a c, c -> a b", {{64, 64, 64}, {64, 64}, {64}}, 8},
    {"tiny3_azz/4", "a b, b c, c -> a", {{4, 4}, {4, 4}, {4}}, 8},
    {"tiny3_azz/16", "a b, b c, c -> a", {{16, 16}, {16, 16}, {16}}, 8},
    {"chain3_zzu/32", "a b, b c, c d -> a d", {{32, 32}, {32, 32}, {32, 32}}, 8},
    {"tile4_matmul/16", "a b, b c -> a c", {{16, 16}, {16, 16}}, 4},
    {"tile4_broadcast/16", "a b, b -> a b", {{16, 16}, {16}}, 4},
    {"tile4_diagonal/16", "i i j -> i j", {{16, 16, 16}}, 4},
};

template <class T>
void run(benchmark::State& state, const Workload& w) {
  auto checked = check_einsum(w.text, w.shapes);
  if (!checked) throw std::runtime_error(render(checked.error()));
  const CheckedEinsum einsum = std::move(checked).value();
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<T> value(T(-1), T(1));
  std::vector<Tensor> inputs;
  for (const Shape& s : w.shapes) {
    std::vector<T> v(static_cast<std::size_t>(checked_element_count(s).value()));
    for (T& e : v) e = value(rng);
    inputs.emplace_back(s, std::move(v));
  }
  const fused::EinsumPlan plan = fused::compile(einsum);
  fused::ExecOptions options{1u};  // one thread: the per-core kernel
  options.tile_width = w.tile;
  for (auto _ : state) {
    benchmark::DoNotOptimize(fused::execute(plan, inputs, options));
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * einsum.output_size * einsum.contraction_size);
}

}  // namespace
}  // namespace einfuzz

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  for (const einfuzz::Workload& w : einfuzz::kWorkloads) {
    benchmark::RegisterBenchmark((std::string(w.name) + "/f32").c_str(),
                                 [&w](benchmark::State& s) { einfuzz::run<float>(s, w); });
    benchmark::RegisterBenchmark((std::string(w.name) + "/f64").c_str(),
                                 [&w](benchmark::State& s) { einfuzz::run<double>(s, w); });
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
