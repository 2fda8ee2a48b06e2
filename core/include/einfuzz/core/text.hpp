// Text made safe to print, quote or cut: text that came from outside (patterns, backend messages,
// plugin names, file names) for terminals, JSON and shells, without ever splitting a UTF-8 character.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace einfuzz {

/// `s` with every byte that is not part of a well-formed UTF-8 sequence (RFC 3629: no overlong
/// forms, no surrogates, nothing above U+10FFFF) replaced by U+FFFD.
std::string valid_utf8(std::string_view s);

/// The longest prefix of `s` of at most `max_bytes` bytes that does not end inside a UTF-8
/// character (a malformed sequence counts byte by byte), plus "..." when something was cut.
std::string cut_utf8(std::string_view s, std::size_t max_bytes);

/// Backend text for a terminal or a report line: valid_utf8, then every control character (C0,
/// DEL, C1: U+0080..U+009F) written as \xNN (newline \n, tab \t), and every format character
/// that reorders text or breaks a line (bidirectional controls, U+2028/U+2029) as \uXXXX, so a
/// backend cannot move the cursor, clear the screen, fake a line of the report or make the line
/// read otherwise than it is.
std::string escape_control(std::string_view s);

/// What an untrusted text may carry across the harness boundary: escape_control(cut_utf8(s, max)).
std::string backend_text(std::string_view s, std::size_t max_bytes = 2000);

/// `s` between single quotes, as diagnostics quote the input they name ('a b -> a'); nothing is
/// escaped (the diagnostic's column points into the same text).
std::string quote(std::string_view s);

/// Single-quotes `s` for a POSIX shell: 'it'\''s' (a quote closes, is escaped, and reopens).
std::string shell_quote(std::string_view s);

/// `s` as a JSON string literal; bytes that are not UTF-8 become U+FFFD instead of an exception.
std::string json_quote(std::string_view s);

/// Printable ASCII, for messages that quote raw bytes: every byte outside 0x20..0x7e written as
/// \xNN; once the output holds `max_length` bytes the rest is cut and "..." appended (the last
/// escape may run 3 bytes over).
std::string printable(std::string_view s, std::size_t max_length = 200);

}  // namespace einfuzz
