// PROTOCOL A's precision extensions: the hello's `accumulate` and `round_inputs` (ORACLE §8) parsed
// into Capabilities, each bad value a protocol fault that says why, and f16/bf16 tensors on the wire
// (two bytes per element, little-endian) in both directions through a real process.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "einfuzz/backends/process.hpp"
#include "einfuzz/core/text.hpp"
#include "process_wire.hpp"
#include "support/protocol_cases.hpp"

namespace einfuzz {
namespace {

using wire::Json;

/// decode_hello of the hello `{"protocol":"einfuzz-backend/1", <fields>}`.
std::variant<Capabilities, std::string> hello(const std::string& fields) {
  std::string notation = "einops";
  return wire::decode_hello(Json::parse("{\"protocol\":\"einfuzz-backend/1\"" + (fields.empty() ? "" : "," + fields) + "}"),
                            "cmd", notation);
}

std::string why(const std::string& fields) {
  auto r = hello(fields);
  return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : std::string("accepted");
}

TEST(ProfileHello, AccumulateAndRoundInputsAreReadPerDtype) {
  auto r = hello(R"("dtypes":["f16","bf16","f32"],"accumulate":{"f16":"f32","bf16":"f32"},"round_inputs":{"f32":"tf32"})");
  ASSERT_TRUE(std::holds_alternative<Capabilities>(r)) << std::get<std::string>(r);
  const Capabilities& c = std::get<Capabilities>(r);
  EXPECT_EQ(c.profile(DType::f16), (PrecisionProfile{DType::f32, InputRounding::none}));
  EXPECT_EQ(c.profile(DType::bf16), (PrecisionProfile{DType::f32, InputRounding::none}));
  EXPECT_EQ(c.profile(DType::f32), (PrecisionProfile{DType::f32, InputRounding::tf32}));
  EXPECT_EQ(c.profile(DType::f64), storage_profile(DType::f64));
  // "none" is the absent entry spelled out, and the dtype itself the absent accumulator.
  auto spelled = hello(R"("accumulate":{"f32":"f32"},"round_inputs":{"f64":"none"})");
  ASSERT_TRUE(std::holds_alternative<Capabilities>(spelled));
  EXPECT_EQ(std::get<Capabilities>(spelled).profile(DType::f32), storage_profile(DType::f32));
  EXPECT_EQ(std::get<Capabilities>(spelled).profile(DType::f64), storage_profile(DType::f64));
}

// A profile ORACLE §8 has no bound for is refused with the hello (as an unknown name is), so the
// backend is never started rather than failing every case it is judged on, min and max included.
TEST(ProfileHello, AProfileWithNoBoundIsRefusedWithTheHello) {
  EXPECT_EQ(why(R"("accumulate":{"f32":"bf16"})"),
            "the declared profile bf16 for f32 (\"accumulate\", \"round_inputs\") is not a valid precision profile: "
            "the accumulator bf16 cannot hold every f32 value (narrower than the dtype, ORACLE §8)");
  EXPECT_EQ(why(R"("accumulate":{"bf16":"f16"})"),  // f16 has more digits than bf16 but not its range
            "the declared profile f16 for bf16 (\"accumulate\", \"round_inputs\") is not a valid precision profile: "
            "the accumulator f16 cannot hold every bf16 value (narrower than the dtype, ORACLE §8)");
  EXPECT_EQ(why(R"("round_inputs":{"f64":"tf32"})"),
            "the declared profile f64+tf32 for f64 (\"accumulate\", \"round_inputs\") is not a valid precision "
            "profile: tf32 input rounding does not cover the exponent range of f64 (ORACLE §8)");
  // The pair is judged together: a valid accumulator does not excuse the rounding, whichever key
  // names the dtype.
  EXPECT_NE(why(R"("accumulate":{"f64":"f64"},"round_inputs":{"f64":"tf32"})"), "accepted");
  // Every valid pair is accepted.
  for (const char* fields : {R"("accumulate":{"f16":"f64","bf16":"f64","f32":"f64"},"round_inputs":{"f16":"tf32","bf16":"tf32"})",
                             R"("accumulate":{"f16":"f16","bf16":"bf16"},"round_inputs":{"f32":"tf32"})"}) {
    EXPECT_EQ(why(fields), "accepted") << fields;
  }
}

// ORACLE §8's profiles are any-order backends' declarations: an ordered backend that declares a
// wider accumulator or rounded inputs is refused with its hello (it had been accepted and ignored,
// its answers judged bitwise against the fold in the dtype). Declaring the dtype itself is no
// profile and stays accepted (fused's table lists f32:f32).
TEST(ProfileHello, AnOrderedBackendCannotDeclareAProfile) {
  const std::string refused = why(R"("semantics":"ordered","accumulate":{"f32":"f64"})");
  EXPECT_NE(refused.find("an ordered backend computes every + and · in the dtype"), std::string::npos) << refused;
  EXPECT_NE(refused.find("f64 for f32"), std::string::npos) << refused;
  EXPECT_NE(why(R"("semantics":"ordered","round_inputs":{"f32":"tf32"})"), "accepted");
  EXPECT_EQ(why(R"("semantics":"ordered","accumulate":{"f32":"f32","f16":"f16"})"), "accepted");
  EXPECT_EQ(why(R"("semantics":"any-order","accumulate":{"f32":"f64"})"), "accepted");
}

TEST(ProfileHello, WithoutTheKeysEveryDtypeHasTheDefaultProfile) {
  auto r = hello(R"("dtypes":["f16","bf16","f32","f64"])");
  ASSERT_TRUE(std::holds_alternative<Capabilities>(r));
  const Capabilities& c = std::get<Capabilities>(r);
  EXPECT_EQ(c.dtypes, (std::vector<DType>{DType::f16, DType::bf16, DType::f32, DType::f64}));
  EXPECT_TRUE(c.accumulate.empty());
  EXPECT_TRUE(c.round_inputs.empty());
  for (DType d : c.dtypes) EXPECT_EQ(c.profile(d), storage_profile(d)) << dtype_name(d);
}

TEST(ProfileHello, ABadProfileIsAProtocolFaultThatSaysWhy) {
  EXPECT_EQ(why(R"("accumulate":"f32")"), "\"accumulate\" must be an object (dtype -> format)");
  EXPECT_EQ(why(R"("accumulate":{"f8":"f32"})"), "an \"accumulate\" key names the unknown dtype \"f8\"");
  EXPECT_EQ(why(R"("accumulate":{"i32":"i64"})"), "an \"accumulate\" key names \"i32\", which is not a float dtype");
  EXPECT_EQ(why(R"("accumulate":{"f16":"f128"})"), "\"accumulate\".f16 names the unknown dtype \"f128\"");
  EXPECT_EQ(why(R"("accumulate":{"f16":"i32"})"), "\"accumulate\".f16 names \"i32\", which is not a float dtype");
  EXPECT_EQ(why(R"("accumulate":{"f16":"bool"})"), "\"accumulate\".f16 names \"bool\", which is not a float dtype");
  EXPECT_EQ(why(R"("accumulate":{"f16":32})"), "\"accumulate\".f16 must be a dtype name (a string)");
  EXPECT_EQ(why(R"("round_inputs":["tf32"])"), "\"round_inputs\" must be an object (dtype -> \"tf32\")");
  EXPECT_EQ(why(R"("round_inputs":{"i64":"tf32"})"), "a \"round_inputs\" key names \"i64\", which is not a float dtype");
  EXPECT_EQ(why(R"("round_inputs":{"f32":"bf16"})"), "\"round_inputs\".f32 must be \"tf32\" or \"none\", got \"bf16\"");
  EXPECT_EQ(why(R"("round_inputs":{"f32":null})"), "\"round_inputs\".f32 must be \"tf32\" or \"none\", got null");
  // The backend's text is quoted printable.
  EXPECT_EQ(why(R"("accumulate":{"f\u0001":"f32"})"), "an \"accumulate\" key names the unknown dtype \"f\\\\x01\"");
}

/// The half-echo backend (tests/backends/half_echo_backend.py) with `extra` merged into its hello.
ProcessOptions echo_options(const std::string& extra = "{}") {
  ProcessOptions o;
  o.command = test::python() + " " + shell_quote((test::kSource / "tests/backends/half_echo_backend.py").string()) +
              " " + shell_quote(extra);
  o.name = "half-echo";
  o.timeout_seconds = 10;
  return o;
}

TEST(ProfileWire, TheHelloProfileReachesTheProcessBackendsCapabilities) {
  ProcessBackend b(echo_options(R"({"accumulate":{"bf16":"f32"},"round_inputs":{"f32":"tf32"}})"));
  ASSERT_FALSE(b.start_failure()) << b.start_failure()->evidence;
  EXPECT_EQ(b.capabilities().profile(DType::bf16), (PrecisionProfile{DType::f32, InputRounding::none}));
  EXPECT_EQ(b.capabilities().profile(DType::f16), storage_profile(DType::f16));
  EXPECT_EQ(b.capabilities().profile(DType::f32), (PrecisionProfile{DType::f32, InputRounding::tf32}));
}

TEST(ProfileWire, ABadProfileInTheHelloIsAStartFailureWithTheReason) {
  ProcessBackend b(echo_options(R"({"accumulate":{"f16":"i32"}})"));
  ASSERT_TRUE(b.start_failure().has_value());
  EXPECT_EQ(b.start_failure()->kind, FaultKind::protocol);
  EXPECT_TRUE(test::contains(b.start_failure()->evidence, "\"accumulate\".f16 names \"i32\", which is not a float dtype"))
      << b.start_failure()->evidence;
}

/// Every 16-bit pattern of one format once (NaNs, infinities, subnormals, both zeros included).
template <class T>
Tensor every_pattern(DType d) {
  Tensor t(d, Shape{65536});
  auto v = t.values<T>();
  for (std::uint32_t bits = 0; bits < 65536; ++bits) v[bits] = T::from_bits(static_cast<std::uint16_t>(bits));
  return t;
}

template <class T>
void round_trip(DType d) {
  ProcessBackend b(echo_options());
  ASSERT_FALSE(b.start_failure()) << b.start_failure()->evidence;
  Case c;
  c.pattern = "i -> i";
  c.dtype = d;
  c.inputs.push_back(every_pattern<T>(d));
  const BackendResult r = b.run(c);
  ASSERT_TRUE(std::holds_alternative<Tensor>(r)) << "index " << r.index();
  const Tensor& t = std::get<Tensor>(r);
  ASSERT_EQ(t.dtype(), d);
  ASSERT_EQ(t.shape(), Shape{65536});
  const auto in = c.inputs[0].values<T>();
  const auto out = t.values<T>();
  int wrong = 0;
  for (std::size_t k = 0; k < out.size(); ++k) {
    // The backend flipped the top bit of each element's second byte: the sign, if two bytes LE.
    if (out[k].bits() != static_cast<std::uint16_t>(in[k].bits() ^ 0x8000u) && ++wrong <= 5) {
      ADD_FAILURE() << "element " << k << ": sent 0x" << std::hex << in[k].bits() << ", got 0x" << out[k].bits();
    }
  }
  EXPECT_EQ(wrong, 0);
}

TEST(ProfileWire, EveryF16BitPatternCrossesTheWireBothWays) { round_trip<Float16>(DType::f16); }
TEST(ProfileWire, EveryBF16BitPatternCrossesTheWireBothWays) { round_trip<BFloat16>(DType::bf16); }

}  // namespace
}  // namespace einfuzz
