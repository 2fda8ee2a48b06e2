// Where a `fused,shuffle` campaign's time goes by case size: the campaign's first 20000 cases of seed
// 1, binned by the reference's work (output × contraction elements for an einsum, input elements for
// a reduce; 0 for a rejected case), each bin drawn and run as the campaign does (generate_case, then
// run_case on fused and shuffle).
//
//     taskset -c 1 build/bench/einfuzz_bench_campaign --benchmark_min_time=0.2
//
// Each row is one bin: its time per iteration is the whole bin's (the bins' times add up to the
// campaign's per-case work), `per_case` the time of one case and `cases` how many the bin holds.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <memory>
#include <vector>

#include "einfuzz/core/check_case.hpp"
#include "einfuzz/harness/backend_registry.hpp"
#include "einfuzz/harness/campaign.hpp"
#include "einfuzz/harness/generate.hpp"
#include "einfuzz/harness/run.hpp"

namespace einfuzz {
namespace {

constexpr std::uint64_t kSeed = 1;
constexpr std::uint64_t kCases = 20000;
constexpr int kBins = 14;  ///< bin b: work in [2^(b-1), 2^b), bin 0: no work, the last: 2^12 and more

/// The bin of a case by its checked form (what the reference materialises).
int bin_of(const Case& c, const RunOptions& run) {
  const auto checked = check_case_shared(c, run.limits);
  if (!*checked) return 0;
  std::int64_t work = 0;
  if (const auto* e = std::get_if<CheckedEinsum>(&**checked)) {
    work = e->output_size * e->contraction_size;
  } else {
    work = c.inputs.empty() ? 0 : c.inputs[0].size();
  }
  return work <= 0 ? 0 : std::min(kBins - 1, static_cast<int>(std::bit_width(static_cast<std::uint64_t>(work))));
}

/// The case indices of each bin (drawn once).
const std::array<std::vector<std::uint64_t>, kBins>& bins() {
  static const auto table = [] {
    std::array<std::vector<std::uint64_t>, kBins> out;
    const GenOptions gen = campaign_gen_options();
    const RunOptions run;
    for (std::uint64_t i = 0; i < kCases; ++i) {
      SeededChoices choices(Rng::mix(kSeed, i));
      out[static_cast<std::size_t>(bin_of(generate_case(choices, gen), run))].push_back(i);
    }
    return out;
  }();
  return table;
}

void BM_CampaignBin(benchmark::State& state) {
  const auto& indices = bins()[static_cast<std::size_t>(state.range(0))];
  const GenOptions gen = campaign_gen_options();
  const RunOptions run;  // the campaign's defaults (einfuzz fuzz without options)
  auto fused = make_builtin_backend("fused", run);
  auto shuffle = make_builtin_backend("shuffle", run);
  Backend* backends[] = {fused.get(), shuffle.get()};
  for (auto _ : state) {
    for (const std::uint64_t i : indices) {
      SeededChoices choices(Rng::mix(kSeed, i));
      const Case c = generate_case(choices, gen);
      benchmark::DoNotOptimize(run_case(c, backends, run));
    }
  }
  const auto n = static_cast<double>(indices.size());
  state.counters["cases"] = n;
  state.counters["per_case"] = benchmark::Counter(n, benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
}

BENCHMARK(BM_CampaignBin)->Name("campaign_bin")->DenseRange(0, kBins - 1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace einfuzz

BENCHMARK_MAIN();
