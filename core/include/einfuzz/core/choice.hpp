// The choice source's seeded face: a small, portable, fully specified PRNG (SplitMix64), so the
// same seed draws the same cases on every platform and standard library.
#pragma once

#include <cstdint>

namespace einfuzz {

/// SplitMix64 (Steele, Lea, Flood 2014). Deterministic; no std:: distributions (their output is
/// implementation-defined), every draw below is specified here.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) noexcept : state_(seed) {}

  std::uint64_t next() noexcept {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n) for n >= 1 (Lemire's multiply-shift; the tiny bias is irrelevant here).
  std::uint64_t below(std::uint64_t n) noexcept {
    __extension__ using u128 = unsigned __int128;  // GCC/Clang extension, silenced for -Wpedantic
    return static_cast<std::uint64_t>((static_cast<u128>(next()) * n) >> 64);
  }
  /// Uniform integer in [lo, hi].
  std::int64_t between(std::int64_t lo, std::int64_t hi) noexcept {
    return lo + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(hi - lo) + 1));
  }
  /// True with probability num/den.
  bool chance(std::uint64_t num, std::uint64_t den) noexcept { return below(den) < num; }

  /// Derives an independent stream, e.g. one per operand.
  static std::uint64_t mix(std::uint64_t seed, std::uint64_t stream) noexcept {
    Rng r(seed ^ (stream * 0xd1b54a32d192ed03ULL));
    return r.next();
  }

 private:
  std::uint64_t state_;
};

}  // namespace einfuzz
