// The one case format, `einfuzz-case/1` (CASES.md): read, write, bit-exact round trip.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "einfuzz/core/diagnostic.hpp"
#include "einfuzz/core/dtype.hpp"
#include "einfuzz/core/limits.hpp"
#include "einfuzz/core/tensor.hpp"

namespace einfuzz {

enum class Op { einsum, reduce };
std::string_view op_name(Op op) noexcept;

/// How a client that accepts strided inputs builds an input as a view (the PROTOCOL A layout
/// extension): logical element (i_0, …, i_{r-1}) lives at storage[offset + Σ i_d·strides_d].
/// The case's `values` stay the logical row-major values; storage elements no logical index reaches
/// hold `fill`. Zero strides broadcast (aliased elements must then hold identical values); negative
/// strides walk backwards.
struct InputLayout {
  std::vector<std::int64_t> strides;  ///< one per dimension, in elements
  std::int64_t offset = 0;            ///< storage index of the element at coordinates (0, …, 0)
  std::int64_t storage = 0;           ///< elements in the storage buffer
  std::optional<Tensor> fill;         ///< rank-0, the case's dtype; absent: +0 / 0 / false
};

/// The storage buffer of `logical` laid out by `layout` (a rank-1 tensor of `layout.storage`
/// elements). `invalidArgument` when the strides' count differs from the rank, an offset or a
/// reachable element falls outside the storage, aliased elements disagree or the fill has the wrong
/// dtype; `sizeLimitExceeded` when the storage is over `limits`. An empty view reads nothing.
Result<Tensor> layout_storage(const Tensor& logical, const InputLayout& layout, const Limits& limits = {});

/// `layout` over `shape` with the offset and storage its view reaches and nothing more (strides and
/// fill kept): the least storage index it reads is 0; an empty view has offset and storage 0.
InputLayout tight_layout(const Shape& shape, InputLayout layout);

/// One case: a pattern, its inputs and optionally what the reference must conclude.
struct Case {
  Op op = Op::einsum;
  std::string pattern;
  std::optional<std::string> reduction;  ///< reduce only: "sum" | "mean" | … (kept verbatim)
  /// reduce only: supplied axis lengths in the order given (duplicates kept, so the checker can
  /// report `duplicateAxisLength`).
  std::vector<std::pair<std::string, std::int64_t>> axis_lengths;
  DType dtype = DType::f64;
  std::vector<Tensor> inputs;            ///< each with dtype == this->dtype
  /// Optional per-input layouts (CASES `"layout"`): empty, or one entry per input. Evaluators
  /// ignore them (values are logical); out-of-process and plugin clients build the strided view.
  std::vector<std::optional<InputLayout>> layouts;
  /// `expect`: absent (nullopt), {"error": null} (engaged, empty string) or {"error": "<code>"}.
  std::optional<std::string> expect_error;
  /// `origin`: free-form string fields in file order (seed, generator, backend, verdict, found…).
  std::vector<std::pair<std::string, std::string>> origin;
  /// A VJP case (CASES `"op": "vjp"`, `"of"`: this->op) carries the cotangent of the forward
  /// output: the forward output's shape (the checker verifies it) and the case's dtype. Absent for
  /// a forward case. The answer is one cotangent per forward input (ORACLE §7).
  std::optional<Tensor> cotangent;

  /// True for a VJP case.
  bool is_vjp() const noexcept { return cotangent.has_value(); }
};

/// "einsum", "reduce", "vjp-einsum" or "vjp-reduce": how file names and reports name a case's kind.
std::string case_kind_name(const Case& c);

/// Parses a case document. Every failure is `malformedCase` with a message naming `file_name`, the
/// field and, for values, the input and element index; shapes over `limits` are
/// `sizeLimitExceeded`. Never crashes and never allocates more than the limits allow, whatever the
/// bytes.
Result<Case> read_case(std::string_view text, std::string_view file_name, const Limits& limits = {});

/// Reads a file and parses it with read_case.
Result<Case> read_case_file(const std::filesystem::path& path, const Limits& limits = {});

/// Canonical text of a case: stable key order, one input per line, values as CASES.md spells them.
/// read_case(write_case(c)) reproduces every bit of `c`.
std::string write_case(const Case& c);

/// Content-derived stable file name, e.g. "einsum-3f2a9c1b0d4e5f60.case.json" (hash of the
/// canonical text without `origin`), so the same failure found twice is stored once.
std::string case_file_name(const Case& c);

/// One value as CASES.md spells it: hex-float ("0x1.8p+1", "-0x0p+0"), "inf", "-inf", "nan",
/// "nan:0x<raw bits>" for other NaNs; integers in decimal; bools "true"/"false".
std::string format_value(const Tensor& t, std::int64_t flat_index);

}  // namespace einfuzz
