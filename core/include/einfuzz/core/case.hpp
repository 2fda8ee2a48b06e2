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
  /// `expect`: absent (nullopt), {"error": null} (engaged, empty string) or {"error": "<code>"}.
  std::optional<std::string> expect_error;
  /// `origin`: free-form string fields in file order (seed, generator, backend, verdict, found…).
  std::vector<std::pair<std::string, std::string>> origin;
};

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
