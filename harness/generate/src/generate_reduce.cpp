// The reduce generator: elementary axes first (lengths, kept or reduced), then the two sides' layout
// (order, groups, units, ellipsis), then the supplied lengths that make the case solvable.
#include <algorithm>
#include <array>

#include "einfuzz/harness/generate.hpp"

namespace einfuzz {
namespace {

constexpr std::array<const char*, 10> kNames = {"a", "b", "c", "h", "w", "x", "y", "batch", "k2", "z"};

template <class T>
void shuffle(ChoiceSource& s, std::vector<T>& v) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[s.choose(i)]);
}

/// The dtypes among `dtypes` (the generator's order of preference) that the reduction table accepts
/// for `kind`.
std::vector<DType> valid_dtypes(Reduction kind, const std::vector<DType>& dtypes) {
  std::vector<DType> out;
  for (DType d : dtypes) {
    if (reduction_accepts(kind, d)) out.push_back(d);
  }
  return out;
}

/// The kind: forced, or drawn among those that accept one of the dtypes. With every kind eligible
/// (the default dtypes) this is the one draw it always was.
Reduction draw_kind(ChoiceSource& s, const ReduceGenOptions& o) {
  if (o.kind) return *o.kind;
  std::vector<Reduction> kinds;
  kinds.reserve(reduction_table().size());
  for (std::size_t k = 0; k < reduction_table().size(); ++k) {
    const auto kind = static_cast<Reduction>(k);
    if (std::any_of(o.dtypes.begin(), o.dtypes.end(), [&](DType d) { return reduction_accepts(kind, d); })) {
      kinds.push_back(kind);
    }
  }
  if (kinds.empty()) return static_cast<Reduction>(s.choose(reduction_table().size()));  // no usable dtype
  return kinds[s.choose(kinds.size())];
}

/// One left-hand token: a named axis, an anonymous factor, or the ellipsis (several dimensions).
struct Entry {
  enum class Kind { name, anonymous, ellipsis } kind;
  std::string text;
  std::vector<std::int64_t> lengths;  // one per elementary axis (ellipsis: one per dimension)
  bool kept = false;                  // appears on the right
};

const char* unit_text(ChoiceSource& s) {
  static constexpr std::array<const char*, 3> kUnits = {"1", "()", "(1)"};
  return kUnits[s.choose(kUnits.size())];
}

std::int64_t draw_length(ChoiceSource& s, const ReduceGenOptions& o, bool may_be_zero) {
  if (may_be_zero && o.zero_lengths && s.chance(1, 8)) return 0;
  return s.between(1, std::max<std::int64_t>(1, o.max_length));
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

/// Items of one side and, per item, the indices of the tokens it holds (units: none).
struct SideLayout {
  std::vector<std::string> items;
  std::vector<std::vector<std::size_t>> members;
};

/// Splits `tokens` into items: runs of 1–3 become a group with probability 1/3 when allowed;
/// `units` adds `1`, `()`, `(1)` items and a dropped `1` inside groups.
SideLayout lay_out(ChoiceSource& s, const std::vector<std::string>& tokens, const std::vector<bool>& groupable,
               const ReduceGenOptions& o) {
  SideLayout out;
  auto maybe_unit = [&] {
    if (o.units && s.chance(1, 6)) {
      out.items.emplace_back(unit_text(s));
      out.members.emplace_back();
    }
  };
  std::size_t i = 0;
  while (i < tokens.size()) {
    maybe_unit();
    std::size_t run = 1;
    if (o.composite && groupable[i] && s.chance(1, 3)) {
      run = static_cast<std::size_t>(s.between(1, 3));
      std::size_t j = i;
      while (j < tokens.size() && j < i + run && groupable[j]) ++j;
      run = j - i;
      std::string text = "(";
      std::vector<std::size_t> members;
      for (std::size_t k = i; k < i + run; ++k) {
        if (o.units && s.chance(1, 5)) text += "1 ";
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

Case generate_reduce(ChoiceSource& s, const ReduceGenOptions& o) {
  Case c;
  c.op = Op::reduce;
  const Reduction kind = draw_kind(s, o);
  c.reduction = std::string(reduction_name(kind));
  std::vector<DType> dtypes = valid_dtypes(kind, o.dtypes);
  if (dtypes.empty()) dtypes = valid_dtypes(kind, {DType::f64, DType::f32, DType::i64, DType::i32, DType::boolean});
  c.dtype = o.dtype ? *o.dtype : dtypes[s.choose(dtypes.size())];
  // mean/min/max need nonempty fibres: their reduced axes never get length 0.
  const bool nonempty = reduction_info(kind).needs_nonempty_fibre;

  std::vector<const char*> pool(kNames.begin(), kNames.end());
  shuffle(s, pool);
  std::vector<Entry> entries;
  const auto named = static_cast<std::size_t>(s.between(0, std::min(o.max_axes, static_cast<int>(kNames.size()))));
  for (std::size_t i = 0; i < named; ++i) {
    const bool kept = s.chance(1, 2);
    entries.push_back({Entry::Kind::name, pool[i], {draw_length(s, o, kept || !nonempty)}, kept});
  }
  if (o.anonymous) {
    for (std::int64_t n = s.between(0, 2); n > 0; --n) {
      const std::int64_t len = s.between(2, 3);
      entries.push_back({Entry::Kind::anonymous, std::to_string(len), {len}, false});
    }
  }
  if (o.ellipsis && s.chance(1, 3)) {
    Entry e{Entry::Kind::ellipsis, "...", {}, s.chance(1, 2)};
    for (std::int64_t n = s.between(0, 2); n > 0; --n) e.lengths.push_back(draw_length(s, o, e.kept || !nonempty));
    entries.push_back(std::move(e));
  }
  cap_elements(entries, o.max_elements);
  shuffle(s, entries);

  // Left side: the ellipsis is always bare there.
  std::vector<std::string> tokens;
  std::vector<bool> groupable;
  for (const Entry& e : entries) {
    tokens.push_back(e.text);
    groupable.push_back(e.kind != Entry::Kind::ellipsis);
  }
  Shape shape;
  const SideLayout left = lay_out(s, tokens, groupable, o);
  for (const auto& members : left.members) {
    std::int64_t dim = 1;
    std::vector<std::size_t> names;
    for (std::size_t m : members) {
      const Entry& e = entries[m];
      if (e.kind == Entry::Kind::ellipsis) {
        shape.insert(shape.end(), e.lengths.begin(), e.lengths.end());
        dim = -1;
        continue;
      }
      dim *= e.lengths[0];
      if (e.kind == Entry::Kind::name) names.push_back(m);
    }
    if (dim >= 0) shape.push_back(dim);
    // Leave at most one name unknown, and none when the rest of the group multiplies to 0.
    std::optional<std::size_t> unknown;
    if (!names.empty() && s.chance(3, 4)) {
      const std::size_t u = names[s.choose(names.size())];
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
  shuffle(s, c.axis_lengths);

  // Right side: the kept entries in a random order; the ellipsis may sit inside a group.
  std::vector<std::string> right_tokens;
  std::vector<bool> right_groupable;
  for (const Entry& e : entries) {
    if (!e.kept) continue;
    right_tokens.push_back(e.text);
    right_groupable.push_back(true);
  }
  shuffle(s, right_tokens);
  const SideLayout right = lay_out(s, right_tokens, right_groupable, o);

  c.pattern = join(left.items) + " -> " + join(right.items);
  c.inputs.push_back(generate_values(s, c.dtype, shape));
  return c;
}

}  // namespace einfuzz
