// Reference einsum: broadcast every operand over the global axis space, materialise the product
// tensor, fold each contraction fibre row-major (SEMANTICS §3, §4, §6). Deliberately naive: it
// recomputes coordinates by division and never uses stride plans, so it shares nothing with fused/.
#include "einfuzz/reference/einsum.hpp"

#include <cstdlib>
#include <vector>

#include "einfuzz/core/scalar.hpp"

namespace einfuzz::reference {
namespace {

/// Row-major coordinates of `flat` in `shape`.
std::vector<std::int64_t> unravel(std::int64_t flat, const Shape& shape) {
  std::vector<std::int64_t> coords(shape.size());
  for (std::size_t i = shape.size(); i-- > 0;) {
    coords[i] = flat % shape[i];
    flat /= shape[i];
  }
  return coords;
}

/// Row-major flat index of `coords` in `shape`.
std::int64_t ravel(const std::vector<std::int64_t>& coords, const Shape& shape) {
  std::int64_t flat = 0;
  for (std::size_t i = 0; i < shape.size(); ++i) flat = flat * shape[i] + coords[i];
  return flat;
}

template <class T>
Tensor evaluate(const CheckedEinsum& e, std::span<const Tensor> inputs) {
  Shape global_shape;
  for (const Axis& a : e.axes) global_shape.push_back(a.length);
  std::int64_t global_size = 1;
  for (std::int64_t d : global_shape) global_size *= d;

  // Broadcast operand k over G: a length-1 dimension reads coordinate 0 (§3.7); a repeated label
  // reads the same global coordinate in each of its dimensions (§4).
  std::vector<std::vector<T>> broadcast(e.operands.size());
  for (std::size_t k = 0; k < e.operands.size(); ++k) {
    const CheckedOperand& op = e.operands[k];
    const auto x = inputs[k].values<T>();
    broadcast[k].resize(static_cast<std::size_t>(global_size));
    for (std::int64_t g = 0; g < global_size; ++g) {
      const auto coords = unravel(g, global_shape);
      std::vector<std::int64_t> physical(op.shape.size());
      for (std::size_t d = 0; d < op.shape.size(); ++d) {
        physical[d] = op.shape[d] == 1 ? 0 : coords[static_cast<std::size_t>(op.axes[d])];
      }
      broadcast[k][static_cast<std::size_t>(g)] = x[static_cast<std::size_t>(ravel(physical, op.shape))];
    }
  }

  // The product tensor: P = ((1 · x_0) · x_1) · … in source order.
  std::vector<T> product(static_cast<std::size_t>(global_size), T(1));
  for (std::size_t k = 0; k < e.operands.size(); ++k) {
    for (std::int64_t g = 0; g < global_size; ++g) {
      const auto i = static_cast<std::size_t>(g);
      product[i] = scalar_mul(product[i], broadcast[k][i]);
    }
  }

  // Fold each fibre: S = ((0 + P_0) + P_1) + … over the contraction space, row-major.
  std::vector<T> out(static_cast<std::size_t>(e.output_size));
  for (std::int64_t o = 0; o < e.output_size; ++o) {
    const auto out_coords = unravel(o, e.output_shape);
    std::vector<std::int64_t> coords(e.axes.size(), 0);
    for (std::size_t i = 0; i < e.output.size(); ++i) coords[static_cast<std::size_t>(e.output[i])] = out_coords[i];
    T sum = T(0);
    for (std::int64_t c = 0; c < e.contraction_size; ++c) {
      const auto fibre_coords = unravel(c, e.contraction_shape);
      for (std::size_t j = 0; j < e.contracted.size(); ++j) {
        coords[static_cast<std::size_t>(e.contracted[j])] = fibre_coords[j];
      }
      sum = scalar_add(sum, product[static_cast<std::size_t>(ravel(coords, global_shape))]);
    }
    out[static_cast<std::size_t>(o)] = sum;
  }
  return Tensor(e.output_shape, std::move(out));
}

}  // namespace

Tensor evaluate_einsum(const CheckedEinsum& einsum, std::span<const Tensor> inputs) {
  switch (inputs.empty() ? DType::f64 : inputs.front().dtype()) {
    case DType::f32: return evaluate<float>(einsum, inputs);
    case DType::f64: return evaluate<double>(einsum, inputs);
    case DType::i32: return evaluate<std::int32_t>(einsum, inputs);
    case DType::i64: return evaluate<std::int64_t>(einsum, inputs);
    case DType::boolean: break;
  }
  // Harness bug: the caller must reject bool einsums (unsupportedDtype) before evaluating.
  std::abort();
}

}  // namespace einfuzz::reference
