// The checkers' one-entry memo per thread. A campaign checks each case in the run boundary and then
// again in every in-process backend (fused, shuffle, eigen, …), each time with the same pattern,
// shapes and limits; the check is a pure function of them, so every call after the first copies
// the first call's result instead of lexing, parsing and checking again.
#pragma once

#include <optional>
#include <utility>

#include "einfuzz/core/diagnostic.hpp"

namespace einfuzz::detail {

/// The last (key, result) of one checker on this thread. `Key` has `matches(args…)` and
/// `assign(args…)`, so a lookup compares the arguments in place without building a key.
template <class Key, class Value>
class CheckMemo {
 public:
  /// The memoised result when the arguments are the last call's, else `compute()`'s (then stored).
  template <class Compute, class... Args>
  Result<Value> get(Compute&& compute, const Args&... args) {
    if (result_ && key_.matches(args...)) return *result_;
    result_.reset();  // compute may throw (bad_alloc): never leave a stale pair behind
    Result<Value> fresh = compute();
    key_.assign(args...);
    result_.emplace(fresh);
    return fresh;
  }

 private:
  Key key_;
  std::optional<Result<Value>> result_;
};

}  // namespace einfuzz::detail
