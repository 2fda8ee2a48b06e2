// PROTOCOL A and B, isolation and layouts: every fault rule of PROTOCOL §4 as a verdict with its
// evidence (and the next case on the same backend still runs), plugins that crash, hang, allocate
// without bound or write their inputs, --isolate, the layout extension of the case format.
#include <gtest/gtest.h>

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
#include "einfuzz/harness/check_command.hpp"
#include "einfuzz/harness/isolate.hpp"
#include "einfuzz/harness/run.hpp"
#include "support/values_text.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define EINFUZZ_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EINFUZZ_TEST_ASAN 1
#endif
#endif

namespace einfuzz {
namespace {

using VK = VerdictKind;

const std::filesystem::path kSource = EINFUZZ_SOURCE_DIR;

/// A python3 for the faulty backend (no numpy needed): Debian's if present (a pyenv shim on PATH
/// starts slowly), else whatever the shell finds.
std::string python() { return ::access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3"; }

ProcessOptions faulty_options(const std::string& mode, double timeout = 3) {
  ProcessOptions o;
  o.command = python() + " " + shell_quote((kSource / "tests/backends/faulty/faulty_backend.py").string()) + " " + mode;
  o.name = "faulty-" + mode;
  o.timeout_seconds = timeout;
  return o;
}

Case f64_case(const std::string& pattern, const std::vector<double>& values) {
  Case c;
  c.pattern = pattern;
  c.dtype = DType::f64;
  c.inputs.emplace_back(Shape{static_cast<std::int64_t>(values.size())}, values);
  return c;
}

/// What the faulty backends answer correctly: a passthrough.
Case passthrough() { return f64_case("i -> i", {1, 2, 3}); }
/// What makes them misbehave.
Case boom() { return f64_case("boom -> boom", {1, 2, 3}); }

Verdict run_on(const Case& c, Backend& backend, const RunOptions& options = {}) {
  Backend* list[] = {&backend};
  return run_case(c, list, options).backends.at(0).verdict;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

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
  EXPECT_EQ(run_on(passthrough(), backend).kind, VK::pass);

  const auto start = std::chrono::steady_clock::now();
  const Verdict v = run_on(boom(), backend);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(v.kind, row.kind) << v.label() << ": " << v.detail;
  EXPECT_TRUE(contains(v.detail, row.evidence)) << "evidence: " << v.detail;
  EXPECT_LT(seconds, 30) << "a fault must be decided within the timeout";

  // The campaign goes on: the same backend answers the next case (a fresh process when needed).
  const Verdict next = run_on(passthrough(), backend);
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
  const Verdict v = run_on(boom(), backend);
  EXPECT_EQ(v.kind, VK::crash);
  EXPECT_TRUE(contains(v.detail, "faulty: about to crash | faulty: segfault now")) << v.detail;
}

TEST(ProtocolA, AFloodedStderrRingKeepsOnlyTheTail) {
  ProcessBackend backend(faulty_options("flood-stderr-forever", 2));
  const Verdict v = run_on(boom(), backend);
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
      const Verdict v = run_on(passthrough(), backend);
      EXPECT_EQ(v.kind, VK::crash) << mode;
      EXPECT_TRUE(contains(v.detail, evidence)) << mode << ": " << v.detail;
    }
  }
}

TEST(ProtocolA, AMissingCommandIsACrashWithTheShellsMessage) {
  ProcessOptions o;
  o.command = "/nonexistent/einfuzz-backend --flag";
  ProcessBackend backend(o);
  const Verdict v = run_on(passthrough(), backend);
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
  EXPECT_EQ(run_on(c32, backend).kind, VK::unsupported);
}

TEST(ProtocolA, ManyCasesOnOneProcess) {
  ProcessBackend backend(faulty_options("none"));
  const int pid = backend.pid();
  for (int i = 0; i < 50; ++i) EXPECT_EQ(run_on(passthrough(), backend).kind, VK::pass);
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
  EXPECT_EQ(run_on(passthrough(), backend).kind, VK::pass);  // request 1
  // Request 2: its answer is complete and correct when read; the copy comes with request 3.
  EXPECT_EQ(run_on(boom(), backend).kind, VK::pass);
  const Verdict next = run_on(passthrough(), backend);
  EXPECT_EQ(next.kind, VK::pass) << next.label() << ": " << next.detail;
  ASSERT_EQ(backend.late_faults().size(), 1u);
  const LateFault& late = backend.late_faults()[0];
  EXPECT_EQ(late.request, 2);
  EXPECT_EQ(late.pattern, "boom -> boom");
  EXPECT_EQ(late.fault.kind, FaultKind::protocol);
  EXPECT_TRUE(contains(late.fault.evidence, "a second response to request 2")) << late.fault.evidence;
  EXPECT_EQ(backend.restarts(), 1);
  EXPECT_EQ(run_on(passthrough(), backend).kind, VK::pass);
}

// Two answers written one after the other: the second is seen either right after the first (the
// boom case is charged) or before the next request (recorded against the boom request); which one
// depends on scheduling, but the next case is never charged and exactly one fault is recorded.
TEST(ProtocolA, TwoAnswersToOneRequestNeverChargeTheNextCase) {
  for (int round = 0; round < 5; ++round) {
    ProcessBackend backend(faulty_options("double"));
    ASSERT_FALSE(backend.start_failure()) << backend.start_failure()->evidence;
    const Verdict a = run_on(boom(), backend);
    const Verdict b = run_on(passthrough(), backend);
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
  const Verdict v = run_on(repeated, backend);
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
  EXPECT_EQ(run_on(passthrough(), backend).kind, VK::pass);
  EXPECT_EQ(backend.pid(), pid);
  EXPECT_EQ(backend.restarts(), 0);
  // The trap is real: a describable reduce is sent, and the backend dies of it.
  Case describable = two_inputs;
  describable.inputs.pop_back();
  EXPECT_EQ(run_on(describable, backend).kind, VK::crash);
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

// ---------------------------------------------------------------------------------------------
// PROTOCOL B: the example plugin, faulty plugins, loading errors

std::unique_ptr<Backend> plugin(const char* path) {
  PluginOptions o;
  o.path = path;
  auto b = load_plugin_backend(o);
  EXPECT_TRUE(b.ok()) << (b.ok() ? "" : b.error().message);
  return b.ok() ? std::move(*b) : nullptr;
}

TEST(ProtocolB, ExamplePluginComputesAndDeclares) {
  auto b = plugin(EINFUZZ_EXAMPLE_PLUGIN);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->capabilities().version, "example-c einsum 1.0");
  EXPECT_FALSE(b->capabilities().factoring);
  Case c;
  c.pattern = "a b, b c -> a c";
  c.inputs = {test::tensor_from_text(DType::f64, {2, 3}, "1..6"), test::tensor_from_text(DType::f64, {3, 2}, "1,0,0,1,1,1")};
  const BackendResult r = b->run(c);
  ASSERT_TRUE(std::holds_alternative<Tensor>(r));
  EXPECT_TRUE(bitwise_equal(std::get<Tensor>(r), test::tensor_from_text(DType::f64, {2, 2}, "4,5,10,11")));
  EXPECT_EQ(run_on(c, *b).kind, VK::pass);
  c.pattern = "... i -> i";
  EXPECT_EQ(run_on(c, *b).kind, VK::unsupported);
}

struct PluginRow {
  const char* label;  ///< the pattern's first label selects the misbehaviour
  VK kind;
  const char* evidence;
};
void PrintTo(const PluginRow& row, std::ostream* os) { *os << row.label; }

class PluginFaults : public ::testing::TestWithParam<PluginRow> {};

TEST_P(PluginFaults, InProcessBecomeVerdicts) {
  auto b = plugin(EINFUZZ_FAULTY_PLUGIN);
  ASSERT_NE(b, nullptr);
  const std::string label = GetParam().label;
  const Verdict v = run_on(f64_case(label + " -> " + label, {1, 2, 3}), *b);
  EXPECT_EQ(v.kind, GetParam().kind) << v.label() << ": " << v.detail;
  EXPECT_TRUE(contains(v.detail, GetParam().evidence)) << v.detail;
  EXPECT_EQ(run_on(passthrough(), *b).kind, VK::pass);
}

INSTANTIATE_TEST_SUITE_P(ProtocolB, PluginFaults,
                         ::testing::Values(PluginRow{"write", VK::input_modified, "wrote to its inputs"},
                                           PluginRow{"twice", VK::crash, "alloc_output was called a second time"},
                                           PluginRow{"noout", VK::crash, "without calling alloc_output"},
                                           PluginRow{"huge", VK::crash, "huge shape 1099511627776x1099511627776"},
                                           PluginRow{"badstatus", VK::crash, "unknown status 42"}),
                         [](const auto& p) { return std::string(p.param.label); });

TEST(ProtocolB, LoadingErrorsAreBadInput) {
  PluginOptions o;
  o.path = "/nonexistent/libnothing.so";
  auto missing = load_plugin_backend(o);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, Code::invalidArgument);
  EXPECT_TRUE(contains(missing.error().message, "cannot load it")) << missing.error().message;
  o.path = EINFUZZ_BAD_ABI_PLUGIN;
  auto bad_abi = load_plugin_backend(o);
  ASSERT_FALSE(bad_abi.ok());
  EXPECT_TRUE(contains(bad_abi.error().message, "ABI version 99, this harness speaks version 1"))
      << bad_abi.error().message;
  const std::vector<std::string> specs = {std::string("plugin:") + EINFUZZ_BAD_ABI_PLUGIN};
  auto via_specs = make_backends(specs, RunOptions{});
  ASSERT_FALSE(via_specs.ok());
  EXPECT_EQ(via_specs.error().code, Code::invalidArgument);
}

// ---------------------------------------------------------------------------------------------
// --isolate: crashes, hangs, runaway allocations and input writes in a forked worker

IsolateOptions quick_isolation() {
  IsolateOptions o;
  o.timeout_seconds = 3;
  o.address_space_bytes = std::uint64_t{2} << 30;
  return o;
}

class IsolatedPluginFaults : public ::testing::TestWithParam<PluginRow> {};

TEST_P(IsolatedPluginFaults, BecomeVerdictsAndTheHarnessLives) {
  const std::string label = GetParam().label;
#ifdef EINFUZZ_TEST_ASAN
  if (label == "alloc") GTEST_SKIP() << "RLIMIT_AS is not applied under AddressSanitizer (its shadow needs TiBs)";
#endif
  auto b = isolate_backend(plugin(EINFUZZ_FAULTY_PLUGIN), quick_isolation());
  const Verdict v = run_on(f64_case(label + " -> " + label, {1, 2, 3}), *b);
  EXPECT_EQ(v.kind, GetParam().kind) << v.label() << ": " << v.detail;
  EXPECT_TRUE(contains(v.detail, GetParam().evidence)) << v.detail;
  EXPECT_EQ(run_on(passthrough(), *b).kind, VK::pass);
}

std::vector<PluginRow> isolated_rows() {
#ifdef EINFUZZ_TEST_ASAN
  // ASan's SEGV handler reports and exits instead of dying by the signal.
  const PluginRow segv{"segv", VK::crash, "without a complete result"};
#else
  const PluginRow segv{"segv", VK::crash, "killed by signal 11 (SIGSEGV)"};
#endif
  return {segv,
          PluginRow{"hang", VK::timeout, "no result within 3 s"},
          PluginRow{"alloc", VK::crash, "address-space limit 2048 MiB"},
          PluginRow{"write", VK::input_modified, "wrote to its inputs"},
          PluginRow{"twice", VK::crash, "second time"}};
}

INSTANTIATE_TEST_SUITE_P(
    Isolate, IsolatedPluginFaults, ::testing::ValuesIn(isolated_rows()),
    [](const auto& p) { return std::string(p.param.label); });

/// A C++ backend that misbehaves in the ways --isolate is for.
class WildBackend final : public Backend {
 public:
  std::string_view name() const override { return "wild"; }
  const Capabilities& capabilities() const override { return caps_; }
  BackendResult run(const Case& c) override {
    if (c.pattern == "abort -> abort") std::abort();
    if (c.pattern == "grab -> grab") {
      // 64 GiB of address space, untouched (fast): what RLIMIT_AS bounds.
      std::vector<std::unique_ptr<char[]>> hoard;
      for (int i = 0; i < 256; ++i) hoard.emplace_back(new char[std::size_t{256} << 20]);
      return Unsupported{"unreachable"};
    }
    if (c.pattern == "throw -> throw") throw std::runtime_error("wild: no such thing");
    if (c.pattern == "write -> write") const_cast<double*>(c.inputs[0].values<double>().data())[0] = 7;
    ++calls_;
    return c.inputs.at(0);
  }
  int calls() const { return calls_; }

 private:
  Capabilities caps_;
  int calls_ = 0;
};

TEST(Isolate, CppBackendsCrashHangAndThrowInTheWorker) {
  auto owned = std::make_unique<WildBackend>();
  WildBackend* wild = owned.get();
  auto b = isolate_backend(std::move(owned), quick_isolation());
  EXPECT_EQ(b->name(), "wild");
  Verdict v = run_on(f64_case("abort -> abort", {1}), *b);
  EXPECT_EQ(v.kind, VK::crash);
  EXPECT_TRUE(contains(v.detail, "SIGABRT")) << v.detail;
  v = run_on(f64_case("throw -> throw", {1}), *b);
  EXPECT_EQ(v.kind, VK::crash);
  EXPECT_TRUE(contains(v.detail, "the backend threw: wild: no such thing")) << v.detail;
  v = run_on(f64_case("write -> write", {1}), *b);
  EXPECT_EQ(v.kind, VK::input_modified) << v.detail;
  EXPECT_EQ(run_on(passthrough(), *b).kind, VK::pass);
  EXPECT_EQ(wild->calls(), 0) << "every call ran in a worker, never in this process";
#ifndef EINFUZZ_TEST_ASAN
  v = run_on(f64_case("grab -> grab", {1}), *b);
  EXPECT_EQ(v.kind, VK::crash);
  EXPECT_TRUE(contains(v.detail, "out of memory (std::bad_alloc)")) << v.detail;
#endif
}

TEST(Isolate, ResultsComeBackBitForBit) {
  auto fused = isolate_backend(make_builtin_backend("fused", RunOptions{}), quick_isolation());
  Case c;
  c.pattern = "a b, b c -> a c";
  c.inputs = {test::tensor_from_text(DType::f64, {2, 3}, "1..6"), test::tensor_from_text(DType::f64, {3, 2}, "1,0,0,1,1,1")};
  EXPECT_EQ(run_on(c, *fused).kind, VK::pass_bitwise);
  c.pattern = "a b, b -> a";  // the reference rejects: so does the isolated fused, with its code
  EXPECT_EQ(run_on(c, *fused).kind, VK::pass);
}

TEST(Isolate, ProcessBackendsAreAlreadyIsolated) {
  auto process = make_process_backend(faulty_options("none"));
  Backend* raw = process.get();
  auto same = isolate_backend(std::move(process), quick_isolation());
  EXPECT_EQ(same.get(), raw);
}

// ---------------------------------------------------------------------------------------------
// `einfuzz check` with several kinds of backend: one table of verdicts

TEST(CheckCommand, OneTableForCmdPluginAndIsolatedBackends) {
  const std::string script = (kSource / "tests/backends/faulty/faulty_backend.py").string();
  CheckCommand cmd;
  cmd.pattern = "boom -> boom";
  cmd.shapes = "3";
  cmd.values = "iota";
  cmd.backends = {"fused", "cmd:" + python() + " " + script + " crash", "cmd:" + python() + " " + script + " none",
                  std::string("plugin:") + EINFUZZ_FAULTY_PLUGIN};
  cmd.backend_options.timeout_seconds = 5;
  cmd.backend_options.isolate = true;
  std::ostringstream out, err;
  EXPECT_EQ(run_check_command(cmd, out, err), 1) << err.str();
  const std::string table = out.str();
  EXPECT_TRUE(contains(table, "fused      pass(bitwise)")) << table;
  EXPECT_TRUE(contains(table, "crash  stdout closed")) << table;
  EXPECT_TRUE(contains(table, "SIGSEGV")) << table;
  EXPECT_TRUE(contains(table, "faulty_backend.py none pass")) << table;
  EXPECT_TRUE(contains(table, "--isolate")) << "the reproduce line keeps --isolate:\n" << table;
  EXPECT_TRUE(contains(table, "--backend 'cmd:")) << "one --backend per cmd: item:\n" << table;
}

// ---------------------------------------------------------------------------------------------
// The layout extension of the case format

Case layout_case() {
  Case c;
  c.pattern = "a b, b -> a";
  c.inputs = {test::tensor_from_text(DType::f64, {2, 3}, "1..6"), test::tensor_from_text(DType::f64, {3}, "2,2,2")};
  // Input 0 stored transposed (column-major) with one padding element; input 1 broadcast.
  c.layouts = {InputLayout{{1, 2}, 1, 7, Tensor(Shape{}, std::vector<double>{-1})},
               InputLayout{{0}, 0, 1, std::nullopt}};
  return c;
}

TEST(Layout, StorageOfTransposedSlicedAndBroadcastViews) {
  const Case c = layout_case();
  auto s0 = layout_storage(c.inputs[0], *c.layouts[0]);
  ASSERT_TRUE(s0.ok()) << s0.error().message;
  EXPECT_TRUE(bitwise_equal(*s0, test::tensor_from_text(DType::f64, {7}, "-1,1,4,2,5,3,6")));
  auto s1 = layout_storage(c.inputs[1], *c.layouts[1]);
  ASSERT_TRUE(s1.ok());
  EXPECT_TRUE(bitwise_equal(*s1, test::tensor_from_text(DType::f64, {1}, "2")));
  // Negative strides: reversed storage.
  auto rev = layout_storage(test::tensor_from_text(DType::f64, {3}, "1,2,3"), InputLayout{{-1}, 2, 3, std::nullopt});
  ASSERT_TRUE(rev.ok());
  EXPECT_TRUE(bitwise_equal(*rev, test::tensor_from_text(DType::f64, {3}, "3,2,1")));
}

TEST(Layout, InvalidLayoutsAreRejected) {
  const Tensor t = test::tensor_from_text(DType::f64, {2, 3}, "1..6");
  const auto why = [&](InputLayout l) {
    auto r = layout_storage(t, l, Limits{});
    return r.ok() ? std::string("accepted") : r.error().message;
  };
  EXPECT_TRUE(contains(why({{1}, 0, 6, std::nullopt}), "1 strides for a rank-2 input"));
  EXPECT_TRUE(contains(why({{3, 1}, 0, 5, std::nullopt}), "outside a storage of 5 elements"));
  EXPECT_TRUE(contains(why({{3, -1}, 0, 6, std::nullopt}), "reaches storage indices -2"));
  EXPECT_TRUE(contains(why({{0, 1}, 0, 3, std::nullopt}), "share storage index 0 but hold different values"));
  EXPECT_TRUE(contains(why({{std::numeric_limits<std::int64_t>::max(), 1}, 0, 6, std::nullopt}), "beyond int64"));
  Limits small;
  small.max_tensor_elements = 10;
  EXPECT_FALSE(layout_storage(t, InputLayout{{3, 1}, 0, 11, std::nullopt}, small).ok());
  // Empty views read nothing; aliasing equal values is fine.
  EXPECT_TRUE(layout_storage(Tensor(DType::f64, Shape{3, 0}), InputLayout{{1, 1}, 0, 3, std::nullopt}).ok());
  EXPECT_TRUE(layout_storage(test::tensor_from_text(DType::f64, {3}, "5,5,5"), InputLayout{{0}, 0, 1, std::nullopt}).ok());
}

TEST(Layout, CaseFilesRoundTripLayouts) {
  const Case c = layout_case();
  const std::string text = write_case(c);
  EXPECT_TRUE(contains(text, "\"layout\": {\"strides\": [1, 2], \"offset\": 1, \"storage\": 7, \"fill\": \"-0x1p+0\"}"))
      << text;
  auto back = read_case(text, "layout.case.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->layouts.size(), 2u);
  EXPECT_EQ(back->layouts[0]->strides, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(back->layouts[1]->strides, (std::vector<std::int64_t>{0}));
  EXPECT_EQ(write_case(*back), text);
  // Without layouts the file is as before and `layouts` stays empty.
  Case plain = c;
  plain.layouts.clear();
  auto plain_back = read_case(write_case(plain), "plain.case.json");
  ASSERT_TRUE(plain_back.ok());
  EXPECT_TRUE(plain_back->layouts.empty());
  EXPECT_NE(case_file_name(plain), case_file_name(c));
}

TEST(Layout, ReaderNamesTheFieldOfABadLayout) {
  const auto fails = [](const std::string& layout) {
    const std::string text = R"({"format": "einfuzz-case/1", "op": "einsum", "pattern": "i -> i", "dtype": "f64",
      "inputs": [{"shape": [2], "values": ["0x1p+0", "0x1p+1"], "layout": )" + layout + "}]}";
    auto r = read_case(text, "bad.case.json");
    return r.ok() ? std::string("accepted") : r.error().message;
  };
  EXPECT_TRUE(contains(fails(R"({"strides": [1], "offset": 0, "storage": 1})"), "inputs[0].layout: layout: the view reaches"));
  EXPECT_TRUE(contains(fails(R"({"strides": [1], "offset": 0})"), "missing field \"storage\""));
  EXPECT_TRUE(contains(fails(R"({"strides": [1], "offset": 0, "storage": 2, "pad": 1})"), "unknown key \"pad\""));
  EXPECT_TRUE(contains(fails(R"({"strides": [0], "offset": 0, "storage": 1})"), "hold different values"));
  EXPECT_TRUE(contains(fails(R"({"strides": [1], "offset": 0, "storage": 2, "fill": "nope"})"), "fill"));
  EXPECT_EQ(fails(R"({"strides": [-1], "offset": 1, "storage": 2, "fill": "nan"})"), "accepted");
}

}  // namespace
}  // namespace einfuzz
