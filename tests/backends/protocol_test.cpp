// PROTOCOL A: every fault rule of PROTOCOL §4 as a verdict with its evidence (and the next case on
// the same backend still runs), and the wire format's subscripts and limits (PROTOCOL B, --isolate
// and layouts: protocol_plugin_test.cpp).
#include <gtest/gtest.h>

#include <thread>

#include <unistd.h>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "einfuzz/backends/plugin.hpp"
#include "einfuzz/backends/process.hpp"
#include "einfuzz/core/case.hpp"
#include "einfuzz/harness/backend_registry.hpp"
#include "einfuzz/harness/campaign.hpp"
#include "einfuzz/harness/check_command.hpp"
#include "einfuzz/harness/isolate.hpp"
#include "einfuzz/harness/run.hpp"
#include "support/values_text.hpp"
#include "support/protocol_cases.hpp"
#include "support/verdicts.hpp"

namespace einfuzz {
namespace {

using VK = VerdictKind;
using namespace test;

// ---------------------------------------------------------------------------------------------
// PROTOCOL A: every fault is a verdict, the next case runs on a restarted process

struct FaultRow {
  const char* mode;
  VK kind;
  const char* evidence;  ///< a fragment the verdict's detail must contain
};

void PrintTo(const FaultRow& row, std::ostream* os) { *os << row.mode; }

class ProcessFaults : public ::testing::TestWithParam<FaultRow> {};

TEST_P(ProcessFaults, BecomeAVerdictAndTheNextCaseRuns) {
  const FaultRow& row = GetParam();
  ProcessBackend backend(faulty_options(row.mode));
  ASSERT_FALSE(backend.start_failure()) << backend.start_failure()->evidence;
  EXPECT_EQ(test::run_on(passthrough(), backend).kind, VK::pass);

  const auto start = std::chrono::steady_clock::now();
  const Verdict v = test::run_on(boom(), backend);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(v.kind, row.kind) << v.label() << ": " << v.detail;
  EXPECT_TRUE(contains(v.detail, row.evidence)) << "evidence: " << v.detail;
  EXPECT_LT(seconds, 30) << "a fault must be decided within the timeout";

  // The campaign goes on: the same backend answers the next case (a fresh process when needed).
  const Verdict next = test::run_on(passthrough(), backend);
  EXPECT_EQ(next.kind, VK::pass) << next.label() << ": " << next.detail;
  if (row.kind != VK::pass && row.kind != VK::reject_disagree) {
    EXPECT_EQ(backend.restarts(), 1);
  }
}

INSTANTIATE_TEST_SUITE_P(
    ProtocolA, ProcessFaults,
    ::testing::Values(
        FaultRow{"crash", VK::crash, "SIGSEGV"},
        FaultRow{"exit", VK::crash, "exited with status 3"},
        FaultRow{"hang", VK::timeout, "no complete case response within 3 s"},
        FaultRow{"wrong-id", VK::crash, "wrong id: expected 2, got 3"},
        FaultRow{"no-id", VK::crash, "wrong id: expected 2, got none"},
        FaultRow{"short", VK::crash, "short payload: 12 of 24 announced bytes"},
        FaultRow{"short-exit", VK::crash, "short payload: 12 of 24 announced bytes"},
        FaultRow{"shape-bytes", VK::crash, "short payload: 24 of 32 announced bytes"},
        FaultRow{"long", VK::crash, "long payload: 8 bytes after the complete message"},
        // Two answers on the pipe together: the request that caused it is charged, the next runs.
        FaultRow{"double-one-write", VK::crash, "a second message: 64 bytes after the complete message"},
        FaultRow{"garbage", VK::crash, "protocol violation: malformed JSON"},
        FaultRow{"not-object", VK::crash, "not a JSON object"},
        FaultRow{"bad-status", VK::crash, "unknown status \"maybe\""},
        FaultRow{"huge", VK::crash, "huge shape [1099511627776,1099511627776]"},
        // Within the limits, but 2^24 elements for a 3-element output: refused before anything is
        // allocated for it (the limits alone allowed 128 MiB here, 2 GiB at most).
        FaultRow{"huge-answer", VK::crash, "an answer of 16777216 elements (shape 16777216) to a case whose answer has 3"},
        // Was judged mismatch(shape), its detail the 300000 lengths written out (600 kB).
        FaultRow{"deep-rank", VK::crash, "an answer of rank 300000 to a case no answer to which has more than 64"},
        FaultRow{"non-utf8", VK::crash, "not UTF-8"},
        FaultRow{"deep-json", VK::crash, "nested deeper than"},
        FaultRow{"flood-stdout", VK::crash, "output flooding"},
        FaultRow{"flood-stderr-forever", VK::timeout, "yyyyyyyy"},
        // 20 MiB of stderr, then a correct answer: drained into the ring buffer, nothing blocks.
        FaultRow{"flood-stderr", VK::pass, ""},
        // Its own rejection with a code the reference does not give: a disagreement, not a fault.
        FaultRow{"error", VK::reject_disagree, "faulty rejects"}),
    [](const auto& p) {
      std::string s = p.param.mode;
      for (char& c : s) c = c == '-' ? '_' : c;
      return s;
    });

TEST(ProtocolA, CrashEvidenceQuotesTheLastStderrLines) {
  ProcessBackend backend(faulty_options("crash"));
  const Verdict v = test::run_on(boom(), backend);
  EXPECT_EQ(v.kind, VK::crash);
  EXPECT_TRUE(contains(v.detail, "faulty: about to crash | faulty: segfault now")) << v.detail;
}

TEST(ProtocolA, AFloodedStderrRingKeepsOnlyTheTail) {
  ProcessBackend backend(faulty_options("flood-stderr-forever", 2));
  const Verdict v = test::run_on(boom(), backend);
  EXPECT_EQ(v.kind, VK::timeout);
  EXPECT_LT(v.detail.size(), 4000u) << "the evidence is bounded whatever the backend writes";
  EXPECT_TRUE(contains(v.detail, "bytes in all")) << v.detail;
}

TEST(ProtocolA, AFailedHelloIsACrashOnEveryCaseNotAHang) {
  for (const auto& [mode, evidence] :
       std::vector<std::pair<std::string, std::string>>{{"hello-garbage", "hello failed: malformed JSON"},
                                                        {"hello-exit", "missing licence file"},
                                                        {"hello-wrong-protocol", "\"protocol\" must be"}}) {
    ProcessBackend backend(faulty_options(mode));
    ASSERT_TRUE(backend.start_failure()) << mode;
    for (int i = 0; i < 2; ++i) {
      const Verdict v = test::run_on(passthrough(), backend);
      EXPECT_EQ(v.kind, VK::crash) << mode;
      EXPECT_EQ(v.label(), "crash(start)") << mode << ": no case caused it";
      EXPECT_TRUE(contains(v.detail, evidence)) << mode << ": " << v.detail;
    }
  }
}

// A backend whose hello fails fails every case it is given alike: a campaign shrinks it once and
// reports one group, `NAME | crash(start)`, however many cases and shapes it met.
TEST(ProtocolA, ABackendThatCannotStartIsOneGroupInACampaign) {
  CampaignOptions o;
  o.cases = 40;
  o.seed = 1;
  o.store = false;
  o.progress_interval = 3600;
  o.gen.dtypes = {DType::f64};
  o.gen.reduce_percent = 0;
  auto result = run_campaign(o, []() -> Result<std::vector<std::unique_ptr<Backend>>> {
    std::vector<std::unique_ptr<Backend>> out;
    out.push_back(std::make_unique<ProcessBackend>(faulty_options("hello-wrong-protocol")));
    return out;
  });
  ASSERT_TRUE(result.ok()) << render(result.error());
  ASSERT_GT(result->failures, 5u) << "the cases it was given";
  ASSERT_EQ(result->findings.size(), 1u);
  EXPECT_EQ(result->findings[0].signature, "faulty-hello-wrong-protocol | crash(start)");
  EXPECT_EQ(result->findings[0].count + result->unshrunk + result->unconfirmed, result->failures);
}

// A hello that does not come within its timeout is as much a start failure: `timeout(start)` on every
// case, one group. Before, each case was a plain `timeout`, a group per op, dtype and pattern kind.
TEST(ProtocolA, AHelloThatNeverComesIsOneStartTimeoutGroup) {
  ProcessOptions p = faulty_options("hello-hang", 0.3);
  p.hello_timeout_seconds = 0.3;
  {
    ProcessBackend backend(p);
    const Verdict v = test::run_on(passthrough(), backend);
    EXPECT_EQ(v.label(), "timeout(start)") << v.detail;
    EXPECT_TRUE(contains(v.detail, "hello")) << v.detail;
  }
  CampaignOptions o;
  o.cases = 6;
  o.seed = 1;
  o.store = false;
  o.progress_interval = 3600;
  o.shrink.max_seconds = 1;
  o.gen.dtypes = {DType::f64};  // what a backend without a hello is taken to declare
  o.gen.reduce_percent = 0;
  auto result = run_campaign(o, [&]() -> Result<std::vector<std::unique_ptr<Backend>>> {
    std::vector<std::unique_ptr<Backend>> out;
    out.push_back(std::make_unique<ProcessBackend>(p));
    return out;
  });
  ASSERT_TRUE(result.ok()) << render(result.error());
  ASSERT_GT(result->failures, 2u);
  ASSERT_EQ(result->findings.size(), 1u);
  EXPECT_EQ(result->findings[0].signature, "faulty-hello-hang | timeout(start)");
}

TEST(ProtocolA, AMissingCommandIsACrashWithTheShellsMessage) {
  ProcessOptions o;
  o.command = "/nonexistent/einfuzz-backend --flag";
  ProcessBackend backend(o);
  const Verdict v = test::run_on(passthrough(), backend);
  EXPECT_EQ(v.kind, VK::crash);
  EXPECT_TRUE(contains(v.detail, "exited with status 127")) << v.detail;
  EXPECT_TRUE(contains(v.detail, "not found")) << v.detail;
}

TEST(ProtocolA, HelloDefaultsAndCapabilities) {
  ProcessBackend backend(faulty_options("none"));
  const Capabilities& c = backend.capabilities();
  EXPECT_EQ(c.ops, std::vector<Op>{Op::einsum});           // default
  EXPECT_EQ(c.dtypes, std::vector<DType>{DType::f64});      // declared
  EXPECT_TRUE(c.reductions.empty());                        // default
  EXPECT_EQ(c.semantics, Semantics::any_order);             // default
  EXPECT_EQ(c.nan_profile, NanProfile::propagate);          // default
  EXPECT_TRUE(c.factoring);                                 // default
  EXPECT_FALSE(c.strided_inputs);                           // default
  EXPECT_EQ(backend.notation(), "einops");
  EXPECT_EQ(c.version, "faulty none");
  // Outside the declared dtypes: never sent, `unsupported`.
  Case c32 = passthrough();
  c32.dtype = DType::f32;
  c32.inputs = {Tensor(Shape{2}, std::vector<float>{1, 2})};
  EXPECT_EQ(test::run_on(c32, backend).kind, VK::unsupported);
}

TEST(ProtocolA, ManyCasesOnOneProcess) {
  ProcessBackend backend(faulty_options("none"));
  const int pid = backend.pid();
  for (int i = 0; i < 50; ++i) EXPECT_EQ(test::run_on(passthrough(), backend).kind, VK::pass);
  EXPECT_EQ(backend.pid(), pid) << "kept alive across cases";
  EXPECT_EQ(backend.restarts(), 0);
}

TEST(ProtocolA, SubscriptsRenameLabelsInFirstAppearanceOrder) {
  EXPECT_EQ(numpy_subscripts("b i j, b j k -> b i k"), "abc,acd->abd");
  EXPECT_EQ(numpy_subscripts("batch inner, inner out -> batch out"), "ab,bc->ac");
  EXPECT_EQ(numpy_subscripts("... i, ... j -> i j"), "...a,...b->ab");
  EXPECT_EQ(numpy_subscripts("(a) b -> a"), "ab->a");
  EXPECT_EQ(numpy_subscripts("a (b 1) -> a"), "ab->a");
  EXPECT_EQ(numpy_subscripts(", ->"), ",->");
  EXPECT_EQ(numpy_subscripts("a -> b"), "a->b");  // the backend decides what that means
  EXPECT_EQ(numpy_subscripts("(a b) -> a"), std::nullopt);
  EXPECT_EQ(numpy_subscripts("1 a -> a"), std::nullopt);
  EXPECT_EQ(numpy_subscripts("a b"), std::nullopt);
  std::string many;
  for (int i = 0; i < 53; ++i) many += "x" + std::to_string(i) + " ";
  EXPECT_EQ(numpy_subscripts(many + "->"), std::nullopt);
  many.clear();
  for (int i = 0; i < 52; ++i) many += "x" + std::to_string(i) + " ";
  EXPECT_EQ(numpy_subscripts(many + "-> x51 x0")->substr(52), "->Za");
}

std::optional<std::string> subscripts(std::string_view pattern, std::vector<Shape> shapes) {
  return numpy_subscripts(pattern, shapes);
}

// An ellipsis the output omits is summed (SEMANTICS §3) and numpy rejects `...->` there: each
// ellipsis dimension becomes a label, right-aligned over the operands (issue 10, item 3).
TEST(ProtocolA, SubscriptsSpellASummedEllipsisAsLabels) {
  // The output keeps the ellipsis: numpy's rule agrees, `...` is kept whatever the shapes.
  EXPECT_EQ(subscripts("... i -> ...", {{2, 3}}), "...a->...");
  EXPECT_EQ(subscripts("o i, ... i -> ... o", {{2, 3}, {2, 3}}), "ab,...b->...a");
  EXPECT_EQ(subscripts("... i, ... i -> ... i", {{2, 1, 2}, {3, 2}}), "...a,...a->...a");
  // Summed: one label per ellipsis dimension, in first-appearance order with the names.
  EXPECT_EQ(subscripts("... ->", {{2, 3}}), "ab->");
  EXPECT_EQ(subscripts("... i -> i", {{2, 3}}), "ab->b");
  EXPECT_EQ(subscripts("i ... -> i", {{4, 2, 3}}), "abc->a");
  // Different ellipsis ranks, right-aligned: operand 0's one slot is operand 1's second (SEMANTICS
  // §5's example, G = [E1, i, E0, j]).
  EXPECT_EQ(subscripts("... i, ... j -> i j", {{3, 1}, {2, 3, 1}}), "ab,cad->bd");
  // Broadcasting a length-1 slot against the other operand's: the same label on both.
  EXPECT_EQ(subscripts("..., ... ->", {{1, 5}, {4, 5}}), "ab,ab->");
  EXPECT_EQ(subscripts("..., ... ->", {{5}, {4, 5}}), "a,ba->");
  // An operand without an ellipsis, one whose ellipsis is empty, and rank 0.
  EXPECT_EQ(subscripts("i, ... i -> i", {{3}, {2, 3}}), "a,ba->a");
  EXPECT_EQ(subscripts("... i -> i", {{3}}), "a->a");
  EXPECT_EQ(subscripts("... ->", {{}}), "->");
  EXPECT_EQ(subscripts(", ... ->", {{}, {2}}), ",a->");
  // No ellipsis rank to align (rank below the named items, wrong operand count): `...` is kept
  // and the backend rejects the case, as the checker does.
  EXPECT_EQ(subscripts("a b ... -> a", {{2}}), "ab...->a");
  EXPECT_EQ(subscripts("... i -> i", {}), "...a->a");
  EXPECT_EQ(numpy_subscripts("... i -> i"), "...a->a");  // without shapes (torch sums it itself)
  // Slots count towards the 52 labels.
  std::string names;
  for (int i = 0; i < 50; ++i) names += "x" + std::to_string(i) + " ";
  EXPECT_EQ(subscripts(names + "... ->", {Shape(52, 1)})->size(), 54u);
  EXPECT_EQ(subscripts(names + "... ->", {Shape(53, 1)}), std::nullopt);
}

// A second answer that reaches the harness only after the first was returned (issue 10, item 12):
// never charged to the next case, which runs clean on a restarted process; the fault is recorded
// against the request it followed.
TEST(ProtocolA, ASecondAnswerArrivingLateIsChargedToItsRequestNotTheNextCase) {
  ProcessBackend backend(faulty_options("double-late"));
  ASSERT_FALSE(backend.start_failure()) << backend.start_failure()->evidence;
  EXPECT_EQ(test::run_on(passthrough(), backend).kind, VK::pass);  // request 1
  // Request 2: its answer is complete and correct when read; the copy comes with request 3.
  EXPECT_EQ(test::run_on(boom(), backend).kind, VK::pass);
  const Verdict next = test::run_on(passthrough(), backend);
  EXPECT_EQ(next.kind, VK::pass) << next.label() << ": " << next.detail;
  ASSERT_EQ(backend.late_faults().size(), 1u);
  const LateFault& late = backend.late_faults()[0];
  EXPECT_EQ(late.request, 2);
  EXPECT_EQ(late.pattern, "boom -> boom");
  EXPECT_EQ(late.fault.kind, FaultKind::protocol);
  EXPECT_TRUE(contains(late.fault.evidence, "a second response to request 2")) << late.fault.evidence;
  EXPECT_EQ(backend.restarts(), 1);
  EXPECT_EQ(test::run_on(passthrough(), backend).kind, VK::pass);
}

// A second answer to the last case, sent after the harness read the first: found when the backend is
// told bye (finish), charged to that case by the one-case commands, handed out once.
TEST(ProtocolA, ASecondAnswerToTheLastCaseIsFoundOnByeAndChargedToIt) {
  ProcessBackend backend(faulty_options("double-slow"));
  ASSERT_FALSE(backend.start_failure()) << backend.start_failure()->evidence;
  const Case c = boom();
  Backend* list[] = {&backend};
  CaseOutcome outcome = run_case(c, list, {});
  ASSERT_EQ(outcome.backends.at(0).verdict.kind, VK::pass) << outcome.backends[0].verdict.detail;
  EXPECT_TRUE(backend.take_late_faults().empty());
  EXPECT_EQ(finish_and_charge_late_faults(outcome, list, c), 1);
  const Verdict& v = outcome.backends[0].verdict;
  EXPECT_EQ(v.kind, VK::crash);
  EXPECT_TRUE(contains(v.detail, "protocol violation after the complete answer")) << v.detail;
  EXPECT_TRUE(contains(v.detail, "after the complete response to request 1, before it exited on bye")) << v.detail;
  ASSERT_EQ(backend.late_faults().size(), 1u);
  ASSERT_TRUE(backend.late_faults()[0].late_case.has_value());
  EXPECT_EQ(backend.late_faults()[0].late_case->pattern, "boom -> boom");
  EXPECT_TRUE(backend.take_late_faults().empty());  // handed out once
  // The next case starts the process again and is not charged.
  EXPECT_EQ(test::run_on(passthrough(), backend).kind, VK::pass);
  // A backend that answers once is never charged.
  ProcessBackend good(faulty_options("none"));
  Backend* good_list[] = {&good};
  CaseOutcome clean = run_case(c, good_list, {});
  EXPECT_EQ(finish_and_charge_late_faults(clean, good_list, c), 0);
  EXPECT_TRUE(good.late_faults().empty());
}

// A second hello is the hello's fault wherever the pipe puts it: read together with the first
// (one write), waiting on the pipe before the first case, or in place of the first answer. The
// case it surfaced on is answered and passes; the fault is recorded against the hello (request 0)
// with that case, so `check` of that case charges it, and the next case is not charged.
TEST(ProtocolA, ASecondHelloIsTheHellosFaultWhereverItArrives) {
  for (const std::string mode : {"hello-twice", "hello-twice-later", "hello-twice-on-request"}) {
    ProcessBackend backend(faulty_options(mode));
    ASSERT_FALSE(backend.start_failure()) << mode << ": " << backend.start_failure()->evidence;
    // The later hello comes 0.2 s after the first: on the pipe before the first request.
    if (mode == "hello-twice-later") std::this_thread::sleep_for(std::chrono::milliseconds(600));
    const Case c = passthrough();
    Backend* list[] = {&backend};
    CaseOutcome outcome = run_case(c, list, {});
    ASSERT_EQ(outcome.backends.at(0).verdict.kind, VK::pass) << mode << ": " << outcome.backends[0].verdict.detail;
    EXPECT_GE(finish_and_charge_late_faults(outcome, list, c), 1) << mode;
    const Verdict& v = outcome.backends[0].verdict;
    EXPECT_EQ(v.kind, VK::crash) << mode;
    EXPECT_TRUE(contains(v.detail, "hello")) << mode << ": " << v.detail;
    ASSERT_FALSE(backend.late_faults().empty()) << mode;
    for (const LateFault& f : backend.late_faults()) {
      EXPECT_EQ(f.request, 0) << mode << ": " << f.fault.evidence;
      ASSERT_TRUE(f.late_case.has_value()) << mode;
      EXPECT_EQ(f.late_case->pattern, c.pattern) << mode;
    }
    const Verdict next = test::run_on(passthrough(), backend);
    EXPECT_EQ(next.kind, VK::pass) << mode << ": " << next.label() << ": " << next.detail;
  }
}

// Nothing a backend sends makes the harness keep without bound: 500 hello lines in place of one
// answer are one late fault (each would hold a copy of the case), and the answer after them is read.
TEST(ProtocolA, AFloodOfHellosIsOneLateFault) {
  ProcessBackend backend(faulty_options("hello-flood-on-request"));
  ASSERT_FALSE(backend.start_failure()) << backend.start_failure()->evidence;
  EXPECT_EQ(test::run_on(passthrough(), backend).kind, VK::pass);
  const std::vector<LateFault> late = backend.take_late_faults();
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late[0].request, 0);
}

// Two answers written one after the other: the second is seen either right after the first (the
// boom case is charged) or before the next request (recorded against the boom request); which one
// depends on scheduling, but the next case is never charged and exactly one fault is recorded.
TEST(ProtocolA, TwoAnswersToOneRequestNeverChargeTheNextCase) {
  for (int round = 0; round < 5; ++round) {
    ProcessBackend backend(faulty_options("double"));
    ASSERT_FALSE(backend.start_failure()) << backend.start_failure()->evidence;
    const Verdict a = test::run_on(boom(), backend);
    const Verdict b = test::run_on(passthrough(), backend);
    EXPECT_EQ(b.kind, VK::pass) << b.label() << ": " << b.detail;
    if (a.kind == VK::pass) {
      ASSERT_EQ(backend.late_faults().size(), 1u);
      EXPECT_EQ(backend.late_faults()[0].request, 1);
      EXPECT_EQ(backend.late_faults()[0].pattern, "boom -> boom");
    } else {
      EXPECT_EQ(a.kind, VK::crash);
      EXPECT_TRUE(contains(a.detail, "a second message")) << a.detail;
      EXPECT_TRUE(backend.late_faults().empty());
    }
    EXPECT_EQ(backend.restarts(), 1);
  }
}

// PROTOCOL A §2: a case the wire cannot describe is not sent (issue 10, item 2). The trap backend
// declares reduce and exits on any reduce request, so a restart would show that one was sent.
TEST(ProtocolA, CasesTheWireCannotCarryAreUnsupportedAndNeverSent) {
  ProcessBackend backend(faulty_options("reduce-trap"));
  ASSERT_FALSE(backend.start_failure()) << backend.start_failure()->evidence;
  ASSERT_EQ(backend.capabilities().ops, (std::vector<Op>{Op::einsum, Op::reduce}));
  const int pid = backend.pid();
  Case repeated;
  repeated.op = Op::reduce;
  repeated.pattern = "(a b) -> a";
  repeated.reduction = "sum";
  repeated.axis_lengths = {{"b", 2}, {"b", 2}};
  repeated.inputs.emplace_back(Shape{4}, std::vector<double>{1, 2, 3, 4});
  const Verdict v = test::run_on(repeated, backend);
  EXPECT_EQ(v.kind, VK::unsupported) << v.label() << ": " << v.detail;
  EXPECT_TRUE(contains(v.detail, "repeat the name \"b\"")) << v.detail;

  Case two_inputs = repeated;
  two_inputs.axis_lengths = {{"b", 2}};
  two_inputs.inputs.push_back(two_inputs.inputs[0]);
  const BackendResult r = backend.run(two_inputs);
  ASSERT_TRUE(std::holds_alternative<Unsupported>(r));
  EXPECT_TRUE(contains(std::get<Unsupported>(r).message, "exactly one input and this case has 2"))
      << std::get<Unsupported>(r).message;

  // Nothing reached the process: it is the same one, and the next case runs on it.
  EXPECT_EQ(test::run_on(passthrough(), backend).kind, VK::pass);
  EXPECT_EQ(backend.pid(), pid);
  EXPECT_EQ(backend.restarts(), 0);
  // The trap is real: a describable reduce is sent, and the backend dies of it.
  Case describable = two_inputs;
  describable.inputs.pop_back();
  EXPECT_EQ(test::run_on(describable, backend).kind, VK::crash);
}

TEST(ProtocolA, Utf8Validation) {
  EXPECT_TRUE(is_valid_utf8("plain ascii"));
  EXPECT_TRUE(is_valid_utf8("\xce\xb1 \xe2\x80\xa6 \xf0\x9f\x98\x80"));
  EXPECT_FALSE(is_valid_utf8("\xff"));
  EXPECT_FALSE(is_valid_utf8("\xc0\xaf"));          // overlong
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));      // surrogate
  EXPECT_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // > U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\xe2\x80"));          // truncated
}


}  // namespace
}  // namespace einfuzz
