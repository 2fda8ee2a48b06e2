// The pattern AST: what `parse` produces from text, with the column of every piece (SEMANTICS §1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace einfuzz {

/// One word or ellipsis inside an expression.
struct Atom {
  enum class Kind {
    name,       ///< an identifier, `_` included where the expression kind allows it
    anonymous,  ///< a decimal literal >= 2: an axis of that length, distinct per occurrence
    unit,       ///< the literal 1 (also `01`): a length-1 placeholder with no logical axis
    ellipsis,   ///< `...`
  };
  Kind kind = Kind::name;
  std::string name;           ///< the identifier (kind == name) or the literal's text
  std::uint64_t length = 0;   ///< kind == anonymous: the value, saturated at UINT64_MAX
  std::size_t column = 0;     ///< 0-based byte offset of the first character in the pattern
};

/// A top-level item: a bare atom, or a parenthesised group of atoms.
struct Item {
  bool group = false;         ///< written in parentheses
  std::vector<Atom> atoms;    ///< bare: exactly one atom; group: its atoms, unit atoms dropped
  bool had_unit = false;      ///< group only: a `1` was dropped from it (so `(1)` is a unit group)
  std::size_t column = 0;     ///< column of the atom or of the opening parenthesis
};

/// One side of a pattern, or one einsum operand; may be empty (a rank-0 operand / output).
struct Expression {
  std::vector<Item> items;
  std::size_t column = 0;     ///< where the expression's text starts (after separators)
  bool has_ellipsis = false;  ///< an ellipsis occurs somewhere (bare or inside a group)
};

/// `op0, op1, … -> out`. Always at least one operand (an empty operand text is a rank-0 operand).
struct EinsumPattern {
  std::string text;
  std::vector<Expression> operands;
  Expression output;
};

/// `input -> output` for reduce (and, later, rearrange/repeat).
struct TransformPattern {
  std::string text;
  Expression input;
  Expression output;
};

}  // namespace einfuzz
