// Checker: axis bookkeeping (§3–§5), diagnostic precedence (§2.2), the size limits (§13.4) and the dtype table.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <type_traits>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/dtype.hpp"

namespace einfuzz {
namespace {

CheckedEinsum ok(std::string_view pattern, std::vector<Shape> shapes) {
  auto r = check_einsum(pattern, shapes);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : render(r.error()));
  return r.ok() ? *r : CheckedEinsum{};
}

Diagnostic fails(std::string_view pattern, std::vector<Shape> shapes, const Limits& limits = {}) {
  auto r = check_einsum(pattern, shapes, limits);
  EXPECT_FALSE(r.ok()) << pattern;
  return r.ok() ? Diagnostic{Code::internalInvariant, "accepted", 0, {}} : r.error();
}

std::vector<std::string> names(const CheckedEinsum& e, const std::vector<int>& idx) {
  std::vector<std::string> out;
  for (int i : idx) out.push_back(e.axes[static_cast<std::size_t>(i)].name);
  return out;
}

TEST(Check, GlobalAxesInFirstAppearanceOrderAndContractedInGOrder) {
  const auto e = ok("j i, i j ->", {{2, 2}, {2, 2}});
  EXPECT_EQ(names(e, e.contracted), (std::vector<std::string>{"j", "i"}));
  EXPECT_TRUE(e.output.empty());
  EXPECT_EQ(e.contraction_size, 4);
  EXPECT_EQ(e.output_size, 1);
}

TEST(Check, EllipsisSlotsAreRightAlignedAndEnterGWhereFirstMet) {
  // SEMANTICS §5: G = [E1, i, E0, j], C = [E1, E0].
  const auto e = ok("... i, ... j -> i j", {{3, 1}, {2, 3, 1}});
  std::vector<int> all(e.axes.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  EXPECT_EQ(names(e, all), (std::vector<std::string>{"...1", "i", "...0", "j"}));
  EXPECT_EQ(names(e, e.contracted), (std::vector<std::string>{"...1", "...0"}));
  EXPECT_EQ(e.contraction_shape, (Shape{3, 2}));
}

TEST(Check, ResolvedLengthIsTheFirstOccurrenceThatIsNotOne) {
  EXPECT_EQ(ok("i, i -> i", {{1}, {0}}).output_shape, Shape{0});
  EXPECT_EQ(ok("i, i -> i", {{0}, {1}}).output_shape, Shape{0});
  EXPECT_EQ(ok("i, i -> i", {{1}, {1}}).output_shape, Shape{1});
  EXPECT_EQ(ok("i j, j k -> i k", {{2, 1}, {3, 2}}).contraction_shape, Shape{3});
  EXPECT_EQ(ok("i j -> ... i j", {{2, 3}}).output_shape, (Shape{2, 3}));
  EXPECT_EQ(ok("... i, ... i -> ... i", {{2, 1, 2}, {3, 2}}).output_shape, (Shape{2, 3, 2}));
}

TEST(Check, DiagonalsMapEveryOccurrenceToOneAxis) {
  const auto e = ok("i i j -> i j", {{2, 2, 2}});
  EXPECT_EQ(e.operands[0].axes, (std::vector<int>{0, 0, 1}));
  EXPECT_EQ(e.axes.size(), 2u);
}

TEST(Check, PrecedenceFollowsSemantics2_2) {
  EXPECT_EQ(fails("a b -> c", {{3}}).code, Code::rankMismatch);           // 3 before 6
  EXPECT_EQ(fails("a, b -> a", {{2}}).code, Code::einsumOperandCountMismatch);
  EXPECT_EQ(fails("1 a -> c", {{2}}).code, Code::unsupportedEinsumAxis);  // 2 before 3
  EXPECT_EQ(fails("a b, 2 -> a", {{2}, {2}}).code, Code::unsupportedEinsumAxis);
  EXPECT_EQ(fails("i i, j -> k", {{2, 3}, {1}}).code, Code::repeatedEinsumDimensionMismatch);  // 4 before 6
  EXPECT_EQ(fails("_ _ -> _ _ c", {{2, 2}}).code, Code::duplicateEinsumOutputAxis);         // 5 before 6
  EXPECT_EQ(fails("i, i -> k", {{2}, {3}}).code, Code::unknownEinsumOutputAxis);             // 6 before 7
}

TEST(Check, DiagnosticsPointAtTheOffendingItem) {
  EXPECT_EQ(fails("a, b c -> a", {{2}, {3}}).column, 3u);                 // operand 1 starts at column 3
  EXPECT_EQ(fails("i, j i -> i", {{2}, {1, 3}}).column, 5u);              // second operand's i
  EXPECT_EQ(fails("a b, a -> (a b)", {{2, 3}, {2}}).column, 10u);
  EXPECT_EQ(fails("a -> a b", {{2}}).column, 7u);
}

TEST(Check, IncompatibleBroadcastReportsTheFirstOffendingOccurrence) {
  const Diagnostic d = fails("i, j, i, j -> i j", {{2}, {2}, {3}, {4}});
  EXPECT_EQ(d.code, Code::incompatibleEinsumBroadcast);
  EXPECT_EQ(d.column, 6u);
  EXPECT_NE(d.message.find("operand 2"), std::string::npos) << d.message;
}

TEST(Check, NegativeLengthsAreMalformedShapes) {
  EXPECT_EQ(fails("i -> i", {{-1}}).code, Code::malformedShape);
}

TEST(Check, SizeLimitsAreCheckedWithoutAllocating) {
  const std::int64_t huge = std::int64_t{1} << 40;
  // Lengths that fit int64 but whose tensors are over the limit (2^80 elements for the output).
  Diagnostic d = fails("i, j, k -> i j k", {{huge}, {huge}, {huge}});
  EXPECT_EQ(d.code, Code::sizeLimitExceeded);
  // An operand over the tensor limit.
  d = fails("i j -> i", {{huge, huge}});
  EXPECT_EQ(d.code, Code::sizeLimitExceeded);
  EXPECT_NE(d.message.find("operand 0"), std::string::npos);
  // The materialised space: small tensors, huge contraction.
  Limits small;
  small.max_materialised_elements = 1000;
  d = fails("i, j, k ->", {{100}, {100}, {100}}, small);
  EXPECT_EQ(d.code, Code::sizeLimitExceeded);
  EXPECT_NE(d.message.find("max-materialised-elements"), std::string::npos);
  // A zero length anywhere makes the space empty, however large the rest.
  EXPECT_EQ(ok("i, j, k -> i", {{0}, {huge >> 20}, {huge >> 20}}).contraction_size, std::int64_t{1} << 40);
}

TEST(Check, OperandAndLabelLimits) {
  Limits limits;
  limits.max_operands = 3;
  limits.max_labels = 2;
  EXPECT_NE(fails("a, a, a, a -> a", {{1}, {1}, {1}, {1}}, limits).message.find("max-operands"), std::string::npos);
  EXPECT_NE(fails("a b c ->", {{1, 1, 1}}, limits).message.find("max-labels"), std::string::npos);
}

TEST(Check, PassthroughAndEmptyContraction) {
  const auto pass = ok("i -> i", {{3}});
  EXPECT_TRUE(pass.contracted.empty());
  EXPECT_EQ(pass.contraction_size, 1);
  const auto empty = ok("i j -> i", {{2, 0}});
  EXPECT_EQ(empty.contraction_size, 0);
  EXPECT_EQ(empty.output_size, 2);
}

/// The role of the axis named `name` in `e`.
AxisRole role(const CheckedEinsum& e, std::string_view name) {
  EXPECT_EQ(e.roles.size(), e.axes.size());
  for (std::size_t g = 0; g < e.axes.size(); ++g) {
    if (e.axes[g].name == name) return e.roles.at(g);
  }
  ADD_FAILURE() << "no axis " << name;
  return AxisRole::free;
}

TEST(CheckRoles, MatmulHasFreeRowsAndColumnsAndOneContractedLabel) {
  const auto e = ok("i k, k j -> i j", {{2, 3}, {3, 4}});
  EXPECT_EQ(role(e, "i"), AxisRole::free);
  EXPECT_EQ(role(e, "j"), AxisRole::free);
  EXPECT_EQ(role(e, "k"), AxisRole::contracted);
}

TEST(CheckRoles, BatchedMatmulHasABatchLabel) {
  const auto e = ok("b i k, b k j -> b i j", {{5, 2, 3}, {5, 3, 4}});
  EXPECT_EQ(role(e, "b"), AxisRole::batch);
  EXPECT_EQ(role(e, "i"), AxisRole::free);
  EXPECT_EQ(role(e, "k"), AxisRole::contracted);
}

TEST(CheckRoles, TraceAndRowSumArePrivateToTheirOperand) {
  const auto trace = ok("i i ->", {{3, 3}});
  EXPECT_EQ(role(trace, "i"), AxisRole::private_contracted);
  const auto row_sum = ok("a b -> a", {{2, 3}});
  EXPECT_EQ(role(row_sum, "a"), AxisRole::free);
  EXPECT_EQ(role(row_sum, "b"), AxisRole::private_contracted);
  const auto diagonal = ok("i i -> i", {{3, 3}});
  EXPECT_EQ(role(diagonal, "i"), AxisRole::free);
  // Private to one operand of several: summed inside it.
  const auto mixed = ok("a b, a -> a", {{2, 3}, {2}});
  EXPECT_EQ(role(mixed, "a"), AxisRole::batch);
  EXPECT_EQ(role(mixed, "b"), AxisRole::private_contracted);
}

TEST(CheckRoles, ABroadcastOccurrenceStillCountsItsOperand) {
  // `a` has length 1 in operand 1 (broadcast) but appears in both operands.
  const auto kept = ok("a b, a b -> a", {{4, 3}, {1, 3}});
  EXPECT_EQ(role(kept, "a"), AxisRole::batch);
  EXPECT_EQ(role(kept, "b"), AxisRole::contracted);
  const auto ellipsis = ok("... i, ... i -> ...", {{2, 1, 3}, {4, 3}});
  // Right-aligned slots: E0 (length 2) only in operand 0; E1 in both (length 1 in operand 0).
  EXPECT_EQ(role(ellipsis, "...0"), AxisRole::free);
  EXPECT_EQ(role(ellipsis, "...1"), AxisRole::batch);
  EXPECT_EQ(role(ellipsis, "i"), AxisRole::contracted);
}

}  // namespace
}  // namespace einfuzz

namespace einfuzz {
namespace {

// The dtype table against the C++ types: the oracle derives u, η and Ω from these rows.
TEST(DTypeTable, RowsAreTheTypesAndTheirFormats) {
  for (const DTypeInfo& row : dtype_table()) {
    EXPECT_EQ(dtype_from_name(row.name), row.dtype);
    EXPECT_EQ(&dtype_info(row.dtype), &row);
    visit_dtype(row.dtype, [&](auto tag) {
      using T = decltype(tag);
      using L = std::numeric_limits<T>;
      EXPECT_EQ(row.size, sizeof(T)) << row.name;
      ASSERT_EQ(row.format.has_value(), is_float_type_v<T>) << row.name;
      if constexpr (is_float_type_v<T>) {
        const FloatFormat f = *row.format;
        EXPECT_EQ(std::ldexp(1.0, -f.digits), static_cast<double>(L::epsilon()) / 2) << row.name;  // u
        EXPECT_EQ(std::ldexp(1.0, f.min_exponent), static_cast<double>(L::min())) << row.name;
        EXPECT_EQ(std::ldexp(2.0 - std::ldexp(1.0, 1 - f.digits), f.max_exponent), static_cast<double>(L::max()))
            << row.name;  // Ω
      }
    });
  }
  EXPECT_EQ(dtype_name(static_cast<DType>(99)), "?");  // a value off the wire is named, not a crash
  EXPECT_EQ(dtype_size(static_cast<DType>(99)), 0u);
}

}  // namespace
}  // namespace einfuzz

namespace einfuzz {
namespace {

// check_einsum remembers its last call per thread (core/src/check_memo.hpp): a call that differs
// from the last one in any argument — the pattern, one length, one limit — is checked afresh.
TEST(CheckMemo, EveryArgumentTakesPartInTheLastCallsKey) {
  const std::vector<Shape> square = {{3, 3}, {3, 3}};
  Limits tight;
  tight.max_tensor_elements = 8;  // the 3×3 output is over it
  ASSERT_TRUE(check_einsum("a b, b c -> a c", square).ok());
  EXPECT_EQ(check_einsum("a b, b c -> a c", square, tight).error().code, Code::sizeLimitExceeded);
  EXPECT_TRUE(check_einsum("a b, b c -> a c", square).ok());
  const std::vector<Shape> mismatched = {{3, 3}, {4, 3}};
  EXPECT_FALSE(check_einsum("a b, b c -> a c", mismatched).ok());
  const CheckedEinsum outer = *check_einsum("a b, b c -> a b c", square);
  EXPECT_EQ(outer.output_shape, (Shape{3, 3, 3}));
  EXPECT_EQ(check_einsum("a b, b c -> a c", square)->output_shape, (Shape{3, 3}));
}

}  // namespace
}  // namespace einfuzz
