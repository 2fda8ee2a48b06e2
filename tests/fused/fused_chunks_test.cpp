// The fused executor's tiles, threads and chunks never change a bit: every configuration equals
// the naive §6 loop, generated einsums split into chunks equal the reference, a planted chunk-boundary
// bug is caught; mixed dtypes abort.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <filesystem>
#include <set>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/scalar.hpp"
#include "einfuzz/core/tensor.hpp"
#include "einfuzz/fused/einsum.hpp"
#include "einfuzz/harness/generate.hpp"
#include "einfuzz/reference/einsum.hpp"
#include "support/compare.hpp"
#include "support/fused_support.hpp"
#include "parallel.hpp"

namespace einfuzz {
namespace {

using fused::ExecOptions;

using namespace fused_test;

// ---------------------------------------------------------------------------------------------
// Tiles, threads and chunks never change a bit; every configuration equals the naive §6 loop.

struct InvarianceCase {
  std::string pattern;
  std::vector<Shape> shapes;
};

std::vector<InvarianceCase> invariance_cases() {
  std::vector<InvarianceCase> cases{
      {"a b, b c -> a c", {{5, 7}, {7, 19}}},                   // matmul, 2 full tiles + tail
      {"b i j, b j k -> b i k", {{3, 4, 5}, {3, 5, 13}}},       // batched
      {"b i j, b j k -> b i k", {{1, 4, 5}, {3, 5, 9}}},        // batch broadcast
      {"i i j -> i j", {{6, 6, 11}}},                           // diagonal
      {"i i ->", {{7, 7}}},                                     // trace
      {"i i i -> i", {{9, 9, 9}}},
      {"a b, b -> a b", {{9, 17}, {17}}},                       // broadcast
      {"a b, a b -> a b", {{9, 1}, {1, 17}}},                   // size-1 dims on both sides
      {"i j, j k -> i k", {{10, 1}, {3, 12}}},
      {"a b, b c, c d, d e -> a e", {{3, 4}, {4, 2}, {2, 3}, {3, 10}}},  // 4 operands
      {"i, i ->", {{37}, {37}}},                                // scalar output
      {"a b ->", {{5, 6}}},
      {"a b -> b a", {{6, 13}}},                                // strided lanes
      {"a b -> a", {{13, 5}}},
      {"a b, b, a b -> a b", {{5, 11}, {11}, {5, 11}}},         // 3 operands
      {"a b, a, b a -> a b", {{5, 11}, {5}, {11, 5}}},          // zero / unit / strided lanes
      {"a b, b a, a -> a b", {{7, 9}, {9, 7}, {7}}},
      {"a, a, a, a, a -> a", {{21}, {21}, {1}, {21}, {21}}},    // generic operand count
      // Generic count with a hoisted prefix and 1, 2, 3 or 5 operands moving in the inner loop.
      {"a b, b, a b, b c d -> a d", {{5, 3}, {3}, {5, 3}, {3, 4, 11}}},
      {"a b, b c, c d, d e -> a e", {{3, 4}, {4, 2}, {2, 3}, {3, 13}}},
      {"a b, b c d, c d, d e -> a e", {{3, 4}, {4, 2, 3}, {2, 3}, {3, 10}}},
      {"a b, c, b c, b c, b c, c e -> a e", {{3, 4}, {5}, {4, 5}, {4, 5}, {4, 5}, {5, 9}}},
      {"a b, b c, c d, e d -> a e", {{3, 4}, {4, 2}, {2, 3}, {12, 3}}},  // strided moving lanes
      {"a c b, b c d -> a d", {{3, 4, 5}, {5, 4, 9}}},          // two contraction loops
      {"a b c, b c d -> a d", {{3, 4, 5}, {4, 5, 9}}},          // mergeable contraction loops
      {"x y z, x y z -> x y z", {{3, 4, 5}, {3, 4, 5}}},        // mergeable output loops
      {"i, j -> j i", {{3}, {10}}},                             // outer product, transposed
      {"a, -> a", {{13}, {}}},                                  // rank-0 operand
      {", ->", {{}, {}}},
      {"j i, i j ->", {{6, 5}, {5, 6}}},
      {"... i, ... i -> ... i", {{2, 1, 2}, {3, 2}}},
      {"... i j, ... j -> ... i", {{2, 3, 9, 4}, {3, 4}}},
      {"a b, b c -> a c", {{4, 0}, {0, 9}}},                    // empty contraction
      {"a b, b c -> a c", {{0, 3}, {3, 9}}},                    // empty output
      {"a b, b c -> c", {{4, 3}, {3, 0}}},
  };
  // 64 operands: the generic fallback at its limit.
  std::string many;
  std::vector<Shape> many_shapes;
  for (int k = 0; k < 64; ++k) {
    many += k ? ", a" : "a";
    many_shapes.push_back({k % 7 == 3 ? 1 : 10});
  }
  cases.push_back({many + " -> a", many_shapes});
  return cases;
}

TEST(FusedExecute, TilesThreadsAndChunksAreBitwiseInvisible) {
  std::mt19937_64 rng(20240531);
  for (const InvarianceCase& c : invariance_cases()) {
    const CheckedEinsum e = checked(c.pattern, c.shapes);
    const auto plan = fused::compile(e);
    for (DType dtype : {DType::f32, DType::f64, DType::i32, DType::i64}) {
      SCOPED_TRACE(c.pattern + " " + std::string(dtype_name(dtype)));
      const std::vector<Tensor> inputs = random_inputs(e, dtype, rng);
      const Tensor want = naive(e, inputs);
      for (int width : {1, 4, 8}) {
        for (unsigned threads : {1u, 2u, 3u}) {
          for (unsigned tasks : {0u, threads}) {
            SCOPED_TRACE("width " + std::to_string(width) + " threads " + std::to_string(threads) +
                         " tasks " + std::to_string(tasks));
            EXPECT_TRUE(same_values(fused::execute(plan, inputs, {threads, width, tasks}), want));
          }
        }
      }
    }
  }
}

TEST(FusedExecute, PolicyChunksLargeWork) {
  // 64·128 outputs × 128 terms ≥ 1e6: the §9 policy itself picks several chunks.
  const CheckedEinsum e = checked("a b, b c -> a c", {{64, 128}, {128, 128}});
  ASSERT_GT(fused::task_count(64, e.output_size * e.contraction_size, 3), 1u);
  std::mt19937_64 rng(7);
  const std::vector<Tensor> inputs = random_inputs(e, DType::f64, rng);
  const Tensor want = naive(e, inputs);
  for (int width : {1, 8}) EXPECT_TRUE(same_values(run_fused(e, inputs, {3, width, 0}), want));
}

// ---------------------------------------------------------------------------------------------
// Random generated einsums, really split into chunks: below 10^6 units of work the §9 policy runs one
// chunk, so the property draws `tasks` (and threads >= 2 most of the time) to split small cases.

using Executor = std::function<Tensor(const fused::EinsumPlan&, std::span<const Tensor>, const ExecOptions&)>;

/// Draws of the chunked property: how many evaluated cases, and how many of them ran > 1 chunk.
struct ChunkTally {
  int evaluated = 0;
  int split = 0;
};

/// fused-vs-reference on generated einsums with drawn threads, tile width and tasks; false (with
/// RapidCheck's counterexample printed) when `execute` differs from the reference on some draw.
bool chunked_cases_equal_the_reference(const Executor& execute, ChunkTally& tally) {
  return rc::check("fused equals the reference on generated einsums split into chunks", [&] {
    Rng rng(*rc::gen::arbitrary<std::uint64_t>());
    // Most generated einsums have a rank-0, empty or length-1 leading output axis, which no task
    // count can split: draw up to 8 and keep the first whose O[0] has room for several chunks (so
    // the others still turn up, as fallbacks, now and then).
    GenOptions gen;
    gen.long_axis_percent = 10;
    einfuzz::Case c;
    std::optional<CheckedEinsum> checked;
    for (int attempt = 0; attempt < 8; ++attempt) {
      c = generate_einsum(rng, gen);
      std::vector<Shape> shapes;
      for (const Tensor& t : c.inputs) shapes.push_back(t.shape());
      auto e = check_einsum(c.pattern, shapes);
      RC_ASSERT(e.ok());
      checked = std::move(*e);
      if (checked->output_size > 0 && checked->contraction_size > 0 && !checked->output_shape.empty() &&
          checked->output_shape[0] >= 2) {
        break;
      }
    }
    ExecOptions options;
    options.threads = static_cast<unsigned>(*rc::gen::weightedElement<int>({{1, 1}, {3, 2}, {3, 3}, {2, 4}}));
    options.tile_width = *rc::gen::element(1, 4, 8);
    options.tasks = static_cast<unsigned>(*rc::gen::inRange(0, 9));
    const fused::EinsumPlan plan = fused::compile(*checked);
    const unsigned chunks = fused::chunk_count(plan, options);
    ++tally.evaluated;
    tally.split += chunks > 1;
    RC_CLASSIFY(chunks > 1, "several chunks");
    const Tensor want = reference::evaluate_einsum(*checked, c.inputs);
    const auto same = test::bitwise_same(want, execute(plan, c.inputs, options), /*strict_nan=*/true);
    if (!same) {
      RC_FAIL(std::string(same.message()) + "\nthreads " + std::to_string(options.threads) + " tile " +
              std::to_string(options.tile_width) + " tasks " + std::to_string(options.tasks) + " (" +
              std::to_string(chunks) + " chunks)\ncase:\n" + write_case(c));
    }
  });
}

TEST(FusedChunks, ChunkCountFollowsTasksThreadsAndTheOuterAxis) {
  const auto plan = fused::compile(checked("a b, b c -> a c", {{5, 7}, {7, 3}}));
  EXPECT_EQ(fused::chunk_count(plan, {3, 8, 0}), 1u);  // small work: the §9 policy runs one chunk
  EXPECT_EQ(fused::chunk_count(plan, {3, 8, 2}), 2u);
  EXPECT_EQ(fused::chunk_count(plan, {3, 8, 7}), 3u);  // capped by the threads
  EXPECT_EQ(fused::chunk_count(plan, {8, 8, 7}), 5u);  // capped by O[0]
  EXPECT_EQ(fused::chunk_count(fused::compile(checked("a b -> b", {{4, 6}})), {3, 8, 3}), 3u);
  EXPECT_EQ(fused::chunk_count(fused::compile(checked("a b ->", {{4, 6}})), {3, 8, 3}), 1u);  // rank-0 output
  EXPECT_EQ(fused::chunk_count(fused::compile(checked("a b -> a", {{4, 0}})), {3, 8, 3}), 0u);  // reads nothing
}

TEST(FusedChunks, GeneratedEinsumsSplitIntoChunksEqualTheReference) {
  ChunkTally tally;
  EXPECT_TRUE(chunked_cases_equal_the_reference(
      [](const fused::EinsumPlan& plan, std::span<const Tensor> inputs, const ExecOptions& options) {
        return fused::execute(plan, inputs, options);
      },
      tally));
  // The point of drawing `tasks`: a fair share of the cases really runs several chunks.
  ASSERT_GT(tally.evaluated, 0);
  EXPECT_GE(tally.split * 4, tally.evaluated) << tally.split << " of " << tally.evaluated << " split";
}

TEST(FusedChunks, APlantedChunkBoundaryBugIsCaught) {
  // Test-only defect: the balanced split forgets the remainder, so when O[0] is not a multiple of
  // the chunk count its last rows are never written (they keep the output's initial +0).
  const Executor forgets_the_remainder = [](const fused::EinsumPlan& plan, std::span<const Tensor> inputs,
                                            const ExecOptions& options) {
    Tensor out = fused::execute(plan, inputs, options);
    const unsigned chunks = fused::chunk_count(plan, options);
    if (chunks <= 1) return out;
    const std::int64_t outer = plan.output_shape[0];
    const std::int64_t row = plan.output_size / outer;
    const std::int64_t covered = outer / chunks * chunks;
    visit_dtype(out.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (!std::is_same_v<T, Bool8>) {
        auto v = out.values<T>();
        for (std::int64_t i = covered * row; i < outer * row; ++i) v[static_cast<std::size_t>(i)] = T(0);
      }
    });
    return out;
  };
  ChunkTally tally;
  EXPECT_FALSE(chunked_cases_equal_the_reference(forgets_the_remainder, tally));
}

// ---------------------------------------------------------------------------------------------
// The chunks' threads: kept by the calling thread between calls, a forked child's own.

long this_tid() { return static_cast<long>(syscall(SYS_gettid)); }

/// The kernel ids of this process's threads.
std::set<long> process_threads() {
  std::set<long> tids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    tids.insert(std::stol(entry.path().filename().string()));
  }
  return tids;
}

TEST(FusedWorkers, RepeatedCallsReuseTheCallingThreadsWorkers) {
  // Two tasks on an outer axis of 6: the second chunk runs on a worker. A worker started per call
  // would be gone when execute returns; the calling thread's worker stays, the same thread each time.
  const CheckedEinsum e = checked("a b, b c -> a c", {{6, 5}, {5, 7}});
  const auto plan = fused::compile(e);
  std::mt19937_64 rng(20261207);
  const std::vector<Tensor> inputs = random_inputs(e, DType::f64, rng);
  const Tensor want = naive(e, inputs);
  ASSERT_TRUE(same_values(fused::execute(plan, inputs, {2, 8, 2}), want));
  const std::set<long> after_first = process_threads();
  EXPECT_GE(after_first.size(), 2u) << "no worker outlived the first call";
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(same_values(fused::execute(plan, inputs, {2, 8, 2}), want));
  EXPECT_EQ(process_threads(), after_first) << "threads were started or ended by the later calls";
}

TEST(FusedWorkers, EveryTaskRunsOnceTheOthersOffTheCallingThread) {
  for (unsigned tasks : {2u, 3u, 5u, 3u, 1u, 4u}) {
    std::vector<std::atomic<int>> runs(tasks);
    std::vector<long> tids(tasks);
    auto body = [&](unsigned t) {
      ++runs[t];
      tids[t] = this_tid();
    };
    fused::detail::run_tasks(tasks, body);
    for (unsigned t = 0; t < tasks; ++t) EXPECT_EQ(runs[t].load(), 1) << "task " << t << " of " << tasks;
    EXPECT_EQ(tids[0], this_tid());
    for (unsigned t = 1; t < tasks; ++t) EXPECT_NE(tids[t], this_tid()) << "task " << t << " of " << tasks;
  }
  EXPECT_EQ(fused::detail::worker_threads(), 4u);  // the most any call needed
}

TEST(FusedWorkers, AForkedChildStartsItsOwnWorkers) {
  // The parent's workers do not exist in a child (fork copies only the calling thread): a child
  // that waited for them would hang, as the harness's --isolate children would.
  long parent_worker = 0;
  auto warm = [&](unsigned t) {
    if (t == 1) parent_worker = this_tid();
  };
  fused::detail::run_tasks(2, warm);
  ASSERT_NE(parent_worker, this_tid());
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(30);  // a hang ends the child with SIGALRM, which the parent reports
    long worker = 0;
    auto body = [&](unsigned t) {
      if (t == 1) worker = this_tid();
    };
    fused::detail::run_tasks(2, body);
    _exit(worker != 0 && worker != this_tid() && worker != parent_worker ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child ended by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(FusedExecuteDeathTest, MixedDtypesAbort) {
  const CheckedEinsum e = checked("i, i ->", {{1}, {1}});
  const std::vector<Tensor> inputs{Tensor(Shape{1}, std::vector<double>{1}),
                                   Tensor(Shape{1}, std::vector<float>{1})};
  EXPECT_DEATH(run_fused(e, inputs), "share one dtype");
}

}  // namespace
}  // namespace einfuzz
