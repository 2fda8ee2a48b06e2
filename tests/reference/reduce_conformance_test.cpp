// SEMANTICS §11.3 (R01–R39) and §11.4 (Y01–Y22), each a test for the reference and for fused:
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
#include "support/values_text.hpp"

namespace einfuzz {
namespace {

using Lengths = std::vector<std::pair<std::string, std::int64_t>>;

struct ValueRow {
  const char* id;
  const char* pattern;
  const char* kind;
  Lengths lengths;
  Shape shape;
  const char* values;
  Shape out_shape;
  const char* out_values;
  DType dtype = DType::f64;
};

void PrintTo(const ValueRow& row, std::ostream* os) { *os << row.id << " '" << row.pattern << "' " << row.kind; }

constexpr DType kBool = DType::boolean;

const std::vector<ValueRow>& value_rows() {
  static const std::vector<ValueRow> rows = {
      {"R01", "a b -> a", "sum", {}, {2, 3}, "1..6", {2}, "6,15"},
      {"R02", "a b -> a", "prod", {}, {2, 3}, "1..6", {2}, "6,120"},
      {"R03", "a b -> a", "mean", {}, {2, 3}, "1..6", {2}, "2,5"},
      {"R04", "a b -> a", "min", {}, {2, 3}, "1..6", {2}, "1,4"},
      {"R05", "a b -> a", "max", {}, {2, 3}, "1..6", {2}, "3,6"},
      {"R06", "a b -> b", "mean", {}, {2, 3}, "1..6", {3}, "2.5,3.5,4.5"},
      {"R07", "a b ->", "mean", {}, {2, 2}, "1,2,4,0", {}, "1.75"},
      {"R08", "a ->", "mean", {}, {3}, "1,2,4", {}, "2.3333333333333335"},
      {"R09", "a b -> a", "sum", {}, {2, 0}, "", {2}, "0,0"},
      {"R10", "a b -> a", "prod", {}, {2, 0}, "", {2}, "1,1"},
      {"R11", "a b -> a", "any", {}, {2, 0}, "", {2}, "0,0", kBool},
      {"R12", "a b -> a", "all", {}, {2, 0}, "", {2}, "1,1", kBool},
      {"R13", "a b -> a", "max", {}, {0, 3}, "", {0}, ""},
      {"R14", "a b -> a", "any", {}, {2, 2}, "1,0,0,0", {2}, "1,0", kBool},
      {"R15", "a b -> a", "all", {}, {2, 2}, "1,1,1,0", {2}, "1,0", kBool},
      {"R16", "a ->", "max", {}, {3}, "1,nan,0.5", {}, "1"},
      {"R17", "a ->", "max", {}, {3}, "nan,1,0.5", {}, "nan"},
      {"R18", "a ->", "min", {}, {3}, "1,nan,0.5", {}, "0.5"},
      {"R19", "a ->", "min", {}, {3}, "1,0.5,nan", {}, "nan"},
      {"R20", "a ->", "max", {}, {2}, "0,-0", {}, "-0"},
      {"R21", "a ->", "max", {}, {2}, "-0,0", {}, "0"},
      {"R22", "a ->", "min", {}, {2}, "0,-0", {}, "0"},
      {"R23", "a ->", "min", {}, {2}, "-0,0", {}, "-0"},
      {"R24", "a -> a", "sum", {}, {1}, "-0", {1}, "0"},
      {"R25", "a -> a", "min", {}, {1}, "-0", {1}, "-0"},
      {"R26", "a -> a", "prod", {}, {1}, "-0", {1}, "-0"},
      {"R27", "a -> a", "mean", {}, {1}, "-0", {1}, "0"},
      {"R28", "a ->", "sum", {}, {4}, "1e16,1,-1e16,1", {}, "1"},
      {"R29", "a ->", "prod", {}, {3}, "1e308,10,0.1", {}, "inf"},
      {"R30", "(a b) c -> a c", "sum", {{"b", 2}}, {4, 2}, "1..8", {2, 2}, "4,6,12,14"},
      {"R31", "a b c -> (c a)", "sum", {}, {2, 3, 2}, "0..11", {4}, "6,24,9,27"},
      {"R32", "b (h 2) (w 2) -> b h w", "max", {}, {1, 2, 4}, "1,5,2,0,3,4,7,6", {1, 1, 2}, "5,7"},
      {"R33", "a b -> a 1", "sum", {}, {2, 3}, "1..6", {2, 1}, "6,15"},
      {"R34", "a b -> () a ()", "sum", {}, {2, 3}, "1..6", {1, 2, 1}, "6,15"},
      {"R35", "a ... -> a", "sum", {}, {2, 1, 2}, "1,2,3,4", {2}, "3,7"},
      {"R36", "... b -> b ...", "min", {}, {2, 3}, "1..6", {3, 2}, "1,4,2,5,3,6"},
      {"R37", "a (b c) -> c", "sum", {{"b", 2}}, {2, 4}, "1..8", {2}, "16,20"},
      {"R38", "(h 2) -> h", "mean", {}, {4}, "1,2,3,4", {2}, "1.5,3.5"},
      {"R39", "a ->", "sum", {}, {9}, "16777216,8*1", {}, "16777216", DType::f32},
  };
  return rows;
}

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

INSTANTIATE_TEST_SUITE_P(Semantics11_3, ReduceValueRow, ::testing::ValuesIn(value_rows()),
                         [](const auto& row) { return std::string(row.param.id); });

struct ErrorRow {
  const char* id;
  const char* pattern;
  const char* kind;
  Lengths lengths;
  Shape shape;
  Code code;
  const char* message_fragment = "";
  DType dtype = DType::f64;
};

void PrintTo(const ErrorRow& row, std::ostream* os) { *os << row.id << " '" << row.pattern << "' " << row.kind; }

const std::vector<ErrorRow>& error_rows() {
  static const std::vector<ErrorRow> rows = {
      {"Y01", "a b -> a", "mean", {}, {2, 0}, Code::emptyFiber, "undefined on empty fibers"},
      {"Y02", "a b -> a", "min", {}, {2, 0}, Code::emptyFiber, "undefined on empty fibers"},
      {"Y03", "a b -> b", "max", {}, {0, 3}, Code::emptyFiber, "undefined on empty fibers"},
      {"Y04", "a b -> a c", "sum", {}, {2, 3}, Code::axisMismatch},
      {"Y05", "a b -> a 2", "sum", {}, {2, 3}, Code::axisMismatch},
      {"Y06", "a a -> a", "sum", {}, {2, 2}, Code::duplicateAxis},
      {"Y07", "a b -> b a a", "sum", {}, {2, 3}, Code::duplicateAxis},
      {"Y08", "_ ->", "sum", {}, {2}, Code::invalidIdentifier},
      {"Y09", "a, b -> a", "sum", {}, {2, 3}, Code::unexpectedToken},
      {"Y10", "a b c -> a", "sum", {}, {2, 3}, Code::rankMismatch},
      {"Y11", "(...) b -> b", "sum", {}, {2, 3}, Code::invalidEllipsis},
      {"Y12", "a b -> ... a", "sum", {}, {2, 3}, Code::invalidEllipsis},
      {"Y13", "(a b) -> a", "sum", {}, {6}, Code::cannotInferAxis},
      {"Y14", "(a b) -> a", "sum", {{"b", 4}}, {6}, Code::dimensionMismatch},
      {"Y15", "(a b) -> a", "sum", {{"b", 0}}, {0}, Code::cannotInferAxis},
      {"Y16", "(a b) -> a", "sum", {{"b", 0}}, {4}, Code::dimensionMismatch},
      {"Y17", "a -> a", "sum", {{"z", 3}}, {6}, Code::unusedAxisLength},
      {"Y18", "(a b) -> a", "sum", {{"b", 3}, {"b", 3}}, {6}, Code::duplicateAxisLength},
      {"Y19", "a b -> a", "sum", {{"a", 5}}, {6, 3}, Code::dimensionMismatch},
      {"Y20", "1 a -> a", "sum", {}, {2, 3}, Code::dimensionMismatch},
      {"Y21", "a b -> a", "any", {}, {2, 2}, Code::unsupportedDtype, "requires a Boolean tensor"},
      {"Y22", "a b -> a", "mean", {}, {2, 2}, Code::unsupportedDtype, "", DType::i32},
  };
  return rows;
}

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

INSTANTIATE_TEST_SUITE_P(Semantics11_4, ReduceErrorRow, ::testing::ValuesIn(error_rows()),
                         [](const auto& row) { return std::string(row.param.id); });

TEST(ReduceErrorRows, Y22RejectsMeanOnEveryNonFloatDtype) {
  for (DType dtype : {DType::i32, DType::i64, DType::boolean}) {
    auto checked = check_reduce("a b -> a", "mean", {2, 2}, {}, dtype);
    ASSERT_FALSE(checked.ok());
    EXPECT_EQ(checked.error().code, Code::unsupportedDtype) << dtype_name(dtype);
  }
}

}  // namespace
}  // namespace einfuzz
