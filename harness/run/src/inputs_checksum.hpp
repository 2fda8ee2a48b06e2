// The FNV-1a hash of a case's input bytes, taken before and after a backend runs: the run boundary
// and the isolated worker both detect a backend that wrote to its inputs with it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "einfuzz/core/case.hpp"
#include "einfuzz/core/tensor.hpp"

namespace einfuzz {

/// FNV-1a over every input's bytes, then a VJP's cotangent's, with a separator after each tensor.
inline std::uint64_t inputs_checksum(const Case& c) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  const auto add = [&](const Tensor& t) {
    for (std::byte b : t.bytes()) h = (h ^ static_cast<std::uint64_t>(b)) * 0x100000001b3ULL;
    h = (h ^ 0xff) * 0x100000001b3ULL;
  };
  for (const Tensor& t : c.inputs) add(t);
  if (c.cotangent) add(*c.cotangent);
  return h;
}

}  // namespace einfuzz
