// Untrusted text (valid_utf8, cut_utf8, escape_control, quoting, printable), the atomic file write, and reading case
// files whose values are packed during parsing (issue 11, "Campaigns that survive anything").
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "einfuzz/core/atomic_write.hpp"
#include "einfuzz/core/case.hpp"
#include "einfuzz/core/text.hpp"

namespace einfuzz {
namespace {

/// Python's strict decoder, written out: true when `s` is well-formed UTF-8 (RFC 3629).
bool is_utf8(const std::string& s) { return valid_utf8(s) == s; }

TEST(Text, ValidUtf8ReplacesEveryMalformedByte) {
  EXPECT_EQ(valid_utf8("abc"), "abc");
  EXPECT_EQ(valid_utf8("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(valid_utf8("a\xff" "b"), "a\xef\xbf\xbd" "b");
  EXPECT_EQ(valid_utf8("\xc3"), "\xef\xbf\xbd");                            // cut short
  EXPECT_EQ(valid_utf8("\xc0\xaf"), "\xef\xbf\xbd\xef\xbf\xbd");            // overlong
  EXPECT_EQ(valid_utf8("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // a surrogate
  EXPECT_EQ(valid_utf8("\xf4\x90\x80\x80").find("\xf4"), std::string::npos);     // above U+10FFFF
  EXPECT_EQ(valid_utf8("\xf0\x9f\x98\x80"), "\xf0\x9f\x98\x80");            // U+1F600
}

TEST(Text, CutNeverSplitsACharacter) {
  const std::string s = std::string(1999, 'x') + "\xc3\xa9" + "tail";
  EXPECT_EQ(cut_utf8(s, 2000), std::string(1999, 'x') + "...");
  EXPECT_EQ(cut_utf8(s, 2001), std::string(1999, 'x') + "\xc3\xa9...");
  EXPECT_EQ(cut_utf8("short", 2000), "short");
}

RC_GTEST_PROP(Text, CutAndEscapeAlwaysGiveUtf8, (const std::string& s, unsigned char max)) {
  const std::string cut = cut_utf8(valid_utf8(s), max);
  RC_ASSERT(is_utf8(cut));
  RC_ASSERT(cut.size() <= static_cast<std::size_t>(max) + 3);
  const std::string shown = backend_text(s, max);
  RC_ASSERT(is_utf8(shown));
  for (unsigned char c : shown) RC_ASSERT(c >= 0x20 && c != 0x7f);
}

TEST(Text, EscapeControlWritesControlCharactersOut) {
  EXPECT_EQ(escape_control("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(escape_control("line\nnext\tcol"), "line\\nnext\\tcol");
  EXPECT_EQ(escape_control("\x7f"), "\\x7f");
  EXPECT_EQ(escape_control("\xc2\x9b" "31m"), "\\x9b31m");  // C1 CSI
  EXPECT_EQ(escape_control("caf\xc3\xa9 \xff"), "caf\xc3\xa9 \xef\xbf\xbd");
  // Reordering format characters: a right-to-left override makes "pass" of "ssap", a line
  // separator breaks a report line on some terminals. Other characters of those blocks stay.
  EXPECT_EQ(escape_control("x \xe2\x80\xae" "ssap"), "x \\u202essap");
  EXPECT_EQ(escape_control("a\xe2\x80\xa8" "b\xe2\x80\xa9" "c"), "a\\u2028b\\u2029c");
  EXPECT_EQ(escape_control("\xe2\x81\xa6" "i\xe2\x81\xa9" "\xe2\x80\x8f" "\xd8\x9c"), "\\u2066i\\u2069\\u200f\\u061c");
  EXPECT_EQ(escape_control("\xe2\x80\x94 \xe2\x80\xa6 \xe2\x81\xb0"), "\xe2\x80\x94 \xe2\x80\xa6 \xe2\x81\xb0");  // — … ⁰
}

TEST(Text, QuotingForDiagnosticsJsonAndMessages) {
  EXPECT_EQ(quote("a b -> a"), "'a b -> a'");
  EXPECT_EQ(json_quote("say \"hi\"\n"), "\"say \\\"hi\\\"\\n\"");
  EXPECT_EQ(json_quote("\xff"), "\"\xef\xbf\xbd\"");  // not UTF-8: U+FFFD, no exception
  EXPECT_EQ(printable("ok\x01\xc3\xa9"), "ok\\x01\\xc3\\xa9");
  // The cut happens once the output holds max_length bytes; the escape before it may run over.
  EXPECT_EQ(printable("abcdef", 3), "abc...");
  EXPECT_EQ(printable("ab\x01z", 3), "ab\\x01...");
  EXPECT_EQ(printable("abc", 3), "abc");
  EXPECT_EQ(printable(std::string(250, 'x')), std::string(200, 'x') + "...");  // default 200
}

class AtomicWrite : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("einfuzz-atomic-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  static std::string read(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(dir_), {}));
  }
  std::filesystem::path dir_;
};

TEST_F(AtomicWrite, WritesReplacesAndRefusesToReplace) {
  const std::string path = (dir_ / "r.json").string();
  EXPECT_EQ(write_file_atomically(path, "one"), "");
  EXPECT_EQ(read(path), "one");
  EXPECT_EQ(write_file_atomically(path, "two"), "");
  EXPECT_EQ(read(path), "two");
  EXPECT_NE(write_file_atomically(path, "three", /*no_replace=*/true).find("exists"), std::string::npos);
  EXPECT_EQ(read(path), "two");
  EXPECT_EQ(entries(), 1u);  // no temporary file left
}

TEST_F(AtomicWrite, AFullDeviceIsAnError) {
  EXPECT_NE(write_file_atomically("/dev/full", "x"), "");
  EXPECT_EQ(write_file_atomically("/dev/null", "x"), "");
  EXPECT_NE(write_file_atomically((dir_ / "no" / "such" / "dir.json").string(), "x"), "");
}

// A size-limited filesystem: a child with RLIMIT_FSIZE 4 bytes writes 8; the old file must stay
// whole and no temporary file may be left.
TEST_F(AtomicWrite, ASizeLimitLeavesTheOldFileWhole) {
  const std::string path = (dir_ / "c.case.json").string();
  ASSERT_EQ(write_file_atomically(path, "old"), "");
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{4, 4};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    const std::string error = write_file_atomically(path, "12345678");
    ::_exit(error.empty() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1) << "the failed write was not reported";
  EXPECT_EQ(read(path), "old");
  EXPECT_EQ(entries(), 1u);
}

// Values are packed during parsing; a values array that is not all strings falls back to the DOM
// with the same diagnostics as before, and packed strings read exactly.
TEST(CasePacking, PackedAndUnpackedValuesReadTheSame) {
  const std::string good = R"({"format": "einfuzz-case/1", "op": "einsum", "pattern": "a, a -> a", "dtype": "f64",
    "inputs": [{"shape": [3], "values": ["0x1p+0", "-0x0p+0", "nan:0x7ff8000000000001"]},
               {"values": ["0x1.8p+1", "inf", "-0x1p-1074"], "shape": [3]}]})";
  auto c = read_case(good, "good", {});
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_EQ(c->inputs.size(), 2u);
  EXPECT_EQ(write_case(*c), write_case(*read_case(write_case(*c), "again", {})));
  const auto v0 = c->inputs[0].values<double>();
  EXPECT_EQ(v0[0], 1.0);
  EXPECT_TRUE(std::signbit(v0[1]));
  EXPECT_EQ(c->inputs[1].values<double>()[2], -0x1p-1074);

  const std::string mixed = R"({"format": "einfuzz-case/1", "op": "einsum", "pattern": "a -> a", "dtype": "f64",
    "inputs": [{"shape": [3], "values": ["0x1p+0", 5, "0x1p+1"]}]})";
  auto m = read_case(mixed, "mixed", {});
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("inputs[0].values[1]: a f64 value must be a string, got number 5"), std::string::npos)
      << m.error().message;

  const std::string bad = R"({"format": "einfuzz-case/1", "op": "einsum", "pattern": "a -> a", "dtype": "f64",
    "inputs": [{"shape": [2], "values": ["0x1p+0", "zebra"]}]})";
  auto b = read_case(bad, "bad", {});
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("inputs[0].values[1]: string \"zebra\" is"), std::string::npos) << b.error().message;

  const std::string count = R"({"format": "einfuzz-case/1", "op": "einsum", "pattern": "a -> a", "dtype": "f64",
    "inputs": [{"shape": [4], "values": ["0x1p+0", "0x1p+0", "0x1p+0"]}]})";
  auto n = read_case(count, "count", {});
  ASSERT_FALSE(n);
  EXPECT_NE(n.error().message.find("needs 4 values, found 3"), std::string::npos) << n.error().message;

  const std::string bools = R"({"format": "einfuzz-case/1", "op": "reduce", "reduction": "any", "pattern": "a -> ",
    "dtype": "bool", "inputs": [{"shape": [2], "values": ["true", "false"]}]})";
  auto s = read_case(bools, "bools", {});
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("a bool must be JSON true or false, got string \"true\""), std::string::npos)
      << s.error().message;
}

}  // namespace
}  // namespace einfuzz
