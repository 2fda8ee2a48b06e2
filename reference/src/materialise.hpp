// The reference's materialisation step, shared by its ordered fold and its multiset oracle:
// every operand broadcast over the global axis space G (SEMANTICS §3.7, §4), and coordinate helpers.
#pragma once

#include <algorithm>

#include <cstdint>
#include <span>
#include <vector>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/core/coords.hpp"
#include "einfuzz/core/tensor.hpp"

namespace einfuzz::reference::detail {

using einfuzz::unravel;  // row-major coordinates of a flat index (core/coords.hpp)

/// unravel into `coords` (already of shape.size() entries): the same division, without allocating
/// a vector per element.
inline void unravel_into(std::int64_t flat, const Shape& shape, std::vector<std::int64_t>& coords) {
  for (std::size_t i = shape.size(); i-- > 0;) {
    coords[i] = flat % shape[i];
    flat /= shape[i];
  }
}

/// Steps `coords` from the row-major coordinates of element `flat` of `shape` to those of element
/// flat + 1 (the last axis fastest), as unravel_into(flat + 1) would write them; after the last
/// element it wraps to all zeros. A loop over 0, 1, 2, … of a non-empty shape starts from zeros
/// (element 0) and steps after each element: the same coordinates, without a division per element.
inline void step_coords(std::vector<std::int64_t>& coords, const Shape& shape) {
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (++coords[i] < shape[i]) return;
    coords[i] = 0;
  }
}

/// Row-major flat index of `coords` in `shape`.
inline std::int64_t ravel(const std::vector<std::int64_t>& coords, const Shape& shape) {
  std::int64_t flat = 0;
  for (std::size_t i = 0; i < shape.size(); ++i) flat = flat * shape[i] + coords[i];
  return flat;
}

/// [L(g) for g in G].
inline Shape global_shape(const CheckedEinsum& e) {
  Shape s;
  for (const Axis& a : e.axes) s.push_back(a.length);
  return s;
}

/// Operand k broadcast over G: element g is x_k at the physical coordinate whose length-1
/// dimensions read 0 and whose other dimensions read g's coordinate of their label (a repeated
/// label reads the same coordinate in each of its dimensions).
template <class T>
std::vector<std::vector<T>> broadcast_operands(const CheckedEinsum& e, std::span<const Tensor> inputs) {
  const Shape gshape = global_shape(e);
  // An empty global space's other lengths may multiply past int64 (the checker bounds the output
  // and contraction counts, which are 0 then): element_count decides 0 before multiplying.
  const std::int64_t global_size = element_count(gshape);
  std::vector<std::vector<T>> out(e.operands.size());
  std::vector<std::int64_t> coords, physical;  // reused: no allocation per element
  for (std::size_t k = 0; k < e.operands.size(); ++k) {
    const CheckedOperand& op = e.operands[k];
    const auto x = inputs[k].values<T>();
    out[k].resize(static_cast<std::size_t>(global_size));
    physical.resize(op.shape.size());
    coords.assign(gshape.size(), 0);  // element 0's coordinates; g's below
    for (std::int64_t g = 0; g < global_size; ++g, step_coords(coords, gshape)) {
      for (std::size_t d = 0; d < op.shape.size(); ++d) {
        physical[d] = op.shape[d] == 1 ? 0 : coords[static_cast<std::size_t>(op.axes[d])];
      }
      out[k][static_cast<std::size_t>(g)] = x[static_cast<std::size_t>(ravel(physical, op.shape))];
    }
  }
  return out;
}

/// For every element g of G (row-major), the flat index of the physical element of operand k that
/// g reads: length-1 dimensions read 0, the others g's coordinate of their label.
inline std::vector<std::int64_t> physical_indices(const CheckedEinsum& e, std::size_t k) {
  const Shape gshape = global_shape(e);
  const std::int64_t global_size = element_count(gshape);
  const CheckedOperand& op = e.operands[k];
  std::vector<std::int64_t> out(static_cast<std::size_t>(global_size));
  std::vector<std::int64_t> physical(op.shape.size()), coords(gshape.size(), 0);  // g's coordinates below
  for (std::int64_t g = 0; g < global_size; ++g, step_coords(coords, gshape)) {
    for (std::size_t d = 0; d < op.shape.size(); ++d) {
      physical[d] = op.shape[d] == 1 ? 0 : coords[static_cast<std::size_t>(op.axes[d])];
    }
    out[static_cast<std::size_t>(g)] = ravel(physical, op.shape);
  }
  return out;
}

/// For every element g of G (row-major), the flat index of the output element it contributes to.
inline std::vector<std::int64_t> output_indices(const CheckedEinsum& e) {
  const Shape gshape = global_shape(e);
  const std::int64_t global_size = element_count(gshape);
  std::vector<std::int64_t> out(static_cast<std::size_t>(global_size));
  std::vector<std::int64_t> coords(e.output.size()), global_coords(gshape.size(), 0);  // g's coordinates below
  for (std::int64_t g = 0; g < global_size; ++g, step_coords(global_coords, gshape)) {
    for (std::size_t i = 0; i < e.output.size(); ++i) coords[i] = global_coords[static_cast<std::size_t>(e.output[i])];
    out[static_cast<std::size_t>(g)] = ravel(coords, e.output_shape);
  }
  return out;
}

/// Calls `fn(g)` with the flat G index of every term of output element `o`, in row-major order of
/// the contraction space.
template <class Fn>
void for_each_term(const CheckedEinsum& e, const Shape& gshape, std::int64_t o, Fn&& fn) {
  // Thread-local buffers: a campaign calls this once per output element, and an allocation per
  // term would cost more than the term.
  thread_local std::vector<std::int64_t> out_coords, coords, fibre_coords;
  out_coords.resize(e.output_shape.size());
  unravel_into(o, e.output_shape, out_coords);
  coords.assign(e.axes.size(), 0);
  fibre_coords.assign(e.contraction_shape.size(), 0);  // c's coordinates below
  for (std::size_t i = 0; i < e.output.size(); ++i) coords[static_cast<std::size_t>(e.output[i])] = out_coords[i];
  for (std::int64_t c = 0; c < e.contraction_size; ++c, step_coords(fibre_coords, e.contraction_shape)) {
    for (std::size_t j = 0; j < e.contracted.size(); ++j) {
      coords[static_cast<std::size_t>(e.contracted[j])] = fibre_coords[j];
    }
    fn(ravel(coords, gshape));
  }
}

/// A reduce input as a tensor over (output elementary axes…, reduced axes…): the fibre of output
/// element o is the contiguous row o, in row-major order over the reduced axes (SEMANTICS §8.1).
/// Every input group is row-major, so the input's flat index is the row-major index over its
/// elementary axes.
template <class T>
std::vector<T> fibre_rows(const CheckedReduce& r, std::span<const T> x) {
  Shape elementary;
  for (const ElementaryAxis& a : r.axes) elementary.push_back(a.length);
  std::vector<int> order;
  for (const auto& group : r.output_groups) order.insert(order.end(), group.begin(), group.end());
  order.insert(order.end(), r.reduced.begin(), r.reduced.end());
  Shape permuted_shape;
  for (int a : order) permuted_shape.push_back(r.axes[static_cast<std::size_t>(a)].length);

  std::vector<T> out(x.size());
  std::vector<std::int64_t> coords(elementary.size());
  std::vector<std::int64_t> permuted_coords(permuted_shape.size(), 0);  // q's coordinates below
  for (std::size_t q = 0; q < out.size(); ++q, step_coords(permuted_coords, permuted_shape)) {
    for (std::size_t i = 0; i < order.size(); ++i) coords[static_cast<std::size_t>(order[i])] = permuted_coords[i];
    out[q] = x[static_cast<std::size_t>(ravel(coords, elementary))];
  }
  return out;
}

/// For every position of the permuted copy fibre_rows makes (output o's fibre is row o), the flat
/// index of the input element it holds.
inline std::vector<std::int64_t> fibre_row_sources(const CheckedReduce& r) {
  const std::int64_t n = element_count(r.input_shape);
  std::vector<std::int64_t> flat(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) flat[static_cast<std::size_t>(i)] = i;
  return fibre_rows<std::int64_t>(r, flat);
}

}  // namespace einfuzz::reference::detail
