// Test helper: run one case through one backend (the full run_case path: checker, reference,
// judge) and explain its verdict in a failure message.
#pragma once

#include <string>

#include "einfuzz/core/case_origin.hpp"
#include "einfuzz/harness/run.hpp"

namespace einfuzz::test {

/// The verdict of `backend` on `c`.
inline Verdict run_on(const Case& c, Backend& backend, const RunOptions& options = {}) {
  Backend* list[] = {&backend};
  return run_case(c, list, options).backends.at(0).verdict;
}

/// The options a stored divergence's recorded verdict was judged under: its `origin.profile` for
/// every backend when it has one (a profile surprise), else each backend's declared profile.
inline RunOptions as_recorded(const Case& c) {
  RunOptions options;
  options.profile = origin_profile(c);
  return options;
}

/// The verdict's label and detail, and its first failing element's numbers.
inline std::string explain(const Verdict& v) {
  std::string s = v.label() + ": " + v.detail;
  if (v.first) {
    s += "\n  element " + std::to_string(v.first->flat_index) + ": expected " + v.first->expected + ", actual " +
         v.first->actual + ", exact " + v.first->exact;
  }
  return s;
}

/// A parameter as a test name: '-' is not allowed there ("numpy-opt" → "numpy_opt").
inline std::string test_name(std::string s) {
  for (char& c : s) c = c == '-' ? '_' : c;
  return s;
}

}  // namespace einfuzz::test
