// The run boundary (harness/run/src/run.cpp): only a backend's own code is caught and turned into a
// verdict; a case over a harness limit runs on no backend; the run's limits reach every in-process
// backend. (Issue 10, items 4 and 5.)
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "einfuzz/backends/eigen.hpp"
#include "einfuzz/backends/shuffle.hpp"
#include "einfuzz/backends/xtensor.hpp"
#include "einfuzz/harness/backend_registry.hpp"
#include "einfuzz/harness/run.hpp"
#include "support/verdicts.hpp"

// This binary replaces the global allocation functions so that a test can make exactly the next
// allocation fail: the judge's first allocation after a backend returned. Everything else allocates
// normally.
namespace {
std::atomic<int> g_fail_next_allocations{0};
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) {
  if (g_fail_next_allocations.load() > 0 && g_fail_next_allocations.fetch_sub(1) > 0) throw std::bad_alloc();
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace einfuzz {
namespace {

Case matmul_case(std::int64_t n) {
  Case c;
  c.op = Op::einsum;
  c.pattern = "a b, b c -> a c";
  c.dtype = DType::f64;
  c.inputs.emplace_back(DType::f64, Shape{n, n});
  c.inputs.emplace_back(DType::f64, Shape{n, n});
  return c;
}

/// An any-order backend that answers with the right-shaped zero tensor, counting its calls; when
/// `fail_judge` is set it makes the next allocation after it returns (the judge's) throw.
class ZeroBackend final : public Backend {
 public:
  explicit ZeroBackend(bool fail_judge = false) : fail_judge_(fail_judge) {}
  std::string_view name() const override { return "zero"; }
  const Capabilities& capabilities() const override { return caps_; }
  BackendResult run(const Case& c) override {
    ++calls;
    BackendResult r = Tensor(c.dtype, Shape{c.inputs[0].shape()[0], c.inputs[1].shape()[1]});
    if (fail_judge_) g_fail_next_allocations = 1;
    return r;
  }
  int calls = 0;

 private:
  bool fail_judge_;
  Capabilities caps_;
};

/// An ordered bool reduce backend that answers every case with `answer`'s bytes.
class BoolBytes final : public Backend {
 public:
  explicit BoolBytes(std::vector<Bool8> answer) : answer_(std::move(answer)) {
    caps_.ops = {Op::reduce};
    caps_.reductions = {"any"};
    caps_.dtypes = {DType::boolean};
    caps_.semantics = Semantics::ordered;
  }
  std::string_view name() const override { return "bool-bytes"; }
  const Capabilities& capabilities() const override { return caps_; }
  BackendResult run(const Case&) override { return Tensor(Shape{static_cast<std::int64_t>(answer_.size())}, answer_); }

 private:
  std::vector<Bool8> answer_;
  Capabilities caps_;
};

// A bool is one byte, 0 or 1 (PROTOCOL A): a byte of 2 is an encoding fault with the element
// named, not a mismatch of two values that print alike ("reference true, backend true").
TEST(RunBoundary, ABoolByteOtherThanZeroOrOneIsAProtocolFault) {
  Case c;  // reduce(x, "i j -> i", "any") over a 3×2 bool tensor
  c.op = Op::reduce;
  c.reduction = "any";
  c.pattern = "i j -> i";
  c.dtype = DType::boolean;
  c.inputs.emplace_back(Shape{3, 2}, std::vector<Bool8>{1, 0, 0, 0, 0, 1});
  BoolBytes right({1, 0, 1});
  const Verdict ok = test::run_on(c, right);
  EXPECT_EQ(ok.kind, VerdictKind::pass_bitwise) << ok.label() << ": " << ok.detail;
  BoolBytes two({1, 0, 2});
  const Verdict v = test::run_on(c, two);
  EXPECT_EQ(v.kind, VerdictKind::crash) << v.label() << ": " << v.detail;
  EXPECT_NE(v.detail.find("bool element 2 of the answer is the byte 2"), std::string::npos) << v.detail;
  BoolBytes high({255, 0, 1});  // a wrong value too, but its encoding is the first thing wrong
  EXPECT_EQ(test::run_on(c, high).kind, VerdictKind::crash);
}

TEST(RunBoundary, ACaseOverAHarnessLimitRunsOnNoBackend) {
  RunOptions options;
  options.limits.max_materialised_elements = 100;  // 4·4·4 products × 3 tensors = 192 > 100
  ZeroBackend backend;
  Backend* backends[] = {&backend};
  const CaseOutcome out = run_case(matmul_case(4), backends, options);
  ASSERT_TRUE(out.skipped);
  EXPECT_EQ(out.skipped->code, Code::sizeLimitExceeded);
  EXPECT_NE(out.skipped->message.find("max-materialised-elements"), std::string::npos) << out.skipped->message;
  EXPECT_TRUE(out.backends.empty());
  EXPECT_EQ(backend.calls, 0);
  EXPECT_FALSE(out.failed());
}

TEST(RunBoundary, ACaseWithinTheLimitRunsAndIsJudged) {
  ZeroBackend backend;
  Backend* backends[] = {&backend};
  Case c = matmul_case(2);
  const CaseOutcome out = run_case(c, backends, RunOptions{});
  EXPECT_FALSE(out.skipped);
  ASSERT_EQ(out.backends.size(), 1u);
  EXPECT_EQ(backend.calls, 1);
}

// The run's limits reach every in-process backend: lowered, each one's checker applies them; and a
// backend that rejects with its own size limit is not a semantic disagreement.
TEST(RunBoundary, TheRunsLimitsReachEveryInProcessBackend) {
  RunOptions options;
  options.limits.max_materialised_elements = 100;
  for (const char* name : {"fused", "shuffle", "eigen", "xtensor"}) {
    const auto backend = make_builtin_backend(name, options);
    ASSERT_TRUE(backend) << name;
    const BackendResult r = backend->run(matmul_case(4));
    const auto* rejected = std::get_if<Rejected>(&r);
    ASSERT_TRUE(rejected) << name << " ignored the run's limits";
    EXPECT_EQ(rejected->code, "sizeLimitExceeded") << name;
  }
  // With the reference's limit raised and the backend's left low, the case is not the backend's
  // disagreement: its own size limit makes it `unsupported`.
  const auto low = make_builtin_backend("eigen", options);
  Backend* backends[] = {low.get()};
  const CaseOutcome out = run_case(matmul_case(4), backends, RunOptions{});
  ASSERT_EQ(out.backends.size(), 1u);
  EXPECT_EQ(out.backends[0].verdict.kind, VerdictKind::unsupported) << out.backends[0].verdict.detail;
}

// An exception thrown while judging is a harness bug: it aborts, and is never the backend's `crash`.
TEST(RunBoundaryDeathTest, AnExceptionInTheJudgeAbortsInsteadOfBlamingTheBackend) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        ZeroBackend backend(/*fail_judge=*/true);
        Backend* backends[] = {&backend};
        const CaseOutcome out = run_case(matmul_case(2), backends, RunOptions{});
        // Reached only when the judge's exception was caught as the backend's fault.
        std::fprintf(stderr, "verdict %s\n", out.backends.at(0).verdict.label().c_str());
        std::exit(0);
      },
      "harness bug: judging zero's result threw");
}

// A backend that throws is still the backend's `crash`.
TEST(RunBoundary, ABackendThatThrowsIsACrash) {
  class Throwing final : public Backend {
   public:
    std::string_view name() const override { return "throwing"; }
    const Capabilities& capabilities() const override { return caps_; }
    BackendResult run(const Case&) override { throw std::runtime_error("boom"); }
    Capabilities caps_;
  } backend;
  Backend* backends[] = {&backend};
  const CaseOutcome out = run_case(matmul_case(2), backends, RunOptions{});
  ASSERT_EQ(out.backends.size(), 1u);
  EXPECT_EQ(out.backends[0].verdict.kind, VerdictKind::crash);
  EXPECT_NE(out.backends[0].verdict.detail.find("boom"), std::string::npos);
}

/// A backend that writes `value` into element 3 of its second (2 × 2, f64) input, then answers zeros.
class Writer final : public Backend {
 public:
  explicit Writer(double value) : value_(value) {}
  std::string_view name() const override { return "writer"; }
  const Capabilities& capabilities() const override { return caps_; }
  BackendResult run(const Case& c) override {
    const_cast<Tensor&>(c.inputs[1]).values<double>()[3] = value_;  // NOLINT: the misbehaviour under test
    return Tensor(c.dtype, Shape{2, 2});
  }

 private:
  double value_;
  Capabilities caps_;
};

// A backend that writes to its inputs is `input-modified`; the inputs are put back, so the next
// backend is given the case as it was and is not blamed for the first one's write.
TEST(RunBoundary, OnlyTheBackendThatWritesToItsInputsIsInputModified) {
  Writer writer(1.0);
  ZeroBackend honest;
  Backend* backends[] = {&honest, &writer, &honest};
  const CaseOutcome out = run_case(matmul_case(2), backends, RunOptions{});
  ASSERT_EQ(out.backends.size(), 3u);
  EXPECT_EQ(out.backends[0].verdict.kind, VerdictKind::pass);
  EXPECT_EQ(out.backends[1].verdict.kind, VerdictKind::input_modified);
  EXPECT_EQ(out.backends[2].verdict.kind, VerdictKind::pass);
}

// An any-order backend after a writer is given the inputs as they were (put back) and judged with
// the multiset oracle of those inputs; the caller's case holds them again when run_case returns.
TEST(RunBoundary, AnAnyOrderBackendAfterAWriterIsJudgedOnTheInputsItWasGiven) {
  Writer writer(5.0);
  const auto shuffle = make_shuffle_backend(1);
  Case c = matmul_case(2);
  for (Tensor& t : c.inputs) {
    for (double& v : t.values<double>()) v = 1.0;  // every product 1, every element 2 before the write
  }
  Backend* backends[] = {&writer, shuffle.get()};
  const CaseOutcome out = run_case(c, backends, RunOptions{});
  ASSERT_EQ(out.backends.size(), 2u);
  EXPECT_EQ(out.backends[0].verdict.kind, VerdictKind::input_modified);
  // shuffle saw every element 1 again: its sums are 2, and they pass.
  EXPECT_FALSE(is_failure(out.backends[1].verdict.kind)) << out.backends[1].verdict.label() << ": "
                                                        << out.backends[1].verdict.detail;
  EXPECT_EQ(c.inputs[1].values<double>()[3], 1.0) << "the write is undone";
  EXPECT_FALSE(out.broadcast.has_value());  // run_case does not carry the operands out
}

/// An any-order VJP backend that zeroes the cotangent it is given and answers zero gradients: right
/// for the cotangent it leaves behind.
class CotangentZeroer final : public Backend {
 public:
  CotangentZeroer() {
    caps_.dtypes = {DType::f64, DType::f16};
    caps_.vjp = true;
  }
  std::string_view name() const override { return "cotangent-zeroer"; }
  const Capabilities& capabilities() const override { return caps_; }
  BackendResult run(const Case& c) override {
    for (double& v : const_cast<Tensor&>(*c.cotangent).values<double>()) v = 0;  // NOLINT: the misbehaviour under test
    Gradients g;
    for (const Tensor& t : c.inputs) g.tensors.emplace_back(DType::f64, t.shape());
    return g;
  }

 private:
  Capabilities caps_;
};

// The cotangent is read like the inputs: a backend that writes to it is input-modified (it had
// passed, its zero gradients matching the zeroed cotangent), and the ordered backend after it is
// given the cotangent as it was (it had failed against gradients of the original one).
TEST(RunBoundary, ABackendThatWritesToTheCotangentIsInputModified) {
  Case c = matmul_case(2);
  for (Tensor& t : c.inputs) {
    for (double& v : t.values<double>()) v = 1.5;
  }
  c.cotangent = Tensor(Shape{2, 2}, std::vector<double>{1, 2, 3, 4});
  CotangentZeroer zeroer;
  const auto fused = make_fused_backend(RunOptions{});
  Backend* backends[] = {&zeroer, fused.get()};
  const CaseOutcome out = run_case(c, backends, RunOptions{});
  ASSERT_EQ(out.backends.size(), 2u);
  EXPECT_EQ(out.backends[0].verdict.kind, VerdictKind::input_modified) << out.backends[0].verdict.label();
  EXPECT_FALSE(is_failure(out.backends[1].verdict.kind)) << out.backends[1].verdict.label() << ": "
                                                        << out.backends[1].verdict.detail;
  EXPECT_EQ(c.cotangent->values<double>()[3], 4.0) << "the write is undone";
}

// f16/bf16 VJPs are not judged (the reference turns them away as a harness limit, with
// notDifferentiable): a backend declaring vjp and f16 is never sent one, so a correct answer is
// never a reject-disagree.
TEST(RunBoundary, AHalfPrecisionVjpIsNeverSent) {
  CotangentZeroer backend;
  Case c = matmul_case(2);
  c.cotangent = Tensor(DType::f64, Shape{2, 2});
  EXPECT_TRUE(backend.supports(c));
  c.dtype = DType::f16;
  for (Tensor& t : c.inputs) t = Tensor(DType::f16, t.shape());
  c.cotangent = Tensor(DType::f16, Shape{2, 2});
  EXPECT_FALSE(backend.supports(c));
  EXPECT_EQ(test::run_on(c, backend).kind, VerdictKind::unsupported);
}

}  // namespace
}  // namespace einfuzz
