// Shrink candidates of an accepted einsum: fewer operands, labels, dimensions and ellipsis slots,
// merged labels, shorter lengths and broadcasts, a smaller output, shorter names.
#include <algorithm>
#include <map>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/parse.hpp"
#include "einfuzz/harness/group.hpp"
#include "shrink_detail.hpp"

namespace einfuzz::detail {
namespace {

constexpr int kEllipsis = -1;

/// One token of an operand: a dimension (axis, physical length) or the ellipsis marker, which
/// precedes the operand's slot dimensions and has no dimension of its own.
struct Tok {
  int axis = kEllipsis;
  std::int64_t length = 0;
};

struct Operand {
  std::vector<Tok> toks;
  std::size_t source = 0;  ///< the operand of the base model it is gathered from
};

/// An einsum as the shrinker edits it; axis ids are the checked global axes of the base case.
struct Model {
  std::vector<std::string> names;  ///< per axis: the label ("" for an ellipsis slot)
  std::vector<int> slot;           ///< per axis: the ellipsis slot number, -1 for a label
  std::vector<Operand> operands;
  std::vector<int> output;         ///< named axes and kEllipsis, in order
  DType dtype = DType::f64;
  Limits limits;                   ///< no candidate tensor over these is built
};

bool is_named(const Model& m, int axis) { return axis >= 0 && m.slot[static_cast<std::size_t>(axis)] < 0; }

/// The model of `c` (nullopt when it does not check); its candidates stay within `limits`.
std::optional<Model> build(const Case& c, const Limits& limits) {
  auto parsed = parse_einsum(c.pattern);
  if (!parsed) return std::nullopt;
  std::vector<Shape> shapes;
  for (const Tensor& t : c.inputs) shapes.push_back(t.shape());
  auto checked = check_einsum(*parsed, shapes);
  if (!checked) return std::nullopt;
  Model m;
  m.dtype = c.dtype;
  m.limits = limits;
  for (const Axis& a : checked->axes) {
    m.names.push_back(a.ellipsis_slot < 0 ? a.name : std::string());
    m.slot.push_back(a.ellipsis_slot);
  }
  for (std::size_t k = 0; k < checked->operands.size(); ++k) {
    const CheckedOperand& op = checked->operands[k];
    const Expression& e = parsed->operands[k];
    Operand out;
    out.source = k;
    std::size_t named_before = e.items.size();
    for (std::size_t i = 0; i < e.items.size(); ++i) {
      if (!e.items[i].group && e.items[i].atoms.size() == 1 && e.items[i].atoms[0].kind == Atom::Kind::ellipsis) {
        named_before = i;
      }
    }
    for (std::size_t d = 0; d < op.shape.size(); ++d) {
      if (e.has_ellipsis && d == named_before) out.toks.push_back({});
      out.toks.push_back({op.axes[d], op.shape[d]});
    }
    if (e.has_ellipsis && named_before >= op.shape.size()) out.toks.push_back({});
    m.operands.push_back(std::move(out));
  }
  for (const Item& item : parsed->output.items) {
    const Atom& a = item.atoms.at(0);
    if (a.kind == Atom::Kind::ellipsis) {
      m.output.push_back(kEllipsis);
      continue;
    }
    const auto it = std::find(m.names.begin(), m.names.end(), a.name);
    if (it == m.names.end()) return std::nullopt;
    m.output.push_back(static_cast<int>(it - m.names.begin()));
  }
  return m;
}

std::string render(const Model& m) {
  std::string text;
  for (std::size_t k = 0; k < m.operands.size(); ++k) {
    std::string expr;
    for (const Tok& t : m.operands[k].toks) {
      if (t.axis == kEllipsis) {
        expr += (expr.empty() ? "" : " ") + std::string("...");
      } else if (is_named(m, t.axis)) {
        expr += (expr.empty() ? "" : " ") + m.names[static_cast<std::size_t>(t.axis)];
      }
    }
    text += (k ? ", " : "") + expr;
  }
  text += text.empty() || text.back() == ' ' ? "->" : " ->";  // `a, ->`: a last operand of rank 0
  for (int a : m.output) text += " " + (a == kEllipsis ? std::string("...") : m.names[static_cast<std::size_t>(a)]);
  return text;
}

AxisLayout layout_of(const Operand& op) {
  AxisLayout layout;
  for (const Tok& t : op.toks) {
    if (t.axis != kEllipsis) layout.push_back({{t.axis, t.length}});
  }
  return layout;
}

bool uses(const Model& m, int axis) {
  for (const Operand& op : m.operands)
    for (const Tok& t : op.toks)
      if (t.axis == axis) return true;
  return false;
}

/// Drops output labels that no operand uses any more (they would be unknown output axes).
void prune_output(Model& m) {
  std::erase_if(m.output, [&](int a) { return a != kEllipsis && !uses(m, a); });
}

/// The case of `m`, each operand gathered from `base`'s; `remap[a]` is the axis whose coordinate
/// old axis `a` takes (merged labels). False when a gather is impossible.
bool emit(const Case& base, const Model& base_model, const Model& m, const std::vector<int>& remap, const Visit& visit,
          std::span<const std::int64_t> offsets = {}) {
  Case c;
  c.op = Op::einsum;
  c.dtype = m.dtype;
  c.pattern = render(m);
  for (const Operand& op : m.operands) {
    const AxisLayout old_layout = layout_of(base_model.operands[op.source]);
    auto t = gather(base.inputs[op.source], old_layout, layout_of(op), [&](int a) {
      return remap.empty() ? a : remap[static_cast<std::size_t>(a)];
    }, base_model.limits, offsets);
    if (!t) return false;
    c.inputs.push_back(std::move(*t));
  }
  return visit(std::move(c));
}

bool emit(const Case& base, const Model& base_model, const Model& m, const Visit& visit) {
  return emit(base, base_model, m, {}, visit);
}

/// The length of `axis` (its first physical length other than 1), or 1.
std::int64_t resolved_length(const Model& m, int axis) {
  for (const Operand& op : m.operands)
    for (const Tok& t : op.toks)
      if (t.axis == axis && t.length != 1) return t.length;
  return 1;
}

bool operand_candidates(const Case& c, const Model& m, const Visit& visit) {
  for (std::size_t k = 0; m.operands.size() > 1 && k < m.operands.size(); ++k) {
    Model s = m;
    s.operands.erase(s.operands.begin() + static_cast<std::ptrdiff_t>(k));
    prune_output(s);
    if (emit(c, m, s, visit)) return true;
  }
  return false;
}

bool ellipsis_candidates(const Case& c, const Model& m, const Visit& visit) {
  bool any = std::find(m.output.begin(), m.output.end(), kEllipsis) != m.output.end();
  int leading = -1;  // the present slot with the smallest number
  for (const Operand& op : m.operands) {
    for (const Tok& t : op.toks) {
      any |= t.axis == kEllipsis;
      if (t.axis >= 0 && !is_named(m, t.axis) &&
          (leading < 0 || m.slot[static_cast<std::size_t>(t.axis)] < m.slot[static_cast<std::size_t>(leading)]))
        leading = t.axis;
    }
  }
  if (!any) return false;
  Model s = m;
  for (Operand& op : s.operands) std::erase_if(op.toks, [&](const Tok& t) { return !is_named(s, t.axis); });
  std::erase(s.output, kEllipsis);
  if (emit(c, m, s, visit)) return true;
  if (leading >= 0) {
    s = m;
    for (Operand& op : s.operands) std::erase_if(op.toks, [&](const Tok& t) { return t.axis == leading; });
    if (emit(c, m, s, visit)) return true;
  }
  return false;
}

bool label_candidates(const Case& c, const Model& m, const Visit& visit) {
  // A label dropped everywhere.
  for (int a = 0; a < static_cast<int>(m.names.size()); ++a) {
    if (!is_named(m, a) || !uses(m, a)) continue;
    Model s = m;
    for (Operand& op : s.operands) std::erase_if(op.toks, [&](const Tok& t) { return t.axis == a; });
    std::erase(s.output, a);
    if (emit(c, m, s, visit)) return true;
  }
  // One dimension dropped from one operand (a diagonal becomes shorter; a slot only if leading).
  for (std::size_t k = 0; k < m.operands.size(); ++k) {
    const auto& toks = m.operands[k].toks;
    for (std::size_t d = 0; d < toks.size(); ++d) {
      if (toks[d].axis == kEllipsis) continue;
      if (!is_named(m, toks[d].axis) && !(d > 0 && toks[d - 1].axis == kEllipsis)) continue;
      Model s = m;
      s.operands[k].toks.erase(s.operands[k].toks.begin() + static_cast<std::ptrdiff_t>(d));
      prune_output(s);
      if (emit(c, m, s, visit)) return true;
    }
  }
  // Label b merged into label a: same length (or one of them 1 everywhere), equal within operands.
  for (int a = 0; a < static_cast<int>(m.names.size()); ++a) {
    if (!is_named(m, a) || !uses(m, a)) continue;
    for (int b = a + 1; b < static_cast<int>(m.names.size()); ++b) {
      if (!is_named(m, b) || !uses(m, b)) continue;
      const std::int64_t la = resolved_length(m, a), lb = resolved_length(m, b);
      if (la != lb && la != 1 && lb != 1) continue;
      Model s = m;
      bool ok = true;
      for (Operand& op : s.operands) {
        std::int64_t length = -1;
        for (Tok& t : op.toks) {
          if (t.axis == b) t.axis = a;
          if (t.axis != a) continue;
          if (length >= 0 && length != t.length) ok = false;
          length = t.length;
        }
      }
      if (!ok) continue;
      const bool a_out = std::find(s.output.begin(), s.output.end(), a) != s.output.end();
      for (auto it = s.output.begin(); it != s.output.end(); ++it) {
        if (*it != b) continue;
        if (a_out) {
          s.output.erase(it);
        } else {
          *it = a;
        }
        break;
      }
      std::vector<int> remap(m.names.size());
      for (std::size_t i = 0; i < remap.size(); ++i) remap[i] = static_cast<int>(i);
      remap[static_cast<std::size_t>(b)] = a;
      if (emit(c, m, s, remap, visit)) return true;
    }
  }
  // A smaller output (the label becomes contracted).
  for (std::size_t i = 0; i < m.output.size(); ++i) {
    Model s = m;
    s.output.erase(s.output.begin() + static_cast<std::ptrdiff_t>(i));
    if (emit(c, m, s, visit)) return true;
  }
  return false;
}

bool length_candidates(const Case& c, const Model& m, const Visit& visit) {
  for (int a = 0; a < static_cast<int>(m.names.size()); ++a) {
    if (!uses(m, a)) continue;
    const std::int64_t length = resolved_length(m, a);
    for (const Slice slice : shorter_slices(length)) {
      Model s = m;
      for (Operand& op : s.operands)
        for (Tok& t : op.toks)
          if (t.axis == a && t.length == length) t.length = slice.length;
      std::vector<std::int64_t> offsets(m.names.size(), 0);
      offsets[static_cast<std::size_t>(a)] = slice.offset;
      if (emit(c, m, s, {}, visit, offsets)) return true;
    }
  }
  // A broadcast: every occurrence of a label in one operand becomes length 1.
  for (std::size_t k = 0; k < m.operands.size(); ++k) {
    for (const Tok& t : m.operands[k].toks) {
      if (t.axis == kEllipsis || t.length <= 1) continue;
      Model s = m;
      for (Tok& u : s.operands[k].toks)
        if (u.axis == t.axis) u.length = 1;
      if (emit(c, m, s, visit)) return true;
    }
  }
  return false;
}

bool name_candidates(const Case& c, const Model& m, const Visit& visit) {
  std::vector<std::string> taken;
  for (int a = 0; a < static_cast<int>(m.names.size()); ++a)
    if (is_named(m, a) && uses(m, a)) taken.push_back(m.names[static_cast<std::size_t>(a)]);
  for (int a = 0; a < static_cast<int>(m.names.size()); ++a) {
    if (!is_named(m, a) || !uses(m, a)) continue;
    const auto shorter = shorter_name(m.names[static_cast<std::size_t>(a)], taken);
    if (!shorter) continue;
    Model s = m;
    s.names[static_cast<std::size_t>(a)] = *shorter;
    if (emit(c, m, s, visit)) return true;
  }
  return false;
}

}  // namespace

std::optional<Case> plain_einsum_spelling(const Case& c, const Limits& limits) {
  const auto m = build(c, limits);
  if (!m) return std::nullopt;
  std::vector<int> dots;  // the ellipsis dimensions the operands use, in slot order
  for (int a = 0; a < static_cast<int>(m->names.size()); ++a)
    if (!is_named(*m, a) && uses(*m, a)) dots.push_back(a);
  std::sort(dots.begin(), dots.end(), [&](int x, int y) {
    return m->slot[static_cast<std::size_t>(x)] < m->slot[static_cast<std::size_t>(y)];
  });
  const bool output_dots = std::find(m->output.begin(), m->output.end(), kEllipsis) != m->output.end();
  bool any = output_dots;
  for (const Operand& op : m->operands)
    for (const Tok& t : op.toks) any |= t.axis == kEllipsis;
  if (!any) return std::nullopt;
  Model s = *m;
  std::vector<std::string> taken;
  for (int a = 0; a < static_cast<int>(s.names.size()); ++a)
    if (is_named(s, a)) taken.push_back(s.names[static_cast<std::size_t>(a)]);
  std::size_t next = 0;  // the next canonical name to try
  for (int a : dots) {
    std::string name = canonical_name(next++);
    while (std::find(taken.begin(), taken.end(), name) != taken.end()) name = canonical_name(next++);
    s.names[static_cast<std::size_t>(a)] = name;
    s.slot[static_cast<std::size_t>(a)] = -1;
  }
  for (Operand& op : s.operands) std::erase_if(op.toks, [](const Tok& t) { return t.axis == kEllipsis; });
  std::vector<int> output;
  for (int a : s.output) {
    if (a == kEllipsis) {
      output.insert(output.end(), dots.begin(), dots.end());
    } else {
      output.push_back(a);
    }
  }
  s.output = std::move(output);
  Case out = c;  // every operand keeps its dimensions in order: the inputs (and a VJP's cotangent) stay
  out.pattern = render(s);
  return out;
}

bool einsum_candidates(const Case& c, const Visit& visit, const Limits& limits) {
  auto m = build(c, limits);
  if (!m) return false;
  if (render(*m) != c.pattern && emit(c, *m, *m, visit)) return true;  // canonical spacing and `(a)` → `a`
  return operand_candidates(c, *m, visit) || ellipsis_candidates(c, *m, visit) || label_candidates(c, *m, visit) ||
         length_candidates(c, *m, visit) || name_candidates(c, *m, visit);
}

}  // namespace einfuzz::detail
