// Plan reuse (issue 15): a second `execute` of a compiled plan allocates no more than its output
// tensor does, and that is one allocation (its values: the shape is inline), counted by replacing
// the global operator new in this test binary.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/tensor.hpp"
#include "einfuzz/fused/einsum.hpp"

namespace {
std::atomic<long> g_allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace einfuzz {
namespace {

/// Allocations made while `f` runs.
template <class F>
long allocations_of(F&& f) {
  const long before = g_allocations.load();
  f();
  return g_allocations.load() - before;
}

struct SmallCase {
  const char* pattern;
  std::vector<Shape> shapes;
};

// The bench's small patterns (bench_einsum */0) and a few more loop-nest shapes.
const SmallCase kCases[] = {
    {"a b, b c -> a c", {{16, 16}, {16, 16}}},
    {"b i j, b j k -> b i k", {{4, 8, 8}, {4, 8, 8}}},
    {"i i j -> i j", {{16, 16, 16}}},
    {"i i ->", {{64, 64}}},
    {"a b, b -> a b", {{32, 32}, {32}}},
    {"a b, b c, c d, d e -> a e", {{4, 4}, {4, 4}, {4, 4}, {4, 4}}},
    {"i, i ->", {{1024}, {1024}}},
    {"a b -> b a", {{7, 9}}},
    {"a, a, a, a, a -> a", {{21}, {21}, {1}, {21}, {21}}},
};

TEST(FusedAllocations, SecondExecuteAllocatesOnlyTheOutput) {
  for (const SmallCase& c : kCases) {
    SCOPED_TRACE(c.pattern);
    auto checked = check_einsum(c.pattern, c.shapes);
    ASSERT_TRUE(checked.ok());
    const fused::EinsumPlan plan = fused::compile(*checked);
    for (DType dtype : {DType::f32, DType::f64, DType::i32, DType::i64}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)));
      std::vector<Tensor> inputs;
      for (const Shape& s : c.shapes) inputs.emplace_back(dtype, s);
      const fused::ExecOptions options{1};
      (void)fused::execute(plan, inputs, options);  // the first call may warm per-thread buffers
      const long output = allocations_of([&] { const Tensor t(dtype, plan.output_shape); });
      // A shape of rank <= Shape::kInline lives in the tensor: the values are its one allocation.
      EXPECT_EQ(output, 1) << "Tensor(dtype, shape) of rank " << plan.output_shape.size();
      const long execute = allocations_of([&] { const Tensor t = fused::execute(plan, inputs, options); });
      EXPECT_LE(execute, output) << "the output tensor alone makes " << output;
    }
  }
}

}  // namespace
}  // namespace einfuzz
