// A copy of what a backend is given to read (a case's input bytes, and a VJP's cotangent), taken
// once per case and compared (memcmp) after each backend: the run boundary's check that a backend
// did not write to them, exact and without a hash. After a backend wrote, the copy is put back, so
// every later backend, the oracles already computed and the case a campaign stores see the case
// as it was generated.
#pragma once

#include <cstddef>
#include <cstring>
#include <span>
#include <vector>

#include "einfuzz/core/case.hpp"
#include "einfuzz/core/tensor.hpp"

namespace einfuzz {

/// The bytes of every input, in order, then the cotangent's; `unchanged` says whether the case
/// still holds them and `restore` writes them back.
class InputsSnapshot {
 public:
  /// Copies the bytes (one buffer, reused when retaken; sized once, so a case of many operands is
  /// not copied through a growing buffer).
  void take(const Case& c) {
    bytes_.clear();
    sizes_.clear();
    std::size_t total = 0;
    for_each_read(c, [&](const Tensor& t) { total += t.bytes().size(); });
    bytes_.reserve(total);
    for_each_read(c, [&](const Tensor& t) {
      const auto b = t.bytes();
      bytes_.insert(bytes_.end(), b.begin(), b.end());
      sizes_.push_back(b.size());
    });
  }

  /// True when `c` reads as many tensors as at take() with the same byte sizes and bytes.
  bool unchanged(const Case& c) const {
    if (!same_sizes(c)) return false;
    std::size_t at = 0;
    bool same = true;
    for_each_read(c, [&](const Tensor& t) {
      const auto b = t.bytes();
      same = same && (b.empty() || std::memcmp(b.data(), bytes_.data() + at, b.size()) == 0);
      at += b.size();
    });
    return same;
  }

  /// Writes the copy back into `c`'s tensors (a backend wrote to them: their storage is writable);
  /// false when `c` no longer has tensors of the copied sizes, so nothing could be put back.
  bool restore(const Case& c) const {
    if (!same_sizes(c)) return false;
    std::size_t at = 0;
    for_each_read(c, [&](const Tensor& t) {
      const auto b = t.bytes();
      if (!b.empty()) std::memcpy(const_cast<std::byte*>(b.data()), bytes_.data() + at, b.size());
      at += b.size();
    });
    return true;
  }

 private:
  template <class F>
  static void for_each_read(const Case& c, F f) {
    for (const Tensor& t : c.inputs) f(t);
    if (c.cotangent) f(*c.cotangent);
  }
  /// Whether `c` reads as many tensors as at take(), each of the same byte size.
  bool same_sizes(const Case& c) const {
    if (c.inputs.size() + (c.cotangent ? 1 : 0) != sizes_.size()) return false;
    std::size_t k = 0;
    bool same = true;
    for_each_read(c, [&](const Tensor& t) { same = same && t.bytes().size() == sizes_[k++]; });
    return same;
  }

  std::vector<std::byte> bytes_;
  std::vector<std::size_t> sizes_;
};

}  // namespace einfuzz
