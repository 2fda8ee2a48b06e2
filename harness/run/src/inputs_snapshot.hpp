// A copy of a case's input bytes, taken once per case and compared (memcmp) after each backend: the
// run boundary's check that a backend did not write to its inputs, exact and without a hash.
#pragma once

#include <cstddef>
#include <cstring>
#include <span>
#include <vector>

#include "einfuzz/core/tensor.hpp"

namespace einfuzz {

/// The bytes of every input, in order; `unchanged` says whether the inputs still hold them.
class InputsSnapshot {
 public:
  /// Copies every input's bytes (one buffer, reused when retaken; sized once, so a case of many
  /// operands is not copied through a growing buffer).
  void take(std::span<const Tensor> inputs) {
    bytes_.clear();
    sizes_.clear();
    std::size_t total = 0;
    for (const Tensor& t : inputs) total += t.bytes().size();
    bytes_.reserve(total);
    sizes_.reserve(inputs.size());
    for (const Tensor& t : inputs) {
      const auto b = t.bytes();
      bytes_.insert(bytes_.end(), b.begin(), b.end());
      sizes_.push_back(b.size());
    }
  }

  /// True when `inputs` are as many tensors as at take() with the same byte sizes and bytes.
  bool unchanged(std::span<const Tensor> inputs) const {
    if (inputs.size() != sizes_.size()) return false;
    std::size_t at = 0;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      const auto b = inputs[k].bytes();
      if (b.size() != sizes_[k]) return false;
      if (b.size() != 0 && std::memcmp(b.data(), bytes_.data() + at, b.size()) != 0) return false;
      at += b.size();
    }
    return true;
  }

 private:
  std::vector<std::byte> bytes_;
  std::vector<std::size_t> sizes_;
};

}  // namespace einfuzz
