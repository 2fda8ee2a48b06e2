// Test helper: RapidCheck strings made by concatenating pieces of a grammar's alphabet, so that a
// never-crash property reaches every path of a lexer or reader, not only random bytes.
#pragma once

#include <rapidcheck.h>

#include <string>
#include <vector>

namespace einfuzz::test {

/// Any number of `pieces`, drawn with repetition and concatenated.
inline rc::Gen<std::string> concatenations(const std::vector<std::string>& pieces) {
  return rc::gen::map(rc::gen::container<std::vector<std::string>>(rc::gen::elementOf(pieces)),
                      [](const std::vector<std::string>& parts) {
                        std::string out;
                        for (const auto& p : parts) out += p;
                        return out;
                      });
}

}  // namespace einfuzz::test
