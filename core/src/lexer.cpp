// Pattern lexer: one pass over the bytes, first bad byte wins.
#include "lexer.hpp"

#include <string>

namespace einfuzz::detail {
namespace {

Diagnostic unknown_character(std::string_view pattern, std::size_t column, std::string_view why) {
  const auto byte = static_cast<unsigned char>(pattern[column]);
  std::string shown;
  if (byte >= 0x21 && byte < 0x7f) {
    shown = std::string("'") + static_cast<char>(byte) + "'";
  } else {
    static constexpr char kHex[] = "0123456789abcdef";
    shown = std::string("byte 0x") + kHex[byte >> 4] + kHex[byte & 15];
  }
  return make_diagnostic(Code::unknownCharacter,
                         "unknown character " + shown + " at column " + std::to_string(column + 1) +
                             (why.empty() ? std::string() : " (" + std::string(why) + ")"),
                         column, std::string(pattern));
}

}  // namespace

Result<std::vector<Token>> lex(std::string_view s) {
  std::vector<Token> tokens;
  tokens.reserve(s.size() / 2 + 1);  // a word and its separator, typically: one allocation, not five
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == ' ') {
      ++i;
      continue;
    }
    if (is_word_char(c)) {
      std::size_t j = i;
      while (j < s.size() && is_word_char(s[j])) ++j;
      tokens.push_back({Token::Kind::word, s.substr(i, j - i), i});
      i = j;
      continue;
    }
    switch (c) {
      case '(': tokens.push_back({Token::Kind::lparen, s.substr(i, 1), i}); ++i; continue;
      case ')': tokens.push_back({Token::Kind::rparen, s.substr(i, 1), i}); ++i; continue;
      case ',': tokens.push_back({Token::Kind::comma, s.substr(i, 1), i}); ++i; continue;
      case '*': tokens.push_back({Token::Kind::star, s.substr(i, 1), i}); ++i; continue;
      case '-':
        if (i + 1 < s.size() && s[i + 1] == '>') {
          tokens.push_back({Token::Kind::arrow, s.substr(i, 2), i});
          i += 2;
          continue;
        }
        return unknown_character(s, i, "'-' must be followed by '>'");
      case '.':
        if (s.substr(i, 3) == "...") {
          if (i > 0 && is_word_char(s[i - 1])) {
            return unknown_character(s, i, "an ellipsis may not touch a word");
          }
          if (i + 3 < s.size() && (is_word_char(s[i + 3]) || s[i + 3] == '.')) {
            return unknown_character(s, i + 3, "an ellipsis may not be followed by a word or '.'");
          }
          tokens.push_back({Token::Kind::ellipsis, s.substr(i, 3), i});
          i += 3;
          continue;
        }
        return unknown_character(s, i, "'.' only occurs as '...'");
      default:
        break;
    }
    if (static_cast<unsigned char>(c) >= 0x80) {
      return unknown_character(s, i, "identifiers are ASCII-only; a non-ASCII byte is not allowed");
    }
    if (c == '\t' || c == '\n' || c == '\r') {
      return unknown_character(s, i, "only the space character separates tokens");
    }
    return unknown_character(s, i, "");
  }
  return tokens;
}

}  // namespace einfuzz::detail
