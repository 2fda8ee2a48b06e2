// SEMANTICS §11.1 (E01–E45), §11.2 (X01–X31) and docs/semantics.md's f16/bf16 einsum rows (H01–H06),
// each a test for the reference and for fused:
// values bitwise (sign of zero included), errors by exact code.
#include <gtest/gtest.h>

#include "einfuzz/core/check.hpp"
#include "einfuzz/fused/einsum.hpp"
#include "einfuzz/harness/check_command.hpp"
#include "einfuzz/harness/run.hpp"
#include "einfuzz/reference/einsum.hpp"
#include "support/compare.hpp"
#include "support/conformance_rows.hpp"
#include "support/values_text.hpp"

namespace einfuzz {
namespace {

using ValueRow = test::EinsumValueRow;

Shape one_shape(const char* text) {
  auto shapes = parse_shapes(text, Limits{});
  EXPECT_TRUE(shapes.ok() && shapes->size() == 1) << text;
  return shapes->front();
}

class EinsumValueRow : public ::testing::TestWithParam<ValueRow> {
 protected:
  void SetUp() override {
    const ValueRow& row = GetParam();
    auto shapes = parse_shapes(row.shapes, Limits{});
    ASSERT_TRUE(shapes.ok()) << row.shapes;
    ASSERT_EQ(shapes->size(), row.values.size());
    for (std::size_t k = 0; k < shapes->size(); ++k) {
      inputs_.push_back(test::tensor_from_text(row.dtype, (*shapes)[k], row.values[k]));
    }
    expected_ = test::tensor_from_text(row.dtype, one_shape(row.out_shape), row.out_values);
    std::vector<Shape> s(*shapes);
    auto checked = check_einsum(row.pattern, s);
    ASSERT_TRUE(checked.ok()) << render(checked.error());
    checked_ = *checked;
  }
  std::vector<Tensor> inputs_;
  Tensor expected_;
  CheckedEinsum checked_;
};

TEST_P(EinsumValueRow, Reference) {
  EXPECT_TRUE(test::bitwise_same(expected_, reference::evaluate_einsum(checked_, inputs_)));
}

TEST_P(EinsumValueRow, Fused) {
  const auto plan = fused::compile(checked_);
  for (int tile : {1, 4, 8}) {
    for (unsigned threads : {1u, 2u}) {
      EXPECT_TRUE(test::bitwise_same(expected_, fused::execute(plan, inputs_, {threads, tile})))
          << "tile " << tile << " threads " << threads;
    }
  }
}

TEST_P(EinsumValueRow, FusedBackendVerdict) {
  Case c;
  c.pattern = GetParam().pattern;
  c.dtype = GetParam().dtype;
  c.inputs = inputs_;
  RunOptions options;
  auto fused = make_fused_backend(options);
  Backend* backends[] = {fused.get()};
  const CaseOutcome outcome = run_case(c, backends, options);
  ASSERT_FALSE(outcome.rejection);
  ASSERT_EQ(outcome.backends.size(), 1u);
  EXPECT_EQ(outcome.backends[0].verdict.kind, VerdictKind::pass_bitwise) << outcome.backends[0].verdict.detail;
}

INSTANTIATE_TEST_SUITE_P(Semantics11_1, EinsumValueRow, ::testing::ValuesIn(test::einsum_value_rows()),
                         test::RowId{});
// The f16/bf16 rows of docs/semantics.md (H01–H06), the same three checks.
INSTANTIATE_TEST_SUITE_P(Docs, EinsumValueRow, ::testing::ValuesIn(test::half_einsum_value_rows()), test::RowId{});

class EinsumErrorRow : public ::testing::TestWithParam<test::EinsumErrorRow> {};

TEST_P(EinsumErrorRow, ReferenceAndFusedRejectWithTheCode) {
  const test::EinsumErrorRow& row = GetParam();
  const Case c = test::case_of(row);
  auto checked = check_einsum(row.pattern, test::shapes_of(row.shapes));
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(code_name(checked.error().code), code_name(row.code)) << render(checked.error());
  EXPECT_LE(checked.error().column, std::string_view(row.pattern).size());

  RunOptions options;
  auto fused = make_fused_backend(options);
  Backend* backends[] = {fused.get()};
  const CaseOutcome outcome = run_case(c, backends, options);
  ASSERT_TRUE(outcome.rejection);
  EXPECT_EQ(code_name(outcome.rejection->code), code_name(row.code));
  // The fused backend rejects with the same code: the verdict is agreement, not a disagreement.
  EXPECT_EQ(outcome.backends.at(0).verdict.kind, VerdictKind::pass) << outcome.backends.at(0).verdict.detail;
}

INSTANTIATE_TEST_SUITE_P(Semantics11_2, EinsumErrorRow, ::testing::ValuesIn(test::einsum_error_rows()),
                         test::RowId{});

}  // namespace
}  // namespace einfuzz
