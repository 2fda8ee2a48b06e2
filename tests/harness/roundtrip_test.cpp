// The round trip (issue 10, items 11 and 13): real `einfuzz` processes — fuzz campaigns against the
// planted bugs (as plugins), replay, shrink, `check` with every verdict-deciding option, and
// converted fuzz artifacts — print reproduce commands; every one of them is executed verbatim and
// must give the same verdict labels.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "einfuzz/core/text.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using einfuzz::shell_quote;

struct Ran {
  int status = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A scratch directory holding `build/einfuzz` (a link to the CLI under test), so that printed
/// commands run verbatim from it: no environment variable, no rewriting.
class Workdir {
 public:
  explicit Workdir(const std::string& name) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("einfuzz-roundtrip-" + name + "-" + std::string(info->name()) + "-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "build");
    fs::create_symlink(EINFUZZ_CLI, dir_ / "build" / "einfuzz");
  }
  ~Workdir() { fs::remove_all(dir_); }
  const fs::path& path() const { return dir_; }

  /// Runs `command` with /bin/sh in this directory.
  Ran sh(const std::string& command) const {
    const fs::path out = dir_ / ".out", err = dir_ / ".err";
    const std::string line = "cd " + shell_quote(dir_.string()) + " && " + command + " >" + shell_quote(out.string()) + " 2>" +
                             shell_quote(err.string());
    const int raw = std::system(line.c_str());
    Ran r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }

 private:
  fs::path dir_;
};

/// Every `reproduce: COMMAND` line of `text`.
std::vector<std::string> reproduce_lines(const std::string& text) {
  std::vector<std::string> out;
  static const std::regex line(R"((?:^|\n)\s*reproduce: ([^\n]+))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), line); it != std::sregex_iterator(); ++it) {
    out.push_back((*it)[1]);
  }
  return out;
}

/// `command` (an `einfuzz check …`) with --json right after `check`: a flag-form command ends with
/// `-- PATTERN`, after which nothing is an option.
std::string with_json(const std::string& command) {
  const std::size_t at = command.find(" check ");
  EXPECT_NE(at, std::string::npos) << command;
  if (at == std::string::npos) return command;
  return command.substr(0, at) + " check --json " + command.substr(at + 7);
}

/// Runs a printed `einfuzz check` command with --json; returns its backends' verdict labels.
std::map<std::string, std::string> rerun_labels(const Workdir& w, const std::string& command, std::string* status = nullptr) {
  const Ran r = w.sh(with_json(command));
  std::map<std::string, std::string> labels;
  const json j = json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << command << "\nstdout:\n" << r.out << "\nstderr:\n" << r.err;
  if (j.is_discarded()) return labels;
  if (status) *status = j.value("status", "");
  for (const json& b : j.value("backends", json::array())) labels[b["backend"]] = b["verdict"];
  return labels;
}

std::string plugin(const char* bug) { return std::string(EINFUZZ_PLANTED_DIR) + "/libeinfuzz_planted_" + bug + ".so"; }

// ---------------------------------------------------------------------------------------------
// fuzz, replay and shrink against each planted bug

class RoundTrip : public ::testing::TestWithParam<const char*> {};

TEST_P(RoundTrip, EveryCommandPrintedByFuzzReplayAndShrinkReproducesItsVerdict) {
  const Workdir w(GetParam());
  const std::string spec = "plugin:" + plugin(GetParam());
  // Non-default verdict-deciding options, so a command that drops one would be caught.
  const std::string options = " --shuffle-seed 5 --tile 4 --threads 2 --tasks 3 --strict-signed-zero";
  const Ran fuzz = w.sh("build/einfuzz fuzz --backend " + shell_quote(spec + ",shuffle") +
                        " --cases 300 --seed 11 --shrink-limit 3 --max-shrink-attempts 500 --corpus found"
                        " --report report.json" + options);
  ASSERT_EQ(fuzz.status, 1) << fuzz.out << fuzz.err;
  const json report = json::parse(slurp(w.path() / "report.json"));
  ASSERT_FALSE(report["findings"].empty());
  std::map<std::string, std::string> expected;  // command -> verdict label
  for (const json& f : report["findings"]) {
    EXPECT_TRUE(f["stored"].get<bool>());
    expected[f["reproduce"]] = f["verdict"];
  }
  ASSERT_EQ(expected.size(), report["findings"].size()) << "two findings share one command";
  // The text summary (stdout) and the progress messages (stderr) print exactly the report's commands.
  for (const std::string& text : {fuzz.out, fuzz.err}) {
    const auto lines = reproduce_lines(text);
    EXPECT_EQ(std::set<std::string>(lines.begin(), lines.end()).size(), expected.size()) << text;
    for (const std::string& c : lines) EXPECT_EQ(expected.count(c), 1u) << c;
  }
  std::size_t executed = 0;
  for (const auto& [command, label] : expected) {
    EXPECT_NE(command.find("--shuffle-seed 5"), std::string::npos) << command;
    EXPECT_NE(command.find("--tasks 3"), std::string::npos) << command;
    const auto labels = rerun_labels(w, command);
    ASSERT_EQ(labels.size(), 1u) << command;
    EXPECT_EQ(labels.begin()->second, label) << command;
    ++executed;
  }
  EXPECT_EQ(executed, report["findings"].size());  // 100 % of the campaign's findings

  // replay: every stored finding fails on the planted plugin; each printed command reproduces all
  // backends' labels of its entry.
  const Ran replay = w.sh("build/einfuzz replay found --backend " + shell_quote(spec + ",shuffle") + " --json replay.json" + options);
  ASSERT_EQ(replay.status, 1) << replay.out << replay.err;
  const json rj = json::parse(slurp(w.path() / "replay.json"));
  const auto replay_lines = reproduce_lines(replay.out);
  std::size_t failed = 0;
  for (const json& e : rj["entries"]) {
    if (e["status"] == "pass") continue;
    ++failed;
    ASSERT_TRUE(e.contains("reproduce")) << e.dump();
    const std::string command = e["reproduce"];
    EXPECT_NE(std::find(replay_lines.begin(), replay_lines.end(), command), replay_lines.end()) << command;
    std::map<std::string, std::string> want;
    for (const json& v : e["verdicts"]) want[v["backend"]] = v["verdict"];
    EXPECT_EQ(rerun_labels(w, command), want) << command;
  }
  EXPECT_EQ(failed, rj["entries"].size());
  EXPECT_EQ(replay_lines.size(), failed);

  // shrink: each stored finding shrunk again on the backend that found it (the planted plugin, or
  // shuffle when --strict-signed-zero makes its zero signs count); the printed command gives the
  // shrunk case's verdict.
  int n = 0;
  for (const json& f : report["findings"]) {
    const std::string out = "small-" + std::to_string(n++) + ".case.json";
    const Ran shrink = w.sh("build/einfuzz shrink " + shell_quote(f["case_file"].get<std::string>()) + " --backend " +
                            shell_quote(f["backend"].get<std::string>()) + " --out " + out + options);
    ASSERT_EQ(shrink.status, 0) << shrink.err;
    const auto lines = reproduce_lines(shrink.err);
    ASSERT_EQ(lines.size(), 1u) << shrink.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(shrink.err, m, std::regex(R"(; verdict .* -> ([^\n]+)\n)"))) << shrink.err;
    const auto labels = rerun_labels(w, lines[0]);
    ASSERT_EQ(labels.size(), 1u);
    EXPECT_EQ(labels.begin()->second, m[1].str()) << lines[0];
  }
  std::cout << "[ roundtrip] " << GetParam() << ": " << executed << " fuzz findings, " << failed
            << " replayed failures, " << n << " shrinks: every printed command re-run, same labels\n";
  EXPECT_GT(n, 0);
}

INSTANTIATE_TEST_SUITE_P(PlantedPlugins, RoundTrip,
                         ::testing::Values("size1-stride", "seeded-accumulator", "innermost-first", "dropped-term"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           std::erase(name, '-');
                           return name;
                         });

// ---------------------------------------------------------------------------------------------
// check: every verdict-deciding option appears in the printed command, which reproduces the labels

TEST(RoundTripCheck, EveryVerdictDecidingOptionTravelsWithTheCommand) {
  const Workdir w("check");
  const std::string matmul = shell_quote(std::string(EINFUZZ_SOURCE_DIR) + "/tests/cli/matmul.case.json");
  const std::string backends = " --backend " + shell_quote("fused,shuffle,plugin:" + plugin("dropped-term"));
  struct Row {
    std::string args;      // given to check
    std::string appears;   // must appear in the printed command
  };
  const std::vector<Row> rows = {
      {"--shuffle-seed 77", "--shuffle-seed 77"},
      {"--strict-signed-zero", "--strict-signed-zero"},
      {"--strict-nan-payload", "--strict-nan-payload"},
      {"--max-tensor-elements 1000", "--max-tensor-elements 1000"},
      {"--max-materialised-elements 1000", "--max-materialised-elements 1000"},
      {"--max-operands 3", "--max-operands 3"},
      {"--max-labels 9", "--max-labels 9"},
      {"--timeout 3.5", "--timeout 3.5"},
      {"--isolate", "--isolate"},
      {"--tile 4", "--tile 4"},
      {"--threads 3", "--threads 3"},
      {"--tasks 2", "--tasks 2"},
      {"--profile f64", "--profile f64"},
  };
  std::vector<std::string> sources = {"--case " + matmul,
                                      "'i j, j k -> i k' --shapes 3x5,5x2 --values edge --seed 4 --dtype f32"};
  for (const std::string& source : sources) {
    for (const Row& row : rows) {
      const std::string given = "build/einfuzz check " + source + backends + " " + row.args;
      const Ran first = w.sh(with_json(given));
      const json j = json::parse(first.out, nullptr, false);
      ASSERT_FALSE(j.is_discarded()) << given << "\n" << first.out << first.err;
      ASSERT_TRUE(j.contains("reproduce")) << given << "\n" << first.out;
      const std::string command = j["reproduce"];
      EXPECT_NE(command.find(" " + row.appears), std::string::npos) << command;
      std::map<std::string, std::string> want;
      for (const json& b : j["backends"]) want[b["backend"]] = b["verdict"];
      std::string status;
      EXPECT_EQ(rerun_labels(w, command, &status), want) << given << "\n -> " << command;
      EXPECT_EQ(status, j.value("status", "")) << command;
    }
  }
  // The flag form spells a pattern starting with '-' safely, and a reduce with its supplied lengths.
  for (const std::string& given :
       {std::string("build/einfuzz check --shapes '()' --backend shuffle --shuffle-seed 3 -- '->'"),
        std::string("build/einfuzz check --reduce sum '(a b) c -> a c' --axis b=2 --shapes 4x3 --backend shuffle "
                    "--shuffle-seed 8 --values edge")}) {
    const json j = json::parse(w.sh(with_json(given)).out);
    std::map<std::string, std::string> want;
    for (const json& b : j["backends"]) want[b["backend"]] = b["verdict"];
    EXPECT_EQ(rerun_labels(w, j["reproduce"]), want) << j["reproduce"];
  }
}

// ---------------------------------------------------------------------------------------------
// Converted fuzz artifacts: the case file plus the command with the target's knobs

TEST(RoundTripArtifacts, ConvertedSeedsReproduceTheTargetsVerdicts) {
  const Workdir w("artifacts");
  std::size_t converted = 0, executed = 0;
  for (const char* target : {"fuzz_einsum_diff", "fuzz_reduce_diff"}) {
    for (const auto& seed : fs::directory_iterator(fs::path(EINFUZZ_SOURCE_DIR) / "fuzz" / "seeds" / target)) {
      // The planted plugin too: a failing verdict must come back from the command as well.
      const std::string out = "artifact-" + std::to_string(converted++) + ".case.json";
      const Ran conv = w.sh(shell_quote(EINFUZZ_ARTIFACT_TO_CASE) + " --target " + target + " -o " + out + " --backend " +
                            shell_quote("plugin:" + plugin("seeded-accumulator")) + " " + shell_quote(seed.path().string()));
      if (conv.status == 1 && conv.err.find("skips it") != std::string::npos) continue;  // no values to write
      ASSERT_EQ(conv.status, 0) << seed.path() << "\n" << conv.err;
      std::map<std::string, std::string> want;
      static const std::regex verdict(R"((?:^|\n)verdict: (\S+) ([^\n]+))");
      for (auto it = std::sregex_iterator(conv.err.begin(), conv.err.end(), verdict); it != std::sregex_iterator(); ++it) {
        want[(*it)[1]] = (*it)[2];
      }
      // Over the targets' harness limits (fuzz_limits()): skipped, a verdict on nobody.
      if (want.empty() && conv.err.find("--max-tensor-elements") != std::string::npos) continue;
      const auto lines = reproduce_lines(conv.err);
      ASSERT_EQ(lines.size(), 1u) << conv.err;
      EXPECT_EQ(want.size(), 3u) << conv.err;  // fused, shuffle, the plugin
      EXPECT_NE(lines[0].find("--threads 2"), std::string::npos) << lines[0];
      EXPECT_NE(lines[0].find("--shuffle-seed "), std::string::npos) << lines[0];
      EXPECT_EQ(rerun_labels(w, lines[0]), want) << seed.path() << "\n" << lines[0];
      ++executed;
    }
  }
  EXPECT_GT(executed, 5u);
}

}  // namespace
