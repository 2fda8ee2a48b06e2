// The lexer shared by every pattern grammar: text → tokens with columns (SEMANTICS §1.1, §13.3).
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "einfuzz/core/diagnostic.hpp"

namespace einfuzz::detail {

struct Token {
  enum class Kind { word, lparen, rparen, comma, star, arrow, ellipsis };
  Kind kind;
  std::string_view text;  ///< points into the pattern
  std::size_t column;     ///< 0-based byte offset
};

/// Only U+0020 separates tokens; identifiers are ASCII (letters, digits, `_`); any other byte,
/// a `-` without `>`, a `.` outside `...`, and an ellipsis touching a word character or a fourth
/// `.` are `unknownCharacter` at their column. The whole string is lexed before anything else.
Result<std::vector<Token>> lex(std::string_view pattern);

inline bool is_word_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace einfuzz::detail
