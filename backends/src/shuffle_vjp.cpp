// The shuffle backend's VJPs (ORACLE §7): every element of every cotangent along random but valid
// orders — each einsum term's product a random tree, the terms summed along a random tree, mean as
// g/n or g·(1/n), prod's leave-one-out product a random association, min/max's equal share as
// g/|T| or g·(1/|T|). Only the orders ORACLE §7 allows vary: no FMA; an einsum's VJP in the
// declared profile's accumulator and input rounding (ORACLE §8), a reduce's in its dtype.
#include <cmath>
#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

#include "einfuzz/core/coords.hpp"
#include "shuffle_common.hpp"
#include "shuffle_eval.hpp"

namespace einfuzz::shuffle_detail {

namespace {

/// shuffle_vjp_einsum in the accumulator W (T or wider), every factor rounded to TF32 when `tf32`,
/// each element converted to T once.
template <class T, class W>
std::vector<Tensor> vjp_einsum_in(const CheckedEinsum& e, std::span<const Tensor> inputs, const Tensor& g, Rng& rng,
                                  bool tf32) {
  Shuffler<W> sh(rng, /*fma=*/false);
  Shape lengths;
  for (const Axis& a : e.axes) lengths.push_back(a.length);
  std::vector<int> all(e.axes.size());
  std::iota(all.begin(), all.end(), 0);
  const std::vector<std::vector<std::int64_t>> strides = operand_strides(e);
  // The output's row-major strides per global axis (0 for contracted axes).
  std::vector<std::int64_t> out_stride(e.axes.size(), 0);
  std::int64_t step = 1;
  for (std::size_t d = e.output.size(); d-- > 0;) {
    out_stride[static_cast<std::size_t>(e.output[d])] = step;
    step *= lengths[static_cast<std::size_t>(e.output[d])];
  }
  std::vector<std::span<const T>> x;
  for (const Tensor& t : inputs) x.push_back(t.values<T>());
  const auto gv = g.values<T>();
  std::vector<std::int64_t> coords(e.axes.size(), 0);
  std::vector<Tensor> out;
  for (std::size_t m = 0; m < inputs.size(); ++m) {
    // Every term reaching each element of operand m, its product along its own random tree.
    std::vector<std::vector<Node<W>>> terms(static_cast<std::size_t>(inputs[m].size()));
    std::vector<W> factors;
    const auto factor = [&](T v) { return tf32_if(tf32, static_cast<W>(v)); };
    for_each_coord(all, lengths, coords, [&] {
      factors.clear();
      factors.push_back(factor(gv[static_cast<std::size_t>(storage_offset(out_stride, coords))]));
      for (std::size_t q = 0; q < inputs.size(); ++q) {
        if (q != m) factors.push_back(factor(x[q][static_cast<std::size_t>(storage_offset(strides[q], coords))]));
      }
      terms[static_cast<std::size_t>(storage_offset(strides[m], coords))].push_back({sh.product_value(factors)});
    });
    std::vector<T> grad(terms.size());
    // A random summation tree per element; no term at all (off a diagonal, an empty axis) is +0.
    for (std::size_t p = 0; p < terms.size(); ++p) grad[p] = static_cast<T>(sh.sum(terms[p]));
    out.emplace_back(inputs[m].shape(), std::move(grad));
  }
  return out;
}

}  // namespace

template <class T>
std::vector<Tensor> shuffle_vjp_einsum(const CheckedEinsum& e, std::span<const Tensor> inputs, const Tensor& g, Rng& rng,
                                       const PrecisionProfile& profile) {
  const bool tf32 = std::is_same_v<T, float> && profile.round_inputs == InputRounding::tf32;
  return with_profile_accumulator<T>(profile, /*allow_wider=*/false, rng, [&](auto wide) {
    return vjp_einsum_in<T, typename decltype(wide)::type>(e, inputs, g, rng, tf32);
  });
}

template <class T>
Tensor shuffle_vjp_reduce(const CheckedReduce& r, const Tensor& input, const Tensor& g, Rng& rng) {
  Shuffler<T> sh(rng, /*fma=*/false);
  const std::vector<std::int64_t> stride = elementary_strides(r);
  Shape lengths;
  for (const ElementaryAxis& a : r.axes) lengths.push_back(a.length);
  std::vector<int> kept;
  for (const std::vector<int>& group : r.output_groups) kept.insert(kept.end(), group.begin(), group.end());
  const auto x = input.values<T>();
  const auto gv = g.values<T>();
  std::vector<T> grad(static_cast<std::size_t>(input.size()), T(0));
  std::vector<std::int64_t> coords(r.axes.size(), 0);
  std::vector<std::size_t> where;
  std::vector<T> fibre;
  std::vector<T> factors;
  std::size_t o = 0;
  for_each_coord(kept, lengths, coords, [&] {
    where.clear();
    fibre.clear();
    for_each_coord(r.reduced, lengths, coords, [&] {
      where.push_back(static_cast<std::size_t>(storage_offset(stride, coords)));
      fibre.push_back(x[where.back()]);
    });
    const T go = gv[o++];
    const std::size_t n = fibre.size();
    const bool reciprocal = rng.chance(1, 2);  // this fibre's division: g/n, or g·(1/n)
    const auto share = [&](std::size_t count) {
      const T c = static_cast<T>(count);
      return reciprocal ? scalar_mul(go, T(1) / c) : go / c;
    };
    if (r.kind == Reduction::min || r.kind == Reduction::max) {
      // The tie set of the forward result (NaN propagates; NaN counts as equal to NaN).
      bool nan = false;
      T best = fibre.empty() ? T(0) : fibre[0];
      for (const T v : fibre) {
        if (std::isnan(v)) nan = true;
        if (r.kind == Reduction::max ? v > best : v < best) best = v;
      }
      std::size_t ties = 0;
      for (const T v : fibre) ties += (nan ? std::isnan(v) : v == best) ? 1 : 0;
      for (std::size_t j = 0; j < n; ++j) {
        const bool in = nan ? std::isnan(fibre[j]) : fibre[j] == best;
        grad[where[j]] = in ? share(ties) : T(0);
      }
      return;
    }
    for (std::size_t j = 0; j < n; ++j) {
      T value = T(0);
      switch (r.kind) {
        case Reduction::sum: value = go; break;
        case Reduction::mean: value = share(n); break;
        case Reduction::prod:
          // g and the fibre's other elements, multiplied along a random tree (never a division).
          factors.assign(1, go);
          for (std::size_t i = 0; i < n; ++i) {
            if (i != j) factors.push_back(fibre[i]);
          }
          value = sh.product_value(factors);
          break;
        default: break;  // min/max above; any/all never reach a VJP
      }
      grad[where[j]] = value;
    }
  });
  return Tensor(r.input_shape, std::move(grad));
}

template std::vector<Tensor> shuffle_vjp_einsum<float>(const CheckedEinsum&, std::span<const Tensor>, const Tensor&, Rng&,
                                                       const PrecisionProfile&);
template std::vector<Tensor> shuffle_vjp_einsum<double>(const CheckedEinsum&, std::span<const Tensor>, const Tensor&, Rng&,
                                                        const PrecisionProfile&);
template Tensor shuffle_vjp_reduce<float>(const CheckedReduce&, const Tensor&, const Tensor&, Rng&);
template Tensor shuffle_vjp_reduce<double>(const CheckedReduce&, const Tensor&, const Tensor&, Rng&);

}  // namespace einfuzz::shuffle_detail
