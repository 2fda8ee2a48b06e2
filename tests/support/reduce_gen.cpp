// The reduce-case generator: elementary axes first (lengths, kept or reduced), then the two sides'
// layout (order, groups, units, ellipsis), then the supplied lengths that make the case solvable.
#include "support/reduce_gen.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <type_traits>

namespace einfuzz::test {
namespace {

constexpr std::array<const char*, 10> kNames = {"a", "b", "c", "h", "w", "x", "y", "batch", "k2", "z"};

template <class T>
void shuffle(Rng& rng, std::vector<T>& v) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.below(i)]);
}

std::vector<DType> valid_dtypes(Reduction kind) {
  switch (kind) {
    case Reduction::any:
    case Reduction::all: return {DType::boolean};
    case Reduction::mean: return {DType::f32, DType::f64};
    default: return {DType::f32, DType::f64, DType::i32, DType::i64};
  }
}

/// One left-hand token: a named axis, an anonymous factor, or the ellipsis (several dimensions).
struct Entry {
  enum class Kind { name, anonymous, ellipsis } kind;
  std::string text;
  std::vector<std::int64_t> lengths;  // one per elementary axis (ellipsis: one per dimension)
  bool kept = false;                  // appears on the right
};

const char* unit_text(Rng& rng) {
  static constexpr std::array<const char*, 3> kUnits = {"1", "()", "(1)"};
  return kUnits[rng.below(kUnits.size())];
}

std::int64_t draw_length(Rng& rng, const ReduceGenOptions& o, bool may_be_zero) {
  if (may_be_zero && o.zero_lengths && rng.chance(1, 8)) return 0;
  return rng.between(1, std::max<std::int64_t>(1, o.max_length));
}

std::int64_t product(const std::vector<Entry>& entries) {
  std::int64_t p = 1;
  for (const Entry& e : entries)
    for (std::int64_t l : e.lengths) p *= l;
  return p;
}

/// Shrinks the longest named/ellipsis axis until the input fits `max_elements`.
void cap_elements(std::vector<Entry>& entries, std::int64_t max_elements) {
  while (product(entries) > max_elements) {
    std::int64_t* longest = nullptr;
    for (Entry& e : entries) {
      if (e.kind == Entry::Kind::anonymous) continue;
      for (std::int64_t& l : e.lengths)
        if (longest == nullptr || l > *longest) longest = &l;
    }
    if (longest == nullptr || *longest <= 1) return;
    --*longest;
  }
}

/// Splits `tokens` into items: runs of 1–3 become a group with probability 1/3 when allowed.
/// `units` adds `1`, `()`, `(1)` items and a dropped `1` inside groups.
struct Layout {
  std::vector<std::string> items;
  std::vector<std::vector<std::size_t>> members;  // per item: indices into tokens (units: empty)
};

Layout lay_out(Rng& rng, const std::vector<std::string>& tokens, const std::vector<bool>& groupable,
               const ReduceGenOptions& o) {
  Layout out;
  auto maybe_unit = [&] {
    if (o.units && rng.chance(1, 6)) {
      out.items.emplace_back(unit_text(rng));
      out.members.emplace_back();
    }
  };
  std::size_t i = 0;
  while (i < tokens.size()) {
    maybe_unit();
    std::size_t run = 1;
    if (o.composite && groupable[i] && rng.chance(1, 3)) {
      run = static_cast<std::size_t>(rng.between(1, 3));
      std::size_t j = i;
      while (j < tokens.size() && j < i + run && groupable[j]) ++j;
      run = j - i;
      std::string text = "(";
      std::vector<std::size_t> members;
      for (std::size_t k = i; k < i + run; ++k) {
        if (o.units && rng.chance(1, 5)) text += "1 ";
        text += tokens[k] + (k + 1 < i + run ? " " : "");
        members.push_back(k);
      }
      out.items.push_back(text + ")");
      out.members.push_back(std::move(members));
    } else {
      out.items.push_back(tokens[i]);
      out.members.push_back({i});
    }
    i += run;
  }
  maybe_unit();
  return out;
}

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (std::size_t i = 0; i < items.size(); ++i) s += (i ? " " : "") + items[i];
  return s;
}

}  // namespace

ReduceCase generate_reduce_case(Rng& rng, const ReduceGenOptions& o) {
  ReduceCase c;
  c.kind = o.kind ? *o.kind : static_cast<Reduction>(rng.below(7));
  const std::vector<DType> dtypes = valid_dtypes(c.kind);
  c.dtype = o.dtype ? *o.dtype : dtypes[rng.below(dtypes.size())];
  // mean/min/max need nonempty fibres: their reduced axes never get length 0.
  const bool nonempty = c.kind == Reduction::mean || c.kind == Reduction::min || c.kind == Reduction::max;

  std::vector<const char*> pool(kNames.begin(), kNames.end());
  shuffle(rng, pool);
  std::vector<Entry> entries;
  const auto named = static_cast<std::size_t>(rng.between(0, std::min(o.max_axes, static_cast<int>(kNames.size()))));
  for (std::size_t i = 0; i < named; ++i) {
    const bool kept = rng.chance(1, 2);
    entries.push_back({Entry::Kind::name, pool[i], {draw_length(rng, o, kept || !nonempty)}, kept});
  }
  if (o.anonymous) {
    for (std::int64_t n = rng.between(0, 2); n > 0; --n) {
      const std::int64_t len = rng.between(2, 3);
      entries.push_back({Entry::Kind::anonymous, std::to_string(len), {len}, false});
    }
  }
  if (o.ellipsis && rng.chance(1, 3)) {
    Entry e{Entry::Kind::ellipsis, "...", {}, rng.chance(1, 2)};
    for (std::int64_t n = rng.between(0, 2); n > 0; --n) e.lengths.push_back(draw_length(rng, o, e.kept || !nonempty));
    entries.push_back(std::move(e));
  }
  cap_elements(entries, o.max_elements);
  shuffle(rng, entries);

  // Left side: the ellipsis is always bare there.
  std::vector<std::string> tokens;
  std::vector<bool> groupable;
  for (const Entry& e : entries) {
    tokens.push_back(e.text);
    groupable.push_back(e.kind != Entry::Kind::ellipsis);
  }
  const Layout left = lay_out(rng, tokens, groupable, o);
  for (const auto& members : left.members) {
    std::int64_t dim = 1;
    std::vector<std::size_t> names;
    for (std::size_t m : members) {
      const Entry& e = entries[m];
      if (e.kind == Entry::Kind::ellipsis) {
        c.shape.insert(c.shape.end(), e.lengths.begin(), e.lengths.end());
        dim = -1;
        continue;
      }
      dim *= e.lengths[0];
      if (e.kind == Entry::Kind::name) names.push_back(m);
    }
    if (dim >= 0) c.shape.push_back(dim);
    // Leave at most one name unknown, and none when the rest of the group multiplies to 0.
    std::optional<std::size_t> unknown;
    if (!names.empty() && rng.chance(3, 4)) {
      const std::size_t u = names[rng.below(names.size())];
      std::int64_t rest = 1;
      for (std::size_t m : members)
        if (m != u) rest *= entries[m].lengths[0];
      if (rest != 0) unknown = u;  // dim = rest · |u| determines |u|, even when |u| = 0
    }
    for (std::size_t m : names) {
      if (unknown && *unknown == m) continue;
      c.axis_lengths.emplace_back(entries[m].text, entries[m].lengths[0]);
    }
  }
  shuffle(rng, c.axis_lengths);

  // Right side: the kept entries in a random order; the ellipsis may sit inside a group.
  std::vector<std::string> right_tokens;
  std::vector<bool> right_groupable;
  for (const Entry& e : entries) {
    if (!e.kept) continue;
    right_tokens.push_back(e.text);
    right_groupable.push_back(true);
  }
  shuffle(rng, right_tokens);
  const Layout right = lay_out(rng, right_tokens, right_groupable, o);

  c.pattern = join(left.items) + " -> " + join(right.items);
  c.input = random_values(rng, c.dtype, c.shape);
  return c;
}

std::string ReduceCase::describe() const {
  std::string s = std::string(reduction_name(kind)) + " '" + pattern + "' on " + format_shape(shape);
  for (const auto& [name, length] : axis_lengths) s += " " + name + "=" + std::to_string(length);
  return s + " " + std::string(dtype_name(dtype));
}

Tensor random_values(Rng& rng, DType dtype, const Shape& shape) {
  Tensor t(dtype, shape);
  const std::uint64_t profile = rng.below(3);
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    for (T& v : t.values<T>()) {
      if constexpr (std::is_same_v<T, Bool8>) {
        v = rng.chance(1, 2) ? 1 : 0;
      } else if constexpr (std::is_floating_point_v<T>) {
        constexpr double kInf = std::numeric_limits<double>::infinity();
        static constexpr std::array<double, 16> kSpecial = {
            0.0, -0.0, 1.0, -1.0, 2.0, 0.5, 3.0, -2.5, 1e16, -1e16, kInf, -kInf,
            std::numeric_limits<double>::quiet_NaN(), 1e308, -1e308, 0.1};
        if (profile == 0) {
          v = static_cast<T>(rng.between(-4, 4));
        } else if (profile == 1 || rng.chance(1, 3)) {
          v = static_cast<T>(kSpecial[rng.below(kSpecial.size())]);
        } else {  // raw bits: subnormals, NaN payloads, huge and tiny magnitudes
          const std::uint64_t bits = rng.next();
          std::memcpy(&v, &bits, sizeof(T));
        }
      } else {
        if (profile == 0) {
          v = static_cast<T>(rng.between(-5, 5));
        } else if (rng.chance(1, 4)) {
          v = rng.chance(1, 2) ? std::numeric_limits<T>::max() : std::numeric_limits<T>::min();
        } else {
          v = static_cast<T>(rng.next());
        }
      }
    }
  });
  return t;
}

}  // namespace einfuzz::test
