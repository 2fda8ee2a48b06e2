// Shared between the reproducer writers (repro.cpp, repro_python.cpp, repro_cxx.cpp,
// repro_eigen.cpp): what the semantics require of one case, computed once from the reference and
// the judge, and the small spellings every program text uses.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "einfuzz/core/case.hpp"
#include "einfuzz/harness/judge.hpp"
#include "einfuzz/harness/repro.hpp"
#include "einfuzz/harness/run.hpp"

namespace einfuzz::detail {

/// What any correct library returns for a case.
struct Requirement {
  std::optional<Diagnostic> rejection;  ///< the reference rejects the case: the library must raise
  std::optional<CheckedCase> checked;   ///< otherwise the checked case
  DType dtype = DType::f64;             ///< output dtype (bool for any/all)
  Shape shape;                          ///< output shape
  std::vector<AcceptedSet> accepted;    ///< float outputs: per element, what the judge accepts
  std::optional<Tensor> exact;          ///< integer and bool outputs: the only correct result
  std::vector<std::string> described;   ///< float outputs: each accepted set in words
};

/// Everything a writer needs besides the requirement.
struct ReproInput {
  const Case& c;
  std::string backend;
  const Capabilities& caps;
  const ReproOptions& options;
  const Requirement& required;
  std::string header;  ///< comment lines (without comment markers) naming the case and the rule
};

Result<ReproProgram> write_python(const ReproInput& in);
Result<ReproProgram> write_cxx(const ReproInput& in);

/// `in`'s accepted set as text, bounds rounded outward to the output dtype for reading.
std::string describe_accepted(const AcceptedSet& a, DType dtype);

/// The coordinates of flat element `i` of `shape`, "(1, 0)"; "()" for rank 0.
std::string coordinates_text(std::int64_t i, const Shape& shape);

/// The body of the Eigen reproducer of a checked einsum or reduce (repro_eigen.cpp), or a refusal.
Result<std::string> eigen_einsum(const CheckedEinsum& e);
Result<std::string> eigen_reduce(const CheckedReduce& r);

/// `v` as a C++ braced list of integers, "{2, 3}".
template <class V>
std::string c_list(const V& v) {
  std::string out = "{";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "}";
}

/// `s` between `quote`s for a program text: a backslash or `quote` gets a backslash before it; a
/// control byte, a byte from 0x7f up, or one of `also` is written with `byte_format` (printf, one
/// unsigned char), e.g. "\\%03o" (C++) or "\\x%02x" (Python).
std::string quoted_literal(std::string_view s, char quote, const char* byte_format, std::string_view also);

/// The bits of `v`, "0x%08x" for a float and "0x%016llx" for a double (NaNs keep sign and payload).
std::string bits_hex(float v);
std::string bits_hex(double v);

/// The 16 bits of an f16 or bf16 value, "0x3c00".
std::string bits16_hex(std::uint16_t bits);

/// The bit patterns of an f16 or bf16 tensor's values between `open` and `close`, comma-separated,
/// a line break and `indent` after every `per_line` of them: "[0x3c00, 0x7c00]".
std::string bits16_list(const Tensor& t, const char* open, const char* close, std::size_t per_line, const char* indent);

/// How the program texts spell a dtype: Python's struct code, numpy, torch, C++ (nullptr: none;
/// f16 and bf16 have no struct code, numpy has no bf16).
struct DTypeSpelling {
  const char* struct_code;
  const char* numpy;
  const char* torch;
  const char* cxx;
};

/// The spellings of `d` (bool: "?", np.bool_, torch.bool, std::uint8_t).
const DTypeSpelling& spelling(DType d);

/// A refusal: nothing of the library to reproduce.
Diagnostic not_reproducible(const std::string& why);

}  // namespace einfuzz::detail
