// UTF-8 validation, character-boundary cuts, control-character escapes and quoting.
#include "einfuzz/core/text.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace einfuzz {

namespace {

constexpr char kHex[] = "0123456789abcdef";

/// Length of the well-formed UTF-8 sequence starting at s[i], or 0 when there is none.
std::size_t sequence_length(std::string_view s, std::size_t i) {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = at(i);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // the allowed range of the second byte (RFC 3629 table)
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;  // no surrogates
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (s.size() - i < n) return 0;
  if (at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k) {
    if (at(i + k) < 0x80 || at(i + k) > 0xbf) return 0;
  }
  return n;
}

}  // namespace

std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = sequence_length(s, i);
    if (n == 0) {
      out += "\xef\xbf\xbd";  // U+FFFD
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string cut_utf8(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  std::size_t end = 0;
  while (end < s.size()) {
    const std::size_t n = std::max<std::size_t>(sequence_length(s, end), 1);
    if (end + n > max_bytes) break;
    end += n;
  }
  return std::string(s.substr(0, end)) + "...";
}

namespace {

/// The code point of the format character at `s[i]` that moves text or lines on a terminal (the
/// bidirectional embeddings, overrides, isolates and marks: U+061C, U+200E/F, U+202A..U+202E,
/// U+2066..U+2069; the line and paragraph separators U+2028/U+2029), or 0.
unsigned reordering_character(const std::string& s, std::size_t i) {
  const auto at = [&](std::size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
  if (at(i) == 0xd8 && at(i + 1) == 0x9c) return 0x061c;
  if (at(i) != 0xe2 || (at(i + 1) != 0x80 && at(i + 1) != 0x81)) return 0;
  const unsigned code = 0x2000 + ((at(i + 1) & 0x3fu) << 6) + (at(i + 2) & 0x3fu);
  const bool reorders = code == 0x200e || code == 0x200f || (code >= 0x2028 && code <= 0x202e) ||
                        (code >= 0x2066 && code <= 0x2069);
  return reorders ? code : 0;
}

}  // namespace

std::string escape_control(std::string_view text) {
  const std::string s = valid_utf8(text);
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (const unsigned format = reordering_character(s, i)) {  // written as \uXXXX: shown, not obeyed
      out += "\\u";
      for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(format >> shift) & 0xf];
      i += format == 0x061c ? 1 : 2;
      continue;
    }
    unsigned code = c;
    std::size_t skip = 0;
    if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) < 0xa0) {
      code = static_cast<unsigned char>(s[i + 1]);  // a C1 control character, U+0080..U+009F
      skip = 1;
    } else if (c >= 0x20 && c != 0x7f) {
      out += s[i];
      continue;
    }
    if (code == '\n') {
      out += "\\n";
    } else if (code == '\t') {
      out += "\\t";
    } else {
      out += "\\x";
      out += kHex[code >> 4];
      out += kHex[code & 0xf];
    }
    i += skip;
  }
  return out;
}

std::string backend_text(std::string_view s, std::size_t max_bytes) { return escape_control(cut_utf8(s, max_bytes)); }

std::string quote(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string shell_quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string json_quote(std::string_view s) {
  using Json = nlohmann::json;
  return Json(std::string(s)).dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string printable(std::string_view s, std::size_t max_length) {
  std::string out;
  for (char ch : s) {
    if (out.size() >= max_length) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out;
}

}  // namespace einfuzz
