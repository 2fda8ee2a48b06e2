// The case format `einfuzz-case/1` rejects every malformed document with a diagnostic that names
// the file and the offending field (CASES.md), never a crash.
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

namespace einfuzz {
namespace {

using namespace case_test;

// ---------------------------------------------------------------------------------------------
// Rejections

/// Every value rejection, by group: a `dtype` document whose inputs[1].values[7] is `value`.
struct ValueRejectionRow {
  std::string_view group;
  ValueRejection rejection;
};

const ValueRejectionRow kValueRejections[] = {
    {"inexact", {"f32", "\"0x1.000001p+0\"", {"not exactly representable in f32"}}},
    {"inexact", {"f64", "\"0x1.00000000000008p+0\"", {"not exactly representable in f64"}}},
    {"inexact", {"f64", "\"0x1.0000000000000000000001p+0\"", {"not exactly representable in f64"}}},
    {"inexact", {"f32", "\"0x1p+128\"", {"f32"}}},
    {"inexact", {"f32", "\"0x1p-150\"", {"f32"}}},
    {"inexact", {"f32", "\"0x1.8p-149\"", {"f32"}}},
    {"inexact", {"f64", "\"0x1p+1024\"", {"f64"}}},
    {"inexact", {"f64", "\"0x1p-1075\"", {"f64"}}},
    {"inexact", {"f64", "\"0x1p+99999999999999999999999\"", {"f64"}}},
    {"inexact", {"f64", "\"0x0.00000000000008p-1022\"", {"f64"}}},
    {"nan", {"f64", "\"nan:0x7ff8\"", {"16 lowercase hex digits"}}},
    {"nan", {"f64", "\"nan:0x7FF8000000000001\"", {"16 lowercase hex digits"}}},
    {"nan", {"f64", "\"nan:0x7ff80000000000010\"", {"16 lowercase hex digits"}}},
    {"nan", {"f32", "\"nan:0x7ff8000000000001\"", {"8 lowercase hex digits"}}},
    {"nan", {"f64", "\"nan:0x0000000000000000\"", {"are not a NaN"}}},
    {"nan", {"f64", "\"nan:0x7ff0000000000000\"", {"are not a NaN"}}},
    {"nan", {"f32", "\"nan:0x7f800000\"", {"are not a NaN"}}},
    {"nan", {"f32", "\"nan:0x3f800000\"", {"are not a NaN"}}},
    {"nan", {"f32", "\"nan:7fc00001\"", {"not a float spelling"}}},
    {"nan", {"f32", "\"-nan\"", {"not a float spelling"}}},
    {"integer", {"i32", "\"2147483648\"", {"out of range for i32"}}},
    {"integer", {"i32", "\"-2147483649\"", {"out of range for i32"}}},
    {"integer", {"i64", "\"9223372036854775808\"", {"out of range for i64"}}},
    {"integer", {"i64", "\"-99999999999999999999999\"", {"out of range for i64"}}},
};

/// Checks the rows of `group` (there are some: a misspelt group must not pass vacuously).
void expect_value_rejections(std::string_view group) {
  int rows = 0;
  for (const auto& [row_group, row] : kValueRejections) {
    if (row_group != group) continue;
    ++rows;
    EXPECT_TRUE(value_rejected(row.dtype, row.value, row.fragments));
  }
  EXPECT_GT(rows, 0) << group;
}

TEST(CaseFormat, RejectsDocumentsThatAreNotCases) {
  const Rejection rows[] = {
      {"", Code::malformedCase, {"invalid JSON"}},
      {"{\"format\": ", Code::malformedCase, {"invalid JSON"}},
      {doc("f64", "") + " x", Code::malformedCase, {"invalid JSON"}},
      {"[1, 2]", Code::malformedCase, {"JSON object"}},
      {"{\"op\": \"einsum\"}", Code::malformedCase, {"missing field \"format\""}},
      {R"({"format": "einfuzz-case/2"})", Code::malformedCase, {"format", "einfuzz-case/2"}},
      {R"({"format": 1})", Code::malformedCase, {"unknown format"}},
      {doc("f64", "", R"(, "patern": "x")"), Code::malformedCase, {"unknown key \"patern\""}},
      {doc("f64", "", R"(, "dtype": "f64")"), Code::malformedCase, {"duplicate key \"dtype\""}},
      {doc("f64", "", R"(, "origin": {"a": "1", "a": "2"})"), Code::malformedCase, {"duplicate key \"a\" in origin"}},
      {doc("f64", "", R"(, "expect": {"error": {"a": 1}, "error": null})"),
       Code::malformedCase, {"duplicate key \"error\" in expect"}},
      {doc("f64", R"({"shape": [], "values": ["0x1p+0"]}, {"shape": [], "shape": []})"),
       Code::malformedCase, {"duplicate key \"shape\" in inputs[1]"}},
  };
  for (const Rejection& row : rows) EXPECT_TRUE(rejected(row.text, row.code, row.fragments));
  // Invalid UTF-8 in a string and raw bytes in the message are reported in ASCII.
  const auto r = read_case("{\"format\": \"\xff\"}", kFile);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("invalid JSON"), std::string::npos);
  for (const char ch : r.error().message) EXPECT_TRUE(ch >= 0x20 && ch < 0x7f) << r.error().message;
}

TEST(CaseFormat, RejectsBadTopLevelFields) {
  const std::string base = R"({"format": "einfuzz-case/1", "op": "einsum", "pattern": "", "dtype": "f64", )";
  const Rejection rows[] = {
      {base + R"("inputs": [], "op": 1})", Code::malformedCase, {"duplicate key \"op\""}},
      {R"({"format": "einfuzz-case/1", "op": "matmul", "pattern": "", "dtype": "f64", "inputs": []})",
       Code::malformedCase, {"op: unknown op \"matmul\""}},
      {R"({"format": "einfuzz-case/1", "pattern": "", "dtype": "f64", "inputs": []})",
       Code::malformedCase, {"missing field \"op\""}},
      {doc("f8", ""), Code::malformedCase, {"dtype: unknown dtype \"f8\""}},
      {doc("boolean", ""), Code::malformedCase, {"unknown dtype \"boolean\""}},
      {R"({"format": "einfuzz-case/1", "op": "einsum", "pattern": 3, "dtype": "f64", "inputs": []})",
       Code::malformedCase, {"pattern: must be a string"}},
      {base + R"("inputs": {}})", Code::malformedCase, {"inputs: must be an array"}},
      {base + R"("inputs": [], "reduction": 1})", Code::malformedCase, {"reduction: must be null"}},
      {base + R"("inputs": [], "axis_lengths": []})", Code::malformedCase, {"axis_lengths: must be"}},
      {base + R"("inputs": [], "axis_lengths": {"h": 9223372036854775808}})",
       Code::malformedCase, {"axis_lengths[\"h\"]", "int64"}},
      {base + R"("inputs": [], "expect": {"error": "noSuchCode"}})",
       Code::malformedCase, {"expect.error", "noSuchCode"}},
      {base + R"("inputs": [], "expect": {"error": ""}})", Code::malformedCase, {"expect.error"}},
      {base + R"("inputs": [], "expect": {}})", Code::malformedCase, {"expect: missing field"}},
      {base + R"("inputs": [], "expect": {"error": null, "x": 1}})",
       Code::malformedCase, {"expect: unknown key \"x\""}},
      {base + R"("inputs": [], "expect": null})", Code::malformedCase, {"expect: must be an object"}},
      {base + R"("inputs": [], "origin": {"seed": 42}})",
       Code::malformedCase, {"origin[\"seed\"]: must be a string", "42"}},
      {base + R"("inputs": [], "origin": "x"})", Code::malformedCase, {"origin: must be an object"}},
      // origin.profile: a precision profile valid for the case's dtype (CASES.md, ORACLE §8).
      {base + R"("inputs": [], "origin": {"profile": "f8"}})",
       Code::malformedCase, {"origin.profile: must be a precision profile", "\"f8\""}},
      {base + R"("inputs": [], "origin": {"profile": "f32+none"}})",
       Code::malformedCase, {"origin.profile: must be a precision profile"}},
      {base + R"("inputs": [], "origin": {"profile": "f32"}})",
       Code::malformedCase, {"origin.profile: \"f32\" is not valid for f64", "narrower than the dtype"}},
      {base + R"("inputs": [], "origin": {"profile": "f64+tf32"}})",
       Code::malformedCase, {"origin.profile: \"f64+tf32\" is not valid for f64", "tf32 input rounding"}},
  };
  for (const Rejection& row : rows) EXPECT_TRUE(rejected(row.text, row.code, row.fragments));
}

TEST(CaseFormat, RejectsBadInputsAndShapes) {
  const Rejection rows[] = {
      {doc("f64", "[]"), Code::malformedCase, {"inputs[0]: must be an object"}},
      {doc("f64", R"({"shape": [], "values": ["0x1p+0"], "dtype": "f64"})"),
       Code::malformedCase, {"inputs[0]: unknown key \"dtype\""}},
      {doc("f64", R"({"values": []})"), Code::malformedCase, {"inputs[0]: missing field \"shape\""}},
      {doc("f64", R"({"shape": [0]})"), Code::malformedCase, {"inputs[0]: missing field \"values\""}},
      {doc("f64", R"({"shape": 2, "values": []})"), Code::malformedCase, {"inputs[0].shape: must be"}},
      {doc("f64", R"({"shape": [], "values": ["0x1p+0"]}, {"shape": [2, -1], "values": []})"),
       Code::malformedCase, {"inputs[1].shape[1]", "negative length -1"}},
      {doc("f64", R"({"shape": [2.5], "values": []})"),
       Code::malformedCase, {"inputs[0].shape[0]", "non-negative integer", "2.5"}},
      {doc("f64", R"({"shape": [2.0], "values": []})"), Code::malformedCase, {"inputs[0].shape[0]"}},
      {doc("f64", R"({"shape": ["2"], "values": []})"), Code::malformedCase, {"inputs[0].shape[0]"}},
      {doc("f64", R"({"shape": [2, 2], "values": ["0x1p+0", "0x1p+0", "0x1p+0"]})"),
       Code::malformedCase, {"inputs[0].values", "needs 4 values, found 3"}},
      {doc("f64", R"({"shape": [], "values": []})"), Code::malformedCase, {"needs 1 values, found 0"}},
      {doc("f64", R"({"shape": [1], "values": "0x1p+0"})"),
       Code::malformedCase, {"inputs[0].values: must be an array"}},
  };
  for (const Rejection& row : rows) EXPECT_TRUE(rejected(row.text, row.code, row.fragments));
  // "-0" is a JSON integer 0: a length.
  EXPECT_TRUE(read_case(doc("f64", R"({"shape": [-0], "values": []})"), kFile).ok());
}

TEST(CaseFormat, RejectsShapesOverTheSizeLimitBeforeAllocating) {
  const Rejection rows[] = {
      {doc("f64", R"({"shape": [65536, 65536, 65536], "values": []})"),
       Code::sizeLimitExceeded, {"inputs[0]", "max-tensor-elements"}},
      {doc("f64", R"({"shape": [4294967296, 4294967296, 4], "values": []})"), Code::sizeLimitExceeded, {"inputs[0]"}},
      {doc("f64", R"({"shape": [18446744073709551615], "values": []})"),
       Code::sizeLimitExceeded, {"inputs[0].shape[0]", "too large"}},
      {doc("f64", R"({"shape": [1, 1e30], "values": []})"),
       Code::sizeLimitExceeded, {"inputs[0].shape[1]", "too large"}},
      {doc("f64", R"({"shape": [1, 99999999999999999999999], "values": []})"),
       Code::sizeLimitExceeded, {"inputs[0].shape[1]"}},
  };
  for (const Rejection& row : rows) EXPECT_TRUE(rejected(row.text, row.code, row.fragments));
  Limits small;
  small.max_tensor_elements = 10;
  EXPECT_TRUE(rejected(doc("i32", R"({"shape": [4, 4], "values": []})"), Code::sizeLimitExceeded,
                       {"inputs[0]", "16 elements"}, small));
  // A zero-length axis makes any shape empty.
  EXPECT_TRUE(read_case(doc("i32", R"({"shape": [0, 9223372036854775807, 9223372036854775807], "values": []})"),
                kFile, small)
          .ok());
}

TEST(CaseFormat, RejectsFloatsThatAreNotExactlyRepresentable) {
  expect_value_rejections("inexact");
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
  expect_value_rejections("nan");
}

TEST(CaseFormat, RejectsBadIntegersAndBools) {
  expect_value_rejections("integer");
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
  EXPECT_TRUE(rejected(doc("f64", R"({"shape": [1e999], "values": []})"), Code::malformedCase, {"number overflow"}));
}
}  // namespace
}  // namespace einfuzz
