// The FNV-1a hash of a case's input bytes, taken before and after a backend runs: the run boundary
// and the isolated worker both detect a backend that wrote to its inputs with it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "einfuzz/core/tensor.hpp"

namespace einfuzz {

/// FNV-1a over every input's bytes, with a separator after each input.
inline std::uint64_t inputs_checksum(std::span<const Tensor> inputs) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const Tensor& t : inputs) {
    for (std::byte b : t.bytes()) h = (h ^ static_cast<std::uint64_t>(b)) * 0x100000001b3ULL;
    h = (h ^ 0xff) * 0x100000001b3ULL;
  }
  return h;
}

}  // namespace einfuzz
