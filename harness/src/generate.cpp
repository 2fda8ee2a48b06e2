// Generator of valid einsum cases (see generate.hpp).
#include "einfuzz/harness/generate.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "einfuzz/harness/values.hpp"

namespace einfuzz {
namespace {

constexpr const char* kNames[] = {"a", "b", "c", "i", "j", "k", "x", "_", "batch", "Ab", "z9", "head", "t_1", "Q"};

std::int64_t draw_length(Rng& rng, std::int64_t max_length) {
  const std::uint64_t r = rng.below(100);
  if (r < 10) return 0;
  if (r < 35) return 1;
  if (r < 60) return std::min<std::int64_t>(2, max_length);
  return rng.between(std::min<std::int64_t>(2, max_length), max_length);
}

template <class T>
T draw_value(Rng& rng) {
  if constexpr (std::is_floating_point_v<T>) {
    const std::uint64_t r = rng.below(100);
    if (r < 15) {
      static const std::vector<T> edges = edge_values<T>();
      return edges[rng.below(edges.size())];
    }
    if (r < 20) {  // random exponent across the whole range, subnormals included
      const int e = static_cast<int>(rng.between(std::numeric_limits<T>::min_exponent - std::numeric_limits<T>::digits,
                                                 std::numeric_limits<T>::max_exponent - 1));
      return std::ldexp(static_cast<T>(rng.between(1, 255)) / T(128), e) * (rng.chance(1, 2) ? T(1) : T(-1));
    }
    if (r < 30) {  // arbitrary bit patterns of moderate magnitude
      return static_cast<T>(static_cast<double>(rng.next() >> 11) * 0x1p-53 * 8.0 - 4.0);
    }
    return static_cast<T>(rng.between(-8, 8)) / static_cast<T>(std::int64_t{1} << rng.below(3));
  } else {
    const std::uint64_t r = rng.below(100);
    using L = std::numeric_limits<T>;
    if (r < 10) {
      static const T edges[] = {L::min(), L::max(), T(L::max() / 2 + 1), T(L::min() / 2), T(-1), T(0)};
      return edges[rng.below(std::size(edges))];
    }
    if (r < 20) return static_cast<T>(rng.next());  // wrap-around
    return static_cast<T>(rng.between(-9, 9));
  }
}

struct Label {
  std::string name;
  std::int64_t length;
};

}  // namespace

Case generate_einsum(Rng& rng, const GenOptions& options) {
  // The labels and the ellipsis slots with their resolved lengths.
  std::vector<Label> labels;
  const std::size_t label_count = 1 + rng.below(7);
  std::vector<std::string> names(std::begin(kNames), std::end(kNames));
  for (std::size_t i = 0; i < label_count && !names.empty(); ++i) {
    const std::size_t pick = rng.below(names.size());
    labels.push_back({names[pick], draw_length(rng, options.max_length)});
    names.erase(names.begin() + static_cast<std::ptrdiff_t>(pick));
  }
  const std::size_t common_rank = rng.chance(1, 3) ? rng.below(4) : 0;
  std::vector<std::int64_t> slot_lengths;
  for (std::size_t i = 0; i < common_rank; ++i) slot_lengths.push_back(draw_length(rng, options.max_length));

  // Keep output size × contraction size bounded: shorten random lengths to 1 until it fits.
  auto global = [&] {
    double g = 1;
    for (const Label& l : labels) g *= static_cast<double>(l.length);
    for (std::int64_t s : slot_lengths) g *= static_cast<double>(s);
    return g;
  };
  while (global() > static_cast<double>(options.max_global)) {
    const std::size_t i = rng.below(labels.size() + slot_lengths.size());
    (i < labels.size() ? labels[i].length : slot_lengths[i - labels.size()]) = 1;
  }

  Case c;
  c.op = Op::einsum;
  c.dtype = options.dtypes[rng.below(options.dtypes.size())];
  const std::size_t operand_count = 1 + rng.below(static_cast<std::uint64_t>(options.max_operands));
  std::set<std::string> used;
  bool any_ellipsis = false;
  std::string text;
  for (std::size_t k = 0; k < operand_count; ++k) {
    const std::size_t named = rng.below(static_cast<std::uint64_t>(options.max_axes_per_operand) + 1);
    std::vector<std::string> items;
    Shape shape;
    std::map<std::string, std::int64_t> physical;  // one physical length per label per operand
    for (std::size_t d = 0; d < named; ++d) {
      const Label& l = labels[rng.below(labels.size())];
      auto [it, fresh] = physical.try_emplace(l.name, l.length);
      if (fresh && l.length != 1 && rng.chance(1, 5)) it->second = 1;  // size-1 broadcast
      items.push_back(rng.chance(1, 12) ? "(" + l.name + ")" : l.name);
      shape.push_back(it->second);
      used.insert(l.name);
    }
    if (common_rank > 0 && rng.chance(1, 2)) {
      any_ellipsis = true;
      const std::size_t local = rng.below(common_rank + 1);
      const std::size_t at = rng.below(items.size() + 1);
      Shape dims;
      for (std::size_t j = common_rank - local; j < common_rank; ++j) {
        dims.push_back(slot_lengths[j] != 1 && rng.chance(1, 5) ? 1 : slot_lengths[j]);
      }
      items.insert(items.begin() + static_cast<std::ptrdiff_t>(at), "...");
      shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(at), dims.begin(), dims.end());
    }
    std::string expr;
    for (const auto& item : items) expr += (expr.empty() ? "" : rng.chance(1, 8) ? "  " : " ") + item;
    text += (k ? ", " : "") + expr;

    Tensor t(c.dtype, shape);
    visit_dtype(c.dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (!std::is_same_v<T, Bool8>) {
        for (T& v : t.values<T>()) v = draw_value<T>(rng);
      }
    });
    c.inputs.push_back(std::move(t));
  }

  // Output: a random arrangement of some used labels (each once), maybe the ellipsis.
  std::vector<std::string> out(used.begin(), used.end());
  for (std::size_t i = out.size(); i > 1; --i) std::swap(out[i - 1], out[rng.below(i)]);
  out.resize(rng.below(out.size() + 1));
  if ((any_ellipsis && rng.chance(2, 3)) || rng.chance(1, 20)) {
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(rng.below(out.size() + 1)), "...");
  }
  text += " ->";
  for (const auto& o : out) text += " " + o;
  c.pattern = text;
  return c;
}

Case relabel(const Case& c, Rng& rng) {
  // Collect names in order of appearance, then map them to fresh distinct names.
  std::vector<std::string> seen;
  const std::string& p = c.pattern;
  auto word_char = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
  for (std::size_t i = 0; i < p.size();) {
    if (!word_char(p[i])) { ++i; continue; }
    std::size_t j = i;
    while (j < p.size() && word_char(p[j])) ++j;
    const std::string w = p.substr(i, j - i);
    if (std::find(seen.begin(), seen.end(), w) == seen.end()) seen.push_back(w);
    i = j;
  }
  std::map<std::string, std::string> rename;
  std::set<std::string> taken;
  for (const auto& w : seen) {
    std::string fresh;
    do {
      fresh = std::string(1, static_cast<char>('a' + rng.below(26)));
      for (std::uint64_t n = rng.below(4); n > 0; --n) fresh += static_cast<char>('a' + rng.below(26));
    } while (!taken.insert(fresh).second);
    rename[w] = fresh;
  }
  Case out = c;
  out.pattern.clear();
  for (std::size_t i = 0; i < p.size();) {
    if (!word_char(p[i])) { out.pattern += p[i++]; continue; }
    std::size_t j = i;
    while (j < p.size() && word_char(p[j])) ++j;
    out.pattern += rename[p.substr(i, j - i)];
    i = j;
  }
  return out;
}

}  // namespace einfuzz
