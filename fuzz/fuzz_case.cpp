// libFuzzer target: the case-file reader never crashes, and every accepted case round-trips:
// write_case(read_case(x)) is a fixed point of read-then-write, bit for bit.
#include <cstdint>
#include <string>
#include <string_view>

#include "einfuzz/core/case.hpp"
#include "fuzz_input.hpp"

namespace einfuzz::fuzz {
namespace {

/// Limits small enough that a hostile shape cannot make the reader allocate gigabytes.
Limits reader_limits() {
  Limits limits;
  limits.max_tensor_elements = std::int64_t{1} << 16;
  limits.max_materialised_elements = std::int64_t{1} << 18;
  return limits;
}

bool same_case(const Case& a, const Case& b) {
  if (a.op != b.op || a.pattern != b.pattern || a.reduction != b.reduction || a.axis_lengths != b.axis_lengths ||
      a.dtype != b.dtype || a.expect_error != b.expect_error || a.origin != b.origin ||
      a.inputs.size() != b.inputs.size()) {
    return false;
  }
  for (std::size_t k = 0; k < a.inputs.size(); ++k) {
    if (!bitwise_equal(a.inputs[k], b.inputs[k])) return false;
  }
  return true;
}

}  // namespace
}  // namespace einfuzz::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace einfuzz;
  using namespace einfuzz::fuzz;
  const Limits limits = reader_limits();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const Result<Case> first = read_case(text, "fuzz-input", limits);
  if (!first) {
    require(first.error().code == Code::malformedCase || first.error().code == Code::sizeLimitExceeded,
            "read_case failed with a code other than malformedCase / sizeLimitExceeded");
    return 0;
  }
  const std::string written = write_case(*first);
  const Result<Case> second = read_case(written, "fuzz-rewritten", limits);
  if (!second) fail("read_case rejects write_case's output: " + render(second.error()), &*first);
  if (!same_case(*first, *second)) fail("read_case(write_case(c)) differs from c", &*first);
  const std::string rewritten = write_case(*second);
  if (rewritten != written) fail("write_case is not a fixed point:\n" + written + "\nthen\n" + rewritten);
  require(case_file_name(*first) == case_file_name(*second), "case_file_name differs after a round trip");
  return 0;
}
