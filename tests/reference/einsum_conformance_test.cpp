// SEMANTICS §11.1 (E01–E45) and §11.2 (X01–X31), each a test for the reference and for fused:
// values bitwise (sign of zero included), errors by exact code.
#include <gtest/gtest.h>

#include "einfuzz/core/check.hpp"
#include "einfuzz/fused/einsum.hpp"
#include "einfuzz/harness/check_command.hpp"
#include "einfuzz/harness/run.hpp"
#include "einfuzz/reference/einsum.hpp"
#include "support/compare.hpp"
#include "support/values_text.hpp"

namespace einfuzz {
namespace {

struct ValueRow {
  const char* id;
  const char* pattern;
  const char* shapes;                 // --shapes notation
  std::vector<const char*> values;    // one value list per operand
  const char* out_shape;
  const char* out_values;
  DType dtype = DType::f64;
};

// Test names show the row id, not the bytes of the struct.
void PrintTo(const ValueRow& row, std::ostream* os) { *os << row.id << " '" << row.pattern << "'"; }

const std::vector<ValueRow>& value_rows() {
  static const std::vector<ValueRow> rows = {
      {"E01", "a b, b c -> a c", "2x3,3x2", {"1..6", "1,0,0,1,1,1"}, "2x2", "4,5,10,11"},
      {"E02", "a b -> b a", "2x3", {"1..6"}, "3x2", "1,4,2,5,3,6"},
      {"E03", "a b ->", "2x3", {"1..6"}, "()", "21"},
      {"E04", "a b -> a", "2x3", {"1..6"}, "2", "6,15"},
      {"E05", "i i -> i", "3x3", {"0..8"}, "3", "0,4,8"},
      {"E06", "i i ->", "3x3", {"0..8"}, "()", "12"},
      {"E07", "i i j -> i j", "2x2x2", {"0..7"}, "2x2", "0,1,6,7"},
      {"E08", "i i, i -> i", "1x1,3", {"2", "1,2,3"}, "3", "2,4,6"},
      {"E09", "i, i -> i", "1,3", {"2", "1,2,3"}, "3", "2,4,6"},
      {"E10", "i j, j k -> i k", "2x1,3x2", {"1,2", "1..6"}, "2x2", "9,12,18,24"},
      {"E11", "i, i -> i", "0,1", {"", "5"}, "0", ""},
      {"E12", "i, i -> i", "1,0", {"5", ""}, "0", ""},
      {"E13", "i, i ->", "0,1", {"", "5"}, "()", "0"},
      {"E14", "i j -> i", "2x0", {""}, "2", "0,0"},
      {"E15", "i j -> j", "2x0", {""}, "0", ""},
      {"E16", "i, j -> i j", "0,3", {"", "1,2,3"}, "0x3", ""},
      {"E17", "i i ->", "0x0", {""}, "()", "0"},
      {"E18", "i j, j -> i", "2x0,1", {"", "7"}, "2", "0,0"},
      {"E19", "->", "()", {"3"}, "()", "3"},
      {"E20", ", ->", "(),()", {"3", "4"}, "()", "12"},
      {"E21", "a, -> a", "2,()", {"1,2", "10"}, "2", "10,20"},
      {"E22", "a, a, a, a, a -> a", "2,2,2,1,2", {"1,2", "3,4", "5,6", "2", "1,-1"}, "2", "30,-96"},
      {"E23", "a b, b c, c d, d e -> a e", "1x2,2x2,2x1,1x2", {"1,2", "1,0,0,1", "3,4", "1,10"}, "1x2", "11,110"},
      {"E24", "... ->", "2x3", {"1..6"}, "()", "21"},
      {"E25", "... i -> ...", "2x3", {"1..6"}, "2", "6,15"},
      {"E26", "... i -> i", "2x3", {"1..6"}, "3", "5,7,9"},
      {"E27", "i j -> ... i j", "2x3", {"1..6"}, "2x3", "1..6"},
      {"E28", "o i, ... i -> ... o", "2x3,2x3", {"1,0,0,0,1,1", "1..6"}, "2x2", "1,5,4,11"},
      {"E29", "... i, ... i -> ... i", "2x1x2,3x2", {"1,2,3,4", "1,1,2,2,3,3"}, "2x3x2", "1,2,2,4,3,6,3,4,6,8,9,12"},
      {"E30", "i j ->", "2x2", {"1e16,1,-1e16,1"}, "()", "1"},
      {"E31", "j i, i j ->", "2x2,2x2", {"1,1,1,1", "1e16,1,-1e16,1"}, "()", "2"},
      {"E32", "... i, ... j -> i j", "3x1,2x3x1", {"1,1,1", "1e16,-1e16,0,1,1,0"}, "1x1", "1"},
      {"E33", "i -> i", "1", {"-0"}, "1", "0"},
      {"E34", "i, i ->", "1,1", {"-0", "1"}, "()", "0"},
      {"E35", "i, i -> i", "2,2", {"inf,0", "0,1"}, "2", "nan,0"},
      {"E36", "i ->", "2", {"1,nan"}, "()", "nan"},
      {"E37", "a, a, a -> a", "1,1,1", {"1e308", "10", "0.1"}, "1", "inf"},
      {"E38", "a, a, a -> a", "1,1,1", {"0.1", "10", "1e308"}, "1", "1e308"},
      {"E39", "batch inner, inner out -> batch out", "1x2,2x1", {"1,2", "3,4"}, "1x1", "11"},
      {"E40", "(a) b -> a", "2x3", {"1..6"}, "2", "6,15"},
      {"E41", "a (b 1) -> a", "2x3", {"1..6"}, "2", "6,15"},
      {"E42", "_ b -> _", "2x3", {"1..6"}, "2", "6,15"},
      {"E43", "i, j -> j i", "2,3", {"1,2", "1,10,100"}, "3x2", "1,2,10,20,100,200"},
      {"E44", "b i j, b j k -> b i k", "2x1x2,2x2x1", {"1,2,3,4", "1,1,1,-1"}, "2x1x1", "3,-1"},
      {"E45", "i ->", "9", {"16777216,8*1"}, "()", "16777216", DType::f32},
  };
  return rows;
}

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

INSTANTIATE_TEST_SUITE_P(Semantics11_1, EinsumValueRow, ::testing::ValuesIn(value_rows()),
                         [](const auto& row) { return std::string(row.param.id); });

struct ErrorRow {
  const char* id;
  const char* pattern;
  const char* shapes;
  Code code;
};

void PrintTo(const ErrorRow& row, std::ostream* os) { *os << row.id << " '" << row.pattern << "'"; }

const std::vector<ErrorRow>& error_rows() {
  static const std::vector<ErrorRow> rows = {
      {"X01", "a b", "2x3", Code::missingArrow},
      {"X02", "", "()", Code::missingArrow},
      {"X03", "a -> b -> c", "2", Code::duplicateArrow},
      {"X04", "a$ -> a", "2", Code::unknownCharacter},
      {"X05", "a\tb -> a", "2x3", Code::unknownCharacter},
      {"X06", "a... -> a", "2x3", Code::unknownCharacter},
      {"X07", "_x b -> b", "2x3", Code::invalidIdentifier},
      {"X08", "2a -> ", "2", Code::invalidIdentifier},
      {"X09", "0 -> ", "1", Code::invalidAnonymousAxis},
      {"X10", "((a)) -> a", "2", Code::nestedParenthesis},
      {"X11", "(a -> a", "2", Code::unbalancedParenthesis},
      {"X12", "a * b -> a", "2x3", Code::unexpectedToken},
      {"X13", "a b -> a, b", "2x3", Code::unexpectedToken},
      {"X14", "... ... ->", "2x3", Code::duplicateEllipsis},
      {"X15", "a b -> a a", "2x3", Code::duplicateAxis},
      {"X16", "a, b -> a", "2", Code::einsumOperandCountMismatch},
      {"X17", "->", "", Code::einsumOperandCountMismatch},
      {"X18", "(a b) -> a", "6", Code::unsupportedEinsumAxis},
      {"X19", "1 a -> a", "1x3", Code::unsupportedEinsumAxis},
      {"X20", "() a -> a", "1x3", Code::unsupportedEinsumAxis},
      {"X21", "2 a -> a", "2x3", Code::unsupportedEinsumAxis},
      {"X22", "(...) a -> a", "2x3", Code::unsupportedEinsumAxis},
      {"X23", "a b -> a", "2", Code::rankMismatch},
      {"X24", "a b ... -> a", "2", Code::rankMismatch},
      {"X25", "i i -> i", "2x3", Code::repeatedEinsumDimensionMismatch},
      {"X26", "i i -> i", "1x3", Code::repeatedEinsumDimensionMismatch},
      {"X27", "_ _ b -> _ _", "2x2x3", Code::duplicateEinsumOutputAxis},
      {"X28", "a -> b", "2", Code::unknownEinsumOutputAxis},
      {"X29", "i, i -> i", "2,3", Code::incompatibleEinsumBroadcast},
      {"X30", "i, i -> i", "0,3", Code::incompatibleEinsumBroadcast},
      {"X31", "a b -> c", "3", Code::rankMismatch},
  };
  return rows;
}

class EinsumErrorRow : public ::testing::TestWithParam<ErrorRow> {};

TEST_P(EinsumErrorRow, ReferenceAndFusedRejectWithTheCode) {
  const ErrorRow& row = GetParam();
  auto shapes = parse_shapes(row.shapes, Limits{});
  ASSERT_TRUE(shapes.ok());
  Case c;
  c.pattern = row.pattern;
  c.dtype = DType::f64;
  for (const Shape& s : *shapes) c.inputs.emplace_back(DType::f64, s);

  auto checked = check_einsum(row.pattern, *shapes);
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

INSTANTIATE_TEST_SUITE_P(Semantics11_2, EinsumErrorRow, ::testing::ValuesIn(error_rows()),
                         [](const auto& row) { return std::string(row.param.id); });

}  // namespace
}  // namespace einfuzz
