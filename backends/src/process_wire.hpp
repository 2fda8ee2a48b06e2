// Internal to the `cmd:` backend: the PROTOCOL A wire format as pure functions (a request encoded,
// a hello and a response decoded, one stdout line checked and parsed), testable without a process.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "einfuzz/backends/backend.hpp"
#include "einfuzz/core/case.hpp"
#include "einfuzz/core/limits.hpp"
#include "einfuzz/core/tensor.hpp"
#include "einfuzz/core/text.hpp"

namespace einfuzz::wire {

using Json = nlohmann::json;

/// The protocol a hello must name.
inline constexpr std::string_view kProtocol = "einfuzz-backend/1";
/// Deeper JSON than this is refused before parsing (no backend needs more than three levels).
inline constexpr int kMaxJsonDepth = 32;

// The evidence quotes what the backend sent with core's text helpers (core/text.hpp).
using einfuzz::json_quote;
using einfuzz::printable;
/// Nesting depth of a JSON text, ignoring brackets inside strings (decides before parsing).
int json_depth(std::string_view s);
/// The output dtype of a case: bool for any/all, else the case's dtype.
DType output_dtype(const Case& c);

/// One stdout line (without its '\n'; a trailing '\r' is dropped) as JSON, or why it breaks
/// PROTOCOL A (the protocol fault's evidence): longer than `max_line_bytes`, not UTF-8, nested
/// deeper than kMaxJsonDepth, or malformed (a truncated line included).
std::variant<Json, std::string> parse_line(std::string line, std::size_t max_line_bytes);

/// The capabilities a hello declares (PROTOCOL A §1: defaults for missing keys, unknown names
/// skipped, the version "name version" with `command` as the default name), or why it is not a
/// valid hello. `notation` is set when the hello has the key, even when a later key fails.
std::variant<Capabilities, std::string> decode_hello(const Json& j, const std::string& command, std::string& notation);

/// Whether `j` is a hello's answer (an object with "protocol" and no "id"), not a case's response.
bool is_hello_answer(const Json& j);

/// Reads the hello's optional `"accumulate"` (object: float dtype → float dtype) and
/// `"round_inputs"` (object: float dtype → "tf32" or "none") into `c` (ORACLE §8), or says why they
/// break PROTOCOL A §1: not an object, an unknown or non-float dtype, an unknown rounding.
std::optional<std::string> decode_profiles(const Json& j, Capabilities& c);

/// The request line (with its '\n') for case `c` as request `id`; an input k with storages[k] set
/// is described by its layout (the storage bytes follow instead of the dense values). A VJP case
/// is `"op":"vjp","of":<forward op>` with the forward fields and one more input, the cotangent,
/// after the forward inputs (PROTOCOL A §2); its bytes follow theirs.
std::string request_line(const Case& c, std::int64_t id, const std::vector<std::optional<Tensor>>& storages);

/// Why PROTOCOL A §2 cannot describe the case to a backend, or nullopt: such a case is not sent.
std::optional<std::string> not_describable(const Case& c);

/// Why an answer of `shapes` (one per tensor) to `c` is refused before it is judged: some shape has
/// more dimensions than any answer to `c` (answer_rank_bound), as a plugin's alloc_output refuses
/// them; nullopt when none has. The reason names the rank, not the shape.
std::optional<std::string> overranked_answer(const Case& c, std::span<const Shape> shapes);

/// Why an answer of `shape` to `c` is refused before anything is allocated for it (more elements
/// than 2^16 and than the case's answer has; a VJP: its inputs together), or nullopt. PROTOCOL A §4
/// for a process's response line, and the same for a plugin's alloc_output.
std::optional<std::string> oversized_answer(const Case& c, const Shape& shape, const Limits& limits);

/// The part of not_describable a plugin request shares: an input or cotangent whose dtype is not
/// the case's (a request has one dtype, and each tensor is read at its size).
std::optional<std::string> not_describable_dtypes(const Case& c);

/// A response line carrying the id of an earlier request of this process: a second answer to it.
struct StaleResponse {
  std::int64_t request = 0;
};
/// A response line that breaks PROTOCOL A §2: the protocol fault's evidence.
struct BadResponse {
  std::string what;
};
/// An ok response: `shape` elements of the expected dtype follow as the payload (already checked
/// against the limits, so allocating it is safe). To a VJP request, `shapes` holds one shape per
/// forward input (its cotangent's, each and their total checked against the limits) and `shape`
/// is their concatenation's, one dimension: the payload is the tensors' bytes back to back.
struct Payload {
  Shape shape;
  std::vector<Shape> shapes;
};
using Response = std::variant<Rejected, Unsupported, Payload, StaleResponse, BadResponse>;

/// Decodes the response line `j` to request `id` on a process whose first request was `first_id`,
/// expecting `out_dtype`; a payload's shape is bounded by `limits`. The backend's message and code
/// are cut and escaped for reports. `gradients` set: the request was a VJP of that many forward
/// inputs, and an ok response must carry exactly that many `"shapes"`.
Response decode_response(const Json& j, std::int64_t id, std::int64_t first_id, DType out_dtype, const Limits& limits,
                         std::optional<std::size_t> gradients = std::nullopt);

/// A VJP payload (the tensors back to back, as Payload::shapes says) split into one tensor each.
Gradients split_gradients(const Tensor& payload, const std::vector<Shape>& shapes);

}  // namespace einfuzz::wire
