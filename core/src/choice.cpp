// The three faces of the choice source (see choice.hpp).
#include "einfuzz/core/choice.hpp"

namespace einfuzz {

std::size_t ChoiceSource::choose_weighted(std::span<const std::uint32_t> weights) {
  const std::uint64_t total = detail::weight_total(weights);
  return total == 0 ? 0 : detail::weighted_index(weights, choose(total));
}

std::uint64_t ByteChoices::choose(std::uint64_t n) {
  if (n <= 1) return 0;
  const std::uint64_t range = n - 1;
  std::uint64_t result = 0;
  // As FuzzedDataProvider::ConsumeIntegralInRange: bytes from the end, only as many as the range needs.
  for (int offset = 0; offset < 64 && (range >> offset) > 0 && !data_.empty(); offset += 8) {
    result = (result << 8) | data_.back();
    data_ = data_.first(data_.size() - 1);
  }
  return range == ~std::uint64_t{0} ? result : result % (range + 1);
}

std::uint64_t ByteChoices::bits() {
  std::uint64_t result = 0;
  for (int i = 0; i < 8 && !data_.empty(); ++i) {
    result |= static_cast<std::uint64_t>(data_.front()) << (8 * i);
    data_ = data_.subspan(1);
  }
  return result;
}

std::uint64_t EnumeratedChoices::branch(std::uint64_t alternatives) {
  if (alternatives <= 1 || depth_ >= options_.max_depth) return 0;
  if (alternatives > options_.max_branch) alternatives = options_.max_branch;
  if (depth_ < path_.size()) {
    // Replaying the prefix: a deterministic generator asks the same question here again.
    const std::uint64_t taken = path_[depth_++].first;
    return taken < alternatives ? taken : alternatives - 1;
  }
  path_.emplace_back(0, alternatives);
  ++depth_;
  return 0;
}

std::uint64_t EnumeratedChoices::choose(std::uint64_t n) { return branch(n); }

std::size_t EnumeratedChoices::choose_weighted(std::span<const std::uint32_t> weights) {
  std::uint64_t nonzero = 0;
  for (std::uint32_t w : weights) nonzero += w != 0;
  std::uint64_t k = branch(nonzero);
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (weights[i] == 0) continue;
    if (k-- == 0) return i;
  }
  return 0;
}

bool EnumeratedChoices::next() {
  path_.resize(depth_);
  while (!path_.empty() && path_.back().first + 1 >= path_.back().second) path_.pop_back();
  depth_ = 0;
  if (path_.empty()) return false;
  ++path_.back().first;
  ++visited_;
  return true;
}

}  // namespace einfuzz
