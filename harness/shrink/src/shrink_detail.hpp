// Shared pieces of the shrinker: physical layouts over elementary axes and the gather that rebuilds
// a tensor after axes were dropped, merged or shortened.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "einfuzz/core/case.hpp"

namespace einfuzz::detail {

/// One physical dimension: its elementary axes (id, length), row-major; none for a unit dimension.
using AxisDim = std::vector<std::pair<int, std::int64_t>>;
/// A tensor's physical dimensions.
using AxisLayout = std::vector<AxisDim>;

/// The shape a layout describes (each dimension the product of its members' lengths).
Shape layout_shape(const AxisLayout& layout);

/// The tensor of `new_layout` whose element at elementary coordinates x is `old`'s element at
/// the coordinates where each old axis `a` takes x[source(a)] + offsets[a] (0 + offsets[a] when
/// source(a) < 0; 0 when the old member has length 1; `offsets` may be empty: all 0). Nullopt when
/// a coordinate would fall outside `old`'s layout. When `old` has no elements the new tensor is
/// zero-filled. Nullopt, before anything is allocated, when the new tensor is over `limits`.
std::optional<Tensor> gather(const Tensor& old, const AxisLayout& old_layout, const AxisLayout& new_layout,
                             const std::function<int(int)>& source, const Limits& limits,
                             std::span<const std::int64_t> offsets = {});

/// A shortened axis: its new length and the first old index it keeps (a prefix, or the end).
struct Slice {
  std::int64_t length;
  std::int64_t offset;
};

/// Slices to try instead of the whole axis, simplest first: [0, n) for n in shorter_lengths, then
/// the last index alone and the second half (so what matters at the end of an axis survives).
std::vector<Slice> shorter_slices(std::int64_t length);

/// The visitor of shrink candidates: returns true to stop (the candidate was accepted).
using Visit = std::function<bool(Case&&)>;

/// Candidates of the einsum structure of `c` (which the reference accepts). True when stopped.
bool einsum_candidates(const Case& c, const Visit& visit, const Limits& limits);

/// Candidates of the reduce structure of `c` (which the reference accepts). True when stopped.
bool reduce_candidates(const Case& c, const Visit& visit, const Limits& limits);

/// An accepted reduce `c` spelled plainly: every anonymous axis and ellipsis dimension a name of its
/// own (the first canonical names not taken), the ellipsis replaced by those names on both sides.
/// The same axes, input and result; nullopt when `c` has nothing to respell.
std::optional<Case> plain_reduce_spelling(const Case& c, const Limits& limits);

/// An accepted einsum `c` spelled plainly: every ellipsis dimension a label of its own (the first
/// canonical names not taken), in place of the ellipsis in the operands and, in slot order, in the
/// output (an ellipsis absent from the output is summed, as the labels then are). The same axes,
/// inputs, cotangent and result: only the pattern differs; nullopt when `c` has no ellipsis.
std::optional<Case> plain_einsum_spelling(const Case& c, const Limits& limits);

/// A shorter name for `name`, not in `taken`: the first unused single letter, or nullopt.
std::optional<std::string> shorter_name(const std::string& name, const std::vector<std::string>& taken);

/// Lengths to try instead of `length`, simplest first: 0, 1, length / 2, length − 1 (each < length).
std::vector<std::int64_t> shorter_lengths(std::int64_t length);

}  // namespace einfuzz::detail
