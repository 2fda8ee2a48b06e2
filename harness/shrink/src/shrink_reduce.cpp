// Shrink candidates of an accepted reduce: fewer items, group members, ellipsis dimensions and kept
// axes, shorter lengths, unwrapped groups, shorter names, fewer supplied lengths; and its plain
// spelling (names for anonymous axes and ellipsis dimensions), one of the canonical form's steps.
#include <algorithm>

#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/core/parse.hpp"
#include "einfuzz/harness/group.hpp"
#include "shrink_detail.hpp"

namespace einfuzz::detail {
namespace {

constexpr int kEllipsis = -1;

struct RAxis {
  std::string text;         ///< the name, the anonymous literal, or "" for an ellipsis dimension
  bool anonymous = false;
  std::int64_t length = 0;
};

/// One item of either side. Left: `members` are axis ids (an ellipsis item: one per dimension).
/// Right: axis ids or kEllipsis. A unit item has no members and keeps its text.
struct RItem {
  enum class Kind { atom, group, unit, ellipsis } kind = Kind::atom;
  std::vector<int> members;
  std::string unit_text;
};

struct Model {
  std::vector<RAxis> axes;
  std::vector<RItem> left, right;
  std::vector<int> supplied;  ///< axes with a supplied length, in the case's order
  Case base;                  ///< op, reduction, dtype (inputs and lengths are rebuilt)
  Limits limits;              ///< no candidate tensor over these is built
};

/// The model of `c` (nullopt when it does not check); its candidates stay within `limits`.
std::optional<Model> build(const Case& c, const Limits& limits) {
  auto parsed = parse_transform(c.pattern);
  if (!parsed || c.inputs.size() != 1) return std::nullopt;
  auto checked = check_reduce(c.pattern, c.reduction.value_or(""), c.inputs[0].shape(), c.axis_lengths, c.dtype);
  if (!checked) return std::nullopt;
  Model m;
  m.base = c;
  m.limits = limits;
  for (const ElementaryAxis& a : checked->axes) {
    const bool ellipsis = a.name.rfind("...", 0) == 0;
    const bool anonymous = !ellipsis && !a.name.empty() && a.name[0] >= '0' && a.name[0] <= '9';
    m.axes.push_back({ellipsis ? std::string() : a.name, anonymous, a.length});
  }
  const auto find_name = [&](const std::string& name) {
    for (std::size_t i = 0; i < m.axes.size(); ++i)
      if (!m.axes[i].anonymous && m.axes[i].text == name) return static_cast<int>(i);
    return -2;
  };
  std::size_t dim = 0;
  const std::size_t rank = c.inputs[0].rank();
  const std::size_t items = parsed->input.items.size();
  for (const Item& item : parsed->input.items) {
    RItem r;
    const auto group_of = [&]() -> const std::vector<int>& { return checked->input_groups.at(dim++); };
    if (item.group) {
      r.kind = item.atoms.empty() ? RItem::Kind::unit : RItem::Kind::group;
      r.members = group_of();
      r.unit_text = "()";
    } else if (item.atoms[0].kind == Atom::Kind::ellipsis) {
      r.kind = RItem::Kind::ellipsis;
      for (std::size_t n = rank + 1 - items; n > 0; --n) r.members.push_back(group_of().at(0));
    } else if (item.atoms[0].kind == Atom::Kind::unit) {
      r.kind = RItem::Kind::unit;
      r.unit_text = item.atoms[0].name;
      group_of();
    } else {
      r.members = group_of();
    }
    m.left.push_back(std::move(r));
  }
  for (const Item& item : parsed->output.items) {
    RItem r;
    r.kind = item.group ? RItem::Kind::group : RItem::Kind::atom;
    for (const Atom& a : item.atoms) {
      if (a.kind == Atom::Kind::ellipsis) {
        r.members.push_back(kEllipsis);
        if (!item.group) r.kind = RItem::Kind::ellipsis;
      } else if (a.kind == Atom::Kind::unit) {
        r.kind = RItem::Kind::unit;
        r.unit_text = a.name;
      } else {
        const int id = find_name(a.name);
        if (id < 0) return std::nullopt;
        r.members.push_back(id);
      }
    }
    if (item.group && item.atoms.empty()) {
      r.kind = RItem::Kind::unit;
      r.unit_text = "()";
    }
    m.right.push_back(std::move(r));
  }
  for (const auto& [name, length] : c.axis_lengths) {
    const int id = find_name(name);
    if (id < 0) return std::nullopt;
    m.supplied.push_back(id);
  }
  return m;
}

std::string text_of(const Model& m, const RItem& item) {
  const auto member = [&](int a) { return a == kEllipsis ? std::string("...") : m.axes[static_cast<std::size_t>(a)].text; };
  switch (item.kind) {
    case RItem::Kind::unit: return item.unit_text;
    case RItem::Kind::ellipsis: return "...";
    case RItem::Kind::atom: return member(item.members.at(0));
    case RItem::Kind::group: break;
  }
  std::string s = "(";
  for (std::size_t i = 0; i < item.members.size(); ++i) s += (i ? " " : "") + member(item.members[i]);
  return s + ")";
}

std::string render(const Model& m) {
  std::string left, right;
  for (const RItem& item : m.left) left += (left.empty() ? "" : " ") + text_of(m, item);
  for (const RItem& item : m.right) right += (right.empty() ? "" : " ") + text_of(m, item);
  return left + (left.empty() ? "->" : " ->") + (right.empty() ? "" : " " + right);
}

AxisLayout layout_of(const Model& m) {
  AxisLayout layout;
  for (const RItem& item : m.left) {
    if (item.kind == RItem::Kind::ellipsis) {
      for (int a : item.members) layout.push_back({{a, m.axes[static_cast<std::size_t>(a)].length}});
      continue;
    }
    AxisDim dim;
    for (int a : item.members) dim.emplace_back(a, m.axes[static_cast<std::size_t>(a)].length);
    layout.push_back(std::move(dim));
  }
  return layout;
}

bool on_left(const Model& m, int axis) {
  for (const RItem& item : m.left)
    if (std::find(item.members.begin(), item.members.end(), axis) != item.members.end()) return true;
  return false;
}

bool has_left_ellipsis(const Model& m) {
  return std::any_of(m.left.begin(), m.left.end(), [](const RItem& i) { return i.kind == RItem::Kind::ellipsis; });
}

/// Removes right-hand references to axes no longer on the left (and the ellipsis when the left has
/// none); items left without members disappear.
void prune_right(Model& m) {
  const bool ellipsis = has_left_ellipsis(m);
  for (RItem& item : m.right) {
    if (item.kind == RItem::Kind::unit) continue;
    std::erase_if(item.members, [&](int a) { return a == kEllipsis ? !ellipsis : !on_left(m, a); });
  }
  std::erase_if(m.right, [](const RItem& i) { return i.kind != RItem::Kind::unit && i.members.empty(); });
  std::erase_if(m.supplied, [&](int a) { return !on_left(m, a); });
}

bool emit(const Model& base, const Model& m, const Visit& visit, std::span<const std::int64_t> offsets = {}) {
  auto input = gather(base.base.inputs[0], layout_of(base), layout_of(m), [](int a) { return a; }, base.limits, offsets);
  if (!input) return false;
  Case c = base.base;
  c.pattern = render(m);
  c.inputs = {std::move(*input)};
  c.axis_lengths.clear();
  for (int a : m.supplied) c.axis_lengths.emplace_back(m.axes[static_cast<std::size_t>(a)].text, m.axes[static_cast<std::size_t>(a)].length);
  c.expect_error.reset();
  return visit(std::move(c));
}

bool item_candidates(const Model& m, const Visit& visit) {
  for (std::size_t i = 0; i < m.left.size(); ++i) {  // a left item (its axes are read at 0)
    Model s = m;
    s.left.erase(s.left.begin() + static_cast<std::ptrdiff_t>(i));
    prune_right(s);
    if (emit(m, s, visit)) return true;
  }
  for (std::size_t i = 0; i < m.left.size(); ++i) {  // one member of a left group or ellipsis
    const RItem& item = m.left[i];
    if (item.kind == RItem::Kind::ellipsis) {  // any one of its dimensions, the first first
      for (std::size_t j = 0; j < item.members.size(); ++j) {
        Model s = m;
        s.left[i].members.erase(s.left[i].members.begin() + static_cast<std::ptrdiff_t>(j));
        prune_right(s);
        if (emit(m, s, visit)) return true;
      }
    }
    if (item.kind != RItem::Kind::group || item.members.size() < 2) continue;
    for (std::size_t j = 0; j < item.members.size(); ++j) {
      Model s = m;
      s.left[i].members.erase(s.left[i].members.begin() + static_cast<std::ptrdiff_t>(j));
      prune_right(s);
      if (emit(m, s, visit)) return true;
    }
  }
  for (std::size_t i = 0; i < m.right.size(); ++i) {  // a right item (its axes become reduced)
    Model s = m;
    s.right.erase(s.right.begin() + static_cast<std::ptrdiff_t>(i));
    if (emit(m, s, visit)) return true;
  }
  for (std::size_t i = 0; i < m.right.size(); ++i) {
    if (m.right[i].kind != RItem::Kind::group || m.right[i].members.size() < 2) continue;
    for (std::size_t j = 0; j < m.right[i].members.size(); ++j) {
      Model s = m;
      s.right[i].members.erase(s.right[i].members.begin() + static_cast<std::ptrdiff_t>(j));
      if (emit(m, s, visit)) return true;
    }
  }
  return false;
}

bool length_candidates(const Model& m, const Visit& visit) {
  for (std::size_t a = 0; a < m.axes.size(); ++a) {
    if (!on_left(m, static_cast<int>(a))) continue;
    if (m.axes[a].anonymous) {
      if (m.axes[a].length <= 2) continue;
      Model s = m;
      s.axes[a].length = 2;
      s.axes[a].text = "2";
      // The first two elements, or the last two (what matters at the end of the axis survives).
      for (const std::int64_t offset : {std::int64_t{0}, m.axes[a].length - 2}) {
        std::vector<std::int64_t> offsets(m.axes.size(), 0);
        offsets[a] = offset;
        if (emit(m, s, visit, offsets)) return true;
      }
      continue;
    }
    for (const Slice slice : shorter_slices(m.axes[a].length)) {
      Model s = m;
      s.axes[a].length = slice.length;
      std::vector<std::int64_t> offsets(m.axes.size(), 0);
      offsets[a] = slice.offset;
      if (emit(m, s, visit, offsets)) return true;
    }
  }
  return false;
}

bool simplification_candidates(const Model& m, const Visit& visit) {
  for (int side = 0; side < 2; ++side) {  // `(a)` → `a`
    const auto& items = side == 0 ? m.left : m.right;
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (items[i].kind != RItem::Kind::group || items[i].members.size() != 1 || items[i].members[0] == kEllipsis)
        continue;
      Model s = m;
      (side == 0 ? s.left : s.right)[i].kind = RItem::Kind::atom;
      if (emit(m, s, visit)) return true;
    }
  }
  std::vector<std::string> taken;
  for (const RAxis& a : m.axes)
    if (!a.anonymous && !a.text.empty()) taken.push_back(a.text);
  for (std::size_t a = 0; a < m.axes.size(); ++a) {
    if (m.axes[a].anonymous || m.axes[a].text.empty() || !on_left(m, static_cast<int>(a))) continue;
    const auto shorter = shorter_name(m.axes[a].text, taken);
    if (!shorter) continue;
    Model s = m;
    s.axes[a].text = *shorter;
    if (emit(m, s, visit)) return true;
  }
  for (std::size_t i = 0; i < m.supplied.size(); ++i) {  // let the checker infer it
    Model s = m;
    s.supplied.erase(s.supplied.begin() + static_cast<std::ptrdiff_t>(i));
    if (emit(m, s, visit)) return true;
  }
  return false;
}

/// `m` spelled plainly: every anonymous axis and every ellipsis dimension a name of its own (the
/// first canonical names not taken), each ellipsis replaced by those names on both sides. The same
/// axes in the same order, so the same input; nullopt when nothing changes.
std::optional<Model> plain_spelling(const Model& m) {
  std::vector<std::string> taken;
  for (const RAxis& a : m.axes)
    if (!a.anonymous && !a.text.empty()) taken.push_back(a.text);
  Model s = m;
  bool changed = false;
  std::size_t next = 0;  // the next canonical name to try
  for (std::size_t i = 0; i < s.axes.size(); ++i) {
    RAxis& a = s.axes[i];
    if (!a.anonymous && !a.text.empty()) continue;
    std::string name = canonical_name(next++);
    while (std::find(taken.begin(), taken.end(), name) != taken.end()) name = canonical_name(next++);
    // An anonymous member of a left group gave its length; named, it must be supplied (`(2 2)` is
    // `(a b)` with a = 2, b = 2), or the checker cannot split the dimension.
    const int id = static_cast<int>(i);
    const bool grouped = a.anonymous && std::any_of(s.left.begin(), s.left.end(), [&](const RItem& item) {
      return item.kind == RItem::Kind::group && std::find(item.members.begin(), item.members.end(), id) != item.members.end();
    });
    if (grouped) s.supplied.push_back(id);
    a = RAxis{name, false, a.length};
    changed = true;
  }
  std::vector<int> dots;  // the left ellipsis's axes, in order
  std::vector<RItem> left;
  for (const RItem& item : s.left) {
    if (item.kind != RItem::Kind::ellipsis) {
      left.push_back(item);
      continue;
    }
    changed = true;
    dots = item.members;
    for (int a : item.members) left.push_back(RItem{RItem::Kind::atom, {a}, {}});
  }
  std::vector<RItem> right;
  for (const RItem& item : s.right) {
    if (item.kind == RItem::Kind::ellipsis) {
      for (int a : dots) right.push_back(RItem{RItem::Kind::atom, {a}, {}});
      continue;
    }
    RItem r = item;
    r.members.clear();
    for (int a : item.members) {
      if (a == kEllipsis) {
        r.members.insert(r.members.end(), dots.begin(), dots.end());
      } else {
        r.members.push_back(a);
      }
    }
    // `(...)` over no dimensions is the unit `()`.
    if (r.kind == RItem::Kind::group && r.members.empty()) r = RItem{RItem::Kind::unit, {}, "()"};
    right.push_back(std::move(r));
  }
  if (!changed) return std::nullopt;
  s.left = std::move(left);
  s.right = std::move(right);
  return s;
}

}  // namespace

std::optional<Case> plain_reduce_spelling(const Case& c, const Limits& limits) {
  const auto m = build(c, limits);
  if (!m) return std::nullopt;
  const auto plain = plain_spelling(*m);
  if (!plain) return std::nullopt;
  std::optional<Case> out;
  emit(*m, *plain, [&](Case&& candidate) {
    out = std::move(candidate);
    return true;
  });
  return out;
}

bool reduce_candidates(const Case& c, const Visit& visit, const Limits& limits) {
  auto m = build(c, limits);
  if (!m) return false;
  if (render(*m) != c.pattern && emit(*m, *m, visit)) return true;
  return item_candidates(*m, visit) || length_candidates(*m, visit) || simplification_candidates(*m, visit);
}

}  // namespace einfuzz::detail
