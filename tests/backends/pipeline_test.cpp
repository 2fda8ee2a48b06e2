// Pipelined PROTOCOL A backends (Backend::submit/collect): requests to several `cmd:` backends are
// in flight at once, each keeps its own fault rules, and nothing another backend does to the case
// after the send reaches a request. Checked through the backends' own logs, never by timing.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "einfuzz/backends/process.hpp"
#include "einfuzz/harness/run.hpp"
#include "support/protocol_cases.hpp"
#include "support/verdicts.hpp"

namespace einfuzz {
namespace {

using VK = VerdictKind;
using namespace test;

/// One line of sleepy_backend.py's log: when it read a request and when it had answered it.
struct Worked {
  std::int64_t id = 0;
  double begin = 0;
  double end = 0;
};

std::vector<Worked> read_log(const std::filesystem::path& log) {
  std::vector<Worked> out;
  std::ifstream in(log);
  Worked w;
  while (in >> w.id >> w.begin >> w.end) out.push_back(w);
  return out;
}

/// A fresh directory for the logs of one test.
std::filesystem::path scratch(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("einfuzz-pipeline-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

ProcessOptions sleepy(const std::filesystem::path& log, double seconds, const std::string& flags = "") {
  ProcessOptions o;
  o.command = python() + " " + shell_quote((kSource / "tests/backends/faulty/sleepy_backend.py").string()) + " " +
              std::to_string(seconds) + " " + shell_quote(log.string()) + " " + flags;
  o.name = "sleepy";
  o.timeout_seconds = 30;
  return o;
}

/// Writes to its inputs (through the const the interface gives it) and answers the reference's
/// passthrough of the values it found.
class InputWriter final : public Backend {
 public:
  std::string_view name() const override { return "writer"; }
  const Capabilities& capabilities() const override { return caps_; }
  BackendResult run(const Case& c) override {
    Tensor out = c.inputs[0];
    auto& victim = const_cast<Tensor&>(c.inputs[0]);
    for (double& v : victim.values<double>()) v = -v - 1;
    return out;
  }

 private:
  Capabilities caps_ = [] {
    Capabilities c;
    c.semantics = Semantics::ordered;
    c.dtypes = {DType::f64};
    return c;
  }();
};

TEST(ProtocolAPipeline, TwoBackendsWorkOnOneCaseAtTheSameTime) {
  const auto dir = scratch("overlap");
  {
    ProcessBackend a(sleepy(dir / "a.log", 0.3));
    ProcessBackend b(sleepy(dir / "b.log", 0.3));
    ASSERT_FALSE(a.start_failure()) << a.start_failure()->evidence;
    ASSERT_FALSE(b.start_failure()) << b.start_failure()->evidence;
    Backend* both[] = {&a, &b};
    for (int round = 0; round < 2; ++round) {
      const CaseOutcome out = run_case(passthrough(), both, {});
      ASSERT_EQ(out.backends.size(), 2u);
      for (const BackendOutcome& o : out.backends) EXPECT_EQ(o.verdict.kind, VK::pass) << o.backend << ": " << o.verdict.detail;
    }
  }  // the processes have exited: their last log lines (written after each answer) are complete
  const auto la = read_log(dir / "a.log");
  const auto lb = read_log(dir / "b.log");
  ASSERT_EQ(la.size(), 2u);
  ASSERT_EQ(lb.size(), 2u);
  for (std::size_t k = 0; k < 2; ++k) {
    // Each case: the second backend had its request before the first one had answered, and the
    // other way round. Run one after the other, one interval would end before the other begins.
    EXPECT_LT(lb[k].begin, la[k].end) << "case " << k << ": b began only after a had answered";
    EXPECT_LT(la[k].begin, lb[k].end) << "case " << k << ": a began only after b had answered";
    EXPECT_EQ(la[k].id, lb[k].id);
  }
  // The next case is sent only after both answered this one: one request in flight per process.
  EXPECT_LT(la[0].end, la[1].begin);
  EXPECT_LT(lb[0].end, lb[1].begin);
  std::filesystem::remove_all(dir);
}

TEST(ProtocolAPipeline, AFaultOnOneBackendLeavesTheOthersVerdict) {
  const auto dir = scratch("fault");
  ProcessBackend hang(faulty_options("hang", 2));
  ProcessBackend crash(faulty_options("crash", 2));
  ProcessBackend fine(sleepy(dir / "fine.log", 0.2));
  Backend* all[] = {&hang, &fine, &crash};
  const CaseOutcome out = run_case(boom(), all, {});
  ASSERT_EQ(out.backends.size(), 3u);
  EXPECT_EQ(out.backends[0].verdict.kind, VK::timeout) << out.backends[0].verdict.detail;
  EXPECT_TRUE(contains(out.backends[0].verdict.detail, "no complete case response within 2 s")) << out.backends[0].verdict.detail;
  EXPECT_EQ(out.backends[1].verdict.kind, VK::pass) << out.backends[1].verdict.detail;
  EXPECT_EQ(out.backends[2].verdict.kind, VK::crash) << out.backends[2].verdict.detail;
  EXPECT_TRUE(contains(out.backends[2].verdict.detail, "SIGSEGV")) << out.backends[2].verdict.detail;
  // All three go on with the next case, the two faulty ones on restarted processes.
  const CaseOutcome next = run_case(passthrough(), all, {});
  for (const BackendOutcome& o : next.backends) EXPECT_EQ(o.verdict.kind, VK::pass) << o.backend << ": " << o.verdict.detail;
  EXPECT_EQ(hang.restarts(), 1);
  EXPECT_EQ(crash.restarts(), 1);
  EXPECT_EQ(fine.restarts(), 0);
  std::filesystem::remove_all(dir);
}

TEST(ProtocolAPipeline, AnInProcessBackendWritingItsInputsNeverReachesARequestInFlight) {
  // 8 MiB of input: more than a socket buffer holds, and the backend reads it only 0.3 s after the
  // request line, so most of it is still to be sent when the in-process writer runs (the reference
  // of `i -> i` takes milliseconds; an ordered backend needs no multiset).
  const auto dir = scratch("writer");
  ProcessBackend sleeper(sleepy(dir / "s.log", 0.3, "--late-payload --ordered"));
  ASSERT_EQ(sleeper.capabilities().semantics, Semantics::ordered);
  InputWriter writer;
  std::vector<double> values(std::size_t{1} << 20);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i % 1000) + 0.5;
  const Case c = f64_case("i -> i", values);
  Backend* both[] = {&sleeper, &writer};
  const CaseOutcome out = run_case(c, both, {});
  ASSERT_EQ(out.backends.size(), 2u);
  EXPECT_EQ(out.backends[0].verdict.kind, VK::pass_bitwise) << explain(out.backends[0].verdict);
  EXPECT_EQ(out.backends[1].verdict.kind, VK::input_modified) << out.backends[1].verdict.detail;
  std::filesystem::remove_all(dir);
}

TEST(ProtocolAPipeline, AnInProcessBackendWritingItsInputsNeverReachesTheJudgeOfARequestInFlight) {
  // An any-order answer is judged by the multiset oracle of the inputs as they were sent, although
  // the writer changed them before the answer was collected.
  const auto dir = scratch("writer-multiset");
  ProcessBackend sleeper(sleepy(dir / "s.log", 0.1));
  ASSERT_EQ(sleeper.capabilities().semantics, Semantics::any_order);
  InputWriter writer;
  Backend* both[] = {&sleeper, &writer};
  const CaseOutcome out = run_case(f64_case("i -> i", {0.5, 1.5, 2.5, 3.5}), both, {});
  ASSERT_EQ(out.backends.size(), 2u);
  EXPECT_EQ(out.backends[0].verdict.kind, VK::pass) << explain(out.backends[0].verdict);
  EXPECT_EQ(out.backends[1].verdict.kind, VK::input_modified) << out.backends[1].verdict.detail;
  std::filesystem::remove_all(dir);
}

TEST(ProtocolAPipeline, SubmitThenRunKeepsTheStreamInStep) {
  // A case submitted and never collected (its caller gave up) is waited for; the next exchange on
  // the process reads its own answer, not the dropped one.
  const auto dir = scratch("drop");
  {
    ProcessBackend b(sleepy(dir / "d.log", 0.1));
    b.submit(boom());
    const BackendResult r = b.run(passthrough());
    ASSERT_TRUE(std::holds_alternative<Tensor>(r));
    EXPECT_TRUE(bitwise_equal(std::get<Tensor>(r), passthrough().inputs[0]));
    b.submit(passthrough());
    b.submit(passthrough());
    EXPECT_TRUE(std::holds_alternative<Tensor>(b.collect()));
    EXPECT_EQ(b.restarts(), 0);
    b.submit(passthrough());  // in flight when the backend is destroyed: finished, then bye
  }
  EXPECT_EQ(read_log(dir / "d.log").size(), 5u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace einfuzz
