// The PROTOCOL A wire format without a process (backends/src/process_wire.hpp): requests encoded,
// hellos and responses decoded, stdout lines checked; each bad response is the protocol fault the
// `cmd:` backend reports for it.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "process_wire.hpp"

namespace einfuzz {
namespace {

using wire::Json;

Json json(std::string_view text) { return Json::parse(text); }

/// decode_response for request 7 on a process whose first request was 5, expecting f64.
wire::Response decode(std::string_view text, DType out = DType::f64, const Limits& limits = {}) {
  return wire::decode_response(json(text), 7, 5, out, limits);
}

/// The evidence of a BadResponse (fails the test for any other answer).
std::string bad(const wire::Response& r) {
  const auto* b = std::get_if<wire::BadResponse>(&r);
  EXPECT_NE(b, nullptr) << "not a protocol fault (index " << r.index() << ")";
  return b ? b->what : std::string();
}

std::string parse_error(std::string line, std::size_t max_line_bytes = 1 << 20) {
  auto r = wire::parse_line(std::move(line), max_line_bytes);
  const auto* why = std::get_if<std::string>(&r);
  EXPECT_NE(why, nullptr) << "the line parsed";
  return why ? *why : std::string();
}

TEST(Wire, AnOkResponseAnnouncesItsPayloadShape) {
  const auto r = decode(R"({"id":7,"status":"ok","dtype":"f64","shape":[2,3]})");
  const auto* p = std::get_if<wire::Payload>(&r);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->shape, (Shape{2, 3}));
  // dtype is optional; bool for any/all.
  EXPECT_TRUE(std::holds_alternative<wire::Payload>(decode(R"({"id":7,"status":"ok","shape":[]})")));
  EXPECT_TRUE(std::holds_alternative<wire::Payload>(
      decode(R"({"id":7,"status":"ok","dtype":"bool","shape":[1]})", DType::boolean)));
}

TEST(Wire, ErrorAndUnsupportedCarryTheBackendsWords) {
  const auto r = decode(R"({"id":7,"status":"error","code":"rankMismatch","message":"no"})");
  const auto* rej = std::get_if<Rejected>(&r);
  ASSERT_NE(rej, nullptr);
  EXPECT_EQ(rej->code, "rankMismatch");
  EXPECT_EQ(rej->message, "no");
  const auto u = decode(R"({"id":7,"status":"unsupported","message":"later"})");
  ASSERT_TRUE(std::holds_alternative<Unsupported>(u));
  EXPECT_EQ(std::get<Unsupported>(u).message, "later");
  // A code that is not a string is a fault, not "no code" (which agrees with any rejection); null
  // is the absent code spelled out.
  const auto number = decode(R"({"id":7,"status":"error","code":42,"message":"no"})");
  ASSERT_TRUE(std::holds_alternative<wire::BadResponse>(number));
  EXPECT_EQ(std::get<wire::BadResponse>(number).what, "\"code\" must be a string, got 42");
  const auto null = decode(R"({"id":7,"status":"error","code":null,"message":"no"})");
  ASSERT_TRUE(std::holds_alternative<Rejected>(null));
  EXPECT_EQ(std::get<Rejected>(null).code, "");
}

TEST(Wire, AWrongDtypeIsAProtocolFault) {
  EXPECT_EQ(bad(decode(R"({"id":7,"status":"ok","dtype":"f32","shape":[2]})")),
            "\"dtype\" \"f32\" is not the expected f64");
  EXPECT_NE(bad(decode(R"({"id":7,"status":"ok","dtype":3,"shape":[2]})")).find("is not the expected f64"),
            std::string::npos);
}

TEST(Wire, AShapeThatIsNotLengthsOrOverTheLimitsIsAProtocolFault) {
  EXPECT_EQ(bad(decode(R"({"id":7,"status":"ok"})")), "an ok response without a \"shape\" array");
  EXPECT_EQ(bad(decode(R"({"id":7,"status":"ok","shape":[2,-1]})")),
            "\"shape\" [2,-1] has an entry that is not a length");
  EXPECT_EQ(bad(decode(R"({"id":7,"status":"ok","shape":[1.5]})")),
            "\"shape\" [1.5] has an entry that is not a length");
  EXPECT_EQ(bad(decode(R"({"id":7,"status":"ok","shape":[18446744073709551615]})")),
            "\"shape\" [18446744073709551615] has an entry that is not a length");
  Limits small;
  small.max_tensor_elements = 10;
  EXPECT_EQ(bad(decode(R"({"id":7,"status":"ok","shape":[4,4]})", DType::f64, small)).rfind("huge shape [4,4]: ", 0),
            0u);
}

TEST(Wire, IdsTellAWrongAnswerFromASecondAnswerToAnEarlierRequest) {
  EXPECT_EQ(bad(decode(R"({"id":8,"status":"ok","shape":[]})")), "wrong id: expected 7, got 8");
  EXPECT_EQ(bad(decode(R"({"status":"ok","shape":[]})")), "wrong id: expected 7, got none");
  EXPECT_EQ(bad(decode(R"({"id":4,"status":"ok","shape":[]})")), "wrong id: expected 7, got 4");  // before first_id
  const auto stale = decode(R"({"id":6,"status":"ok","shape":[]})");
  ASSERT_TRUE(std::holds_alternative<wire::StaleResponse>(stale));
  EXPECT_EQ(std::get<wire::StaleResponse>(stale).request, 6);
}

TEST(Wire, AStatusMustBeKnown) {
  EXPECT_EQ(bad(decode(R"({"id":7})")), "\"status\" missing or not a string");
  EXPECT_EQ(bad(decode(R"({"id":7,"status":"fine"})")), "unknown status \"fine\"");
  EXPECT_EQ(bad(decode(R"([7])")), "the response is not a JSON object: \"[7]\"");
}

TEST(Wire, LinesAreCheckedBeforeTheyAreParsed) {
  EXPECT_EQ(parse_error(R"({"id":7,"status":"o)"), "malformed JSON: \"{\"id\":7,\"status\":\"o\"");  // truncated
  EXPECT_EQ(parse_error("{\"id\":\xff}"), "a line that is not UTF-8: \"{\"id\":\\xff}\"");
  EXPECT_EQ(parse_error(std::string(40, '[') + std::string(40, ']')), "JSON nested deeper than 32 levels");
  EXPECT_EQ(parse_error(R"({"id":1234567})", 8), "output flooding: a line of 14 bytes (limit 8)");
  // A CRLF line ending is accepted.
  auto ok = wire::parse_line("{\"id\":1}\r", 1 << 20);
  ASSERT_TRUE(std::holds_alternative<Json>(ok));
  EXPECT_EQ(std::get<Json>(ok)["id"], 1);
}

TEST(Wire, AHelloDeclaresCapabilitiesWithDefaults) {
  std::string notation = "einops";
  auto r = wire::decode_hello(json(R"({"protocol":"einfuzz-backend/1","name":"np","version":"2"})"), "cmd", notation);
  ASSERT_TRUE(std::holds_alternative<Capabilities>(r));
  const Capabilities& caps = std::get<Capabilities>(r);
  EXPECT_EQ(caps.ops, (std::vector<Op>{Op::einsum}));
  EXPECT_EQ(caps.dtypes, (std::vector<DType>{DType::f32, DType::f64}));
  EXPECT_EQ(caps.semantics, Semantics::any_order);
  EXPECT_EQ(caps.version, "np 2");
  EXPECT_EQ(notation, "einops");
  auto numpy = wire::decode_hello(
      json(R"({"protocol":"einfuzz-backend/1","notation":"numpy","ops":["einsum","reduce","vjp"],"reductions":["sum","median"]})"),
      "cmd", notation);
  ASSERT_TRUE(std::holds_alternative<Capabilities>(numpy));
  EXPECT_EQ(std::get<Capabilities>(numpy).ops, (std::vector<Op>{Op::einsum, Op::reduce}));  // unknown names skipped
  EXPECT_EQ(std::get<Capabilities>(numpy).reductions, (std::vector<std::string>{"sum"}));
  EXPECT_EQ(std::get<Capabilities>(numpy).version, "cmd");
  EXPECT_EQ(notation, "numpy");
}

TEST(Wire, ABadHelloSaysWhy) {
  std::string notation = "einops";
  const auto why = [&](std::string_view text) {
    auto r = wire::decode_hello(json(text), "cmd", notation);
    return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : std::string("accepted");
  };
  EXPECT_EQ(why(R"({"protocol":"einfuzz-backend/2"})"),
            "\"protocol\" must be \"einfuzz-backend/1\", got \"einfuzz-backend/2\"");
  EXPECT_EQ(why(R"({"protocol":"einfuzz-backend/1","dtypes":"f32"})"), "\"dtypes\" must be an array of strings");
  EXPECT_EQ(why(R"({"protocol":"einfuzz-backend/1","semantics":"exact"})"),
            "\"semantics\" must be \"ordered\" or \"any-order\", got \"exact\"");
  EXPECT_EQ(why(R"({"protocol":"einfuzz-backend/1","factoring":1})"), "\"factoring\" must be true or false");
  EXPECT_EQ(why("[]"), "the answer is not a JSON object");
}

TEST(Wire, ARequestLineDescribesTheCase) {
  Case c;
  c.pattern = "i k, k j -> i j";
  c.dtype = DType::f32;
  c.inputs = {Tensor(DType::f32, Shape{2, 3}), Tensor(DType::f32, Shape{3, 1})};
  EXPECT_EQ(wire::request_line(c, 3, {std::nullopt, std::nullopt}),
            "{\"id\":3,\"op\":\"einsum\",\"pattern\":\"i k, k j -> i j\",\"subscripts\":\"ab,bc->ac\","
            "\"dtype\":\"f32\",\"inputs\":[{\"shape\":[2,3]},{\"shape\":[3,1]}]}\n");
  Case r;
  r.op = Op::reduce;
  r.pattern = "(a b) -> a";
  r.reduction = "sum";
  r.axis_lengths = {{"a", 2}, {"b", 3}};
  r.inputs = {Tensor(DType::f64, Shape{6})};
  EXPECT_EQ(wire::request_line(r, 4, {std::nullopt}),
            "{\"id\":4,\"op\":\"reduce\",\"pattern\":\"(a b) -> a\",\"reduction\":\"sum\","
            "\"axis_lengths\":{\"a\":2,\"b\":3},\"dtype\":\"f64\",\"inputs\":[{\"shape\":[6]}]}\n");
  EXPECT_EQ(wire::output_dtype(r), DType::f64);
  EXPECT_FALSE(wire::not_describable(r).has_value());
  r.axis_lengths.push_back({"a", 2});
  EXPECT_NE(wire::not_describable(r).value_or("").find("repeat the name \"a\""), std::string::npos);
  r.inputs.push_back(r.inputs[0]);
  EXPECT_NE(wire::not_describable(r).value_or("").find("exactly one input and this case has 2"), std::string::npos);
}

// A VJP of an einsum with no operands is still one JSON line (the cotangent alone in "inputs"),
// so a backend can answer it (the reference rejects it); and a request has one dtype, so a case
// whose cotangent (an invalid VJP case, generated to be rejected) or an input has another is not
// sent: its bytes would be read at the wrong size and put the stream out of step.
TEST(Wire, AVjpRequestIsValidJsonAndHasOneDtype) {
  Case c;
  c.pattern = "->";
  c.dtype = DType::f64;
  c.cotangent = Tensor(DType::f64, Shape{});
  const std::string line = wire::request_line(c, 1, {});
  EXPECT_TRUE(Json::accept(line)) << line;
  EXPECT_NE(line.find("\"inputs\":[{\"shape\":[]}]"), std::string::npos) << line;
  EXPECT_FALSE(wire::not_describable(c).has_value());
  c.dtype = DType::boolean;
  EXPECT_NE(wire::not_describable(c).value_or("").find("a cotangent of dtype f64 in a bool case"), std::string::npos);
  c.dtype = DType::f64;
  c.inputs = {Tensor(DType::f32, Shape{2})};
  EXPECT_NE(wire::not_describable(c).value_or("").find("an input of dtype f32 in a f64 case"), std::string::npos);
}

}  // namespace
}  // namespace einfuzz
