// PROTOCOL B and isolation: the example plugin, plugins that crash, hang, allocate without bound or
// write their inputs (in process and under --isolate), `einfuzz check` over several kinds of
// backend, and the layout extension of the case format.
#include <gtest/gtest.h>

#include <thread>

#include <atomic>

#include <unistd.h>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "einfuzz/backends/plugin.hpp"
#include "einfuzz/backends/process.hpp"
#include "einfuzz/core/case.hpp"
#include "einfuzz/core/check_case.hpp"
#include "einfuzz/harness/backend_registry.hpp"
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
  EXPECT_EQ(b->capabilities().version, "example-c einsum 3.0");
  EXPECT_FALSE(b->capabilities().factoring);
  Case c;
  c.pattern = "a b, b c -> a c";
  c.inputs = {test::tensor_from_text(DType::f64, {2, 3}, "1..6"), test::tensor_from_text(DType::f64, {3, 2}, "1,0,0,1,1,1")};
  const BackendResult r = b->run(c);
  ASSERT_TRUE(std::holds_alternative<Tensor>(r));
  EXPECT_TRUE(bitwise_equal(std::get<Tensor>(r), test::tensor_from_text(DType::f64, {2, 2}, "4,5,10,11")));
  EXPECT_EQ(test::run_on(c, *b).kind, VK::pass);
  c.pattern = "... i -> i";
  EXPECT_EQ(test::run_on(c, *b).kind, VK::unsupported);
}

TEST(ProtocolB, ExamplePluginAnswersEinsumVjpsThroughTheAbi2Entry) {
  auto b = plugin(EINFUZZ_EXAMPLE_PLUGIN);
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(b->capabilities().vjp);
  EXPECT_EQ(b->capabilities().tie_rule, TieRule::equal_share);
  // Integer-valued inputs: every order of the VJP's sums and products is exact, so the plugin's
  // any-order answer is the reference's ordered VJP bit for bit. A matrix product, a size-1
  // broadcast (its cotangent collects the sum over j), a diagonal (off-diagonal +0), a sum.
  struct Row {
    const char* pattern;
    std::vector<Tensor> inputs;
    Tensor g;
  };
  const std::vector<Row> rows = {
      {"a b, b c -> a c",
       {test::tensor_from_text(DType::f64, {2, 3}, "1..6"), test::tensor_from_text(DType::f64, {3, 2}, "1,0,0,1,1,1")},
       test::tensor_from_text(DType::f64, {2, 2}, "1,-2,3,0.5")},
      {"i j, i j -> i j",
       {test::tensor_from_text(DType::f32, {2, 1}, "3,-1"), test::tensor_from_text(DType::f32, {2, 3}, "1..6")},
       test::tensor_from_text(DType::f32, {2, 3}, "1,1,2,-1,0.25,4")},
      {"i i -> i", {test::tensor_from_text(DType::f64, {3, 3}, "1..9")}, test::tensor_from_text(DType::f64, {3}, "7,8,9")},
      {"i j ->", {test::tensor_from_text(DType::f32, {2, 2}, "1..4")}, test::tensor_from_text(DType::f32, {}, "-3")},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.pattern);
    Case c;
    c.pattern = row.pattern;
    c.dtype = row.g.dtype();
    c.inputs = row.inputs;
    c.cotangent = row.g;
    ASSERT_TRUE(b->supports(c));
    const BackendResult r = b->run(c);
    const auto* grads = std::get_if<Gradients>(&r);
    ASSERT_NE(grads, nullptr);
    const auto checked = check_case(c, Limits{});
    ASSERT_TRUE(checked.ok());
    const std::vector<Tensor> expected = evaluate_reference_vjp(*checked, c.inputs, *c.cotangent);
    ASSERT_EQ(grads->tensors.size(), expected.size());
    for (std::size_t m = 0; m < expected.size(); ++m) {
      EXPECT_TRUE(bitwise_equal(grads->tensors[m], expected[m])) << "cotangent of input " << m;
    }
  }
}

TEST(ProtocolB, Abi1PluginsKeepLoadingWithoutVjp) {
  // The example built as a version-1 table, and the faulty plugin (a version-1 table too).
  for (const char* path : {EINFUZZ_EXAMPLE_PLUGIN_V1, EINFUZZ_FAULTY_PLUGIN}) {
    SCOPED_TRACE(path);
    auto b = plugin(path);
    ASSERT_NE(b, nullptr);
    EXPECT_FALSE(b->capabilities().vjp);
  }
  auto b = plugin(EINFUZZ_EXAMPLE_PLUGIN_V1);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->capabilities().version, "example-c einsum (ABI 1) 1.0");
  Case c;
  c.pattern = "a b, b c -> a c";
  c.inputs = {test::tensor_from_text(DType::f64, {2, 3}, "1..6"), test::tensor_from_text(DType::f64, {3, 2}, "1,0,0,1,1,1")};
  EXPECT_EQ(test::run_on(c, *b).kind, VK::pass);
  // A VJP case is never sent to it.
  c.cotangent = test::tensor_from_text(DType::f64, {2, 2}, "1,1,1,1");
  EXPECT_FALSE(b->supports(c));
  EXPECT_EQ(test::run_on(c, *b).kind, VK::unsupported);
}

TEST(ProtocolB, Abi2VjpFaultsAreVerdictsAndABadTieRuleIsBadInput) {
  auto b = plugin(EINFUZZ_FAULTY_PLUGIN_V2);
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(b->capabilities().vjp);
  EXPECT_EQ(b->capabilities().tie_rule, TieRule::one);
  const auto vjp = [](const char* pattern) {
    Case c = test::f64_case(pattern, {1, 2, 3});
    c.cotangent = Tensor(Shape{3}, std::vector<double>{4, 5, 6});
    return c;
  };
  const BackendResult ok = b->run(vjp("i -> i"));
  ASSERT_TRUE(std::holds_alternative<Gradients>(ok));
  EXPECT_TRUE(bitwise_equal(std::get<Gradients>(ok).tensors.at(0), *vjp("i -> i").cotangent));
  const BackendResult few = b->run(vjp("few -> few"));
  ASSERT_TRUE(std::holds_alternative<Fault>(few));
  EXPECT_EQ(std::get<Fault>(few).kind, FaultKind::protocol);
  EXPECT_TRUE(contains(std::get<Fault>(few).evidence, "after 0 alloc_output calls for 1 inputs"));
  const BackendResult many = b->run(vjp("many -> many"));
  ASSERT_TRUE(std::holds_alternative<Fault>(many));
  EXPECT_TRUE(contains(std::get<Fault>(many).evidence, "alloc_output was called 2 times for a VJP of 1 inputs"))
      << std::get<Fault>(many).evidence;

  PluginOptions o;
  o.path = EINFUZZ_BAD_TIE_PLUGIN;
  const auto bad = load_plugin_backend(o);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(contains(bad.error().message, "its tie_rule \"first\" is not")) << bad.error().message;
}

TEST(ProtocolB, ATableIsReadAsStrictlyAsAHello) {
  // A misspelt or unknown name is refused at load, as a protocol-A hello refuses it: read as the
  // default, "Ordered" would have escaped bitwise judging.
  for (const auto& [variable, value, field] : std::vector<std::tuple<const char*, const char*, const char*>>{
           {"EINFUZZ_FAULTY_SEMANTICS", "Ordered", "semantics"},
           {"EINFUZZ_FAULTY_NAN_PROFILE", "bogus-nan", "nan_profile"},
           {"EINFUZZ_FAULTY_NOTATION", "klingon", "notation"}}) {
    ::setenv(variable, value, 1);
    PluginOptions o;
    o.path = EINFUZZ_FAULTY_PLUGIN;
    const auto bad = load_plugin_backend(o);
    ::unsetenv(variable);
    ASSERT_FALSE(bad.ok()) << variable;
    EXPECT_EQ(bad.error().code, Code::invalidArgument);
    EXPECT_TRUE(contains(bad.error().message, std::string("its ") + field + " \"" + value + "\" is not one of"))
        << bad.error().message;
  }
  // The names the protocol defines load.
  for (const auto& [variable, value] : std::vector<std::pair<const char*, const char*>>{
           {"EINFUZZ_FAULTY_SEMANTICS", "ordered"}, {"EINFUZZ_FAULTY_NAN_PROFILE", "ignore"},
           {"EINFUZZ_FAULTY_NOTATION", "numpy"}}) {
    ::setenv(variable, value, 1);
    PluginOptions o;
    o.path = EINFUZZ_FAULTY_PLUGIN;
    const auto good = load_plugin_backend(o);
    ::unsetenv(variable);
    EXPECT_TRUE(good.ok()) << variable << "=" << value;
  }
}

TEST(ProtocolB, Abi3TablesDeclareTheirPrecisionProfile) {
  // The example: f16 and bf16 products and sums held in f32 (ORACLE §8), f32/f64 by default.
  auto example = plugin(EINFUZZ_EXAMPLE_PLUGIN);
  ASSERT_NE(example, nullptr);
  const Capabilities& caps = example->capabilities();
  for (DType d : {DType::f16, DType::bf16}) {
    EXPECT_NE(std::find(caps.dtypes.begin(), caps.dtypes.end(), d), caps.dtypes.end()) << dtype_name(d);
    EXPECT_EQ(caps.profile(d), (PrecisionProfile{DType::f32, InputRounding::none})) << dtype_name(d);
  }
  EXPECT_EQ(caps.profile(DType::f32), storage_profile(DType::f32));
  // An ABI 2 table has no profile fields: nothing past `vjp` is read.
  auto v2 = plugin(EINFUZZ_FAULTY_PLUGIN_V2);
  ASSERT_NE(v2, nullptr);
  EXPECT_TRUE(v2->capabilities().accumulate.empty());
  EXPECT_TRUE(v2->capabilities().round_inputs.empty());
  // A declared profile reaches the capabilities as PROTOCOL A's hello would give it.
  auto tf32 = plugin(EINFUZZ_TF32_PLUGIN);
  ASSERT_NE(tf32, nullptr);
  EXPECT_EQ(tf32->capabilities().profile(DType::f32), (PrecisionProfile{DType::f64, InputRounding::tf32}));
  // One a harness cannot read is refused at load, saying why (never judged under another profile).
  for (const auto& [path, why] : std::vector<std::pair<const char*, const char*>>{
           {EINFUZZ_BAD_PROFILE_PLUGIN, "its precision profile: \"accumulate\".f64 names the unknown dtype \"f8\""},
           {EINFUZZ_BAD_PROFILE_ENTRY_PLUGIN, "its precision profile: accumulate entry \"f64\" is not DTYPE=VALUE"}}) {
    PluginOptions o;
    o.path = path;
    const auto bad = load_plugin_backend(o);
    ASSERT_FALSE(bad.ok()) << path;
    EXPECT_EQ(bad.error().code, Code::invalidArgument);
    EXPECT_TRUE(contains(bad.error().message, why)) << bad.error().message;
  }
  // The same table declaring `ordered` semantics is refused: a profile is an any-order declaration.
  ::setenv("EINFUZZ_FAULTY_SEMANTICS", "ordered", 1);
  PluginOptions o;
  o.path = EINFUZZ_TF32_PLUGIN;
  const auto ordered = load_plugin_backend(o);
  ::unsetenv("EINFUZZ_FAULTY_SEMANTICS");
  ASSERT_FALSE(ordered.ok());
  EXPECT_TRUE(contains(ordered.error().message, "an ordered backend computes every + and · in the dtype"))
      << ordered.error().message;
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
  const Verdict v = test::run_on(f64_case(label + " -> " + label, {1, 2, 3}), *b);
  EXPECT_EQ(v.kind, GetParam().kind) << v.label() << ": " << v.detail;
  EXPECT_TRUE(contains(v.detail, GetParam().evidence)) << v.detail;
  EXPECT_EQ(test::run_on(passthrough(), *b).kind, VK::pass);
}

INSTANTIATE_TEST_SUITE_P(ProtocolB, PluginFaults,
                         ::testing::Values(PluginRow{"write", VK::input_modified, "wrote to its inputs"},
                                           PluginRow{"twice", VK::crash, "alloc_output was called a second time"},
                                           PluginRow{"noout", VK::crash, "without calling alloc_output"},
                                           PluginRow{"huge", VK::crash, "huge shape 1099511627776x1099511627776"},
                                           // Within the limits (which allowed 2 GiB), but not an answer to a
                                           // 3-element case: refused before it is allocated, as on PROTOCOL A,
                                           // and a fault although the plugin then returns EINFUZZ_ERROR.
                                           PluginRow{"bigout", VK::crash, "an answer of 100000 elements"},
                                           PluginRow{"badstatus", VK::crash, "unknown status 42"}),
                         [](const auto& p) { return std::string(p.param.label); });

// What a plugin is told about the case points into copies: writing through the request's shape
// and pattern pointers changes only what that plugin answers (a wrong shape), never the case the
// harness judges, stores and gives the next backend (fused, after it, passes).
TEST(ProtocolB, APluginWritingThroughTheRequestChangesNothingTheHarnessReads) {
  auto b = plugin(EINFUZZ_FAULTY_PLUGIN);
  ASSERT_NE(b, nullptr);
  const auto fused = make_fused_backend(RunOptions{});
  const Case c = f64_case("reshape -> reshape", {1, 2, 3});
  Backend* list[] = {b.get(), fused.get()};
  const CaseOutcome out = run_case(c, list, {});
  ASSERT_EQ(out.backends.size(), 2u);
  EXPECT_EQ(out.backends[0].verdict.kind, VK::mismatch_shape) << out.backends[0].verdict.detail;
  EXPECT_FALSE(is_failure(out.backends[1].verdict.kind)) << out.backends[1].verdict.label() << ": "
                                                        << out.backends[1].verdict.detail;
  EXPECT_EQ(c.pattern, "reshape -> reshape");
  EXPECT_EQ(c.inputs[0].shape(), Shape{3});
}

// plugin.h: calls come from one thread at a time. Two backends loading one library (a campaign's
// two jobs) share its state, so their calls take turns; the plugin answers zeros when a call
// overlapped another.
TEST(ProtocolB, CallsIntoOneLibraryFromTwoThreadsTakeTurns) {
  auto first = plugin(EINFUZZ_FAULTY_PLUGIN);
  auto second = plugin(EINFUZZ_FAULTY_PLUGIN);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  const Case c = f64_case("busy -> busy", {1, 2, 3});
  std::atomic<int> wrong{0};
  const auto calls = [&](Backend& b) {
    for (int i = 0; i < 40; ++i) {
      if (test::run_on(c, b).kind != VK::pass) ++wrong;
    }
  };
  std::thread a(calls, std::ref(*first));
  std::thread d(calls, std::ref(*second));
  a.join();
  d.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(ProtocolB, EveryLoadIsANewInstanceOfTheLibrary) {
  // The `stale` word answers right on its library's first call only: state that outlives a case.
  const Case c = f64_case("stale -> stale", {1, 2, 3});
  auto first = plugin(EINFUZZ_FAULTY_PLUGIN);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(test::run_on(c, *first).kind, VK::pass);
  EXPECT_EQ(test::run_on(c, *first).kind, VK::mismatch_value);  // the plugin's state, as planted
  // A second instance, loaded while the first is in use (a campaign's fresh instance, another job)
  // or after it is gone, starts from the library's initial state: what `einfuzz check` would see.
  auto second = plugin(EINFUZZ_FAULTY_PLUGIN);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(test::run_on(c, *second).kind, VK::pass);
  EXPECT_EQ(test::run_on(c, *first).kind, VK::mismatch_value);
  first.reset();
  second.reset();
  auto third = plugin(EINFUZZ_FAULTY_PLUGIN);
  ASSERT_NE(third, nullptr);
  EXPECT_EQ(test::run_on(c, *third).kind, VK::pass);
}

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
  EXPECT_TRUE(contains(bad_abi.error().message, "ABI version 99, this harness speaks versions 1 to 3"))
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
  const Verdict v = test::run_on(f64_case(label + " -> " + label, {1, 2, 3}), *b);
  EXPECT_EQ(v.kind, GetParam().kind) << v.label() << ": " << v.detail;
  EXPECT_TRUE(contains(v.detail, GetParam().evidence)) << v.detail;
  EXPECT_EQ(test::run_on(passthrough(), *b).kind, VK::pass);
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
          PluginRow{"twice", VK::crash, "second time"},
          // A child it forked holds the result pipe: the worker's exit ends the wait, the answer
          // (a correct passthrough) is judged, and the child is killed with the worker's group.
          PluginRow{"forkhold", VK::pass, ""}};
}

INSTANTIATE_TEST_SUITE_P(
    Isolate, IsolatedPluginFaults, ::testing::ValuesIn(isolated_rows()),
    [](const auto& p) { return std::string(p.param.label); });

// An answer of more than 64 dimensions is a correct one when the case allows it (--max-labels 100):
// the plugin's alloc_output and the isolated worker's reader had refused every rank above 64, so a
// correct passthrough on 65 axes was reject-disagree, or a crash under --isolate.
TEST(Isolate, AnAnswerOfMoreThan64DimensionsIsJudged) {
  Case c;
  std::string labels;
  for (int k = 0; k < 65; ++k) labels += (k ? " a" : "a") + std::to_string(k);
  c.pattern = labels + " -> " + labels;
  c.inputs = {Tensor(Shape(65, 1), std::vector<double>{2.5})};
  RunOptions options;
  options.limits.max_labels = 100;
  for (const bool isolated : {false, true}) {
    IsolateOptions i = quick_isolation();
    i.limits = options.limits;
    PluginOptions p;
    p.path = EINFUZZ_FAULTY_PLUGIN;
    p.limits = options.limits;
    auto loaded = load_plugin_backend(p);
    ASSERT_TRUE(loaded.ok());
    auto b = isolated ? isolate_backend(std::move(*loaded), i) : std::move(*loaded);
    const Verdict v = test::run_on(c, *b, options);
    EXPECT_EQ(v.kind, VK::pass) << (isolated ? "--isolate: " : "") << v.label() << ": " << v.detail;
  }
  // A rank beyond every answer to the case is still refused before the shape is read.
  Case small;
  small.pattern = "a -> a";
  small.inputs = {Tensor(Shape{1}, std::vector<double>{1})};
  EXPECT_EQ(answer_rank_bound(small), 64u);
  EXPECT_EQ(answer_rank_bound(c), c.pattern.size());
}

// plugin.h: the request id increases by one per call. Under --isolate each call runs in a forked
// copy of the backend, whose counter advanced there and not here: every id was 1.
TEST(Isolate, RequestIdsIncreaseByOnePerCallAsWithoutIt) {
  for (const bool isolated : {false, true}) {
    auto b = isolated ? isolate_backend(plugin(EINFUZZ_FAULTY_PLUGIN), quick_isolation()) : plugin(EINFUZZ_FAULTY_PLUGIN);
    for (int call = 1; call <= 3; ++call) {
      const Verdict v = test::run_on(f64_case("id -> id", {1, 2, 3}), *b);
      EXPECT_EQ(v.kind, VK::unsupported) << v.detail;
      EXPECT_TRUE(contains(v.detail, "id " + std::to_string(call))) << (isolated ? "--isolate: " : "") << v.detail;
    }
  }
}

// A case interrupted (SIGINT) before its worker was forked never reached the plugin: the next
// call gets the next id, with no gap (the id used to advance anyway).
TEST(Isolate, ACaseStoppedBeforeItsWorkerTakesNoRequestId) {
  auto b = isolate_backend(plugin(EINFUZZ_FAULTY_PLUGIN), quick_isolation());
  EXPECT_TRUE(contains(test::run_on(f64_case("id -> id", {1, 2, 3}), *b).detail, "id 1"));
  request_stop(SIGINT);
  const Verdict stopped = test::run_on(f64_case("id -> id", {1, 2, 3}), *b);
  clear_stop_request();
  EXPECT_TRUE(contains(stopped.detail, "interrupted by signal")) << stopped.detail;
  const Verdict next = test::run_on(f64_case("id -> id", {1, 2, 3}), *b);
  EXPECT_TRUE(contains(next.detail, "id 2")) << next.detail;
}

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
  Verdict v = test::run_on(f64_case("abort -> abort", {1}), *b);
  EXPECT_EQ(v.kind, VK::crash);
  EXPECT_TRUE(contains(v.detail, "SIGABRT")) << v.detail;
  v = test::run_on(f64_case("throw -> throw", {1}), *b);
  EXPECT_EQ(v.kind, VK::crash);
  EXPECT_TRUE(contains(v.detail, "the backend threw: wild: no such thing")) << v.detail;
  v = test::run_on(f64_case("write -> write", {1}), *b);
  EXPECT_EQ(v.kind, VK::input_modified) << v.detail;
  EXPECT_EQ(test::run_on(passthrough(), *b).kind, VK::pass);
  EXPECT_EQ(wild->calls(), 0) << "every call ran in a worker, never in this process";
#ifndef EINFUZZ_TEST_ASAN
  v = test::run_on(f64_case("grab -> grab", {1}), *b);
  EXPECT_EQ(v.kind, VK::crash);
  EXPECT_TRUE(contains(v.detail, "out of memory (std::bad_alloc)")) << v.detail;
#endif
}

TEST(Isolate, ResultsComeBackBitForBit) {
  auto fused = isolate_backend(make_builtin_backend("fused", RunOptions{}), quick_isolation());
  Case c;
  c.pattern = "a b, b c -> a c";
  c.inputs = {test::tensor_from_text(DType::f64, {2, 3}, "1..6"), test::tensor_from_text(DType::f64, {3, 2}, "1,0,0,1,1,1")};
  EXPECT_EQ(test::run_on(c, *fused).kind, VK::pass_bitwise);
  c.pattern = "a b, b -> a";  // the reference rejects: so does the isolated fused, with its code
  EXPECT_EQ(test::run_on(c, *fused).kind, VK::pass);
}

TEST(Isolate, VjpGradientsComeBackBitForBit) {
  // A VJP's answer (one tensor per input) crosses the worker's pipe like a forward result.
  PluginOptions o;
  o.path = EINFUZZ_EXAMPLE_PLUGIN;
  auto direct = load_plugin_backend(o);
  ASSERT_TRUE(direct.ok());
  auto loaded = load_plugin_backend(o);
  ASSERT_TRUE(loaded.ok());
  auto isolated = isolate_backend(std::move(*loaded), quick_isolation());
  Case c;
  c.pattern = "a b, b c -> a c";
  c.inputs = {test::tensor_from_text(DType::f64, {2, 3}, "1..6"), test::tensor_from_text(DType::f64, {3, 2}, "1,0,0,1,1,1")};
  c.cotangent = test::tensor_from_text(DType::f64, {2, 2}, "1,-2,3,0.5");
  const BackendResult want = (*direct)->run(c);
  const BackendResult got = isolated->run(c);
  const auto* w = std::get_if<Gradients>(&want);
  const auto* g = std::get_if<Gradients>(&got);
  ASSERT_NE(w, nullptr);
  ASSERT_NE(g, nullptr) << (std::holds_alternative<Fault>(got) ? std::get<Fault>(got).evidence : "");
  ASSERT_EQ(g->tensors.size(), w->tensors.size());
  for (std::size_t m = 0; m < w->tensors.size(); ++m) EXPECT_TRUE(bitwise_equal(g->tensors[m], w->tensors[m]));
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
