// Input layouts for the generator (docs/protocol.md, "Strided inputs"): each input laid out as the
// views a library's users make — transposed or permuted storage, gaps between elements and rows, a
// reversed axis (negative stride), an expanded axis (stride 0, its values made equal), any stride on
// a length-1 axis, an offset into the buffer and a fill value (often an IEEE edge value) in every
// slot the view does not reach, so a backend that reads past its view or ignores a stride reads
// something the reference does not.
#include <algorithm>
#include <limits>
#include <numeric>
#include <vector>

#include "einfuzz/harness/generate.hpp"

namespace einfuzz {
namespace {

/// Storage beyond this many elements per logical element (plus a small constant) is drawn again
/// without gaps: the layout must stay within the limits the case's own tensors keep.
constexpr std::int64_t kMaxSpread = 4;
constexpr std::int64_t kSlack = 16;

/// Every element of `t` made equal to the one with coordinate 0 on `axis` (an expanded axis reads
/// one slice: a stride-0 view holds nothing else).
void repeat_first_slice(Tensor& t, std::size_t axis) {
  const Shape& shape = t.shape();
  std::int64_t inner = 1;
  for (std::size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  const std::int64_t length = shape[axis];
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    std::span<T> v = t.values<T>();
    const auto n = static_cast<std::int64_t>(v.size());
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t along = (i / inner) % length;
      if (along != 0) v[static_cast<std::size_t>(i)] = v[static_cast<std::size_t>(i - along * inner)];
    }
  });
}

/// A rank-0 quiet NaN of the float dtype `d`.
Tensor nan_scalar(DType d) {
  return visit_dtype(d, [](auto tag) -> Tensor {
    using T = decltype(tag);
    if constexpr (std::numeric_limits<T>::has_quiet_NaN) {
      return Tensor(Shape{}, std::vector<T>{std::numeric_limits<T>::quiet_NaN()});
    } else {
      return Tensor(Shape{}, std::vector<T>{T{}});
    }
  });
}

/// One input's layout; `t`'s values change where an axis is expanded.
InputLayout draw_layout(Tensor& t, ChoiceSource& s) {
  const Shape shape = t.shape();
  const std::size_t rank = shape.size();
  const std::int64_t n = t.size();
  // Storage order: row-major, or a permutation of the axes (the innermost last).
  std::vector<std::size_t> order(rank);
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (rank > 1 && s.chance(1, 2)) {
    for (std::size_t i = rank; i-- > 1;) std::swap(order[i], order[static_cast<std::size_t>(s.choose(i + 1))]);
  }
  const bool gaps = s.chance(1, 3);
  InputLayout l;
  l.strides.assign(rank, 0);
  std::int64_t step = gaps && s.chance(1, 2) ? 2 : 1;
  for (std::size_t i = rank; i-- > 0;) {
    const std::size_t axis = order[i];
    l.strides[axis] = step;
    step *= std::max<std::int64_t>(shape[axis], 1);
    if (gaps && s.chance(1, 2)) step += s.between(1, 2);
  }
  if (!gaps) {
    // A reversed axis walks its storage backwards.
    for (std::size_t d = 0; d < rank; ++d) {
      if (shape[d] > 1 && s.chance(1, 4)) l.strides[d] = -l.strides[d];
    }
  }
  for (std::size_t d = 0; d < rank; ++d) {
    if (shape[d] == 1 && s.chance(1, 2)) {
      constexpr std::int64_t kAnyStride[] = {0, -3, 1, 1000003};
      l.strides[d] = s.pick(std::span<const std::int64_t>(kAnyStride));
    } else if (shape[d] > 1 && n > 0 && s.chance(1, 8)) {
      l.strides[d] = 0;  // expanded: every index reads the first slice
      repeat_first_slice(t, d);
    }
  }
  if (n == 0) {
    l.offset = s.between(0, 2);
    l.storage = l.offset + s.between(0, 2);
  } else {
    // What the view reads, then padding before and after it.
    l = tight_layout(shape, std::move(l));
    const std::int64_t before = s.chance(1, 3) ? s.between(1, 3) : 0;
    const std::int64_t after = s.chance(1, 3) ? s.between(1, 3) : 0;
    l.offset += before;
    l.storage += before + after;
  }
  if (is_float(t.dtype()) && s.chance(1, 4)) {
    l.fill = nan_scalar(t.dtype());  // what a read outside the view cannot hide
  } else if (s.chance(1, 2)) {
    l.fill = generate_values(s, t.dtype(), Shape{});
  }
  return l;
}

/// Whether the storage of `l` stays within kMaxSpread elements per logical element of `t`.
bool compact(const Tensor& t, const InputLayout& l) { return l.storage <= kMaxSpread * t.size() + kSlack; }

}  // namespace

void draw_layouts(Case& c, ChoiceSource& s) {
  c.layouts.assign(c.inputs.size(), std::nullopt);
  bool any = false;
  for (std::size_t k = 0; k < c.inputs.size(); ++k) {
    if (!s.chance(3, 4)) continue;
    Tensor viewed = c.inputs[k];  // an expanded axis changes values: kept only with its layout
    InputLayout l = draw_layout(viewed, s);
    if (!compact(viewed, l)) continue;
    c.inputs[k] = std::move(viewed);
    c.layouts[k] = std::move(l);
    any = true;
  }
  if (!any) c.layouts.clear();
}

void fit_values_to_layouts(Case& c) {
  for (std::size_t k = 0; k < c.layouts.size() && k < c.inputs.size(); ++k) {
    if (!c.layouts[k]) continue;
    const std::vector<std::int64_t>& strides = c.layouts[k]->strides;
    for (std::size_t d = 0; d < strides.size() && d < c.inputs[k].shape().size(); ++d) {
      if (strides[d] == 0 && c.inputs[k].shape()[d] > 1) repeat_first_slice(c.inputs[k], d);
    }
  }
}

}  // namespace einfuzz
