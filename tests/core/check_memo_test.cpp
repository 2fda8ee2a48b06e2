// The checkers' per-thread memos (core/src/check_memo.hpp): the same arguments share one result,
// and a change to anything the check reads is a new check — a memo whose key missed a field would
// hand one case's verdict to another.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "einfuzz/core/case.hpp"
#include "einfuzz/core/check.hpp"
#include "einfuzz/core/check_case.hpp"
#include "einfuzz/core/check_reduce.hpp"

namespace einfuzz {
namespace {

Case memo_matmul() {
  Case c;
  c.pattern = "i j, j k -> i k";
  c.dtype = DType::f64;
  c.inputs = {Tensor(DType::f64, Shape{2, 3}), Tensor(DType::f64, Shape{3, 4})};
  return c;
}

Case memo_row_sum() {
  Case c;
  c.op = Op::reduce;
  c.pattern = "a (b c) -> a";
  c.reduction = "sum";
  c.axis_lengths = {{"b", 2}};
  c.dtype = DType::f32;
  c.inputs = {Tensor(DType::f32, Shape{3, 4})};
  return c;
}

/// A check's verdict in a few words: the output shape, or the diagnostic's code.
std::string memo_verdict(const Result<CheckedCase>& r) {
  if (!r) return "rejects: " + std::string(code_name(r.error().code));
  return "output " + format_shape(std::visit([](const auto& x) -> const Shape& { return x.output_shape; }, *r));
}

/// The verdict on `c` right after `before` was checked (the memo holds before's), and after an
/// unrelated case (the memo holds neither): a key that misses a field gives two answers.
void expect_checked_afresh(const Case& before, const Case& c, const Limits& limits = {}) {
  const std::string base = memo_verdict(*check_case_shared(before, {}));
  const std::string after_base = memo_verdict(*check_case_shared(c, limits));
  Case other;
  other.pattern = "x -> x";
  other.inputs = {Tensor(DType::f64, Shape{5})};
  (void)check_case_shared(other, {});
  const std::string fresh = memo_verdict(*check_case_shared(c, limits));
  EXPECT_NE(fresh, base) << "the variation should change the verdict (a test that cannot fail otherwise)";
  EXPECT_EQ(after_base, fresh);
}

TEST(CheckMemo, TheSameCaseSharesOneResult) {
  const Case c = memo_matmul();
  const auto first = check_case_shared(c, {});
  const auto second = check_case_shared(c, {});
  EXPECT_EQ(first.get(), second.get());
  EXPECT_EQ(memo_verdict(*first), "output 2x4");
  // A caller's result outlives the memo's next entry.
  (void)check_case_shared(memo_row_sum(), {});
  EXPECT_EQ(memo_verdict(*first), "output 2x4");
  EXPECT_EQ(memo_verdict(check_case(c, {})), "output 2x4");
}

// release_check_memos (the fuzz targets call it after each input): nothing memoised survives it, and
// results already handed out do.
TEST(CheckMemo, ReleasedMemosHoldNothing) {
  const Case c = memo_matmul();
  const auto first = check_case_shared(c, {});
  ASSERT_NE(check_case_memoised(c, {}), nullptr);
  const std::vector<Shape> shapes = {Shape{2, 3}, Shape{3, 4}};
  const auto einsum = check_einsum_shared(c.pattern, shapes, {});
  const Case r = memo_row_sum();
  const auto reduce = check_reduce_shared(r.pattern, *r.reduction, r.inputs[0].shape(), r.axis_lengths, r.dtype, {});
  release_check_memos();
  EXPECT_EQ(check_case_memoised(c, {}), nullptr);
  EXPECT_EQ(first.use_count(), 1);
  EXPECT_EQ(einsum.use_count(), 1);
  EXPECT_EQ(reduce.use_count(), 1);
  EXPECT_EQ(memo_verdict(*first), "output 2x4");
  const auto again = check_case_shared(c, {});
  EXPECT_NE(again.get(), first.get());
  EXPECT_EQ(memo_verdict(*again), "output 2x4");
}

TEST(CheckMemo, EveryEinsumFieldTheCheckReadsIsInTheKey) {
  const Case base = memo_matmul();
  const std::vector<std::pair<const char*, std::function<void(Case&)>>> variations = {
      {"pattern", [](Case& c) { c.pattern = "i j, j k -> k i"; }},
      {"input shape", [](Case& c) { c.inputs[1] = Tensor(DType::f64, Shape{4, 4}); }},
      {"input dtype", [](Case& c) { c.inputs[0] = Tensor(DType::f32, Shape{2, 3}); }},
      {"case dtype", [](Case& c) { c.dtype = DType::f32; }},
      {"input count", [](Case& c) { c.inputs.pop_back(); }},
      {"op", [](Case& c) { c.op = Op::reduce; }},
      {"cotangent shape", [](Case& c) { c.cotangent = Tensor(DType::f64, Shape{4, 2}); }},
  };
  for (const auto& [what, vary] : variations) {
    SCOPED_TRACE(what);
    Case c = base;
    vary(c);
    expect_checked_afresh(base, c);
  }
  // A cotangent of the right shape is accepted; its dtype and then its shape are read again.
  Case with = base;
  with.cotangent = Tensor(DType::f64, Shape{2, 4});
  Case wrong_dtype = with;
  wrong_dtype.cotangent = Tensor(DType::f32, Shape{2, 4});
  {
    SCOPED_TRACE("cotangent dtype");
    expect_checked_afresh(with, wrong_dtype);
  }
  {
    SCOPED_TRACE("limits");
    Limits small;
    small.max_tensor_elements = 4;
    expect_checked_afresh(base, base, small);
  }
}

TEST(CheckMemo, EveryReduceFieldTheCheckReadsIsInTheKey) {
  const Case base = memo_row_sum();
  const std::vector<std::pair<const char*, std::function<void(Case&)>>> variations = {
      {"reduction", [](Case& c) { c.reduction = "any"; }},
      {"axis lengths", [](Case& c) { c.axis_lengths = {{"b", 3}}; }},
      {"input shape", [](Case& c) { c.inputs[0] = Tensor(DType::f32, Shape{5, 4}); }},
      {"case and input dtype", [](Case& c) {
         c.dtype = DType::boolean;
         c.inputs[0] = Tensor(DType::boolean, Shape{3, 4});
       }},
  };
  for (const auto& [what, vary] : variations) {
    SCOPED_TRACE(what);
    Case c = base;
    vary(c);
    expect_checked_afresh(base, c);
  }
}

TEST(CheckMemo, TheSharedEinsumAndReduceChecksAreTheCopyingOnes) {
  const std::vector<Shape> shapes = {{2, 3}, {3, 4}};
  const auto shared = check_einsum_shared("i j, j k -> i k", shapes, {});
  ASSERT_TRUE(*shared);
  EXPECT_EQ((*shared)->output_shape, (Shape{2, 4}));
  EXPECT_EQ(check_einsum_shared("i j, j k -> i k", shapes, {}).get(), shared.get());
  const std::vector<Shape> other = {{2, 3}, {3, 5}};
  EXPECT_EQ((*check_einsum_shared("i j, j k -> i k", other, {}))->output_shape, (Shape{2, 5}));
  EXPECT_EQ((*shared)->output_shape, (Shape{2, 4}));  // still the first call's

  const std::vector<std::pair<std::string, std::int64_t>> lengths = {{"b", 2}};
  const auto reduce = check_reduce_shared("a (b c) -> a", "sum", Shape{3, 4}, lengths, DType::f32, {});
  ASSERT_TRUE(*reduce);
  EXPECT_EQ((*reduce)->output_shape, (Shape{3}));
  EXPECT_EQ(check_reduce("a (b c) -> a", "sum", Shape{3, 4}, lengths, DType::f32)->output_shape, (Shape{3}));
  EXPECT_FALSE(check_reduce("a (b c) -> a", "mean", Shape{3, 4}, lengths, DType::i32));
}

}  // namespace
}  // namespace einfuzz
