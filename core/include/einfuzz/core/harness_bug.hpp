// The one funnel for harness bugs (STYLE.md: errors of the third kind): print and abort, loudly.
#pragma once

#include <string_view>

namespace einfuzz {

/// Prints "einfuzz: harness bug: WHAT" to stderr and aborts. For broken invariants of einfuzz's
/// own code only; never for bad input (a diagnostic) or a backend's misbehaviour (a verdict).
[[noreturn]] void harness_bug(std::string_view what) noexcept;

}  // namespace einfuzz
