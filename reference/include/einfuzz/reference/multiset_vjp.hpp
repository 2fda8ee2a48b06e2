// The multiset oracle of a VJP case (ORACLE §7): per element of every forward input's cotangent,
// the exact value and its enclosure for any evaluation order, or the tie-set facts min/max judge.
#pragma once

#include <span>
#include <vector>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/core/tensor.hpp"
#include "einfuzz/reference/multiset.hpp"

namespace einfuzz::reference {

/// Everything the any-order VJP judge needs, one entry per forward input.
struct MultisetVjp {
  /// Per forward input m: ŝ* rounded once and the per-element truth of its cotangent (einsum: the
  /// §1–§3 truth with g in x_m's place and K the assignments reaching the element).
  std::vector<MultisetEinsum> inputs;
};

/// The multiset VJP truth of a checked float einsum with cotangent `g`.
MultisetVjp multiset_vjp_einsum(const CheckedEinsum& einsum, std::span<const Tensor> inputs, const Tensor& g);

/// The multiset VJP truth of a checked float reduce of a differentiable kind with cotangent `g`.
MultisetVjp multiset_vjp_reduce(const CheckedReduce& reduce, const Tensor& input, const Tensor& g);

}  // namespace einfuzz::reference
