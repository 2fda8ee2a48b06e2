// Parser: grammar, diagnostics with their columns and precedence, and a never-crash property.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/parse.hpp"
#include "support/text_gen.hpp"

namespace einfuzz {
namespace {

Diagnostic einsum_error(std::string_view pattern) {
  auto r = parse_einsum(pattern);
  EXPECT_FALSE(r.ok()) << pattern;
  return r.ok() ? Diagnostic{Code::internalInvariant, "parsed", 0, {}} : r.error();
}

Diagnostic transform_error(std::string_view pattern) {
  auto r = parse_transform(pattern);
  EXPECT_FALSE(r.ok()) << pattern;
  return r.ok() ? Diagnostic{Code::internalInvariant, "parsed", 0, {}} : r.error();
}

#define EXPECT_DIAG(diag, code_, column_)                       \
  do {                                                          \
    const Diagnostic d_ = (diag);                               \
    EXPECT_EQ(code_name(d_.code), code_name(Code::code_));      \
    EXPECT_EQ(d_.column, std::size_t{column_}) << render(d_);   \
  } while (0)

enum class Parser { einsum, transform };

/// One expected parse error: its group (one test checks each), which parser, the pattern, the diagnostic's
/// code and column.
struct DiagRow {
  std::string_view group;
  Parser parser;
  std::string_view pattern;
  Code code;
  std::size_t column;
};

/// Every expected parse error, by group.
const DiagRow kDiagRows[] = {
    {"lexical", Parser::einsum, "a$ -> a", Code::unknownCharacter, 1},
    {"lexical", Parser::einsum, "a\tb -> a", Code::unknownCharacter, 1},
    {"lexical", Parser::einsum, "a... -> a", Code::unknownCharacter, 1},
    {"lexical", Parser::einsum, "...a -> a", Code::unknownCharacter, 3},
    {"lexical", Parser::einsum, ".... -> a", Code::unknownCharacter, 3},
    {"lexical", Parser::einsum, "a . b -> a", Code::unknownCharacter, 2},
    {"lexical", Parser::einsum, "a - b", Code::unknownCharacter, 2},
    {"lexical", Parser::einsum, "a\xc3\xa9 -> a", Code::unknownCharacter, 1},      // é: ASCII-only names
    {"lexical", Parser::einsum, "a \xe2\x80\xa6 -> a", Code::unknownCharacter, 2}, // … is not an ellipsis here
    {"arrow", Parser::einsum, "a b", Code::missingArrow, 3},
    {"arrow", Parser::einsum, "", Code::missingArrow, 0},
    {"arrow", Parser::einsum, "a -> b -> c", Code::duplicateArrow, 7},
    {"arrow", Parser::transform, "a -> b -> c", Code::duplicateArrow, 7},
    {"structure", Parser::einsum, "a * b -> a", Code::unexpectedToken, 2},
    {"structure", Parser::einsum, "a b -> a, b", Code::unexpectedToken, 8},
    {"structure", Parser::transform, "a, b -> a", Code::unexpectedToken, 1},
    {"structure", Parser::einsum, "(a -> a", Code::unbalancedParenthesis, 0},
    {"structure", Parser::einsum, "a) -> a", Code::unbalancedParenthesis, 1},
    {"structure", Parser::einsum, "((a)) -> a", Code::nestedParenthesis, 1},
    {"structure", Parser::einsum, "... ... ->", Code::duplicateEllipsis, 4},
    {"structure", Parser::einsum, "(...) ... ->", Code::duplicateEllipsis, 6},
    {"identifier", Parser::einsum, "_x b -> b", Code::invalidIdentifier, 0},
    {"identifier", Parser::einsum, "x_ -> x_", Code::invalidIdentifier, 0},
    {"identifier", Parser::einsum, "2a -> ", Code::invalidIdentifier, 0},
    {"identifier", Parser::einsum, "a __ -> ", Code::invalidIdentifier, 2},
    {"identifier", Parser::transform, "_ -> ", Code::invalidIdentifier, 0},
    {"identifier", Parser::einsum, "0 -> ", Code::invalidAnonymousAxis, 0},
    {"identifier", Parser::einsum, "a 000 -> ", Code::invalidAnonymousAxis, 2},
    {"duplicate", Parser::transform, "a a -> a", Code::duplicateAxis, 2},
    {"duplicate", Parser::transform, "a b -> b a a", Code::duplicateAxis, 11},
    {"duplicate", Parser::transform, "(a a) -> a", Code::duplicateAxis, 3},
    {"order", Parser::einsum, "a * b, ((c)) -> a", Code::unexpectedToken, 2},
    {"order", Parser::einsum, "a, b -> a * ((b", Code::unexpectedToken, 10},
    {"order", Parser::transform, "a a (b -> a", Code::duplicateAxis, 2},
};

/// Checks the rows of `group` (there are some: a misspelt group must not pass vacuously).
void expect_diags(std::string_view group) {
  int rows = 0;
  for (const DiagRow& row : kDiagRows) {
    if (row.group != group) continue;
    ++rows;
    const Diagnostic d = row.parser == Parser::einsum ? einsum_error(row.pattern) : transform_error(row.pattern);
    EXPECT_EQ(code_name(d.code), code_name(row.code)) << row.pattern;
    EXPECT_EQ(d.column, row.column) << row.pattern << ": " << render(d);
  }
  EXPECT_GT(rows, 0) << group;
}

TEST(Parse, OperandsOutputAndRankZero) {
  auto p = parse_einsum("a b, , b c -> a c");
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->operands.size(), 3u);
  EXPECT_EQ(p->operands[0].items.size(), 2u);
  EXPECT_TRUE(p->operands[1].items.empty());
  EXPECT_EQ(p->output.items.size(), 2u);
  EXPECT_EQ(p->operands[2].items[1].atoms[0].name, "c");
  EXPECT_EQ(p->operands[2].items[1].atoms[0].column, 9u);

  auto scalar = parse_einsum("->");
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(scalar->operands.size(), 1u);
  EXPECT_TRUE(scalar->output.items.empty());
}

TEST(Parse, WordClassification) {
  auto p = parse_transform("(h 2) 1 (w 001) batch_size ... -> h");
  ASSERT_TRUE(p.ok());
  const auto& items = p->input.items;
  ASSERT_EQ(items.size(), 5u);
  EXPECT_TRUE(items[0].group);
  EXPECT_EQ(items[0].atoms[1].kind, Atom::Kind::anonymous);
  EXPECT_EQ(items[0].atoms[1].length, 2u);
  EXPECT_EQ(items[1].atoms[0].kind, Atom::Kind::unit);
  EXPECT_EQ(items[2].atoms.size(), 1u);  // (w 001): the unit is dropped
  EXPECT_TRUE(items[2].had_unit);
  EXPECT_EQ(items[3].atoms[0].name, "batch_size");
  EXPECT_EQ(items[4].atoms[0].kind, Atom::Kind::ellipsis);
  EXPECT_TRUE(p->input.has_ellipsis);
}

TEST(Parse, HugeAnonymousLengthSaturates) {
  auto p = parse_transform("(a 99999999999999999999999) -> a");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->input.items[0].atoms[1].length, UINT64_MAX);
}

TEST(Parse, LexicalErrorsPointAtTheByte) {
  expect_diags("lexical");
  // The whole string is lexed first: a bad byte after a missing arrow still wins.
  EXPECT_DIAG(einsum_error("a b $"), unknownCharacter, 4);
}

TEST(Parse, ArrowErrors) {
  expect_diags("arrow");
}

TEST(Parse, StructureErrors) {
  expect_diags("structure");
}

TEST(Parse, IdentifierRules) {
  expect_diags("identifier");
  EXPECT_TRUE(parse_einsum("_ b -> _").ok());
  EXPECT_TRUE(parse_einsum("for axis -> axis").ok());
}

TEST(Parse, DuplicateRulesDependOnTheExpressionKind) {
  EXPECT_TRUE(parse_einsum("i i j -> i j").ok());           // diagonals in operands
  EXPECT_DIAG(einsum_error("a b -> a a"), duplicateAxis, 9);
  EXPECT_TRUE(parse_einsum("_ _ b -> _ _").ok());           // rejected later by the checker
  expect_diags("duplicate");
}

TEST(Parse, FirstErrorInTokenOrderWins) {
  // Operands left to right, tokens left to right, then the output.
  expect_diags("order");
}

TEST(Parse, DiagnosticRendersACaret) {
  const std::string text = render(einsum_error("a b -> a, b"));
  EXPECT_NE(text.find("error[unexpectedToken]"), std::string::npos);
  EXPECT_NE(text.find("  a b -> a, b\n          ^"), std::string::npos) << text;
}

// Patterns drawn from the grammar's alphabet, so that every path of the lexer/parser is reached.
rc::Gen<std::string> pattern_text() {
  return test::concatenations({"a", "b", "i", "j", "_", "x_", "_y", "ab", "2", "1", "0", "01", " ", " ", " ", ",", "->",
                               "-", ">", "...", ".", "(", ")", "*", "\t", "$", "\xe2\x80\xa6", "\xff", "batch"});
}

RC_GTEST_PROP(ParseProperty, NeverCrashesAndColumnsLieInsideThePattern, ()) {
  const std::string text = *rc::gen::oneOf(pattern_text(), rc::gen::arbitrary<std::string>());
  const auto shapes = *rc::gen::container<std::vector<Shape>>(
      rc::gen::container<Shape>(rc::gen::inRange<std::int64_t>(0, 4)));
  for (auto result : {parse_einsum(text).ok() ? Diagnostic{} : parse_einsum(text).error(),
                      parse_transform(text).ok() ? Diagnostic{} : parse_transform(text).error()}) {
    if (!result.message.empty()) RC_ASSERT(result.column <= text.size());
  }
  auto checked = check_einsum(text, shapes);
  if (!checked.ok()) {
    const Diagnostic& d = checked.error();
    RC_ASSERT(d.column == kNoColumn || d.column <= text.size());
    RC_ASSERT(!render(d).empty());
  } else {
    RC_ASSERT(checked->operands.size() == shapes.size());
    RC_ASSERT(checked->output_shape.size() == checked->output.size());
  }
}

}  // namespace
}  // namespace einfuzz
