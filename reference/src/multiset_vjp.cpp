// The multiset oracle of einsum VJPs (ORACLE §7): element p of operand m's cotangent is the §1–§3
// truth of the terms g[out(a)]·Π_{q≠m} x_q[idx_q(a)] over the global assignments a reaching p, from
// the same per-element computation as the forward einsum oracle (element_truth.hpp).
#include "einfuzz/reference/multiset_vjp.hpp"

#include <cstdint>
#include <vector>

#include "einfuzz/core/harness_bug.hpp"
#include "element_truth.hpp"
#include "materialise.hpp"

namespace einfuzz::reference {
namespace {

/// One walk over G in row-major order (an odometer, no per-element allocation): for every global
/// assignment a, the physical element of each operand it reads (length-1 dimensions read 0, the
/// others a's coordinate of their label, as materialise.hpp's physical_indices) and its output
/// element.
struct GlobalReads {
  std::vector<std::vector<std::int64_t>> physical;  ///< [operand][a]
  std::vector<std::int64_t> output;                 ///< [a]
};

GlobalReads global_reads(const CheckedEinsum& e) {
  const Shape gshape = detail::global_shape(e);
  const std::int64_t size = element_count(gshape);
  GlobalReads out;
  out.physical.assign(e.operands.size(), std::vector<std::int64_t>(static_cast<std::size_t>(size)));
  out.output.resize(static_cast<std::size_t>(size));
  std::vector<std::int64_t> coords(gshape.size(), 0), physical, output_coords(e.output.size());
  for (std::int64_t a = 0; a < size; ++a) {
    for (std::size_t q = 0; q < e.operands.size(); ++q) {
      const CheckedOperand& op = e.operands[q];
      physical.resize(op.shape.size());
      for (std::size_t d = 0; d < op.shape.size(); ++d) {
        physical[d] = op.shape[d] == 1 ? 0 : coords[static_cast<std::size_t>(op.axes[d])];
      }
      out.physical[q][static_cast<std::size_t>(a)] = detail::ravel(physical, op.shape);
    }
    for (std::size_t i = 0; i < e.output.size(); ++i) output_coords[i] = coords[static_cast<std::size_t>(e.output[i])];
    out.output[static_cast<std::size_t>(a)] = detail::ravel(output_coords, e.output_shape);
    for (std::size_t i = gshape.size(); i-- > 0;) {  // the next row-major coordinate
      if (++coords[i] < gshape[i]) break;
      coords[i] = 0;
    }
  }
  return out;
}

template <class T>
MultisetVjp einsum_truth(const CheckedEinsum& e, std::span<const Tensor> inputs, const Tensor& g, ExactPath path,
                         const std::optional<detail::ProfileBound>& profile) {
  const GlobalReads reads = global_reads(e);
  // Every operand and the cotangent spread over G: g takes x_m's place as one more factor.
  std::vector<std::vector<T>> broadcast(e.operands.size());
  for (std::size_t q = 0; q < broadcast.size(); ++q) {
    const auto x = inputs[q].values<T>();
    broadcast[q].reserve(reads.output.size());
    for (const std::int64_t p : reads.physical[q]) broadcast[q].push_back(x[static_cast<std::size_t>(p)]);
  }
  const auto gv = g.values<T>();
  std::vector<T> spread;
  spread.reserve(reads.output.size());
  for (const std::int64_t o : reads.output) spread.push_back(gv[static_cast<std::size_t>(o)]);
  const std::size_t k = e.operands.size();
  detail::TermTruth<T> truth(format_constants<T>(), static_cast<int>(k), path, profile);

  MultisetVjp out;
  out.einsum = true;
  std::vector<const T*> factors;
  std::vector<std::int64_t> offsets, terms;
  for (std::size_t m = 0; m < k; ++m) {
    factors.assign(1, spread.data());
    for (std::size_t q = 0; q < k; ++q) {
      if (q != m) factors.push_back(broadcast[q].data());
    }
    // The assignments reaching each physical element of operand m, in row-major order of G (a
    // bucket sort of physical_indices): K(p) = their count, 0 off a diagonal or on an empty axis,
    // the broadcast length where a size-1 dimension reads coordinate 0 for all of them.
    const std::vector<std::int64_t>& target = reads.physical[m];
    const auto size = static_cast<std::size_t>(inputs[m].size());
    offsets.assign(size + 1, 0);
    for (const std::int64_t p : target) ++offsets[static_cast<std::size_t>(p) + 1];
    for (std::size_t p = 0; p < size; ++p) offsets[p + 1] += offsets[p];
    terms.resize(target.size());
    {
      std::vector<std::int64_t> next(offsets.begin(), offsets.end() - 1);
      for (std::size_t a = 0; a < target.size(); ++a) {
        terms[static_cast<std::size_t>(next[static_cast<std::size_t>(target[a])]++)] = static_cast<std::int64_t>(a);
      }
    }
    MultisetEinsum& cot = out.inputs.emplace_back();
    cot.rounded = Tensor(dtype_of_v<T>, inputs[m].shape());
    auto rounded = cot.rounded.values<T>();
    // Each truth constructed right where it is computed: a resize first would write the whole
    // vector twice, the first pass to memory not yet in cache.
    cot.elements.reserve(size);
    for (std::size_t p = 0; p < size; ++p) {
      const std::span<const std::int64_t> reaching(terms.data() + offsets[p], static_cast<std::size_t>(offsets[p + 1] - offsets[p]));
      truth.compute(reaching, factors, cot.elements.emplace_back(), rounded[p]);
    }
  }
  return out;
}

}  // namespace

MultisetVjp multiset_vjp_einsum(const CheckedEinsum& einsum, std::span<const Tensor> inputs, const Tensor& g,
                                ExactPath path) {
  return multiset_vjp_einsum(einsum, inputs, g, storage_profile(g.dtype()), path);
}

MultisetVjp multiset_vjp_einsum(const CheckedEinsum& einsum, std::span<const Tensor> inputs, const Tensor& g,
                                const PrecisionProfile& profile, ExactPath path) {
  if (inputs.size() != einsum.operands.size()) harness_bug("multiset_vjp_einsum: operand count");
  for (std::size_t m = 0; m < inputs.size(); ++m) {
    if (inputs[m].shape() != einsum.operands[m].shape || inputs[m].dtype() != g.dtype()) {
      harness_bug("multiset_vjp_einsum: an input's shape or dtype");
    }
  }
  if (g.shape() != einsum.output_shape) harness_bug("multiset_vjp_einsum: the cotangent's shape");
  const std::optional<detail::ProfileBound> bound = detail::profile_bound(g.dtype(), profile);
  if (g.dtype() == DType::f32) return einsum_truth<float>(einsum, inputs, g, path, bound);
  if (g.dtype() == DType::f64) return einsum_truth<double>(einsum, inputs, g, path, bound);
  harness_bug("multiset_vjp_einsum called on a non-float einsum");
}

}  // namespace einfuzz::reference
