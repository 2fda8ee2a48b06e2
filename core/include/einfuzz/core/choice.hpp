// The one choice source every generator draws from, with three faces (STYLE.md): a seeded RNG,
// libFuzzer bytes (FuzzedDataProvider-like: deterministic, never fails when the bytes run out) and
// exhaustive small enumeration (Csmith's DFS generator). Plus the portable PRNG behind the first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

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

namespace detail {

/// The sum of `weights` (the range a weighted choice draws from).
inline std::uint64_t weight_total(std::span<const std::uint32_t> weights) noexcept {
  std::uint64_t total = 0;
  for (std::uint32_t w : weights) total += w;
  return total;
}

/// The alternative a draw `r` in [0, weight_total(weights)) falls into.
inline std::size_t weighted_index(std::span<const std::uint32_t> weights, std::uint64_t r) noexcept {
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (r < weights[i]) return i;
    r -= weights[i];
  }
  return 0;  // unreachable: r < total
}

}  // namespace detail

/// Where a generator's choices come from. Alternative 0 of every choice is the simplest one (the
/// first listed), and it is what an exhausted source returns, so every face yields a valid draw.
class ChoiceSource {
 public:
  virtual ~ChoiceSource() = default;

  /// One structural choice in [0, n); n == 0 is treated as 1 (always 0).
  virtual std::uint64_t choose(std::uint64_t n) = 0;
  /// Index of one alternative drawn in proportion to `weights` (zero weights are never drawn
  /// unless every weight is zero, which returns 0).
  virtual std::size_t choose_weighted(std::span<const std::uint32_t> weights);
  /// 64 raw bits for a value's bit pattern; an exhausted source gives 0.
  virtual std::uint64_t bits() = 0;

  /// Uniform-ish integer in [lo, hi] (lo when exhausted); requires lo <= hi.
  std::int64_t between(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(choose(static_cast<std::uint64_t>(hi - lo) + 1));
  }
  /// True with probability num/den; false when exhausted (false is the simpler alternative).
  bool chance(std::uint64_t num, std::uint64_t den) {
    if (num == 0) return false;
    if (num >= den) return true;
    const std::uint32_t weights[] = {static_cast<std::uint32_t>(den - num), static_cast<std::uint32_t>(num)};
    return choose_weighted(weights) == 1;
  }
  /// One element of `items` (the first when exhausted); `items` must not be empty.
  template <class T>
  const T& pick(std::span<const T> items) {
    return items[static_cast<std::size_t>(choose(items.size()))];
  }
  template <class T>
  const T& pick(const std::vector<T>& items) {
    return pick(std::span<const T>(items));
  }
};

/// The seeded face: every choice comes from a SplitMix64 stream (owned, or borrowed and advanced).
class SeededChoices final : public ChoiceSource {
 public:
  explicit SeededChoices(std::uint64_t seed) noexcept : owned_(seed), rng_(&owned_) {}
  /// Draws from `rng` directly, so the caller's generator state advances as with plain Rng draws.
  explicit SeededChoices(Rng& rng) noexcept : owned_(0), rng_(&rng) {}
  SeededChoices(const SeededChoices&) = delete;
  SeededChoices& operator=(const SeededChoices&) = delete;

  std::uint64_t choose(std::uint64_t n) override { return n <= 1 ? 0 : rng_->below(n); }
  /// The base's draw (one choose over the total), without a second virtual call.
  std::size_t choose_weighted(std::span<const std::uint32_t> weights) override {
    const std::uint64_t total = detail::weight_total(weights);
    return total == 0 ? 0 : detail::weighted_index(weights, choose(total));
  }
  std::uint64_t bits() override { return rng_->next(); }

 private:
  Rng owned_;
  Rng* rng_;
};

/// The libFuzzer face, after LLVM's FuzzedDataProvider: structural choices consume bytes from the
/// end of the data (as few as the range needs), value bits from the front. Deterministic in the
/// bytes; once they are exhausted every choice is 0 and every value 0 — it never fails.
class ByteChoices final : public ChoiceSource {
 public:
  explicit ByteChoices(std::span<const std::uint8_t> data) noexcept : data_(data) {}

  std::uint64_t choose(std::uint64_t n) override;
  std::uint64_t bits() override;
  /// Bytes not consumed yet.
  std::size_t remaining() const noexcept { return data_.size(); }

 private:
  std::span<const std::uint8_t> data_;
};

/// Bounds of the enumeration face.
struct EnumerationOptions {
  std::uint64_t max_branch = 3;  ///< alternatives explored per choice (the first ones: the simplest)
  std::size_t max_depth = 48;    ///< choices beyond this depth are fixed at alternative 0
};

/// The enumeration face (Csmith's DFS generator): visits every sequence of choices, depth first,
/// in the order 0, 1, … of each choice, within EnumerationOptions' bounds. Use as
/// `do { generate(e); … } while (e.next());`. Value bits are not enumerated (always 0); values
/// drawn through choose() are. The generator must be deterministic in its choices.
class EnumeratedChoices final : public ChoiceSource {
 public:
  explicit EnumeratedChoices(EnumerationOptions options = {}) noexcept : options_(options) {}

  std::uint64_t choose(std::uint64_t n) override;
  std::size_t choose_weighted(std::span<const std::uint32_t> weights) override;
  std::uint64_t bits() override { return 0; }

  /// Moves to the next unvisited sequence of choices; false when every sequence was visited.
  bool next();
  /// Sequences visited so far (1 after construction: the all-zero one is in progress).
  std::uint64_t visited() const noexcept { return visited_; }

 private:
  std::uint64_t branch(std::uint64_t alternatives);

  EnumerationOptions options_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> path_;  ///< (choice taken, alternatives) per depth
  std::size_t depth_ = 0;                                        ///< choices made in the current run
  std::uint64_t visited_ = 1;
};

}  // namespace einfuzz
