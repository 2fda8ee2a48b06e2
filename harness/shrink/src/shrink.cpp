// The greedy shrink driver, the size order that makes it terminate, and the candidates every case
// has: fewer inputs and dimensions (for rejected cases), shorter patterns, simpler values.
#include "einfuzz/harness/shrink.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <tuple>
#include <type_traits>

#include "einfuzz/core/parse.hpp"
#include "einfuzz/core/pattern.hpp"
#include "einfuzz/harness/group.hpp"
#include "shrink_detail.hpp"

namespace einfuzz {
namespace detail {

Shape layout_shape(const AxisLayout& layout) {
  Shape shape;
  for (const AxisDim& dim : layout) {
    // A dimension of length 0 may have members that multiply past int64 beside the 0.
    std::vector<std::int64_t> lengths;
    for (const auto& [axis, length] : dim) lengths.push_back(length);
    shape.push_back(element_count(lengths));
  }
  return shape;
}

std::optional<Tensor> gather(const Tensor& old, const AxisLayout& old_layout, const AxisLayout& new_layout,
                             const std::function<int(int)>& source, const Limits& limits,
                             std::span<const std::int64_t> offsets) {
  // Each dimension's length is a product of members: check it and the total before multiplying
  // out, so neither an overflow nor a huge allocation can happen.
  Shape new_shape;
  for (const AxisDim& dim : new_layout) {
    std::int64_t n = 1;
    for (const auto& member : dim) {
      if (member.second < 0 || (member.second != 0 && n > limits.max_tensor_elements / member.second)) return std::nullopt;
      n *= member.second;
    }
    new_shape.push_back(n);
  }
  if (!check_tensor_size(new_shape, limits, "shrink candidate").ok()) return std::nullopt;
  Tensor out(old.dtype(), new_shape);
  if (out.size() == 0 || old.size() == 0) return out;
  int max_axis = 0;
  for (const AxisDim& dim : new_layout)
    for (const auto& member : dim) max_axis = std::max(max_axis, member.first);
  std::vector<std::int64_t> coord(static_cast<std::size_t>(max_axis) + 1, 0);
  std::vector<std::int64_t> from(static_cast<std::size_t>(out.size()));
  for (std::int64_t flat = 0; flat < out.size(); ++flat) {
    // Decompose the new flat index into elementary coordinates (last dimension, last member fastest).
    std::int64_t rest = flat;
    for (std::size_t d = new_layout.size(); d-- > 0;) {
      std::int64_t c = rest % new_shape[d];
      rest /= new_shape[d];
      for (std::size_t m = new_layout[d].size(); m-- > 0;) {
        const auto [axis, length] = new_layout[d][m];
        if (length > 1) coord[static_cast<std::size_t>(axis)] = c % length;
        c /= length;
      }
    }
    std::int64_t index = 0;
    for (const AxisDim& dim : old_layout) {
      for (const auto& [axis, length] : dim) {
        std::int64_t c = 0;
        if (length > 1) {
          const int s = source(axis);
          if (s >= 0 && static_cast<std::size_t>(s) < coord.size()) c = coord[static_cast<std::size_t>(s)];
          if (static_cast<std::size_t>(axis) < offsets.size()) c += offsets[static_cast<std::size_t>(axis)];
        }
        if (c >= length) return std::nullopt;
        index = index * length + c;
      }
    }
    from[static_cast<std::size_t>(flat)] = index;
  }
  visit_dtype(old.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const auto src = old.values<T>();
    auto dst = out.values<T>();
    for (std::size_t i = 0; i < dst.size(); ++i) dst[i] = src[static_cast<std::size_t>(from[i])];
  });
  return out;
}

std::optional<std::string> shorter_name(const std::string& name, const std::vector<std::string>& taken) {
  for (char ch = 'a'; ch <= 'z'; ++ch) {
    const std::string candidate(1, ch);
    if (candidate.size() > name.size() || (candidate.size() == name.size() && candidate >= name)) break;
    if (std::find(taken.begin(), taken.end(), candidate) == taken.end()) return candidate;
  }
  return std::nullopt;
}

std::vector<std::int64_t> shorter_lengths(std::int64_t length) {
  std::vector<std::int64_t> out;
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, length / 2, length - 1}) {
    if (n >= 0 && n < length && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  }
  return out;
}

std::vector<Slice> shorter_slices(std::int64_t length) {
  std::vector<Slice> out;
  for (std::int64_t n : shorter_lengths(length)) out.push_back({n, 0});
  if (length >= 2) out.push_back({1, length - 1});
  if (length >= 3) out.push_back({length - length / 2, length / 2});
  return out;
}

}  // namespace detail

namespace {

using detail::Visit;

// ---------------------------------------------------------------------------------------------
// Value complexity: +0 < 1 < −1 < −0 < small integers < integers < short fractions < other finite
// < subnormals < ±Inf < the default NaN < other NaNs.

template <class T>
std::uint64_t float_cost(T x) {
  if (std::isnan(x)) {
    const T q = std::numeric_limits<T>::quiet_NaN();
    return std::memcmp(&x, &q, sizeof x) == 0 ? 10 * 64 : 11 * 64;
  }
  if (std::isinf(x)) return 9 * 64 + (x < 0);
  if (x == 0) return std::signbit(x) ? 3 * 64 : 0;
  if (x == 1) return 1 * 64;
  if (x == -1) return 2 * 64;
  if (std::fpclassify(x) == FP_SUBNORMAL) return 8 * 64;
  const auto a = std::fabs(x);  // float for the 16-bit formats: exact
  if (a == std::trunc(a) && a <= 16) return 4 * 64 + static_cast<std::uint64_t>(a) * 2 + (x < 0);
  if (a == std::trunc(a) && a < 0x1p24) return 5 * 64 + (x < 0);
  int e = 0;
  const auto m = std::frexp(a, &e);
  if (std::ldexp(m, 8) == std::trunc(std::ldexp(m, 8))) return 6 * 64 + (x < 0);
  return 7 * 64 + (x < 0);
}

template <class T>
std::uint64_t integer_cost(T x) {
  using U = std::make_unsigned_t<T>;
  const U magnitude = x < 0 ? static_cast<U>(U(0) - static_cast<U>(x)) : static_cast<U>(x);
  const auto m = static_cast<std::uint64_t>(magnitude);
  return std::min<std::uint64_t>(m, std::uint64_t{1} << 40) * 2 + (x < 0);
}

std::uint64_t value_cost(const Tensor& t, std::size_t i) {
  return visit_dtype(t.dtype(), [&](auto tag) -> std::uint64_t {
    using T = decltype(tag);
    const T v = t.values<T>()[i];
    if constexpr (std::is_same_v<T, Bool8>) {
      return v != 0;
    } else if constexpr (is_float_type_v<T>) {
      return float_cost(v);
    } else {
      return integer_cost(v);
    }
  });
}

template <class T>
std::vector<T> simpler_values(T x) {
  std::vector<T> out;
  if constexpr (std::is_same_v<T, Bool8>) {
    out = {0};
  } else if constexpr (is_float_type_v<T>) {
    using L = std::numeric_limits<T>;
    out = {T(0), T(1), T(-1), -T(0)};
    if (std::isfinite(x)) {
      // static_cast: the 16-bit formats compute these in float (exactly) and convert back.
      out.push_back(static_cast<T>(std::trunc(x)));
      out.push_back(static_cast<T>(std::trunc(x / T(2))));
      if (x != std::trunc(x)) out.push_back(static_cast<T>(std::ldexp(std::nearbyint(std::ldexp(x, 4)), -4)));
    } else if (std::isnan(x)) {
      out.push_back(L::quiet_NaN());
      out.push_back(L::infinity());
    } else {
      if (x < 0) out.push_back(-x);  // -inf → +inf: the simpler sign of the same class
      out.push_back(static_cast<T>(std::copysign(L::max(), x)));
    }
  } else {
    out = {T(0), T(1), T(-1), static_cast<T>(x / 2), static_cast<T>(x < 0 ? x + 1 : x - 1)};
  }
  return out;
}

std::size_t distinct_words(const std::string& p) {
  std::set<std::string> words;
  for (std::size_t i = 0; i < p.size();) {
    if (!(std::isalnum(static_cast<unsigned char>(p[i])) || p[i] == '_')) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < p.size() && (std::isalnum(static_cast<unsigned char>(p[j])) || p[j] == '_')) ++j;
    words.insert(p.substr(i, j - i));
    i = j;
  }
  return words.size();
}

/// The size order: structure (inputs, ranks, elements), distinct words of the pattern, value
/// complexity, pattern length, supplied lengths, and last the sum of the dimensions' lengths, so a
/// tensor without elements still shrinks its other lengths ([0, 4] to [0, 1]: the same structure,
/// but the drawn 4 would make a group of its own, its length class `n` where the failure needs none).
auto measure(const Case& c) {
  std::uint64_t structure = c.inputs.size();
  std::uint64_t values = 0;
  std::uint64_t lengths = 0;
  const auto add = [&](const Tensor& t) {
    structure += t.rank() + static_cast<std::uint64_t>(t.size());
    for (std::int64_t n : t.shape()) lengths += static_cast<std::uint64_t>(n);
    for (std::int64_t i = 0; i < t.size(); ++i) values += value_cost(t, static_cast<std::size_t>(i));
  };
  for (const Tensor& t : c.inputs) add(t);
  if (c.cotangent) add(*c.cotangent);  // a VJP case's cotangent shrinks like an input
  // Last, the input layouts: a case is smaller without one, without its fill or with less storage.
  std::uint64_t layouts = 0;
  for (const auto& l : c.layouts) {
    if (l) layouts += 1 + static_cast<std::uint64_t>(l->storage) + (l->fill ? 1 : 0);
  }
  return std::make_tuple(structure, distinct_words(c.pattern), values, c.pattern.size(), c.axis_lengths.size(),
                         lengths, layouts);
}

// ---------------------------------------------------------------------------------------------
// Candidates every case has

/// The forward output's shape of a (VJP) case, or nullopt when the checker rejects the forward case.
std::optional<Shape> forward_output_of(const Case& c) {
  Case plain = c;
  plain.cotangent.reset();
  auto checked = check_case(plain, Limits{});
  if (!checked) return std::nullopt;
  return std::visit([](const auto& x) { return x.output_shape; }, *checked);
}

/// The tensors whose values shrink: the inputs, then a VJP case's cotangent (index inputs.size()).
std::size_t value_tensors(const Case& c) { return c.inputs.size() + (c.cotangent ? 1 : 0); }
const Tensor& value_tensor(const Case& c, std::size_t k) { return k < c.inputs.size() ? c.inputs[k] : *c.cotangent; }
Tensor& value_tensor(Case& c, std::size_t k) { return k < c.inputs.size() ? c.inputs[k] : *c.cotangent; }

/// A structural candidate's layouts, from `from`'s: an input of the same position and rank keeps
/// its strides over its new lengths (tight_layout) when that is still a view of its values, one
/// with an axis fewer keeps the others', so a failure that needs a transposed or reversed view can
/// shrink its lengths and axes; any other input is dense. No layout left: none at all.
void carry_layouts(const Case& from, Case& candidate, const Limits& limits) {
  candidate.layouts.clear();
  if (from.layouts.size() != from.inputs.size() || candidate.inputs.size() != from.inputs.size()) return;
  std::vector<std::optional<InputLayout>> carried(candidate.inputs.size());
  bool any = false;
  for (std::size_t k = 0; k < carried.size(); ++k) {
    const Tensor& t = candidate.inputs[k];
    const Tensor& old = from.inputs[k];
    if (!from.layouts[k] || t.dtype() != old.dtype()) continue;
    // The same rank: the strides as they are. One axis fewer: the strides without one of them (the
    // first choice that is a view).
    std::vector<std::vector<std::int64_t>> choices;
    const std::vector<std::int64_t>& strides = from.layouts[k]->strides;
    if (t.rank() == old.rank()) choices.push_back(strides);
    if (t.rank() + 1 == old.rank()) {
      for (std::size_t skip = 0; skip < strides.size(); ++skip) {
        std::vector<std::int64_t> fewer = strides;
        fewer.erase(fewer.begin() + static_cast<std::ptrdiff_t>(skip));
        choices.push_back(std::move(fewer));
      }
    }
    for (auto& choice : choices) {
      InputLayout l = *from.layouts[k];
      l.strides = std::move(choice);
      l = tight_layout(t.shape(), std::move(l));
      if (!layout_storage(t, l, limits)) continue;
      carried[k] = std::move(l);
      any = true;
      break;
    }
  }
  if (any) candidate.layouts = std::move(carried);
}

/// Without the input layouts (all, then each), without a layout's fill, and with its storage cut to
/// what the view reaches: whether a failure needs a strided view at all, and which.
bool layout_candidates(const Case& c, const Visit& visit) {
  if (c.layouts.empty()) return false;
  Case dense = c;
  dense.layouts.clear();
  if (visit(std::move(dense))) return true;
  for (std::size_t k = 0; k < c.layouts.size(); ++k) {
    if (!c.layouts[k] || k >= c.inputs.size()) continue;
    Case without = c;
    without.layouts[k].reset();
    if (std::none_of(without.layouts.begin(), without.layouts.end(), [](const auto& l) { return l.has_value(); })) {
      without.layouts.clear();
    }
    if (visit(std::move(without))) return true;
    const InputLayout& l = *c.layouts[k];
    if (l.fill) {
      Case unfilled = c;
      unfilled.layouts[k]->fill.reset();
      if (visit(std::move(unfilled))) return true;
    }
    // Without gaps: the axes in the order and direction of the view, each stride the product of the
    // lengths inside it (expanded axes and length-1 axes as they are).
    const Shape& shape = c.inputs[k].shape();
    std::vector<std::size_t> order;
    for (std::size_t d = 0; d < shape.size() && d < l.strides.size(); ++d) {
      if (shape[d] > 1 && l.strides[d] != 0) order.push_back(d);
    }
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return std::abs(l.strides[a]) > std::abs(l.strides[b]);
    });
    InputLayout packed = l;
    std::int64_t step = 1;
    for (std::size_t i = order.size(); i-- > 0;) {
      packed.strides[order[i]] = l.strides[order[i]] < 0 ? -step : step;
      step *= shape[order[i]];
    }
    packed = tight_layout(shape, std::move(packed));
    if (packed.storage < l.storage && layout_storage(c.inputs[k], packed)) {
      Case dense_view = c;
      dense_view.layouts[k] = packed;
      if (visit(std::move(dense_view))) return true;
    }
    const InputLayout reach = tight_layout(shape, l);
    if (reach.offset < l.offset || reach.storage < l.storage) {
      Case tight = c;
      tight.layouts[k] = reach;
      if (visit(std::move(tight))) return true;
    }
  }
  return false;
}

bool value_candidates(const Case& c, const Visit& visit) {
  for (std::size_t k = 0; k < value_tensors(c); ++k) {
    const Tensor& t = value_tensor(c, k);
    bool all_zero = true;
    for (std::int64_t i = 0; i < t.size() && all_zero; ++i) all_zero = value_cost(t, static_cast<std::size_t>(i)) == 0;
    if (!all_zero) {
      Case z = c;
      value_tensor(z, k) = Tensor(t.dtype(), t.shape());
      if (visit(std::move(z))) return true;
    }
  }
  for (std::size_t k = 0; k < value_tensors(c); ++k) {
    const Tensor& t = value_tensor(c, k);
    for (std::size_t i = 0; i < static_cast<std::size_t>(t.size()); ++i) {
      const std::uint64_t cost = value_cost(t, i);
      if (cost == 0) continue;
      const bool stop = visit_dtype(t.dtype(), [&](auto tag) {
        using T = decltype(tag);
        for (T v : simpler_values(t.values<T>()[i])) {
          Case s = c;
          value_tensor(s, k).template values<T>()[i] = v;
          if (value_cost(value_tensor(s, k), i) >= cost) continue;
          if (visit(std::move(s))) return true;
        }
        return false;
      });
      if (stop) return true;
    }
  }
  return false;
}

/// `t`'s layout with one elementary axis per dimension (axis d is dimension d).
detail::AxisLayout dimension_layout(const Tensor& t) {
  detail::AxisLayout layout;
  for (std::size_t d = 0; d < t.rank(); ++d) layout.push_back({{static_cast<int>(d), t.shape()[d]}});
  return layout;
}

/// `t` with dimension `d` dropped (or, when `length` is given, shortened to it), or nullopt over
/// `limits`. A dropped dimension keeps its index 0.
std::optional<Tensor> reshaped_dimension(const Tensor& t, std::size_t d, std::optional<std::int64_t> length,
                                         const Limits& limits) {
  const detail::AxisLayout old_layout = dimension_layout(t);
  detail::AxisLayout layout = old_layout;
  if (length) {
    layout[d][0].second = *length;
  } else {
    layout.erase(layout.begin() + static_cast<std::ptrdiff_t>(d));
  }
  return detail::gather(t, old_layout, layout, [](int a) { return a; }, limits);
}

/// The dimension of `t` each item of `e` names (items before an ellipsis count from the front,
/// items after it from the back; the ellipsis names none), or nullopt when the items do not map onto
/// `t`'s dimensions one to one (a group, a rank the items cannot cover).
std::optional<std::vector<std::size_t>> named_dimensions(const Expression& e, const Tensor& t) {
  std::optional<std::size_t> ellipsis;
  for (std::size_t i = 0; i < e.items.size(); ++i) {
    if (e.items[i].group) return std::nullopt;
    if (e.items[i].atoms.front().kind == Atom::Kind::ellipsis) ellipsis = i;
  }
  const std::size_t named = e.items.size() - (ellipsis ? 1 : 0);
  if (ellipsis ? t.rank() < named : t.rank() != named) return std::nullopt;
  std::vector<std::size_t> dims(e.items.size());
  for (std::size_t j = 0; j < e.items.size(); ++j) {
    dims[j] = !ellipsis || j < *ellipsis ? j : t.rank() - (e.items.size() - j);
  }
  return dims;
}

/// For a rejected einsum whose pattern parses: one label dropped from one operand together with the
/// dimension it names, and from the output when no operand names it any more. Dropping either
/// alone breaks the pattern's agreement with the shapes (another rejection, not the failure), so
/// without this `a b a b b a -> b a` on [0, 2, 1, 2, 2, 1] could not shrink to `a a -> a` on [0, 1].
bool label_candidates(const Case& c, const Visit& visit, const Limits& limits) {
  if (c.op != Op::einsum) return false;
  const Result<EinsumPattern> parsed = parse_einsum(c.pattern);
  if (!parsed || parsed->operands.size() != c.inputs.size()) return false;
  const EinsumPattern& p = *parsed;
  const auto names = [](const Expression& e, const std::string& name) {
    std::size_t n = 0;
    for (const Item& item : e.items)
      for (const Atom& atom : item.atoms) n += atom.kind == Atom::Kind::name && atom.name == name;
    return n;
  };
  for (std::size_t k = 0; k < p.operands.size(); ++k) {
    const Expression& e = p.operands[k];
    const Tensor& t = c.inputs[k];
    const std::optional<std::vector<std::size_t>> dims = named_dimensions(e, t);
    if (!dims) continue;  // the operand's items do not map onto its dimensions
    for (std::size_t j = 0; j < e.items.size(); ++j) {
      const Atom& atom = e.items[j].atoms.front();
      if (atom.kind != Atom::Kind::name) continue;
      // The text to erase, right to left so the earlier columns stay valid.
      std::vector<std::size_t> columns = {atom.column};
      std::size_t elsewhere = 0;
      for (const Expression& other : p.operands) elsewhere += names(other, atom.name);
      if (elsewhere == 1) {
        for (const Item& item : p.output.items)
          for (const Atom& out : item.atoms)
            if (out.kind == Atom::Kind::name && out.name == atom.name) columns.push_back(out.column);
      }
      std::sort(columns.rbegin(), columns.rend());
      Case s = c;
      for (std::size_t column : columns) s.pattern.erase(column, atom.name.size());
      auto g = reshaped_dimension(t, (*dims)[j], std::nullopt, limits);
      if (!g) continue;
      s.inputs[k] = std::move(*g);  // another shape: the visitor drops the layouts
      if (visit(std::move(s))) return true;
    }
  }
  return false;
}

/// For a rejected einsum whose pattern parses: every `...` erased at once, from the operands and the
/// output, the shapes kept. Where the ellipsis covers no dimension this is the same einsum without
/// it; erasing it one character at a time, or from one side, is a syntax error or another rejection,
/// so without this `... a a -> a ...` on [0, 1] could not shrink to the `a a -> a` it means.
bool ellipsis_candidates(const Case& c, const Visit& visit) {
  if (c.op != Op::einsum) return false;
  const Result<EinsumPattern> parsed = parse_einsum(c.pattern);
  if (!parsed) return false;
  std::vector<std::size_t> columns;
  const auto collect = [&](const Expression& e) {
    for (const Item& item : e.items)
      for (const Atom& atom : item.atoms)
        if (atom.kind == Atom::Kind::ellipsis) columns.push_back(atom.column);
  };
  for (const Expression& e : parsed->operands) collect(e);
  collect(parsed->output);
  if (columns.empty()) return false;
  std::sort(columns.rbegin(), columns.rend());  // right to left, so the earlier columns stay valid
  Case s = c;
  for (std::size_t column : columns) {
    if (s.pattern.compare(column, 3, "...") != 0) return false;  // spelled otherwise: leave it
    s.pattern.erase(column, 3);
  }
  return visit(std::move(s));
}

/// For cases the reference rejects: fewer inputs, dimensions and supplied lengths, shorter text.
bool input_candidates(const Case& c, const Visit& visit, const Limits& limits) {
  if (label_candidates(c, visit, limits)) return true;
  if (ellipsis_candidates(c, visit)) return true;
  for (std::size_t k = 0; k < c.inputs.size(); ++k) {
    Case s = c;
    s.inputs.erase(s.inputs.begin() + static_cast<std::ptrdiff_t>(k));
    if (visit(std::move(s))) return true;
  }
  for (std::size_t k = 0; k < c.axis_lengths.size(); ++k) {
    Case s = c;
    s.axis_lengths.erase(s.axis_lengths.begin() + static_cast<std::ptrdiff_t>(k));
    if (visit(std::move(s))) return true;
  }
  for (std::size_t k = 0; k < value_tensors(c); ++k) {
    const Tensor& t = value_tensor(c, k);
    for (std::size_t d = 0; d < t.rank(); ++d) {
      std::vector<std::optional<std::int64_t>> lengths = {std::nullopt};  // dropped, then shortened
      for (std::int64_t n : detail::shorter_lengths(t.shape()[d])) lengths.push_back(n);
      for (const std::optional<std::int64_t>& length : lengths) {
        auto g = reshaped_dimension(t, d, length, limits);
        if (!g) continue;
        Case s = c;
        value_tensor(s, k) = std::move(*g);
        if (visit(std::move(s))) return true;
      }
    }
  }
  for (std::size_t i = 0; i < c.pattern.size(); ++i) {
    Case s = c;
    s.pattern.erase(i, 1);
    if (visit(std::move(s))) return true;
  }
  return false;
}

/// The cotangent of `old` carried over to `shape` (the forward output of a shrunk candidate): the
/// element at the same coordinates, each taken modulo the old length, when the ranks agree, else the
/// flat index modulo the old size; 1 where the old cotangent has no element. Nullopt over `limits`.
std::optional<Tensor> follow_cotangent(const Tensor& old, const Shape& shape, const Limits& limits) {
  if (!check_tensor_size(shape, limits, "shrink candidate").ok()) return std::nullopt;
  Tensor out(old.dtype(), shape);
  visit_dtype(old.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const auto src = old.values<T>();
    auto dst = out.values<T>();
    std::vector<std::int64_t> coord(shape.size(), 0);
    for (std::size_t flat = 0; flat < dst.size(); ++flat) {
      if (src.empty()) {
        dst[flat] = T(1);
      } else if (old.rank() == shape.size()) {
        std::int64_t index = 0;
        for (std::size_t d = 0; d < shape.size(); ++d) index = index * old.shape()[d] + coord[d] % old.shape()[d];
        dst[flat] = src[static_cast<std::size_t>(index)];
      } else {
        dst[flat] = src[flat % src.size()];
      }
      for (std::size_t d = shape.size(); d-- > 0;) {  // next row-major coordinate
        if (++coord[d] < shape[d]) break;
        coord[d] = 0;
      }
    }
  });
  return out;
}

}  // namespace

bool smaller_case(const Case& a, const Case& b) { return measure(a) < measure(b); }

void for_each_shrink_candidate(const Case& c, const std::function<bool(Case&&)>& user_visit, const Limits& limits) {
  const bool accepted = check_case(c, Limits{}).ok();
  // Input layouts describe the original shapes: a candidate with other shapes carries them over
  // where they still make a view (carry_layouts) and drops them elsewhere. A VJP
  // case the checker accepts keeps its cotangent the forward output's shape: a structural candidate
  // whose output changed gets the old cotangent carried over (follow_cotangent).
  const Visit visit = [&](Case&& candidate) {
    bool same = candidate.inputs.size() == c.inputs.size();
    for (std::size_t k = 0; same && k < c.inputs.size(); ++k) same = candidate.inputs[k].shape() == c.inputs[k].shape();
    if (!same) {
      carry_layouts(c, candidate, limits);  // keeps only layouts that are views of the new inputs
    } else {
      // A value candidate can break what a layout needs (the equal values along an expanded axis):
      // such a candidate is no case at all, and the case reader would refuse it.
      for (std::size_t k = 0; k < candidate.layouts.size() && k < candidate.inputs.size(); ++k) {
        if (candidate.layouts[k] && !layout_storage(candidate.inputs[k], *candidate.layouts[k], limits)) return false;
      }
    }
    if (accepted && c.cotangent) {
      // The structural passes build their candidates from the forward case: bring the cotangent back.
      if (!candidate.cotangent) candidate.cotangent = c.cotangent;
      const auto shape = forward_output_of(candidate);
      if (shape && *shape != candidate.cotangent->shape()) {
        auto g = follow_cotangent(*candidate.cotangent, *shape, limits);
        if (!g) return false;
        candidate.cotangent = std::move(*g);
      }
    }
    return user_visit(std::move(candidate));
  };
  if (layout_candidates(c, visit)) return;
  if (accepted) {
    if (c.op == Op::einsum ? detail::einsum_candidates(c, visit, limits) : detail::reduce_candidates(c, visit, limits))
      return;
  } else if (input_candidates(c, visit, limits)) {
    return;
  }
  value_candidates(c, visit);
}

ShrinkResult shrink_case(const Case& failing, const StillFails& still_fails, const ShrinkOptions& options) {
  ShrinkResult result;
  result.shrunk = failing;
  const auto start = std::chrono::steady_clock::now();
  const auto out_of_time = [&] {
    return options.max_seconds > 0 &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= options.max_seconds;
  };
  // Size steps until none is accepted: each candidate smaller by the measure, the first that
  // still fails taken, and the search restarted from it.
  const auto shrink_steps = [&] {
    bool progress = true;
    while (progress && result.attempts < options.max_attempts) {
      progress = false;
      const Case current = result.shrunk;
      const auto current_size = measure(current);
      for_each_shrink_candidate(
          current,
          [&](Case&& candidate) {
            if (!(measure(candidate) < current_size)) return false;
            if (result.attempts >= options.max_attempts || out_of_time()) {
              result.exhausted = true;
              return true;
            }
            ++result.attempts;
            if (!still_fails(candidate)) return false;
            result.shrunk = std::move(candidate);
            ++result.steps;
            progress = true;
            return true;  // restart from the smaller case
          },
          options.limits);
    }
  };
  shrink_steps();
  // The canonical form last (not a size step: the measure stays), each step checked like any
  // candidate: operands in canonical order, the plain spelling (a reduce's anonymous axes and an
  // ellipsis's dimensions named, kept only when the failure does not depend on the spelling), then
  // names in first-appearance order.
  const auto canonical_step = [&](int step) -> std::optional<Case> {
    if (step == 0) return canonical_operand_order(result.shrunk);
    if (step == 2) return canonical_names(result.shrunk);
    if (result.shrunk.op == Op::einsum) return detail::plain_einsum_spelling(result.shrunk, options.limits);
    return detail::plain_reduce_spelling(result.shrunk, options.limits);
  };
  // A plain spelling opens size steps the spelling closed (a named axis shrinks to a slice from its
  // end, an anonymous one of length 2 does not; `(2 2)` only splits once named): after one is kept,
  // the size steps run again, then the canonical steps once more. So does the canonical text of a
  // rejected einsum: `x b(x)->b x` spelled `a b a -> b a` can drop its label `b` (label_candidates
  // leaves an operand with a group alone).
  const bool rejected_einsum = result.shrunk.op == Op::einsum && !check_case(result.shrunk, Limits{}).ok();
  // The canonical steps come last, so a second round's respelling does not reopen the size steps
  // (those would undo the canonical text: `a a -> a` back to `a a->a`).
  for (int round = 0;; ++round) {
    bool respelled = false;
    for (int step = 0; step < 3; ++step) {
      std::optional<Case> step_case = canonical_step(step);
      if (!step_case) continue;
      Case& canonical = *step_case;
      if (write_case(canonical) == write_case(result.shrunk) || out_of_time()) continue;
      ++result.attempts;
      if (still_fails(canonical)) {
        const bool respelt = canonical.pattern != result.shrunk.pattern;
        result.shrunk = std::move(canonical);
        respelled = respelled || step == 1 || (step == 2 && rejected_einsum && respelt);
      }
    }
    if (!respelled || round == 1) break;
    shrink_steps();
  }
  return result;
}

ShrinkResult shrink_case(const Case& failing, Backend& backend, VerdictKind kind, const RunOptions& run,
                         const ShrinkOptions& options) {
  Backend* backends[] = {&backend};
  ShrinkOptions bounded = options;
  bounded.limits = run.limits;
  Case start = failing;
  start.expect_error.reset();
  return shrink_case(
      start,
      [&](const Case& candidate) {
        const CaseOutcome outcome = run_case(candidate, backends, run);
        // A candidate over a harness limit runs on no backend: it does not fail the same way.
        return !outcome.backends.empty() && outcome.backends.front().verdict.kind == kind;
      },
      bounded);
}

}  // namespace einfuzz
