// Test helper for the case-format tests (einfuzz-case/1): RapidCheck generators of cases, case
// documents built from text, and matchers for a rejection and its diagnostic.
#pragma once

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "einfuzz/core/case.hpp"
#include "support/text_gen.hpp"

namespace einfuzz::case_test {

inline constexpr std::string_view kFile = "t.case.json";

// ---------------------------------------------------------------------------------------------
// Generators

inline const std::vector<std::string>& text_tokens() {
  static const std::vector<std::string> tokens = {"a",
                                                  "b",
                                                  "i",
                                                  "j",
                                                  "h2",
                                                  " ",
                                                  "->",
                                                  ",",
                                                  "(",
                                                  ")",
                                                  "...",
                                                  "1",
                                                  "\"",
                                                  "\\",
                                                  "/",
                                                  "\n",
                                                  "\t",
                                                  std::string("\x01"),
                                                  std::string(1, '\0'),
                                                  "\x7f",
                                                  "\xc3\xa9" /* é */,
                                                  "\xe2\x86\x92" /* → */};
  return tokens;
}

/// Strings that need JSON escaping (quotes, controls, NUL) and multi-byte UTF-8, but valid UTF-8.
inline rc::Gen<std::string> gen_text() { return test::concatenations(text_tokens()); }

template <class T>
rc::Gen<std::optional<T>> gen_optional(rc::Gen<T> gen) {
  return rc::gen::oneOf(rc::gen::just(std::optional<T>()),
                        rc::gen::map(std::move(gen), [](T v) { return std::optional<T>(std::move(v)); }));
}

/// Bit patterns biased towards the interesting classes: ±0, subnormals, ±inf, NaN payloads.
template <class Bits>
inline rc::Gen<Bits> gen_float_bits(int mantissa_bits, int exponent_bits) {
  return rc::gen::apply(
      [=](int kind, bool negative, Bits mantissa, Bits exponent) -> Bits {
        const Bits sign = negative ? Bits{1} << (mantissa_bits + exponent_bits) : 0;
        const Bits max_exponent = (Bits{1} << exponent_bits) - 1;
        const Bits exponent_mask = max_exponent << mantissa_bits;
        mantissa &= (Bits{1} << mantissa_bits) - 1;
        switch (kind) {
          case 0: return sign;                                                          // ±0
          case 1: return sign | mantissa;                                               // subnormal (or 0)
          case 2: return sign | exponent_mask;                                          // ±inf
          case 3: return sign | exponent_mask | (mantissa ? mantissa : 1);              // NaN, any payload
          case 4: return exponent_mask | (Bits{1} << (mantissa_bits - 1));              // the default NaN
          case 5: return sign | (exponent % max_exponent) << mantissa_bits | mantissa;  // finite
          case 6:
            return sign | (exponent % max_exponent) << mantissa_bits |
                   (mantissa & (Bits{0xf} << (mantissa_bits - 4)));  // few digits
          default: return sign | exponent_mask | mantissa | (exponent % max_exponent) << mantissa_bits;
        }
      },
      rc::gen::inRange(0, 8), rc::gen::arbitrary<bool>(),
      rc::gen::inRange<Bits>(0, std::numeric_limits<Bits>::max()),
      rc::gen::inRange<Bits>(0, std::numeric_limits<Bits>::max()));
}

template <class T>
inline rc::Gen<T> gen_element() {
  if constexpr (std::is_same_v<T, float>) {
    return rc::gen::map(gen_float_bits<std::uint32_t>(23, 8),
                        [](std::uint32_t b) { return std::bit_cast<float>(b); });
  } else if constexpr (std::is_same_v<T, double>) {
    return rc::gen::map(gen_float_bits<std::uint64_t>(52, 11),
                        [](std::uint64_t b) { return std::bit_cast<double>(b); });
  } else if constexpr (std::is_same_v<T, Float16>) {
    return rc::gen::map(gen_float_bits<std::uint16_t>(10, 5), [](std::uint16_t b) { return Float16::from_bits(b); });
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return rc::gen::map(gen_float_bits<std::uint16_t>(7, 8), [](std::uint16_t b) { return BFloat16::from_bits(b); });
  } else if constexpr (std::is_same_v<T, Bool8>) {
    return rc::gen::element<Bool8>(0, 1);
  } else {
    using L = std::numeric_limits<T>;
    return rc::gen::oneOf(rc::gen::inRange<T>(L::min(), L::max()),
                          rc::gen::element<T>(L::min(), L::max(), 0, -1));
  }
}

inline rc::Gen<Tensor> gen_tensor(DType dtype) {
  return rc::gen::mapcat(
      rc::gen::mapcat(rc::gen::inRange<std::size_t>(0, 4),
                      [](std::size_t rank) {
                        return rc::gen::container<Shape>(rank, rc::gen::inRange<std::int64_t>(0, 4));
                      }),
      [dtype](Shape shape) {
        const auto n = static_cast<std::size_t>(*checked_element_count(shape));
        return visit_dtype(dtype, [&](auto tag) {
          using T = decltype(tag);
          return rc::gen::map(rc::gen::container<std::vector<T>>(n, gen_element<T>()),
                              [shape](std::vector<T> v) { return Tensor(shape, std::move(v)); });
        });
      });
}

inline rc::Gen<Case> gen_case() {
  return rc::gen::mapcat(
      rc::gen::element(DType::f32, DType::f64, DType::i32, DType::i64, DType::boolean, DType::f16, DType::bf16), [](DType dtype) {
        return rc::gen::apply(
            [dtype](Op op, std::string pattern, std::optional<std::string> reduction,
                    std::vector<std::pair<std::string, std::int64_t>> axis_lengths,
                    std::vector<Tensor> inputs, std::optional<std::string> expect,
                    std::vector<std::string> origin_values) {
              Case c;
              c.op = op;
              c.pattern = std::move(pattern);
              c.reduction = std::move(reduction);
              c.axis_lengths = std::move(axis_lengths);  // duplicates included: they are kept
              c.dtype = dtype;
              c.inputs = std::move(inputs);
              c.expect_error = std::move(expect);
              // origin keys must be distinct (a duplicate is rejected); values are free text.
              for (std::size_t i = 0; i < origin_values.size(); ++i) {
                c.origin.emplace_back("k\"" + std::to_string(i), std::move(origin_values[i]));
              }
              return c;
            },
            rc::gen::element(Op::einsum, Op::reduce), gen_text(), gen_optional(gen_text()),
            rc::gen::container<std::vector<std::pair<std::string, std::int64_t>>>(
                rc::gen::pair(rc::gen::elementOf(std::vector<std::string>{"a", "b", "h2", "\"", "\xc3\xa9"}),
                              rc::gen::arbitrary<std::int64_t>())),
            rc::gen::mapcat(rc::gen::inRange<std::size_t>(0, 4),
                            [dtype](std::size_t n) {
                              return rc::gen::container<std::vector<Tensor>>(n, gen_tensor(dtype));
                            }),
            gen_optional(rc::gen::element<std::string>("", "rankMismatch", "incompatibleEinsumBroadcast")),
            rc::gen::mapcat(rc::gen::inRange<std::size_t>(0, 4), [](std::size_t n) {
              return rc::gen::container<std::vector<std::string>>(n, gen_text());
            }));
      });
}

// ---------------------------------------------------------------------------------------------
// Helpers

inline bool same_case(const Case& a, const Case& b) {
  if (a.op != b.op || a.pattern != b.pattern || a.reduction != b.reduction ||
      a.axis_lengths != b.axis_lengths || a.dtype != b.dtype || a.inputs.size() != b.inputs.size() ||
      a.expect_error != b.expect_error || a.origin != b.origin) {
    return false;
  }
  for (std::size_t i = 0; i < a.inputs.size(); ++i) {
    if (!bitwise_equal(a.inputs[i], b.inputs[i])) return false;
  }
  return true;
}

/// Every rejection: one of the two codes, no column, a message that starts with the file name.
inline bool well_formed_rejection(const Diagnostic& d, std::string_view file = kFile) {
  return (d.code == Code::malformedCase || d.code == Code::sizeLimitExceeded) && d.column == kNoColumn &&
         d.message.rfind(std::string(file) + ": ", 0) == 0;
}

inline testing::AssertionResult rejected(const std::string& text, Code code,
                                  const std::vector<std::string_view>& fragments,
                                  const Limits& limits = {}) {
  const auto r = read_case(text, kFile, limits);
  if (r) return testing::AssertionFailure() << "accepted:\n" << text;
  const Diagnostic& d = r.error();
  if (d.code != code) {
    return testing::AssertionFailure()
           << "code " << code_name(d.code) << ", expected " << code_name(code) << ": " << d.message;
  }
  if (!well_formed_rejection(d)) return testing::AssertionFailure() << "ill-formed diagnostic: " << d.message;
  for (const auto fragment : fragments) {
    if (d.message.find(fragment) == std::string::npos) {
      return testing::AssertionFailure() << "message lacks \"" << fragment << "\": " << d.message;
    }
  }
  return testing::AssertionSuccess();
}

/// One row of a rejection table: a document, its code, and fragments its message must contain.
struct Rejection {
  std::string text;
  Code code;
  std::vector<std::string_view> fragments;
};

/// One row of a value-rejection table: inputs[1].values[7] of a `dtype` document is `value`.
struct ValueRejection {
  std::string_view dtype;
  std::string_view value;
  std::vector<std::string_view> fragments;
};

/// A valid einsum case document with the given dtype and input list, plus extra top-level members.
inline std::string doc(std::string_view dtype, std::string_view inputs, std::string_view extra = "") {
  return std::string(R"({"format": "einfuzz-case/1", "op": "einsum", "pattern": "i j, j k -> i k", )") +
         R"("reduction": null, "axis_lengths": {}, "dtype": ")" + std::string(dtype) + R"(", "inputs": [)" +
         std::string(inputs) + "]" + std::string(extra) + "}";
}

/// A document whose element inputs[1].values[7] is `value` (a JSON literal); the rest is valid.
inline std::string doc_with_value(std::string_view dtype, std::string_view value) {
  const std::string ok = dtype == "bool" ? "true" : (dtype[0] == 'f' ? "\"0x1p+0\"" : "\"1\"");
  std::string values;
  for (int i = 0; i < 7; ++i) values += ok + ", ";
  return doc(dtype, "{\"shape\": [1], \"values\": [" + ok + "]}, {\"shape\": [2, 4], \"values\": [" + values +
                        std::string(value) + "]}");
}

inline testing::AssertionResult value_rejected(std::string_view dtype, std::string_view value,
                                        const std::vector<std::string_view>& fragments) {
  std::vector<std::string_view> all{"inputs[1].values[7]"};
  all.insert(all.end(), fragments.begin(), fragments.end());
  auto r = rejected(doc_with_value(dtype, value), Code::malformedCase, {});
  if (!r) return r << " (value " << value << ")";
  const std::string message = read_case(doc_with_value(dtype, value), kFile).error().message;
  for (const auto fragment : all) {
    if (message.find(fragment) == std::string::npos) {
      return testing::AssertionFailure() << "message lacks \"" << fragment << "\": " << message;
    }
  }
  return testing::AssertionSuccess();
}

template <class T>
T read_one(std::string_view dtype, std::string_view value) {
  const auto r = read_case(doc(dtype, "{\"shape\": [], \"values\": [" + std::string(value) + "]}"), kFile);
  EXPECT_TRUE(r.ok()) << (r ? "" : r.error().message);
  return r ? r->inputs.at(0).values<T>()[0] : T{};
}

template <class T>
inline std::string spell(T v) {
  return format_value(Tensor(Shape{}, std::vector<T>{v}), 0);
}


}  // namespace einfuzz::case_test
