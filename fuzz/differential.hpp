// What the differential targets share: a stable hash of the input (the shuffle backend's seed) and
// the check that no backend got a failing verdict.
#pragma once

#include <cstdint>
#include <span>

#include "einfuzz/harness/run.hpp"

namespace einfuzz::fuzz {

/// FNV-1a of the input bytes: the same input always gives the shuffle backend the same choices.
std::uint64_t input_hash(std::span<const std::uint8_t> data) noexcept;

/// fail() with the backend, the verdict label, its detail and first element, and the case, when
/// some backend of `outcome` has a failing verdict (ORACLE.md §6).
void require_no_failure(const CaseOutcome& outcome, const Case& c);

}  // namespace einfuzz::fuzz
