// Test helper for the PROTOCOL A/B and isolation tests: the faulty PROTOCOL A backend's options
// (tests/backends/faulty/faulty_backend.py, needs EINFUZZ_SOURCE_DIR) and the cases it answers.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "einfuzz/backends/process.hpp"
#include "einfuzz/core/case.hpp"
#include "einfuzz/core/text.hpp"
#include "einfuzz/harness/check_command.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define EINFUZZ_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EINFUZZ_TEST_ASAN 1
#endif
#endif

namespace einfuzz::test {

inline const std::filesystem::path kSource = EINFUZZ_SOURCE_DIR;

/// A python3 for the faulty backend (no numpy needed): Debian's if present (a pyenv shim on PATH
/// starts slowly), else whatever the shell finds.
inline std::string python() { return ::access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3"; }

inline ProcessOptions faulty_options(const std::string& mode, double timeout = 3) {
  ProcessOptions o;
  o.command = python() + " " + shell_quote((kSource / "tests/backends/faulty/faulty_backend.py").string()) + " " + mode;
  o.name = "faulty-" + mode;
  o.timeout_seconds = timeout;
  return o;
}

inline Case f64_case(const std::string& pattern, const std::vector<double>& values) {
  Case c;
  c.pattern = pattern;
  c.dtype = DType::f64;
  c.inputs.emplace_back(Shape{static_cast<std::int64_t>(values.size())}, values);
  return c;
}

/// What the faulty backends answer correctly: a passthrough.
inline Case passthrough() { return f64_case("i -> i", {1, 2, 3}); }
/// What makes them misbehave.
inline Case boom() { return f64_case("boom -> boom", {1, 2, 3}); }

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace einfuzz::test
