// The multiset oracle of a VJP case (ORACLE §7): per element of every forward input's cotangent,
// the exact value and its enclosure for any evaluation order, or the tie-set facts min/max judge.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/core/tensor.hpp"
#include "einfuzz/reference/multiset.hpp"

namespace einfuzz::reference {

/// min/max VJPs: who may receive the cotangent. T = the fibre elements equal (IEEE ==, so both
/// zero signs) to the fibre's extreme; a fibre holding a NaN has no agreed rule (ORACLE §7).
struct VjpTies {
  /// The forward input's shape (its cotangent's).
  Shape input_shape;
  /// Per input element (flat, row-major over the input): the output element whose fibre holds it.
  std::vector<std::int64_t> fibre_of;
  /// Per input element: in T of its fibre (false in a NaN fibre).
  std::vector<bool> in_tie;
  /// Per output element: the fibre's result is NaN (any NaN, or all NaN under `ignore`), so its
  /// elements are `indeterminate(nan-tie)`.
  std::vector<bool> nan_fibre;
  /// The input elements of every T, fibre by fibre (each fibre's in row-major fibre order).
  std::vector<std::int64_t> tie_elements;
  /// Per tie element (parallel to tie_elements): g / |T| exactly (divisor |T|), enclosure
  /// γ_2·|g/|T|| + η (rule equal-share). Tensors are 1-D over tie_elements.
  MultisetEinsum share;
  /// Per tie element: g itself, exact (rules one and all).
  MultisetEinsum whole;
  /// The cotangent, one value per fibre (rule one: exactly one element of T gets it).
  Tensor cotangent;
};

/// Everything the any-order VJP judge needs, one entry per forward input.
struct MultisetVjp {
  /// Per forward input m: ŝ* rounded once and the per-element truth of its cotangent — einsum: the
  /// §1–§3 truth with g in x_m's place and K the assignments reaching the element; sum: the copy
  /// of g; mean: g/n; prod: g·Π_{j≠p} x_j. Empty for min/max (see `ties`).
  std::vector<MultisetEinsum> inputs;
  /// True for einsum: the backend's `factoring` declaration applies. Reductions never factor.
  bool einsum = false;
  /// min/max only: the tie sets where any NaN makes a fibre's result NaN (NaN profile `propagate`;
  /// such a fibre is `indeterminate(nan-tie)`, ORACLE §7).
  std::optional<VjpTies> ties;
  /// min/max, when some fibre holds both a NaN and a number: the tie sets under the `ignore` NaN
  /// profile (ORACLE §5), where such a fibre's result is the extreme of its numbers, so its tie set
  /// is judged like any other; only an all-NaN fibre is a NaN fibre. Absent: the same as `ties`.
  std::optional<VjpTies> ties_ignoring_nan;
  /// The same under the `ordered` NaN profile: a fibre's result is SEMANTICS §8.4's fold (max is NaN
  /// iff its first element is, else the largest number; min is NaN iff its last element is, else the
  /// least element after the last NaN), and T the elements equal to it. Absent: the same as `ties`.
  std::optional<VjpTies> ties_ordered;
};

/// The multiset VJP truth of a checked float einsum with cotangent `g` (the output's shape).
MultisetVjp multiset_vjp_einsum(const CheckedEinsum& einsum, std::span<const Tensor> inputs, const Tensor& g,
                                ExactPath path = ExactPath::fixed);
/// The same under ORACLE §8's bound for `profile` (valid for g's dtype): an einsum VJP is an einsum
/// (SEMANTICS §13.8), so a backend's declared accumulator and input rounding apply to it as they
/// do to its forward einsum.
MultisetVjp multiset_vjp_einsum(const CheckedEinsum& einsum, std::span<const Tensor> inputs, const Tensor& g,
                                const PrecisionProfile& profile, ExactPath path = ExactPath::fixed);

/// The multiset VJP truth of a checked float reduce of a differentiable kind with cotangent `g`.
MultisetVjp multiset_vjp_reduce(const CheckedReduce& reduce, const Tensor& input, const Tensor& g);

}  // namespace einfuzz::reference
