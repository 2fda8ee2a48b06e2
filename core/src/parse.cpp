// Pattern parser: tokens → EinsumPattern / TransformPattern in the precedence of SEMANTICS §2.1.
#include "einfuzz/core/parse.hpp"

#include <algorithm>
#include <span>
#include <string>

#include "einfuzz/core/text.hpp"
#include "lexer.hpp"

namespace einfuzz {
namespace {

using detail::Token;

/// Which duplicate-name and `_` rules apply to an expression (SEMANTICS §1.2 table).
enum class ExprKind { einsum_operand, einsum_output, transform_side };

/// A pattern's tokens and where its `->` stands.
struct Sides {
  std::vector<Token> tokens;
  std::size_t arrow;  ///< index of the `->` token
  std::span<const Token> left() const { return {tokens.data(), arrow}; }
  std::span<const Token> right() const { return {tokens.data() + arrow + 1, tokens.size() - arrow - 1}; }
  /// The column where the right-hand side starts (just past `->`).
  std::size_t right_column() const { return tokens[arrow].column + 2; }
};

struct Parser {
  std::string_view text;

  Diagnostic error(Code code, std::string message, std::size_t column) const {
    return make_diagnostic(code, std::move(message), column, std::string(text));
  }

  Result<Atom> classify_word(const Token& t, ExprKind kind) const {
    const std::string_view w = t.text;
    if (std::all_of(w.begin(), w.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      std::uint64_t value = 0;
      for (char c : w) {
        const auto digit = static_cast<std::uint64_t>(c - '0');
        value = value > (UINT64_MAX - digit) / 10 ? UINT64_MAX : value * 10 + digit;
      }
      if (value == 0) {
        return error(Code::invalidAnonymousAxis,
                     "anonymous axis " + quote(w) + " must have a positive length", t.column);
      }
      if (value == 1) return Atom{Atom::Kind::unit, std::string(w), 1, t.column};
      return Atom{Atom::Kind::anonymous, std::string(w), value, t.column};
    }
    if (w[0] >= '0' && w[0] <= '9') {
      return error(Code::invalidIdentifier,
                   "invalid identifier " + quote(w) + ": a name may not start with a digit", t.column);
    }
    if (w == "_") {
      if (kind == ExprKind::transform_side) {
        return error(Code::invalidIdentifier,
                     "invalid identifier '_': the anonymous name is not allowed in reduce patterns",
                     t.column);
      }
    } else if (w.front() == '_' || w.back() == '_') {
      return error(Code::invalidIdentifier,
                   "invalid identifier " + quote(w) + ": a name may not begin or end with '_'",
                   t.column);
    }
    return Atom{Atom::Kind::name, std::string(w), 0, t.column};
  }

  /// Duplicate-name rule at the moment `atom` is added to `expr`.
  Result<bool> check_duplicate(const Expression& expr, const Atom& atom, ExprKind kind) const {
    if (atom.kind != Atom::Kind::name || kind == ExprKind::einsum_operand) return true;
    // In an einsum output a repeated `_` passes parsing (duplicateEinsumOutputAxis later).
    if (kind == ExprKind::einsum_output && atom.name == "_") return true;
    for (const Item& item : expr.items) {
      for (const Atom& a : item.atoms) {
        if (a.kind == Atom::Kind::name && a.name == atom.name) {
          return error(Code::duplicateAxis,
                       "axis " + quote(atom.name) + " appears twice in " +
                           (kind == ExprKind::einsum_output ? "the output" : "one side of the pattern"),
                       atom.column);
        }
      }
    }
    return true;
  }

  Result<Expression> parse_expression(std::span<const Token> tokens, std::size_t start_column,
                                      ExprKind kind) const {
    Expression expr;
    expr.items.reserve(tokens.size());  // at most one item per token
    expr.column = tokens.empty() ? start_column : tokens.front().column;
    bool in_group = false;
    Item group;
    for (const Token& t : tokens) {
      switch (t.kind) {
        case Token::Kind::lparen:
          if (in_group) {
            return error(Code::nestedParenthesis, "parentheses may not nest (one level only)", t.column);
          }
          in_group = true;
          group = Item{true, {}, false, t.column};
          break;
        case Token::Kind::rparen:
          if (!in_group) {
            return error(Code::unbalancedParenthesis, "')' has no matching '('", t.column);
          }
          in_group = false;
          expr.items.push_back(std::move(group));
          break;
        case Token::Kind::ellipsis:
          if (expr.has_ellipsis) {
            return error(Code::duplicateEllipsis, "at most one ellipsis per expression", t.column);
          }
          expr.has_ellipsis = true;
          if (in_group) {
            group.atoms.push_back(Atom{Atom::Kind::ellipsis, "...", 0, t.column});
          } else {
            expr.items.push_back(Item{false, {Atom{Atom::Kind::ellipsis, "...", 0, t.column}}, false, t.column});
          }
          break;
        case Token::Kind::word: {
          auto atom = classify_word(t, kind);
          if (!atom) return std::move(atom).error();
          if (auto dup = check_duplicate(expr, *atom, kind); !dup) return std::move(dup).error();
          if (in_group) {
            // A unit inside a group is dropped: `(a 1)` is `(a)`, `(1)` is `()`.
            if (atom->kind == Atom::Kind::unit) {
              group.had_unit = true;
            } else {
              if (auto dup = check_group_duplicate(group, *atom, kind); !dup) return std::move(dup).error();
              group.atoms.push_back(std::move(*atom));
            }
          } else {
            expr.items.push_back(Item{false, {std::move(*atom)}, false, t.column});
          }
          break;
        }
        case Token::Kind::comma:
        case Token::Kind::star:
        case Token::Kind::arrow:
          return error(Code::unexpectedToken,
                       "unexpected " + quote(t.text) +
                           (t.kind == Token::Kind::comma ? " (a comma separates einsum operands only)" : ""),
                       t.column);
      }
    }
    if (in_group) {
      return error(Code::unbalancedParenthesis, "'(' is never closed", group.column);
    }
    return expr;
  }

  /// Names inside the group being built are not yet in `expr`; check them against each other.
  Result<bool> check_group_duplicate(const Item& group, const Atom& atom, ExprKind kind) const {
    if (atom.kind != Atom::Kind::name || kind == ExprKind::einsum_operand) return true;
    if (kind == ExprKind::einsum_output && atom.name == "_") return true;
    for (const Atom& a : group.atoms) {
      if (a.kind == Atom::Kind::name && a.name == atom.name) {
        return error(Code::duplicateAxis, "axis " + quote(atom.name) + " appears twice in one group",
                     atom.column);
      }
    }
    return true;
  }

  /// Splits at the single arrow: missingArrow / duplicateArrow.
  Result<std::size_t> find_arrow(std::span<const Token> tokens) const {
    std::size_t arrow = tokens.size();
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      if (tokens[i].kind != Token::Kind::arrow) continue;
      if (arrow != tokens.size()) {
        return error(Code::duplicateArrow, "a pattern has exactly one '->'; found a second one",
                     tokens[i].column);
      }
      arrow = i;
    }
    if (arrow == tokens.size()) {
      return error(Code::missingArrow, "the pattern has no '->' (einfuzz has no implicit output mode)",
                   text.size());
    }
    return arrow;
  }

  /// The pattern's tokens split at its one `->`: lexer and arrow errors first, as both grammars want.
  Result<Sides> split() const {
    auto lexed = detail::lex(text);
    if (!lexed) return std::move(lexed).error();
    auto arrow = find_arrow(*lexed);
    if (!arrow) return std::move(arrow).error();
    return Sides{std::move(*lexed), *arrow};
  }
};

}  // namespace

Result<EinsumPattern> parse_einsum(std::string_view text) {
  const Parser p{text};
  auto sides = p.split();
  if (!sides) return std::move(sides).error();

  EinsumPattern out;
  out.text = std::string(text);
  const std::span<const Token> left = sides->left();
  out.operands.reserve(1 + static_cast<std::size_t>(std::count_if(
                               left.begin(), left.end(), [](const Token& t) { return t.kind == Token::Kind::comma; })));
  std::size_t begin = 0;
  std::size_t start_column = 0;
  for (std::size_t i = 0; i <= left.size(); ++i) {
    if (i < left.size() && left[i].kind != Token::Kind::comma) continue;
    auto expr = p.parse_expression(left.subspan(begin, i - begin), start_column, ExprKind::einsum_operand);
    if (!expr) return std::move(expr).error();
    out.operands.push_back(std::move(*expr));
    if (i < left.size()) start_column = left[i].column + 1;
    begin = i + 1;
  }
  auto output = p.parse_expression(sides->right(), sides->right_column(), ExprKind::einsum_output);
  if (!output) return std::move(output).error();
  out.output = std::move(*output);
  return out;
}

Result<TransformPattern> parse_transform(std::string_view text) {
  const Parser p{text};
  auto sides = p.split();
  if (!sides) return std::move(sides).error();

  TransformPattern out;
  out.text = std::string(text);
  auto input = p.parse_expression(sides->left(), 0, ExprKind::transform_side);
  if (!input) return std::move(input).error();
  out.input = std::move(*input);
  auto output = p.parse_expression(sides->right(), sides->right_column(), ExprKind::transform_side);
  if (!output) return std::move(output).error();
  out.output = std::move(*output);
  return out;
}

}  // namespace einfuzz
