// SEMANTICS §11.3 (R01–R39), §11.4 (Y01–Y22) and docs/semantics.md's f16/bf16 reduce rows (H07–H11),
// each a test for the reference and for fused:
// values bitwise (sign of zero and NaN-ness included), errors by exact code.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/fused/reduce.hpp"
#include "einfuzz/reference/reduce.hpp"
#include "support/compare.hpp"
#include "support/conformance_rows.hpp"
#include "support/values_text.hpp"

namespace einfuzz {
namespace {

using ValueRow = test::ReduceValueRow;

class ReduceValueRow : public ::testing::TestWithParam<ValueRow> {
 protected:
  void SetUp() override {
    const ValueRow& row = GetParam();
    input_ = test::tensor_from_text(row.dtype, row.shape, row.values);
    expected_ = test::tensor_from_text(row.dtype, row.out_shape, row.out_values);
    auto checked = check_reduce(row.pattern, row.kind, row.shape, row.lengths, row.dtype);
    ASSERT_TRUE(checked.ok()) << render(checked.error());
    checked_ = *checked;
  }
  Tensor input_;
  Tensor expected_;
  CheckedReduce checked_;
};

TEST_P(ReduceValueRow, Reference) {
  EXPECT_TRUE(test::bitwise_same(expected_, reference::evaluate_reduce(checked_, input_)));
}

TEST_P(ReduceValueRow, Fused) {
  for (unsigned threads : {1u, 2u, 3u}) {
    for (unsigned tasks : {0u, 1u, 2u, 3u}) {
      fused::ExecOptions options;
      options.threads = threads;
      options.tasks = tasks;
      EXPECT_TRUE(test::bitwise_same(expected_, fused::execute_reduce(checked_, input_, options)))
          << "threads " << threads << " tasks " << tasks;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Semantics11_3, ReduceValueRow, ::testing::ValuesIn(test::reduce_value_rows()),
                         test::RowId{});
// The f16/bf16 rows of docs/semantics.md (H07–H11).
INSTANTIATE_TEST_SUITE_P(Docs, ReduceValueRow, ::testing::ValuesIn(test::half_reduce_value_rows()), test::RowId{});

using ErrorRow = test::ReduceErrorRow;

class ReduceErrorRow : public ::testing::TestWithParam<ErrorRow> {};

// Both evaluators take only a CheckedReduce, so the checker's rejection is what both report.
TEST_P(ReduceErrorRow, ReferenceAndFusedRejectWithTheCode) {
  const ErrorRow& row = GetParam();
  auto checked = check_reduce(row.pattern, row.kind, row.shape, row.lengths, row.dtype);
  ASSERT_FALSE(checked.ok());
  const Diagnostic& d = checked.error();
  EXPECT_EQ(code_name(d.code), code_name(row.code)) << render(d);
  EXPECT_NE(d.message.find(row.message_fragment), std::string::npos) << d.message;
  EXPECT_TRUE(d.column == kNoColumn || d.column <= std::string_view(row.pattern).size());
  EXPECT_NE(render(d).find("error[" + std::string(code_name(row.code)) + "]"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Semantics11_4, ReduceErrorRow, ::testing::ValuesIn(test::reduce_error_rows()),
                         test::RowId{});

TEST(ReduceErrorRows, Y22RejectsMeanOnEveryNonFloatDtype) {
  for (DType dtype : {DType::i32, DType::i64, DType::boolean}) {
    auto checked = check_reduce("a b -> a", "mean", {2, 2}, {}, dtype);
    ASSERT_FALSE(checked.ok());
    EXPECT_EQ(checked.error().code, Code::unsupportedDtype) << dtype_name(dtype);
  }
}

}  // namespace
}  // namespace einfuzz
