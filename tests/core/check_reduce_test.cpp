// Reduce checker: elementary-axis bookkeeping (§3 end, §8.1), the §2.3 / §13.11 precedence, the
// dtype rules (§13.6), overflow-safe lengths and limits, and a never-crash property.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "einfuzz/core/check_reduce.hpp"
#include "support/text_gen.hpp"

namespace einfuzz {
namespace {

using Lengths = std::vector<std::pair<std::string, std::int64_t>>;

CheckedReduce ok(std::string_view pattern, const Shape& shape, const Lengths& lengths = {},
                 std::string_view kind = "sum", DType dtype = DType::f64) {
  auto r = check_reduce(pattern, kind, shape, lengths, dtype);
  EXPECT_TRUE(r.ok()) << pattern << ": " << (r.ok() ? "" : render(r.error()));
  return r.ok() ? *r : CheckedReduce{};
}

Diagnostic fails(std::string_view pattern, const Shape& shape, const Lengths& lengths = {},
                 std::string_view kind = "sum", DType dtype = DType::f64, const Limits& limits = {}) {
  auto r = check_reduce(pattern, kind, shape, lengths, dtype, limits);
  EXPECT_FALSE(r.ok()) << pattern;
  return r.ok() ? Diagnostic{Code::internalInvariant, "accepted", 0, {}} : r.error();
}

#define EXPECT_CODE(diag, code_) EXPECT_EQ(code_name((diag).code), code_name(Code::code_)) << render(diag)
#define EXPECT_DIAG(diag, code_, col)               \
  do {                                             \
    const Diagnostic d_ = (diag);                  \
    EXPECT_CODE(d_, code_);                        \
    EXPECT_EQ(d_.column, std::size_t{col}) << render(d_); \
  } while (0)

std::vector<std::string> names(const CheckedReduce& r, const std::vector<int>& idx) {
  std::vector<std::string> out;
  for (int i : idx) out.push_back(r.axes[static_cast<std::size_t>(i)].name);
  return out;
}

TEST(CheckReduce, ReductionNamesRoundTrip) {
  for (Reduction k : {Reduction::sum, Reduction::prod, Reduction::mean, Reduction::min, Reduction::max,
                      Reduction::any, Reduction::all}) {
    EXPECT_EQ(reduction_from_name(reduction_name(k)), k);
  }
  EXPECT_FALSE(reduction_from_name("median").has_value());
  EXPECT_FALSE(reduction_from_name("Sum").has_value());
  EXPECT_FALSE(reduction_from_name("").has_value());
}

TEST(CheckReduce, TheReductionTableIsWhatTheCheckerDoes) {
  const DType all[] = {DType::f32, DType::f64, DType::i32, DType::i64, DType::boolean};
  ASSERT_EQ(reduction_table().size(), 7u);
  EXPECT_EQ(all_reduction_names(), (std::vector<std::string>{"sum", "prod", "mean", "min", "max", "any", "all"}));
  for (const ReductionInfo& row : reduction_table()) {
    EXPECT_EQ(&reduction_info(row.kind), &row);
    EXPECT_EQ(reduction_name(row.kind), row.name);
    for (DType dtype : all) {
      EXPECT_EQ(check_reduce("a b -> a", row.name, {2, 2}, {}, dtype).ok(), reduction_accepts(row.kind, dtype))
          << row.name << " " << dtype_name(dtype);
    }
    const DType accepted = row.dtypes == DTypeRule::boolean ? DType::boolean : DType::f64;
    const auto empty = check_reduce("a b -> a", row.name, {2, 0}, {}, accepted);
    EXPECT_EQ(!empty.ok() && empty.error().code == Code::emptyFiber, row.needs_nonempty_fibre) << row.name;
    // The logical kinds have no vector-Jacobian product; the arithmetic ones do.
    EXPECT_EQ(row.differentiable, row.dtypes != DTypeRule::boolean) << row.name;
  }
  EXPECT_NE(fails("a -> ", {2}, {}, "median").message.find("(expected one of sum, prod, mean, min, max, any, all)"),
            std::string::npos);
}

TEST(CheckReduce, CompositeInputWithSuppliedLength) {
  const auto r = ok("(a b) c -> a c", {4, 2}, {{"b", 2}});
  EXPECT_EQ(names(r, {0, 1, 2}), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(r.axes[0].length, 2);
  EXPECT_EQ(r.axes[1].length, 2);
  EXPECT_EQ(r.input_groups, (std::vector<std::vector<int>>{{0, 1}, {2}}));
  EXPECT_EQ(r.output_groups, (std::vector<std::vector<int>>{{0}, {2}}));
  EXPECT_EQ(r.reduced, std::vector<int>{1});
  EXPECT_EQ(r.output_shape, (Shape{2, 2}));
  EXPECT_EQ(r.output_size, 4);
  EXPECT_EQ(r.fibre_size, 2);
  EXPECT_EQ(r.kind, Reduction::sum);
  EXPECT_EQ(r.input_shape, (Shape{4, 2}));
  EXPECT_EQ(r.pattern, "(a b) c -> a c");
}

TEST(CheckReduce, ReducedAxesAreInInputOrder) {
  const auto r = ok("a (b c) d -> (d a)", {2, 6, 5}, {{"c", 3}});
  EXPECT_EQ(names(r, r.reduced), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(r.output_shape, Shape{10});
  EXPECT_EQ(r.fibre_size, 6);
}

TEST(CheckReduce, AnonymousFactorsAreDistinctReducedAxes) {
  const auto r = ok("b (h 2) (w 2) -> b h w", {1, 2, 4});
  EXPECT_EQ(r.axes.size(), 5u);
  EXPECT_EQ(names(r, r.reduced), (std::vector<std::string>{"2", "2"}));
  EXPECT_EQ(r.reduced, (std::vector<int>{2, 4}));
  EXPECT_EQ(r.output_shape, (Shape{1, 1, 2}));
  EXPECT_EQ(r.fibre_size, 4);
  EXPECT_EQ(ok("(h 3) -> h", {6}).axes[1].length, 3);
  EXPECT_EQ(ok("2 -> ", {2}).fibre_size, 2);
}

TEST(CheckReduce, UnitAxesOnBothSides) {
  const auto r = ok("1 a () (1) (b 1) -> 1 a () (1) (1 b)", {1, 3, 1, 1, 2});
  EXPECT_EQ(r.axes.size(), 2u);
  EXPECT_EQ(r.input_groups, (std::vector<std::vector<int>>{{}, {0}, {}, {}, {1}}));
  EXPECT_EQ(r.output_shape, (Shape{1, 3, 1, 1, 2}));
  EXPECT_TRUE(r.reduced.empty());
  EXPECT_EQ(r.fibre_size, 1);
  EXPECT_EQ(ok("a b -> () a ()", {2, 3}).output_shape, (Shape{1, 2, 1}));
}

TEST(CheckReduce, EllipsisExpandsToOneAxisPerDimension) {
  const auto r = ok("a ... -> a", {2, 1, 2});
  EXPECT_EQ(names(r, r.reduced), (std::vector<std::string>{"...0", "...1"}));
  const auto p = ok("... b -> b ...", {2, 3});
  EXPECT_EQ(p.output_shape, (Shape{3, 2}));
  EXPECT_TRUE(p.reduced.empty());
  // `(...)` on the right flattens the ellipsis dimensions (an empty ellipsis gives a 1).
  EXPECT_EQ(ok("a ... -> (...) a", {2, 3, 4}).output_shape, (Shape{12, 2}));
  EXPECT_EQ(ok("a ... -> (...) a", {2}).output_shape, (Shape{1, 2}));
  EXPECT_EQ(ok("a ... -> ... a", {2}).output_shape, (Shape{2}));
  EXPECT_EQ(ok("a ... -> (... a)", {2, 3, 4}).output_shape, Shape{24});
  EXPECT_CODE(fails("... -> (a ...)", {2, 3}), axisMismatch);
}

TEST(CheckReduce, ZeroLengthsAreLegalWhereTheSpecSaysSo) {
  EXPECT_EQ(ok("a b -> a", {2, 0}).fibre_size, 0);
  EXPECT_EQ(ok("a b -> a", {0, 3}, {}, "max").output_size, 0);  // R13: fibre 3 > 0
  EXPECT_EQ(ok("(a b) -> a", {0}, {{"a", 3}}).axes[1].length, 0);  // 0 = 3 · b
  EXPECT_EQ(ok("(a b) -> a b", {0}, {{"a", 0}, {"b", 5}}).output_shape, (Shape{0, 5}));
}

TEST(CheckReduce, SuppliedLengthsMayNameEitherSide) {
  EXPECT_EQ(ok("a b -> a", {2, 3}, {{"a", 2}}).output_shape, Shape{2});
  EXPECT_EQ(ok("a b -> a", {2, 3}, {{"b", 3}, {"a", 2}}).fibre_size, 3);
}

TEST(CheckReduce, PrecedenceFollowsSemantics2_3And13_11) {
  // unknownReduction before everything, even a parse error.
  EXPECT_CODE(fails("a$ -> a", {2}, {}, "median"), unknownReduction);
  // parse before shape-dependent checks.
  EXPECT_CODE(fails("a$ -> a", {-1}), unknownCharacter);
  // invalidEllipsis before rankMismatch; left-in-parentheses before right-without-left.
  EXPECT_DIAG(fails("(...) b c -> b", {2}), invalidEllipsis, 1);
  EXPECT_DIAG(fails("(...) b -> ... b", {2, 3}), invalidEllipsis, 1);
  // rankMismatch before axisMismatch.
  EXPECT_CODE(fails("a b -> c", {2}), rankMismatch);
  EXPECT_CODE(fails("a b ... -> a", {2}), rankMismatch);
  // axisMismatch before the supplied-length checks.
  EXPECT_CODE(fails("a b -> c", {2, 3}, {{"a", 2}, {"a", 2}}), axisMismatch);
  // duplicateAxisLength before unusedAxisLength.
  EXPECT_CODE(fails("a -> a", {2}, {{"z", 1}, {"z", 1}}), duplicateAxisLength);
  // unusedAxisLength before the dimension checks.
  EXPECT_CODE(fails("(a b) -> a", {6}, {{"z", 1}}), unusedAxisLength);
  // dimensions left to right.
  EXPECT_CODE(fails("(a b) c -> c", {6, 5}, {{"c", 4}}), cannotInferAxis);
  EXPECT_CODE(fails("c (a b) -> c", {5, 6}, {{"c", 4}}), dimensionMismatch);
  // dimension errors before emptyFiber.
  EXPECT_CODE(fails("a b -> a", {2, 0}, {{"a", 3}}, "mean"), dimensionMismatch);
  // emptyFiber before unsupportedDtype (§13.11).
  EXPECT_CODE(fails("a b -> a", {2, 0}, {}, "mean", DType::i32), emptyFiber);
  EXPECT_CODE(fails("a b -> b", {0, 3}, {}, "min", DType::boolean), emptyFiber);
  // unsupportedDtype before the size limits.
  EXPECT_CODE(fails("a b -> a", {1 << 20, 1 << 20}, {}, "any"), unsupportedDtype);
  EXPECT_CODE(fails("a b -> a", {1 << 20, 1 << 20}), sizeLimitExceeded);
}

TEST(CheckReduce, DiagnosticsPointAtTheOffendingColumn) {
  EXPECT_DIAG(fails("a b -> a c", {2, 3}), axisMismatch, 9);
  EXPECT_DIAG(fails("a b -> a 2", {2, 3}), axisMismatch, 9);
  EXPECT_DIAG(fails("a b -> (a c)", {2, 3}), axisMismatch, 10);
  EXPECT_DIAG(fails("a b -> ... a", {2, 3}), invalidEllipsis, 7);
  EXPECT_DIAG(fails("a b c -> a", {2, 3}), rankMismatch, 0);
  EXPECT_DIAG(fails("1 a -> a", {2, 3}), dimensionMismatch, 0);
  EXPECT_DIAG(fails("x (a b) -> a", {1, 6}), cannotInferAxis, 5);
  EXPECT_DIAG(fails("x (a b) -> a", {1, 6}, {{"b", 4}}), dimensionMismatch, 2);
  EXPECT_DIAG(fails("a b -> a", {2, 0}, {}, "mean"), emptyFiber, 2);
  EXPECT_DIAG(fails("a ... -> a", {2, 3, 0}, {}, "max"), emptyFiber, 2);
  const std::string text = render(fails("a b -> a c", {2, 3}));
  EXPECT_NE(text.find("error[axisMismatch]"), std::string::npos) << text;
  EXPECT_NE(text.find("  a b -> a c\n           ^"), std::string::npos) << text;
}

TEST(CheckReduce, EmptyFiberIsDecidedFromShapesOnly) {
  for (const char* kind : {"mean", "min", "max"}) {
    const Diagnostic d = fails("a b -> b", {0, 3}, {}, kind);  // Y03 shape, also for the empty output
    EXPECT_CODE(d, emptyFiber);
    EXPECT_NE(d.message.find("einops reduction '" + std::string(kind) + "' is undefined on empty fibers"),
              std::string::npos)
        << d.message;
    EXPECT_CODE(fails("a b c -> b", {2, 0, 0}, {}, kind), emptyFiber);  // empty output, empty fibre
    ok("a b -> a", {0, 3}, {}, kind);
  }
  for (const char* kind : {"sum", "prod"}) ok("a b -> a", {2, 0}, {}, kind);
  for (const char* kind : {"any", "all"}) ok("a b -> a", {2, 0}, {}, kind, DType::boolean);
}

TEST(CheckReduce, DtypeRules) {
  const DType all[] = {DType::f32, DType::f64, DType::i32, DType::i64, DType::boolean};
  for (std::string_view kind : {"sum", "prod", "mean", "min", "max", "any", "all"}) {
    for (DType dtype : all) {
      bool valid = false;
      if (kind == "any" || kind == "all") valid = dtype == DType::boolean;
      else if (kind == "mean") valid = is_float(dtype);
      else valid = dtype != DType::boolean;
      auto r = check_reduce("a b -> a", kind, {2, 2}, {}, dtype);
      EXPECT_EQ(r.ok(), valid) << kind << " " << dtype_name(dtype);
      if (!r.ok()) {
        EXPECT_CODE(r.error(), unsupportedDtype);
      } else {
        EXPECT_EQ(r->dtype, dtype);
      }
    }
  }
  EXPECT_NE(fails("a -> ", {2}, {}, "all", DType::i64).message.find("requires a Boolean tensor"), std::string::npos);
}

TEST(CheckReduce, MalformedInputsAreDiagnosed) {
  EXPECT_CODE(fails("a -> a", {-1}), malformedShape);
  EXPECT_CODE(fails("a -> a", {2}, {{"a", -2}}), invalidArgument);
  EXPECT_CODE(fails("a -> a", {2}, {{"", 2}}), invalidArgument);
  EXPECT_CODE(fails("a -> a", {2}, {{"2", 2}}), invalidArgument);
  EXPECT_CODE(fails("a -> a", {2}, {{"_a", 2}}), invalidArgument);
  EXPECT_CODE(fails("a -> a", {2}, {{"...0", 2}}), invalidArgument);
  const Diagnostic d = fails("a b", {2}, {}, "avg");
  EXPECT_CODE(d, unknownReduction);
  EXPECT_NE(d.message.find("'avg'"), std::string::npos);
  EXPECT_EQ(d.column, kNoColumn);
}

TEST(CheckReduce, HugeLiteralsAndOverflowsAreDiagnosedNotUndefined) {
  EXPECT_DIAG(fails("(a 99999999999999999999) -> a", {6}), dimensionMismatch, 3);
  EXPECT_CODE(fails("(a b 99999999999999999999) -> a", {6}), cannotInferAxis);  // two unknowns first
  EXPECT_CODE(fails("(a 9223372036854775808) -> a", {0}), dimensionMismatch);
  EXPECT_CODE(fails("9223372036854775808 -> ", {INT64_MAX}), dimensionMismatch);
  EXPECT_CODE(fails("9223372036854775807 -> ", {INT64_MAX}), sizeLimitExceeded);
  Limits unlimited;
  unlimited.max_tensor_elements = INT64_MAX;
  unlimited.max_materialised_elements = INT64_MAX;
  EXPECT_CODE(fails("9223372036854775807 -> ", {INT64_MAX}, {}, "sum", DType::f64, unlimited), sizeLimitExceeded);
  const std::int64_t big = std::int64_t{1} << 40;
  // Known factors overflow: no solution for a nonzero dimension, the unknown is 0 for a zero one.
  EXPECT_CODE(fails("(a b c) -> a", {5}, {{"a", big}, {"b", big}}), dimensionMismatch);
  EXPECT_CODE(fails("(a b) -> a", {5}, {{"a", big}, {"b", big}}), dimensionMismatch);
  EXPECT_CODE(fails("(a b c) -> a", {0}, {{"a", big}, {"b", big}}), sizeLimitExceeded);  // output 2^40
  EXPECT_CODE(fails("(a b c) -> c", {0}, {{"a", big}, {"b", big}}), sizeLimitExceeded);  // fibre 2^80
  EXPECT_CODE(fails("(a b c) -> c", {0}, {{"a", big}, {"b", 0}}), cannotInferAxis);
  EXPECT_EQ(ok("(a b c) -> c", {0}, {{"a", big}, {"b", 0}, {"c", 7}}).fibre_size, 0);
  EXPECT_CODE(fails("a b c -> (b c)", {0, big, big}), sizeLimitExceeded);
  EXPECT_EQ(ok("a b c -> (b c)", {big, big, 0}).output_shape, Shape{0});
  EXPECT_EQ(ok("a b c -> a", {0, big, 4}).fibre_size, 4 * big);
}

TEST(CheckReduce, SizeLimits) {
  Limits small;
  small.max_tensor_elements = 10;
  EXPECT_CODE(fails("a b -> a", {4, 3}, {}, "sum", DType::f64, small), sizeLimitExceeded);
  EXPECT_CODE(fails("a b -> b", {0, 11}, {}, "sum", DType::f64, small), sizeLimitExceeded);  // the output
  EXPECT_EQ(check_reduce("a -> (a 1)", "sum", {8}, {}, DType::f64, small)->output_shape, Shape{8});
  Limits materialised;
  materialised.max_materialised_elements = 13;
  EXPECT_CODE(fails("a b -> a", {4, 3}, {}, "sum", DType::f64, materialised), sizeLimitExceeded);
  ok("a b -> a", {4, 2});
}

/// Product of the axes' lengths, 0 if any is 0 (the checker guarantees the rest fits int64).
std::int64_t product_of(const CheckedReduce& r, const std::vector<int>& axes) {
  std::int64_t p = 1;
  for (int a : axes)
    if (r.axes[static_cast<std::size_t>(a)].length == 0) return 0;
  for (int a : axes) p *= r.axes[static_cast<std::size_t>(a)].length;
  return p;
}

// Pattern texts from the grammar's alphabet and hostile shapes/lengths: never a crash or UB, and
// every diagnostic points inside the pattern (or at no column).
rc::Gen<std::string> pattern_text() {
  return test::concatenations({"a", "b", "c", "h", "_", "x_", "2", "3", "1", "0", "01", "99999999999999999999",
                               "9223372036854775807", " ", " ", " ", " ", ",", "->", "->", "-", "...", ".", "(", ")",
                               "()", "(1)", "*", "\t", "$", "\xe2\x80\xa6"});
}

RC_GTEST_PROP(CheckReduceProperty, NeverCrashesAndColumnsLieInsideThePattern, ()) {
  const std::string text = *rc::gen::oneOf(pattern_text(), rc::gen::arbitrary<std::string>());
  const auto dim = rc::gen::weightedOneOf<std::int64_t>(
      {{8, rc::gen::inRange<std::int64_t>(0, 7)},
       {1, rc::gen::element<std::int64_t>(-1, INT64_MAX, std::int64_t{1} << 40, std::int64_t{1} << 62)}});
  const Shape shape = *rc::gen::resize(6, rc::gen::container<Shape>(dim));
  const auto lengths = *rc::gen::resize(
      3, rc::gen::container<Lengths>(rc::gen::pair(rc::gen::element<std::string>("a", "b", "c", "z", "", "2"), dim)));
  const std::string kind = *rc::gen::element<std::string>("sum", "prod", "mean", "min", "max", "any", "all", "x");
  const DType dtype = *rc::gen::element(DType::f32, DType::f64, DType::i32, DType::i64, DType::boolean);
  auto r = check_reduce(text, kind, shape, lengths, dtype);
  if (!r.ok()) {
    const Diagnostic& d = r.error();
    RC_ASSERT(d.column == kNoColumn || d.column <= text.size());
    RC_ASSERT(!render(d).empty());
    return;
  }
  // Accepted: the bookkeeping is consistent.
  RC_ASSERT(r->output_shape.size() == r->output_groups.size());
  RC_ASSERT(r->input_groups.size() == shape.size());
  std::size_t covered = r->reduced.size();
  for (const auto& group : r->output_groups) covered += group.size();
  RC_ASSERT(covered == r->axes.size());
  RC_ASSERT(product_of(*r, r->reduced) == r->fibre_size);
  for (std::size_t d = 0; d < shape.size(); ++d) RC_ASSERT(product_of(*r, r->input_groups[d]) == shape[d]);
  for (std::size_t d = 0; d < r->output_groups.size(); ++d)
    RC_ASSERT(product_of(*r, r->output_groups[d]) == r->output_shape[d]);
}

}  // namespace
}  // namespace einfuzz

namespace einfuzz {
namespace {

// check_reduce remembers its last call per thread (core/src/check_memo.hpp): a call that differs
// from the last one in any argument is checked afresh.
TEST(CheckMemo, EveryReduceArgumentTakesPartInTheLastCallsKey) {
  const Lengths none;
  const Lengths b2 = {{"b", 2}};
  ASSERT_TRUE(check_reduce("a b -> a", "sum", {3, 2}, none, DType::f64).ok());
  EXPECT_EQ(check_reduce("a b -> a", "sum", {3, 2}, none, DType::boolean).error().code, Code::unsupportedDtype);
  EXPECT_EQ(check_reduce("a b -> a", "median", {3, 2}, none, DType::f64).error().code, Code::unknownReduction);
  EXPECT_TRUE(check_reduce("a b -> a", "sum", {3, 2}, b2, DType::f64).ok());
  EXPECT_FALSE(check_reduce("a b -> a", "sum", {3, 3}, b2, DType::f64).ok());
  Limits tight;
  tight.max_tensor_elements = 5;
  EXPECT_EQ(check_reduce("a b -> a", "sum", {3, 2}, none, DType::f64, tight).error().code, Code::sizeLimitExceeded);
  EXPECT_EQ(check_reduce("a b -> b", "sum", {3, 2}, none, DType::f64)->output_shape, (Shape{2}));
}

}  // namespace
}  // namespace einfuzz
