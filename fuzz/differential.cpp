// Shared parts of the differential targets (see differential.hpp).
#include "differential.hpp"

#include <string>

#include "fuzz_input.hpp"

namespace einfuzz::fuzz {

std::uint64_t input_hash(std::span<const std::uint8_t> data) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::uint8_t b : data) h = (h ^ b) * 0x100000001b3ULL;
  return h;
}

void require_no_failure(const CaseOutcome& outcome, const Case& c) {
  for (const BackendOutcome& b : outcome.backends) {
    if (!is_failure(b.verdict.kind)) continue;
    std::string message = b.backend + ": " + b.verdict.label() + " — " + b.verdict.detail;
    if (b.verdict.first) {
      message += "\n  first element " + std::to_string(b.verdict.first->flat_index) + ": expected " +
                 b.verdict.first->expected + ", actual " + b.verdict.first->actual;
    }
    fail(message, &c);
  }
}

}  // namespace einfuzz::fuzz
