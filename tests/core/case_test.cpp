// Tests of the case format `einfuzz-case/1`: bit-exact round trips, canonical text, every rejection,
// robustness against arbitrary bytes, and stable file names.
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

namespace einfuzz {
namespace {

constexpr std::string_view kFile = "t.case.json";

// ---------------------------------------------------------------------------------------------
// Generators

const std::vector<std::string>& text_tokens() {
  static const std::vector<std::string> tokens = {"a",
                                                  "b",
                                                  "i",
                                                  "j",
                                                  "h2",
                                                  " ",
                                                  "->",
                                                  ",",
                                                  "(",
                                                  ")",
                                                  "...",
                                                  "1",
                                                  "\"",
                                                  "\\",
                                                  "/",
                                                  "\n",
                                                  "\t",
                                                  std::string("\x01"),
                                                  std::string(1, '\0'),
                                                  "\x7f",
                                                  "\xc3\xa9" /* é */,
                                                  "\xe2\x86\x92" /* → */};
  return tokens;
}

/// Strings that need JSON escaping (quotes, controls, NUL) and multi-byte UTF-8, but valid UTF-8.
rc::Gen<std::string> gen_text() {
  return rc::gen::map(rc::gen::container<std::vector<std::string>>(rc::gen::elementOf(text_tokens())),
                      [](const std::vector<std::string>& parts) {
                        std::string out;
                        for (const auto& p : parts) out += p;
                        return out;
                      });
}

template <class T>
rc::Gen<std::optional<T>> gen_optional(rc::Gen<T> gen) {
  return rc::gen::oneOf(rc::gen::just(std::optional<T>()),
                        rc::gen::map(std::move(gen), [](T v) { return std::optional<T>(std::move(v)); }));
}

/// Bit patterns biased towards the interesting classes: ±0, subnormals, ±inf, NaN payloads.
template <class Bits>
rc::Gen<Bits> gen_float_bits(int mantissa_bits, int exponent_bits) {
  return rc::gen::apply(
      [=](int kind, bool negative, Bits mantissa, Bits exponent) -> Bits {
        const Bits sign = negative ? Bits{1} << (mantissa_bits + exponent_bits) : 0;
        const Bits max_exponent = (Bits{1} << exponent_bits) - 1;
        const Bits exponent_mask = max_exponent << mantissa_bits;
        mantissa &= (Bits{1} << mantissa_bits) - 1;
        switch (kind) {
          case 0: return sign;                                                          // ±0
          case 1: return sign | mantissa;                                               // subnormal (or 0)
          case 2: return sign | exponent_mask;                                          // ±inf
          case 3: return sign | exponent_mask | (mantissa ? mantissa : 1);              // NaN, any payload
          case 4: return exponent_mask | (Bits{1} << (mantissa_bits - 1));              // the default NaN
          case 5: return sign | (exponent % max_exponent) << mantissa_bits | mantissa;  // finite
          case 6:
            return sign | (exponent % max_exponent) << mantissa_bits |
                   (mantissa & (Bits{0xf} << (mantissa_bits - 4)));  // few digits
          default: return sign | exponent_mask | mantissa | (exponent % max_exponent) << mantissa_bits;
        }
      },
      rc::gen::inRange(0, 8), rc::gen::arbitrary<bool>(),
      rc::gen::inRange<Bits>(0, std::numeric_limits<Bits>::max()),
      rc::gen::inRange<Bits>(0, std::numeric_limits<Bits>::max()));
}

template <class T>
rc::Gen<T> gen_element() {
  if constexpr (std::is_same_v<T, float>) {
    return rc::gen::map(gen_float_bits<std::uint32_t>(23, 8),
                        [](std::uint32_t b) { return std::bit_cast<float>(b); });
  } else if constexpr (std::is_same_v<T, double>) {
    return rc::gen::map(gen_float_bits<std::uint64_t>(52, 11),
                        [](std::uint64_t b) { return std::bit_cast<double>(b); });
  } else if constexpr (std::is_same_v<T, Bool8>) {
    return rc::gen::element<Bool8>(0, 1);
  } else {
    using L = std::numeric_limits<T>;
    return rc::gen::oneOf(rc::gen::inRange<T>(L::min(), L::max()),
                          rc::gen::element<T>(L::min(), L::max(), 0, -1));
  }
}

rc::Gen<Tensor> gen_tensor(DType dtype) {
  return rc::gen::mapcat(
      rc::gen::mapcat(rc::gen::inRange<std::size_t>(0, 4),
                      [](std::size_t rank) {
                        return rc::gen::container<Shape>(rank, rc::gen::inRange<std::int64_t>(0, 4));
                      }),
      [dtype](Shape shape) {
        const auto n = static_cast<std::size_t>(*checked_element_count(shape));
        return visit_dtype(dtype, [&](auto tag) {
          using T = decltype(tag);
          return rc::gen::map(rc::gen::container<std::vector<T>>(n, gen_element<T>()),
                              [shape](std::vector<T> v) { return Tensor(shape, std::move(v)); });
        });
      });
}

rc::Gen<Case> gen_case() {
  return rc::gen::mapcat(
      rc::gen::element(DType::f32, DType::f64, DType::i32, DType::i64, DType::boolean), [](DType dtype) {
        return rc::gen::apply(
            [dtype](Op op, std::string pattern, std::optional<std::string> reduction,
                    std::vector<std::pair<std::string, std::int64_t>> axis_lengths,
                    std::vector<Tensor> inputs, std::optional<std::string> expect,
                    std::vector<std::string> origin_values) {
              Case c;
              c.op = op;
              c.pattern = std::move(pattern);
              c.reduction = std::move(reduction);
              c.axis_lengths = std::move(axis_lengths);  // duplicates included: they are kept
              c.dtype = dtype;
              c.inputs = std::move(inputs);
              c.expect_error = std::move(expect);
              // origin keys must be distinct (a duplicate is rejected); values are free text.
              for (std::size_t i = 0; i < origin_values.size(); ++i) {
                c.origin.emplace_back("k\"" + std::to_string(i), std::move(origin_values[i]));
              }
              return c;
            },
            rc::gen::element(Op::einsum, Op::reduce), gen_text(), gen_optional(gen_text()),
            rc::gen::container<std::vector<std::pair<std::string, std::int64_t>>>(
                rc::gen::pair(rc::gen::elementOf(std::vector<std::string>{"a", "b", "h2", "\"", "\xc3\xa9"}),
                              rc::gen::arbitrary<std::int64_t>())),
            rc::gen::mapcat(rc::gen::inRange<std::size_t>(0, 4),
                            [dtype](std::size_t n) {
                              return rc::gen::container<std::vector<Tensor>>(n, gen_tensor(dtype));
                            }),
            gen_optional(rc::gen::element<std::string>("", "rankMismatch", "incompatibleEinsumBroadcast")),
            rc::gen::mapcat(rc::gen::inRange<std::size_t>(0, 4), [](std::size_t n) {
              return rc::gen::container<std::vector<std::string>>(n, gen_text());
            }));
      });
}

// ---------------------------------------------------------------------------------------------
// Helpers

bool same_case(const Case& a, const Case& b) {
  if (a.op != b.op || a.pattern != b.pattern || a.reduction != b.reduction ||
      a.axis_lengths != b.axis_lengths || a.dtype != b.dtype || a.inputs.size() != b.inputs.size() ||
      a.expect_error != b.expect_error || a.origin != b.origin) {
    return false;
  }
  for (std::size_t i = 0; i < a.inputs.size(); ++i) {
    if (!bitwise_equal(a.inputs[i], b.inputs[i])) return false;
  }
  return true;
}

/// Every rejection: one of the two codes, no column, a message that starts with the file name.
bool well_formed_rejection(const Diagnostic& d, std::string_view file = kFile) {
  return (d.code == Code::malformedCase || d.code == Code::sizeLimitExceeded) && d.column == kNoColumn &&
         d.message.rfind(std::string(file) + ": ", 0) == 0;
}

testing::AssertionResult rejected(const std::string& text, Code code,
                                  std::initializer_list<std::string_view> fragments,
                                  const Limits& limits = {}) {
  const auto r = read_case(text, kFile, limits);
  if (r) return testing::AssertionFailure() << "accepted:\n" << text;
  const Diagnostic& d = r.error();
  if (d.code != code) {
    return testing::AssertionFailure()
           << "code " << code_name(d.code) << ", expected " << code_name(code) << ": " << d.message;
  }
  if (!well_formed_rejection(d)) return testing::AssertionFailure() << "ill-formed diagnostic: " << d.message;
  for (const auto fragment : fragments) {
    if (d.message.find(fragment) == std::string::npos) {
      return testing::AssertionFailure() << "message lacks \"" << fragment << "\": " << d.message;
    }
  }
  return testing::AssertionSuccess();
}

/// A valid einsum case document with the given dtype and input list, plus extra top-level members.
std::string doc(std::string_view dtype, std::string_view inputs, std::string_view extra = "") {
  return std::string(R"({"format": "einfuzz-case/1", "op": "einsum", "pattern": "i j, j k -> i k", )") +
         R"("reduction": null, "axis_lengths": {}, "dtype": ")" + std::string(dtype) + R"(", "inputs": [)" +
         std::string(inputs) + "]" + std::string(extra) + "}";
}

/// A document whose element inputs[1].values[7] is `value` (a JSON literal); the rest is valid.
std::string doc_with_value(std::string_view dtype, std::string_view value) {
  const std::string ok = dtype == "bool" ? "true" : (dtype[0] == 'f' ? "\"0x1p+0\"" : "\"1\"");
  std::string values;
  for (int i = 0; i < 7; ++i) values += ok + ", ";
  return doc(dtype, "{\"shape\": [1], \"values\": [" + ok + "]}, {\"shape\": [2, 4], \"values\": [" + values +
                        std::string(value) + "]}");
}

testing::AssertionResult value_rejected(std::string_view dtype, std::string_view value,
                                        std::initializer_list<std::string_view> fragments) {
  std::vector<std::string_view> all{"inputs[1].values[7]"};
  all.insert(all.end(), fragments.begin(), fragments.end());
  auto r = rejected(doc_with_value(dtype, value), Code::malformedCase, {});
  if (!r) return r << " (value " << value << ")";
  const std::string message = read_case(doc_with_value(dtype, value), kFile).error().message;
  for (const auto fragment : all) {
    if (message.find(fragment) == std::string::npos) {
      return testing::AssertionFailure() << "message lacks \"" << fragment << "\": " << message;
    }
  }
  return testing::AssertionSuccess();
}

template <class T>
T read_one(std::string_view dtype, std::string_view value) {
  const auto r = read_case(doc(dtype, "{\"shape\": [], \"values\": [" + std::string(value) + "]}"), kFile);
  EXPECT_TRUE(r.ok()) << (r ? "" : r.error().message);
  return r ? r->inputs.at(0).values<T>()[0] : T{};
}

template <class T>
std::string spell(T v) {
  return format_value(Tensor(Shape{}, std::vector<T>{v}), 0);
}

// ---------------------------------------------------------------------------------------------
// Writing and spelling

TEST(CaseFormat, WritesCanonicalLayout) {
  Case c;
  c.op = Op::reduce;
  c.pattern = "b (h h2) -> b h";
  c.reduction = "sum";
  c.axis_lengths = {{"h2", 2}, {"a", -1}};
  c.dtype = DType::f32;
  c.inputs.emplace_back(Shape{2, 2}, std::vector<float>{1.0f, -0.0f, std::numeric_limits<float>::infinity(),
                                                        std::bit_cast<float>(0x7fc00000u)});
  c.inputs.emplace_back(Shape{2, 0}, std::vector<float>{});
  c.expect_error = "";
  c.origin = {{"seed", "42"}, {"verdict", "mismatch \"special\""}};
  EXPECT_EQ(write_case(c),
            "{\n"
            "  \"format\": \"einfuzz-case/1\",\n"
            "  \"op\": \"reduce\",\n"
            "  \"pattern\": \"b (h h2) -> b h\",\n"
            "  \"reduction\": \"sum\",\n"
            "  \"axis_lengths\": {\"h2\": 2, \"a\": -1},\n"
            "  \"dtype\": \"f32\",\n"
            "  \"inputs\": [\n"
            "    {\"shape\": [2, 2], \"values\": [\"0x1p+0\", \"-0x0p+0\", \"inf\", \"nan\"]},\n"
            "    {\"shape\": [2, 0], \"values\": []}\n"
            "  ],\n"
            "  \"expect\": {\"error\": null},\n"
            "  \"origin\": {\"seed\": \"42\", \"verdict\": \"mismatch \\\"special\\\"\"}\n"
            "}\n");

  Case bare;
  bare.dtype = DType::boolean;
  EXPECT_EQ(write_case(bare),
            "{\n  \"format\": \"einfuzz-case/1\",\n  \"op\": \"einsum\",\n  \"pattern\": \"\",\n"
            "  \"reduction\": null,\n  \"axis_lengths\": {},\n  \"dtype\": \"bool\",\n  \"inputs\": []\n}\n");
  bare.inputs.emplace_back(Shape{}, std::vector<Bool8>{1});
  EXPECT_NE(write_case(bare).find("{\"shape\": [], \"values\": [true]}"), std::string::npos);
}

TEST(CaseFormat, SpellsValuesAsCasesMdSays) {
  EXPECT_EQ(spell(3.0f), "0x1.8p+1");
  EXPECT_EQ(spell(3.0), "0x1.8p+1");
  EXPECT_EQ(spell(-0.0), "-0x0p+0");
  EXPECT_EQ(spell(0.0f), "0x0p+0");
  EXPECT_EQ(spell(std::numeric_limits<float>::denorm_min()), "0x1p-149");
  EXPECT_EQ(spell(std::numeric_limits<double>::denorm_min()), "0x0.0000000000001p-1022");
  EXPECT_EQ(spell(std::numeric_limits<double>::max()), "0x1.fffffffffffffp+1023");
  EXPECT_EQ(spell(0.1), "0x1.999999999999ap-4");
  EXPECT_EQ(spell(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(spell(std::numeric_limits<float>::infinity()), "inf");
  EXPECT_EQ(spell(std::bit_cast<double>(std::uint64_t{0x7ff8000000000000})), "nan");
  EXPECT_EQ(spell(std::bit_cast<float>(std::uint32_t{0x7fc00000})), "nan");
  EXPECT_EQ(spell(std::bit_cast<double>(std::uint64_t{0x7ff8000000000123})), "nan:0x7ff8000000000123");
  EXPECT_EQ(spell(std::bit_cast<double>(std::uint64_t{0xfff8000000000000})), "nan:0xfff8000000000000");
  EXPECT_EQ(spell(std::bit_cast<float>(std::uint32_t{0x7f800001})), "nan:0x7f800001");
  EXPECT_EQ(spell(std::int32_t{-12}), "-12");
  EXPECT_EQ(spell(std::numeric_limits<std::int64_t>::min()), "-9223372036854775808");
  EXPECT_EQ(spell(Bool8{0}), "false");
  EXPECT_EQ(spell(Bool8{1}), "true");
}

#ifdef __GLIBC__
// The writer computes %a itself (platform independent); on glibc it must agree with printf.
RC_GTEST_PROP(CaseFormat, HexFloatsMatchGlibcPercentA, ()) {
  const auto d = std::bit_cast<double>(*gen_float_bits<std::uint64_t>(52, 11));
  const auto f = std::bit_cast<float>(*gen_float_bits<std::uint32_t>(23, 8));
  char buffer[64];
  if (std::isfinite(d)) {
    std::snprintf(buffer, sizeof buffer, "%a", d);
    RC_ASSERT(spell(d) == std::string(buffer));
  }
  if (std::isfinite(f)) {
    std::snprintf(buffer, sizeof buffer, "%a", static_cast<double>(f));
    RC_ASSERT(spell(f) == std::string(buffer));
  }
}
#endif

// ---------------------------------------------------------------------------------------------
// Reading

TEST(CaseFormat, AcceptsEveryHexSpellingOfAnExactValue) {
  EXPECT_EQ(read_one<double>("f64", "\"0x3p-1\""), 1.5);
  EXPECT_EQ(read_one<double>("f64", "\"0X1.8P+1\""), 3.0);
  EXPECT_EQ(read_one<double>("f64", "\"0x10p-4\""), 1.0);
  EXPECT_EQ(read_one<double>("f64", "\"0x.8p1\""), 1.0);
  EXPECT_EQ(read_one<double>("f64", "\"0x1.p0\""), 1.0);
  EXPECT_EQ(read_one<double>("f64", "\"0x0001.0000p+0000\""), 1.0);
  EXPECT_EQ(read_one<double>("f64", "\"0x1.fffffffffffffp+1023\""), std::numeric_limits<double>::max());
  EXPECT_EQ(read_one<double>("f64", "\"0x1p-1074\""), std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(read_one<double>("f64", "\"0x0.0000000000001p-1022\""),
            std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(read_one<float>("f32", "\"0x1p-149\""), std::numeric_limits<float>::denorm_min());
  EXPECT_EQ(read_one<float>("f32", "\"0x1.fffffep+127\""), std::numeric_limits<float>::max());
  EXPECT_EQ(std::bit_cast<std::uint64_t>(read_one<double>("f64", "\"-0x0p+99999999999999999999\"")),
            0x8000000000000000u);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(read_one<float>("f32", "\"nan:0x7f800001\"")), 0x7f800001u);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(read_one<double>("f64", "\"nan:0xfff0000000000001\"")),
            0xfff0000000000001u);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(read_one<double>("f64", "\"nan\"")), 0x7ff8000000000000u);
  EXPECT_EQ(read_one<std::int64_t>("i64", "\"-9223372036854775808\""),
            std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(read_one<std::int32_t>("i32", "\"2147483647\""), 2147483647);
  EXPECT_EQ(read_one<Bool8>("bool", "false"), 0);
}

TEST(CaseFormat, ReadsOptionalFieldsAndKeepsOrder) {
  const std::string inputs = R"({"shape": [2], "values": ["1", "2"]})";
  auto r = read_case(R"({"format": "einfuzz-case/1", "op": "einsum", "pattern": "i ->", "dtype": "i32",
                         "inputs": [)" +
                         inputs + "]}",
                     kFile);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->reduction);
  EXPECT_TRUE(r->axis_lengths.empty());
  EXPECT_FALSE(r->expect_error);
  EXPECT_TRUE(r->origin.empty());

  r = read_case(doc("i32", inputs, R"(, "expect": {"error": null}, "origin": {"z": "1", "a": "2", "m": ""})"),
                kFile);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->expect_error, std::optional<std::string>(""));
  EXPECT_EQ(r->origin, (std::vector<std::pair<std::string, std::string>>{{"z", "1"}, {"a", "2"}, {"m", ""}}));

  r = read_case(doc("i32", inputs, R"(, "expect": {"error": "rankMismatch"})"), kFile);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->expect_error, std::optional<std::string>("rankMismatch"));
}

TEST(CaseFormat, AxisLengthsKeepFileOrderAndDuplicates) {
  const auto r = read_case(R"({"format": "einfuzz-case/1", "op": "reduce", "pattern": "(b h) -> b",
      "reduction": "max", "axis_lengths": {"h": 2, "b": -3, "h": 4, "x": {"h": 5}},
      "dtype": "f64", "inputs": []})",
                           kFile);
  ASSERT_FALSE(r.ok());  // "x" is not an integer; the rest is read in order
  EXPECT_TRUE(
      rejected(R"({"format": "einfuzz-case/1", "op": "reduce", "pattern": "", "axis_lengths": {"x": 1.5},
                           "dtype": "f64", "inputs": []})",
               Code::malformedCase, {"axis_lengths[\"x\"]", "1.5"}));
  const auto ok = read_case(R"({"format": "einfuzz-case/1", "op": "reduce", "pattern": "(b h) -> b",
      "reduction": "max", "axis_lengths": {"h": 2, "b": -3, "h": 4, "z": 9223372036854775807},
      "dtype": "f64", "inputs": []})",
                            kFile);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->axis_lengths,
            (std::vector<std::pair<std::string, std::int64_t>>{
                {"h", 2}, {"b", -3}, {"h", 4}, {"z", std::numeric_limits<std::int64_t>::max()}}));
  EXPECT_EQ(ok->reduction, std::optional<std::string>("max"));
  EXPECT_EQ(ok->op, Op::reduce);
}

// ---------------------------------------------------------------------------------------------
// Rejections

TEST(CaseFormat, RejectsDocumentsThatAreNotCases) {
  EXPECT_TRUE(rejected("", Code::malformedCase, {"invalid JSON"}));
  EXPECT_TRUE(rejected("{\"format\": ", Code::malformedCase, {"invalid JSON"}));
  EXPECT_TRUE(rejected(doc("f64", "") + " x", Code::malformedCase, {"invalid JSON"}));
  EXPECT_TRUE(rejected("[1, 2]", Code::malformedCase, {"JSON object"}));
  EXPECT_TRUE(rejected("{\"op\": \"einsum\"}", Code::malformedCase, {"missing field \"format\""}));
  EXPECT_TRUE(rejected(R"({"format": "einfuzz-case/2"})", Code::malformedCase, {"format", "einfuzz-case/2"}));
  EXPECT_TRUE(rejected(R"({"format": 1})", Code::malformedCase, {"unknown format"}));
  EXPECT_TRUE(
      rejected(doc("f64", "", R"(, "patern": "x")"), Code::malformedCase, {"unknown key \"patern\""}));
  EXPECT_TRUE(
      rejected(doc("f64", "", R"(, "dtype": "f64")"), Code::malformedCase, {"duplicate key \"dtype\""}));
  EXPECT_TRUE(rejected(doc("f64", "", R"(, "origin": {"a": "1", "a": "2"})"), Code::malformedCase,
                       {"duplicate key \"a\" in origin"}));
  EXPECT_TRUE(rejected(doc("f64", "", R"(, "expect": {"error": {"a": 1}, "error": null})"), Code::malformedCase,
                       {"duplicate key \"error\" in expect"}));
  EXPECT_TRUE(rejected(doc("f64", R"({"shape": [], "values": ["0x1p+0"]}, {"shape": [], "shape": []})"),
                       Code::malformedCase, {"duplicate key \"shape\" in inputs[1]"}));
  // Invalid UTF-8 in a string and raw bytes in the message are reported in ASCII.
  const auto r = read_case("{\"format\": \"\xff\"}", kFile);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("invalid JSON"), std::string::npos);
  for (const char ch : r.error().message) EXPECT_TRUE(ch >= 0x20 && ch < 0x7f) << r.error().message;
}

TEST(CaseFormat, RejectsBadTopLevelFields) {
  const std::string base = R"({"format": "einfuzz-case/1", "op": "einsum", "pattern": "", "dtype": "f64", )";
  EXPECT_TRUE(rejected(base + R"("inputs": [], "op": 1})", Code::malformedCase, {"duplicate key \"op\""}));
  EXPECT_TRUE(
      rejected(R"({"format": "einfuzz-case/1", "op": "matmul", "pattern": "", "dtype": "f64", "inputs": []})",
               Code::malformedCase, {"op: unknown op \"matmul\""}));
  EXPECT_TRUE(rejected(R"({"format": "einfuzz-case/1", "pattern": "", "dtype": "f64", "inputs": []})",
                       Code::malformedCase, {"missing field \"op\""}));
  EXPECT_TRUE(rejected(doc("f16", ""), Code::malformedCase, {"dtype: unknown dtype \"f16\""}));
  EXPECT_TRUE(rejected(doc("boolean", ""), Code::malformedCase, {"unknown dtype \"boolean\""}));
  EXPECT_TRUE(
      rejected(R"({"format": "einfuzz-case/1", "op": "einsum", "pattern": 3, "dtype": "f64", "inputs": []})",
               Code::malformedCase, {"pattern: must be a string"}));
  EXPECT_TRUE(rejected(base + R"("inputs": {}})", Code::malformedCase, {"inputs: must be an array"}));
  EXPECT_TRUE(
      rejected(base + R"("inputs": [], "reduction": 1})", Code::malformedCase, {"reduction: must be null"}));
  EXPECT_TRUE(rejected(base + R"("inputs": [], "axis_lengths": []})", Code::malformedCase,
                       {"axis_lengths: must be"}));
  EXPECT_TRUE(rejected(base + R"("inputs": [], "axis_lengths": {"h": 9223372036854775808}})",
                       Code::malformedCase, {"axis_lengths[\"h\"]", "int64"}));
  EXPECT_TRUE(rejected(base + R"("inputs": [], "expect": {"error": "noSuchCode"}})", Code::malformedCase,
                       {"expect.error", "noSuchCode"}));
  EXPECT_TRUE(
      rejected(base + R"("inputs": [], "expect": {"error": ""}})", Code::malformedCase, {"expect.error"}));
  EXPECT_TRUE(
      rejected(base + R"("inputs": [], "expect": {}})", Code::malformedCase, {"expect: missing field"}));
  EXPECT_TRUE(rejected(base + R"("inputs": [], "expect": {"error": null, "x": 1}})", Code::malformedCase,
                       {"expect: unknown key \"x\""}));
  EXPECT_TRUE(rejected(base + R"("inputs": [], "expect": null})", Code::malformedCase,
                       {"expect: must be an object"}));
  EXPECT_TRUE(rejected(base + R"("inputs": [], "origin": {"seed": 42}})", Code::malformedCase,
                       {"origin[\"seed\"]: must be a string", "42"}));
  EXPECT_TRUE(
      rejected(base + R"("inputs": [], "origin": "x"})", Code::malformedCase, {"origin: must be an object"}));
}

TEST(CaseFormat, RejectsBadInputsAndShapes) {
  EXPECT_TRUE(rejected(doc("f64", "[]"), Code::malformedCase, {"inputs[0]: must be an object"}));
  EXPECT_TRUE(rejected(doc("f64", R"({"shape": [], "values": ["0x1p+0"], "dtype": "f64"})"),
                       Code::malformedCase, {"inputs[0]: unknown key \"dtype\""}));
  EXPECT_TRUE(
      rejected(doc("f64", R"({"values": []})"), Code::malformedCase, {"inputs[0]: missing field \"shape\""}));
  EXPECT_TRUE(rejected(doc("f64", R"({"shape": [0]})"), Code::malformedCase,
                       {"inputs[0]: missing field \"values\""}));
  EXPECT_TRUE(rejected(doc("f64", R"({"shape": 2, "values": []})"), Code::malformedCase,
                       {"inputs[0].shape: must be"}));
  EXPECT_TRUE(rejected(doc("f64", R"({"shape": [], "values": ["0x1p+0"]}, {"shape": [2, -1], "values": []})"),
                       Code::malformedCase, {"inputs[1].shape[1]", "negative length -1"}));
  EXPECT_TRUE(rejected(doc("f64", R"({"shape": [2.5], "values": []})"), Code::malformedCase,
                       {"inputs[0].shape[0]", "non-negative integer", "2.5"}));
  EXPECT_TRUE(
      rejected(doc("f64", R"({"shape": [2.0], "values": []})"), Code::malformedCase, {"inputs[0].shape[0]"}));
  EXPECT_TRUE(
      rejected(doc("f64", R"({"shape": ["2"], "values": []})"), Code::malformedCase, {"inputs[0].shape[0]"}));
  EXPECT_TRUE(rejected(doc("f64", R"({"shape": [2, 2], "values": ["0x1p+0", "0x1p+0", "0x1p+0"]})"),
                       Code::malformedCase, {"inputs[0].values", "needs 4 values, found 3"}));
  EXPECT_TRUE(rejected(doc("f64", R"({"shape": [], "values": []})"), Code::malformedCase,
                       {"needs 1 values, found 0"}));
  EXPECT_TRUE(rejected(doc("f64", R"({"shape": [1], "values": "0x1p+0"})"), Code::malformedCase,
                       {"inputs[0].values: must be an array"}));
  // "-0" is a JSON integer 0: a length.
  EXPECT_TRUE(read_case(doc("f64", R"({"shape": [-0], "values": []})"), kFile).ok());
}

TEST(CaseFormat, RejectsShapesOverTheSizeLimitBeforeAllocating) {
  EXPECT_TRUE(rejected(doc("f64", R"({"shape": [65536, 65536, 65536], "values": []})"),
                       Code::sizeLimitExceeded, {"inputs[0]", "max-tensor-elements"}));
  EXPECT_TRUE(rejected(doc("f64", R"({"shape": [4294967296, 4294967296, 4], "values": []})"),
                       Code::sizeLimitExceeded, {"inputs[0]"}));
  EXPECT_TRUE(rejected(doc("f64", R"({"shape": [18446744073709551615], "values": []})"),
                       Code::sizeLimitExceeded, {"inputs[0].shape[0]", "too large"}));
  EXPECT_TRUE(rejected(doc("f64", R"({"shape": [1, 1e30], "values": []})"), Code::sizeLimitExceeded,
                       {"inputs[0].shape[1]", "too large"}));
  EXPECT_TRUE(rejected(doc("f64", R"({"shape": [1, 99999999999999999999999], "values": []})"),
                       Code::sizeLimitExceeded, {"inputs[0].shape[1]"}));
  Limits small;
  small.max_tensor_elements = 10;
  EXPECT_TRUE(rejected(doc("i32", R"({"shape": [4, 4], "values": []})"), Code::sizeLimitExceeded,
                       {"inputs[0]", "16 elements"}, small));
  // A zero-length axis makes any shape empty.
  EXPECT_TRUE(
      read_case(doc("i32", R"({"shape": [0, 9223372036854775807, 9223372036854775807], "values": []})"),
                kFile, small)
          .ok());
}

TEST(CaseFormat, RejectsFloatsThatAreNotExactlyRepresentable) {
  EXPECT_TRUE(value_rejected("f32", "\"0x1.000001p+0\"", {"not exactly representable in f32"}));
  EXPECT_TRUE(value_rejected("f64", "\"0x1.00000000000008p+0\"", {"not exactly representable in f64"}));
  EXPECT_TRUE(
      value_rejected("f64", "\"0x1.0000000000000000000001p+0\"", {"not exactly representable in f64"}));
  EXPECT_TRUE(value_rejected("f32", "\"0x1p+128\"", {"f32"}));
  EXPECT_TRUE(value_rejected("f32", "\"0x1p-150\"", {"f32"}));
  EXPECT_TRUE(value_rejected("f32", "\"0x1.8p-149\"", {"f32"}));
  EXPECT_TRUE(value_rejected("f64", "\"0x1p+1024\"", {"f64"}));
  EXPECT_TRUE(value_rejected("f64", "\"0x1p-1075\"", {"f64"}));
  EXPECT_TRUE(value_rejected("f64", "\"0x1p+99999999999999999999999\"", {"f64"}));
  EXPECT_TRUE(value_rejected("f64", "\"0x0.00000000000008p-1022\"", {"f64"}));
}

TEST(CaseFormat, RejectsMalformedFloats) {
  for (const char* v : {"\"1.5\"", "\"1\"", "\" 0x1p+0\"", "\"0x1p+0 \"", "\"0x1p\"", "\"0x.p+0\"", "\"0x1\"",
                        "\"0x1p+0f\"", "\"+0x1p+0\"", "\"--0x1p+0\"", "\"0xp+0\"", "\"0x1p++0\"", "\"Inf\"",
                        "\"+inf\"", "\"NaN\"", "\"0xg\"", "\"\"", "\"0x1,8p+1\"", "\"0x1.8e+1\""}) {
    EXPECT_TRUE(value_rejected("f64", v, {"not a float spelling"}));
    EXPECT_TRUE(value_rejected("f32", v, {"not a float spelling"}));
  }
  for (const char* v : {"1.5", "null", "true", "[]", "{}"})
    EXPECT_TRUE(value_rejected("f64", v, {"must be a string"}));
  EXPECT_TRUE(value_rejected("f32", "1", {"f32 value must be a string", "number 1"}));
}

TEST(CaseFormat, RejectsMalformedNaNs) {
  EXPECT_TRUE(value_rejected("f64", "\"nan:0x7ff8\"", {"16 lowercase hex digits"}));
  EXPECT_TRUE(value_rejected("f64", "\"nan:0x7FF8000000000001\"", {"16 lowercase hex digits"}));
  EXPECT_TRUE(value_rejected("f64", "\"nan:0x7ff80000000000010\"", {"16 lowercase hex digits"}));
  EXPECT_TRUE(value_rejected("f32", "\"nan:0x7ff8000000000001\"", {"8 lowercase hex digits"}));
  EXPECT_TRUE(value_rejected("f64", "\"nan:0x0000000000000000\"", {"are not a NaN"}));
  EXPECT_TRUE(value_rejected("f64", "\"nan:0x7ff0000000000000\"", {"are not a NaN"}));
  EXPECT_TRUE(value_rejected("f32", "\"nan:0x7f800000\"", {"are not a NaN"}));
  EXPECT_TRUE(value_rejected("f32", "\"nan:0x3f800000\"", {"are not a NaN"}));
  EXPECT_TRUE(value_rejected("f32", "\"nan:7fc00001\"", {"not a float spelling"}));
  EXPECT_TRUE(value_rejected("f32", "\"-nan\"", {"not a float spelling"}));
}

TEST(CaseFormat, RejectsBadIntegersAndBools) {
  EXPECT_TRUE(value_rejected("i32", "\"2147483648\"", {"out of range for i32"}));
  EXPECT_TRUE(value_rejected("i32", "\"-2147483649\"", {"out of range for i32"}));
  EXPECT_TRUE(value_rejected("i64", "\"9223372036854775808\"", {"out of range for i64"}));
  EXPECT_TRUE(value_rejected("i64", "\"-99999999999999999999999\"", {"out of range for i64"}));
  for (const char* v : {"\"1.0\"", "\"+1\"", "\" 1\"", "\"1 \"", "\"0x10\"", "\"\"", "\"-\"", "\"1e3\""}) {
    EXPECT_TRUE(value_rejected("i32", v, {"not a decimal integer"}));
    EXPECT_TRUE(value_rejected("i64", v, {"not a decimal integer"}));
  }
  EXPECT_TRUE(value_rejected("i64", "5", {"i64 value must be a string"}));
  for (const char* v : {"\"true\"", "1", "0", "null", "\"false\""}) {
    EXPECT_TRUE(value_rejected("bool", v, {"must be JSON true or false"}));
  }
}

TEST(CaseFormat, SurvivesDeepNestingAndHugeNumbers) {
  for (const char* open : {"[", "{\"a\":"}) {
    std::string deep;
    for (int i = 0; i < 200000; ++i) deep += open;
    const auto r = read_case(deep, kFile);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(well_formed_rejection(r.error())) << r.error().message;
  }
  std::string nested = doc("f64", "");
  nested.pop_back();  // the closing brace
  nested += R"(, "origin": {"x": )";
  for (int i = 0; i < 100000; ++i) nested += "[";
  for (int i = 0; i < 100000; ++i) nested += "]";
  EXPECT_TRUE(rejected(nested + "}}", Code::malformedCase, {"origin[\"x\"]: must be a string", "an array"}));
  EXPECT_TRUE(
      rejected(doc("f64", R"({"shape": [1e999], "values": []})"), Code::malformedCase, {"number overflow"}));
}

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
      rc::gen::map(rc::gen::container<std::vector<std::string>>(rc::gen::elementOf(json_tokens())),
                   [](const std::vector<std::string>& parts) {
                     std::string out;
                     for (const auto& p : parts) out += p;
                     return out;
                   }));
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

// ---------------------------------------------------------------------------------------------
// File names and files

TEST(CaseFormat, FileNameIsContentDerivedAndStable) {
  Case c;
  c.pattern = "i j, j k -> i k";
  c.dtype = DType::f64;
  c.inputs.emplace_back(Shape{2}, std::vector<double>{1.0, -0.0});
  const std::string name = case_file_name(c);
  // 64-bit FNV-1a of the canonical text without origin: the same on every platform.
  std::uint64_t hash = 0xcbf29ce484222325u;
  for (const char ch : write_case(c)) {
    hash ^= static_cast<unsigned char>(ch);
    hash *= 0x100000001b3u;
  }
  char expected[64];
  std::snprintf(expected, sizeof expected, "einsum-%016llx.case.json", static_cast<unsigned long long>(hash));
  EXPECT_EQ(name, expected);
  EXPECT_EQ(name, "einsum-d54884c65fc84f1e.case.json");

  Case with_origin = c;
  with_origin.origin = {{"seed", "1"}, {"backend", "torch"}};
  EXPECT_EQ(case_file_name(with_origin), name);

  Case other = c;
  other.inputs[0] = Tensor(Shape{2}, std::vector<double>{1.0, 0.0});  // only the sign of a zero differs
  EXPECT_NE(case_file_name(other), name);
  other = c;
  other.expect_error = "";
  EXPECT_NE(case_file_name(other), name);
  other = c;
  other.op = Op::reduce;
  EXPECT_EQ(case_file_name(other).rfind("reduce-", 0), 0u);
}

class CaseFileTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("einfuzz_case_test_" +
            std::to_string(
                std::hash<std::string>{}(testing::UnitTest::GetInstance()->current_test_info()->name())) +
            "_" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::filesystem::path dir_;
};

TEST_F(CaseFileTest, ReadsFilesAndNamesThePathInDiagnostics) {
  Case c;
  c.dtype = DType::f32;
  c.inputs.emplace_back(Shape{1}, std::vector<float>{std::bit_cast<float>(0xff800001u)});
  const auto path = dir_ / case_file_name(c);
  std::ofstream(path, std::ios::binary) << write_case(c);
  const auto r = read_case_file(path);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(same_case(c, *r));

  std::ofstream(dir_ / "bad.case.json", std::ios::binary) << doc("f65", "");
  const auto bad = read_case_file(dir_ / "bad.case.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(well_formed_rejection(bad.error(), (dir_ / "bad.case.json").string())) << bad.error().message;

  const auto missing = read_case_file(dir_ / "missing.case.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, Code::malformedCase);
  EXPECT_NE(missing.error().message.find((dir_ / "missing.case.json").string()), std::string::npos);

  const auto directory = read_case_file(dir_);
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.error().code, Code::malformedCase);
  EXPECT_NE(directory.error().message.find("directory"), std::string::npos);

  // A sparse file just over 1 GiB is refused without being read.
  const auto huge = dir_ / "huge.case.json";
  std::ofstream(huge, std::ios::binary).put(' ');
  std::filesystem::resize_file(huge, (std::uintmax_t{1} << 30) + 1);
  const auto too_large = read_case_file(huge);
  ASSERT_FALSE(too_large.ok());
  EXPECT_EQ(too_large.error().code, Code::sizeLimitExceeded);
  EXPECT_NE(too_large.error().message.find(huge.string()), std::string::npos);
}

}  // namespace
}  // namespace einfuzz
