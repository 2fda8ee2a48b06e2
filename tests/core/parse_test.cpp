// Parser: grammar, diagnostics with their columns and precedence, and a never-crash property.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/parse.hpp"

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
  EXPECT_DIAG(einsum_error("a$ -> a"), unknownCharacter, 1);
  EXPECT_DIAG(einsum_error("a\tb -> a"), unknownCharacter, 1);
  EXPECT_DIAG(einsum_error("a... -> a"), unknownCharacter, 1);
  EXPECT_DIAG(einsum_error("...a -> a"), unknownCharacter, 3);
  EXPECT_DIAG(einsum_error(".... -> a"), unknownCharacter, 3);
  EXPECT_DIAG(einsum_error("a . b -> a"), unknownCharacter, 2);
  EXPECT_DIAG(einsum_error("a - b"), unknownCharacter, 2);
  EXPECT_DIAG(einsum_error("a\xc3\xa9 -> a"), unknownCharacter, 1);      // é: ASCII-only names
  EXPECT_DIAG(einsum_error("a \xe2\x80\xa6 -> a"), unknownCharacter, 2); // … is not an ellipsis here
  // The whole string is lexed first: a bad byte after a missing arrow still wins.
  EXPECT_DIAG(einsum_error("a b $"), unknownCharacter, 4);
}

TEST(Parse, ArrowErrors) {
  EXPECT_DIAG(einsum_error("a b"), missingArrow, 3);
  EXPECT_DIAG(einsum_error(""), missingArrow, 0);
  EXPECT_DIAG(einsum_error("a -> b -> c"), duplicateArrow, 7);
  EXPECT_DIAG(transform_error("a -> b -> c"), duplicateArrow, 7);
}

TEST(Parse, StructureErrors) {
  EXPECT_DIAG(einsum_error("a * b -> a"), unexpectedToken, 2);
  EXPECT_DIAG(einsum_error("a b -> a, b"), unexpectedToken, 8);
  EXPECT_DIAG(transform_error("a, b -> a"), unexpectedToken, 1);
  EXPECT_DIAG(einsum_error("(a -> a"), unbalancedParenthesis, 0);
  EXPECT_DIAG(einsum_error("a) -> a"), unbalancedParenthesis, 1);
  EXPECT_DIAG(einsum_error("((a)) -> a"), nestedParenthesis, 1);
  EXPECT_DIAG(einsum_error("... ... ->"), duplicateEllipsis, 4);
  EXPECT_DIAG(einsum_error("(...) ... ->"), duplicateEllipsis, 6);
}

TEST(Parse, IdentifierRules) {
  EXPECT_DIAG(einsum_error("_x b -> b"), invalidIdentifier, 0);
  EXPECT_DIAG(einsum_error("x_ -> x_"), invalidIdentifier, 0);
  EXPECT_DIAG(einsum_error("2a -> "), invalidIdentifier, 0);
  EXPECT_DIAG(einsum_error("a __ -> "), invalidIdentifier, 2);
  EXPECT_DIAG(transform_error("_ -> "), invalidIdentifier, 0);
  EXPECT_DIAG(einsum_error("0 -> "), invalidAnonymousAxis, 0);
  EXPECT_DIAG(einsum_error("a 000 -> "), invalidAnonymousAxis, 2);
  EXPECT_TRUE(parse_einsum("_ b -> _").ok());
  EXPECT_TRUE(parse_einsum("for axis -> axis").ok());
}

TEST(Parse, DuplicateRulesDependOnTheExpressionKind) {
  EXPECT_TRUE(parse_einsum("i i j -> i j").ok());           // diagonals in operands
  EXPECT_DIAG(einsum_error("a b -> a a"), duplicateAxis, 9);
  EXPECT_TRUE(parse_einsum("_ _ b -> _ _").ok());           // rejected later by the checker
  EXPECT_DIAG(transform_error("a a -> a"), duplicateAxis, 2);
  EXPECT_DIAG(transform_error("a b -> b a a"), duplicateAxis, 11);
  EXPECT_DIAG(transform_error("(a a) -> a"), duplicateAxis, 3);
}

TEST(Parse, FirstErrorInTokenOrderWins) {
  // Operands left to right, tokens left to right, then the output.
  EXPECT_DIAG(einsum_error("a * b, ((c)) -> a"), unexpectedToken, 2);
  EXPECT_DIAG(einsum_error("a, b -> a * ((b"), unexpectedToken, 10);
  EXPECT_DIAG(transform_error("a a (b -> a"), duplicateAxis, 2);
}

TEST(Parse, DiagnosticRendersACaret) {
  const std::string text = render(einsum_error("a b -> a, b"));
  EXPECT_NE(text.find("error[unexpectedToken]"), std::string::npos);
  EXPECT_NE(text.find("  a b -> a, b\n          ^"), std::string::npos) << text;
}

// Patterns drawn from the grammar's alphabet, so that every path of the lexer/parser is reached.
rc::Gen<std::string> pattern_text() {
  static const std::vector<std::string> pieces = {"a", "b", "i", "j", "_", "x_", "_y", "ab", "2", "1", "0", "01",
                                                  " ", " ", " ", ",", "->", "-", ">", "...", ".", "(", ")", "*",
                                                  "\t", "$", "\xe2\x80\xa6", "\xff", "batch"};
  return rc::gen::map(rc::gen::container<std::vector<std::string>>(rc::gen::elementOf(pieces)),
                      [](const std::vector<std::string>& v) {
                        std::string s;
                        for (const auto& p : v) s += p;
                        return s;
                      });
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
