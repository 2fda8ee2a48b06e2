// Tests of the case format `einfuzz-case/1`: canonical text, value spellings, reading, and stable
// file names (rejections: case_reject_test.cpp; properties: case_property_test.cpp).
#include "einfuzz/core/case.hpp"
#include "einfuzz/core/case_origin.hpp"
#include "einfuzz/core/precision_text.hpp"

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

  // origin.profile (a stored profile surprise): read as a string, spelled back the same, and
  // parsed by origin_profile.
  EXPECT_FALSE(origin_profile(*r));
  const std::string bf16_input = R"({"shape": [2], "values": ["0x1p+0", "0x1p+0"]})";
  for (const char* text : {"bf16", "f32", "f64", "f32+tf32"}) {
    SCOPED_TRACE(text);
    r = read_case(doc("bf16", bf16_input, std::string(R"(, "origin": {"backend": "torch", "profile": ")") + text + "\"}"),
                  kFile);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(origin_value(*r, "profile"), text);
    ASSERT_TRUE(origin_profile(*r));
    EXPECT_EQ(profile_text(*origin_profile(*r)), text);
    const auto again = read_case(write_case(*r), kFile);
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(again->origin, r->origin);
    EXPECT_EQ(write_case(*again), write_case(*r));
  }

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
