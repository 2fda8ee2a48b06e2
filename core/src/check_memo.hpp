// The checkers' one-entry memo per thread. A campaign checks each case in the run boundary and then
// again in every in-process backend (fused, shuffle, eigen, …), each time with the same pattern,
// shapes and limits; the check is a pure function of them, so every call after the first copies
// the first call's result instead of lexing, parsing and checking again.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>

#include "einfuzz/core/diagnostic.hpp"
#include "einfuzz/core/limits.hpp"

namespace einfuzz::detail {

/// Every field of two Limits equal (a key compares them all: any limit can change the verdict).
inline bool same_limits(const Limits& a, const Limits& b) {
  // A field added to Limits must be compared here too.
  static_assert(sizeof(Limits) == 2 * sizeof(int) + 2 * sizeof(std::int64_t), "compare every Limits field");
  return a.max_operands == b.max_operands && a.max_labels == b.max_labels &&
         a.max_tensor_elements == b.max_tensor_elements && a.max_materialised_elements == b.max_materialised_elements;
}

/// The last (key, result) of one checker on this thread. `Key` has `matches(args…)` and
/// `assign(args…)`, so a lookup compares the arguments in place without building a key. The result
/// is shared, immutable: a caller keeps it however many later calls replace the memo's.
template <class Key, class Value>
class CheckMemo {
 public:
  /// The memoised result when the arguments are the last call's, else `compute()`'s (then stored).
  template <class Compute, class... Args>
  std::shared_ptr<const Result<Value>> get_shared(Compute&& compute, const Args&... args) {
    if (result_ && key_.matches(args...)) return result_;
    result_.reset();  // compute may throw (bad_alloc): never leave a stale pair behind
    auto fresh = std::make_shared<const Result<Value>>(compute());
    key_.assign(args...);
    result_ = fresh;
    return fresh;
  }
  /// The memoised result when the arguments are the last call's, else null; computes nothing.
  template <class... Args>
  std::shared_ptr<const Result<Value>> find(const Args&... args) const {
    return result_ && key_.matches(args...) ? result_ : nullptr;
  }
  /// Drops the memoised result (a caller's shared copy lives on); the next call computes again. The
  /// key keeps its buffers, so that assigning the next key allocates nothing it did not before.
  void release() noexcept { result_.reset(); }
  /// get_shared's result, copied.
  template <class Compute, class... Args>
  Result<Value> get(Compute&& compute, const Args&... args) {
    return *get_shared(std::forward<Compute>(compute), args...);
  }

 private:
  Key key_;
  std::shared_ptr<const Result<Value>> result_;
};

}  // namespace einfuzz::detail
