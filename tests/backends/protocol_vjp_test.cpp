// PROTOCOL A's `vjp` request both ways: the request line and bytes a VJP case is sent as, the `ok`
// response's `"shapes"` and payload decoded into one cotangent per input, every fault rule of
// PROTOCOL §4 on a VJP response, and the hello's `"vjp"` and `"tie_rule"` (tests/backends/faulty/vjp_backend.py).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "einfuzz/backends/process.hpp"
#include "einfuzz/core/case.hpp"
#include "einfuzz/harness/run.hpp"
#include "process_wire.hpp"
#include "support/protocol_cases.hpp"
#include "support/verdicts.hpp"

namespace einfuzz {
namespace {

using VK = VerdictKind;
using namespace test;

ProcessOptions vjp_options(const std::string& mode, const std::string& tie_rule = "", double timeout = 3) {
  ProcessOptions o;
  o.command = python() + " " + shell_quote((kSource / "tests/backends/faulty/vjp_backend.py").string()) + " " + mode +
              (tie_rule.empty() ? "" : " " + tie_rule);
  o.name = "vjp-" + mode;
  o.timeout_seconds = timeout;
  return o;
}

/// `i, i -> i` on f64 with cotangent g: the VJP is (g·y, g·x).
Case product_vjp() {
  Case c;
  c.pattern = "i, i -> i";
  c.dtype = DType::f64;
  c.inputs.emplace_back(Shape{3}, std::vector<double>{1.5, -2, 3});
  c.inputs.emplace_back(Shape{3}, std::vector<double>{4, 0.25, -8});
  c.cotangent = Tensor(Shape{3}, std::vector<double>{0.5, 3, -1});
  return c;
}

/// `a b -> a` sum on a [2, 3] f64 input with cotangent [2]: each row gets its g.
Case sum_vjp() {
  Case c;
  c.op = Op::reduce;
  c.pattern = "a b -> a";
  c.reduction = "sum";
  c.dtype = DType::f64;
  c.inputs.emplace_back(Shape{2, 3}, std::vector<double>{1, 2, 3, 4, 5, 6});
  c.cotangent = Tensor(Shape{2}, std::vector<double>{7, -0.5});
  return c;
}

TEST(ProtocolAVjp, TheRequestIsOpVjpOfTheForwardOpWithTheCotangentLast) {
  const Case c = product_vjp();
  const std::string line = wire::request_line(c, 5, std::vector<std::optional<Tensor>>(c.inputs.size()));
  EXPECT_EQ(line,
            "{\"id\":5,\"op\":\"vjp\",\"of\":\"einsum\",\"pattern\":\"i, i -> i\",\"subscripts\":\"a,a->a\","
            "\"dtype\":\"f64\",\"inputs\":[{\"shape\":[3]},{\"shape\":[3]},{\"shape\":[3]}]}\n");
  const Case r = sum_vjp();
  const std::string reduce = wire::request_line(r, 6, std::vector<std::optional<Tensor>>(1));
  EXPECT_TRUE(contains(reduce, "\"op\":\"vjp\",\"of\":\"reduce\",\"pattern\":\"a b -> a\",\"reduction\":\"sum\""))
      << reduce;
  EXPECT_TRUE(contains(reduce, "\"inputs\":[{\"shape\":[2,3]},{\"shape\":[2]}]")) << reduce;
  // A forward case is unchanged.
  Case f = product_vjp();
  f.cotangent.reset();
  EXPECT_TRUE(contains(wire::request_line(f, 1, std::vector<std::optional<Tensor>>(2)), "{\"id\":1,\"op\":\"einsum\","));
}

TEST(ProtocolAVjp, AnOkResponseCarriesOneShapePerForwardInput) {
  const Limits limits;
  const auto j = wire::Json::parse(R"({"id":3,"status":"ok","shapes":[[2,3],[4]]})");
  const auto r = wire::decode_response(j, 3, 1, DType::f32, limits, 2);
  const auto* p = std::get_if<wire::Payload>(&r);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->shapes, (std::vector<Shape>{{2, 3}, {4}}));
  EXPECT_EQ(p->shape, (Shape{10}));  // the payload: both tensors back to back

  const Tensor payload(Shape{3}, std::vector<double>{1, 2, 3});
  const Gradients g = wire::split_gradients(payload, {{2}, {0, 5}, {1}});
  ASSERT_EQ(g.tensors.size(), 3u);
  EXPECT_EQ(g.tensors[0].shape(), (Shape{2}));
  EXPECT_EQ(g.tensors[0].values<double>()[1], 2);
  EXPECT_EQ(g.tensors[1].shape(), (Shape{0, 5}));
  EXPECT_EQ(g.tensors[2].values<double>()[0], 3);
}

TEST(ProtocolAVjp, ABadShapesFieldIsAProtocolFault) {
  const Limits limits;
  const auto decode = [&](const char* text) {
    return wire::decode_response(wire::Json::parse(text), 3, 1, DType::f64, limits, 2);
  };
  const auto what = [](const wire::Response& r) {
    const auto* b = std::get_if<wire::BadResponse>(&r);
    return b ? b->what : std::string("(not a bad response)");
  };
  EXPECT_TRUE(contains(what(decode(R"({"id":3,"status":"ok","shape":[2]})")), "without a \"shapes\" array"));
  EXPECT_TRUE(contains(what(decode(R"({"id":3,"status":"ok","shapes":[[2]]})")), "has 1 entries, the vjp request 2"));
  EXPECT_TRUE(std::holds_alternative<wire::Payload>(decode(R"({"id":3,"status":"ok","shapes":[[2],[1,2,3]]})")));
  EXPECT_TRUE(contains(what(decode(R"({"id":3,"status":"ok","shapes":[[2],[-1]]})")), "entry 1"));
  EXPECT_TRUE(contains(what(decode(R"({"id":3,"status":"ok","shapes":[[2],"x"]})")), "not an array of lengths"));
  EXPECT_TRUE(contains(what(decode(R"({"id":3,"status":"ok","shapes":[[1099511627776,1099511627776],[1]]})")),
                       "huge shape"));
  // Each shape within the limits, their total not.
  Limits small;
  small.max_tensor_elements = 10;
  const auto total = wire::decode_response(wire::Json::parse(R"({"id":3,"status":"ok","shapes":[[8],[8]]})"), 3, 1,
                                           DType::f64, small, 2);
  EXPECT_TRUE(contains(what(total), "huge shapes")) << what(total);
  // error and unsupported answers need no shapes.
  EXPECT_TRUE(std::holds_alternative<Unsupported>(decode(R"({"id":3,"status":"unsupported","message":"no"})")));
}

TEST(ProtocolAVjp, TheHelloDeclaresVjpAndItsTieRule) {
  std::string notation;
  const auto hello = [&](const char* text) {
    notation = "einops";  // the caller's default (ProcessBackend's)
    return wire::decode_hello(wire::Json::parse(text), "cmd", notation);
  };
  const auto plain = hello(R"({"protocol":"einfuzz-backend/1"})");
  ASSERT_TRUE(std::holds_alternative<Capabilities>(plain));
  EXPECT_FALSE(std::get<Capabilities>(plain).vjp);
  EXPECT_EQ(std::get<Capabilities>(plain).tie_rule, TieRule::equal_share);
  const auto vjp = hello(R"({"protocol":"einfuzz-backend/1","ops":["einsum","vjp"],"tie_rule":"one"})");
  ASSERT_TRUE(std::holds_alternative<Capabilities>(vjp));
  EXPECT_TRUE(std::get<Capabilities>(vjp).vjp);
  EXPECT_EQ(std::get<Capabilities>(vjp).ops, (std::vector<Op>{Op::einsum}));
  EXPECT_EQ(std::get<Capabilities>(vjp).tie_rule, TieRule::one);
  const auto bad = hello(R"({"protocol":"einfuzz-backend/1","ops":["vjp"],"tie_rule":"first"})");
  ASSERT_TRUE(std::holds_alternative<std::string>(bad));
  EXPECT_TRUE(contains(std::get<std::string>(bad), "\"tie_rule\" must be")) << std::get<std::string>(bad);
}

TEST(ProtocolAVjp, AVjpBackendAnswersBothWaysAndIsJudged) {
  ProcessBackend backend(vjp_options("none", "all"));
  ASSERT_FALSE(backend.start_failure()) << backend.start_failure()->evidence;
  EXPECT_TRUE(backend.capabilities().vjp);
  EXPECT_EQ(backend.capabilities().tie_rule, TieRule::all);
  // The raw answer: one cotangent per input, with the input's shape.
  const BackendResult r = backend.run(product_vjp());
  const auto* g = std::get_if<Gradients>(&r);
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(g->tensors.size(), 2u);
  EXPECT_EQ(g->tensors[0].values<double>()[1], 3 * 0.25);
  EXPECT_EQ(g->tensors[1].values<double>()[2], -1 * 3.0);
  // Through run_case (ordered: judged against the reference's ordered VJP), forward and VJP cases
  // alternating on one process.
  for (int round = 0; round < 2; ++round) {
    EXPECT_EQ(run_on(product_vjp(), backend).kind, VK::pass_bitwise) << explain(run_on(product_vjp(), backend));
    EXPECT_EQ(run_on(sum_vjp(), backend).kind, VK::pass_bitwise) << explain(run_on(sum_vjp(), backend));
    EXPECT_EQ(run_on(passthrough(), backend).kind, VK::pass_bitwise);
  }
}

TEST(ProtocolAVjp, ABackendThatDeclaresNoVjpIsNeverSentOne) {
  // faulty_backend.py answers every request as a passthrough; a VJP request would get a forward
  // answer. Not declaring vjp, it is never asked.
  ProcessBackend backend(faulty_options("none"));
  ASSERT_FALSE(backend.start_failure()) << backend.start_failure()->evidence;
  Case c = passthrough();
  c.cotangent = Tensor(Shape{3}, std::vector<double>{1, 1, 1});
  EXPECT_FALSE(backend.supports(c));
  EXPECT_EQ(run_on(c, backend).kind, VK::unsupported);
}

struct VjpFaultRow {
  const char* mode;
  VK kind;
  const char* evidence;
};

void PrintTo(const VjpFaultRow& row, std::ostream* os) { *os << row.mode; }

class VjpFaults : public ::testing::TestWithParam<VjpFaultRow> {};

TEST_P(VjpFaults, BecomeAVerdictAndTheNextCaseRuns) {
  const VjpFaultRow& row = GetParam();
  ProcessBackend backend(vjp_options(row.mode, "", 2));
  ASSERT_FALSE(backend.start_failure()) << backend.start_failure()->evidence;
  // Forward cases are answered correctly in every mode.
  EXPECT_EQ(run_on(passthrough(), backend).kind, VK::pass_bitwise);
  const Verdict v = run_on(product_vjp(), backend);
  EXPECT_EQ(v.kind, row.kind) << explain(v);
  EXPECT_TRUE(contains(v.detail, row.evidence)) << "evidence: " << v.detail;
  EXPECT_EQ(run_on(passthrough(), backend).kind, VK::pass_bitwise);
}

INSTANTIATE_TEST_SUITE_P(
    ProtocolAVjp, VjpFaults,
    ::testing::Values(VjpFaultRow{"shapes-short", VK::crash, "has 1 entries, the vjp request 2"},
                      VjpFaultRow{"shape-not-shapes", VK::crash, "without a \"shapes\" array"},
                      VjpFaultRow{"short-payload", VK::crash, "short payload"},
                      VjpFaultRow{"long-payload", VK::crash, "long payload"},
                      VjpFaultRow{"bad-entry", VK::crash, "not an array of lengths"},
                      VjpFaultRow{"huge", VK::crash, "huge shape"},
                      // Well-formed but wrong: the judge's verdict, not a protocol fault.
                      VjpFaultRow{"wrong-shape", VK::mismatch_shape, "cotangent of input 0"}),
    [](const ::testing::TestParamInfo<VjpFaultRow>& p) { return test_name(p.param.mode); });

}  // namespace
}  // namespace einfuzz
