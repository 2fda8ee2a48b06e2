// Properties of the case format `einfuzz-case/1`: bit-exact round trips, and arbitrary or mutated
// bytes never crash the reader (whatever it accepts round-trips canonically).
#include "einfuzz/core/case.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "support/case_text.hpp"
#include "support/text_gen.hpp"

namespace einfuzz {
namespace {

using namespace case_test;

// ---------------------------------------------------------------------------------------------
// Properties

RC_GTEST_PROP(CaseFormat, RoundTripIsBitExact, ()) {
  const Case c = *gen_case();
  const std::string text = write_case(c);
  RC_LOG() << text;
  const auto r = read_case(text, kFile);
  if (!r) RC_FAIL(r.error().message);
  RC_ASSERT(same_case(c, *r));
  RC_ASSERT(write_case(*r) == text);  // canonical text is a fixed point of write ∘ read
}

const std::vector<std::string>& json_tokens() {
  static const std::vector<std::string> tokens = {"{",
                                                  "}",
                                                  "[",
                                                  "]",
                                                  ",",
                                                  ":",
                                                  "\"",
                                                  "\\",
                                                  "\\u0000",
                                                  "\\ud800",
                                                  "null",
                                                  "true",
                                                  "false",
                                                  "-",
                                                  "0",
                                                  "1",
                                                  "-0",
                                                  "1.5",
                                                  "1e999",
                                                  "18446744073709551616",
                                                  "-9223372036854775809",
                                                  "\"format\"",
                                                  "\"einfuzz-case/1\"",
                                                  "\"op\"",
                                                  "\"einsum\"",
                                                  "\"reduce\"",
                                                  "\"dtype\"",
                                                  "\"f32\"",
                                                  "\"f64\"",
                                                  "\"i32\"",
                                                  "\"bool\"",
                                                  "\"inputs\"",
                                                  "\"shape\"",
                                                  "\"values\"",
                                                  "\"axis_lengths\"",
                                                  "\"origin\"",
                                                  "\"expect\"",
                                                  "\"error\"",
                                                  "\"0x1p+0\"",
                                                  "\"nan:0x7ff0000000000001\"",
                                                  "\"nan:0x7f800001\"",
                                                  "\"0x1p-1075\"",
                                                  "\"-0x0p+0\"",
                                                  "\"2147483648\"",
                                                  " ",
                                                  "\n",
                                                  std::string(1, '\0'),
                                                  "\xff",
                                                  "\xc3",
                                                  "0x",
                                                  "p+",
                                                  "9999999999"};
  return tokens;
}

RC_GTEST_PROP(CaseFormat, ArbitraryBytesNeverCrash, ()) {
  const auto bytes = *rc::gen::oneOf(
      rc::gen::container<std::string>(rc::gen::arbitrary<char>()),
      test::concatenations(json_tokens()));
  const auto r = read_case(bytes, kFile);
  if (!r) RC_ASSERT(well_formed_rejection(r.error()));
}

/// Applies (kind, position, length, token) edits: replace, insert, erase, duplicate a span, truncate.
std::string mutate(std::string text,
                   const std::vector<std::tuple<int, std::size_t, std::size_t, std::string>>& edits) {
  for (const auto& [kind, position, length, token] : edits) {
    const std::size_t pos = text.empty() ? 0 : position % (text.size() + 1);
    const std::size_t len = std::min(length, text.size() - pos);
    switch (kind) {
      case 0: text.replace(pos, len, token); break;
      case 1: text.insert(pos, token); break;
      case 2: text.erase(pos, len); break;
      case 3: text.insert(pos + len, text.substr(pos, len)); break;
      default: text.resize(pos); break;
    }
  }
  return text;
}

RC_GTEST_PROP(CaseFormat, MutatedCasesNeverCrashAndAcceptedOnesRoundTrip, ()) {
  const std::string text = write_case(*gen_case());
  const auto edits = *rc::gen::mapcat(rc::gen::inRange<std::size_t>(1, 4), [](std::size_t n) {
    return rc::gen::container<std::vector<std::tuple<int, std::size_t, std::size_t, std::string>>>(
        n, rc::gen::tuple(rc::gen::inRange(0, 5), rc::gen::arbitrary<std::size_t>(),
                          rc::gen::inRange<std::size_t>(0, 12), rc::gen::elementOf(json_tokens())));
  });
  const std::string mutated = mutate(text, edits);
  RC_LOG() << mutated;
  const auto r = read_case(mutated, kFile);
  RC_CLASSIFY(r.ok(), "accepted");
  if (!r) {
    RC_ASSERT(well_formed_rejection(r.error()));
    return;
  }
  // Whatever is accepted is written canonically, and that text is a fixed point.
  const std::string canonical = write_case(*r);
  const auto again = read_case(canonical, kFile);
  if (!again) RC_FAIL(again.error().message);
  RC_ASSERT(same_case(*r, *again));
  RC_ASSERT(write_case(*again) == canonical);
}

}  // namespace
}  // namespace einfuzz
