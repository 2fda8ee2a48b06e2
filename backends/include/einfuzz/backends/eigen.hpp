// The `eigen` backend: einsum and reduce through Eigen's Tensor module (unsupported/Eigen/CXX11/Tensor),
// used the way an Eigen user would, with `eigen_assert` kept active (as an exception) in its one TU.
#pragma once

#include <memory>
#include <stdexcept>
#include <vector>

#include "einfuzz/backends/backend.hpp"
#include "einfuzz/core/limits.hpp"
#include "einfuzz/core/tensor.hpp"

namespace einfuzz {

/// An `eigen_assert` that fired inside Eigen (in the adapter's translation unit the macro throws this
/// instead of being compiled out by NDEBUG). The run boundary reports it as a `crash`.
class EigenAssertionFailure : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// The `eigen` backend. einsum: operands broadcast with `broadcast`, labels private to one operand
/// summed with `sum`, a left-to-right chain of pairwise `contract` calls (each a rank-2 contraction
/// over one index pair after `shuffle`; batch labels loop over rank-2 slices), the output ordered
/// with `shuffle`. Repeated labels in one operand (diagonals) and relayouts above rank 6 are
/// `Unsupported`. An empty output or an empty contraction (K = 0: +0) is decided before calling
/// Eigen, since a factored chain would turn (Σ a)·(Σ_∅ b) into Inf·0. reduce: `sum`, `mean`, `prod`,
/// `minimum<PropagateNaN>`, `maximum<PropagateNaN>`, `any`, `all` over a rank-2 view of the
/// shuffled input. Integers are computed in the unsigned type of the same width (wrapping).
/// Any-order, factoring, NaN profile `propagate`; dtypes f32 f64 i32 i64 (+ bool for any/all).
/// `limits` are the harness limits its checker applies (the run's, so raising them reaches it).
std::unique_ptr<Backend> make_eigen_backend(const Limits& limits = {});

/// The labels of one link of the eigen backend's contraction chain, operands `a` and `b` (global axis
/// indices in their current order): free to a, free to b, shared and still needed later (batch, looped
/// over as rank-2 slices), shared and not needed later (contracted). `einfuzz repro` writes programs
/// that call Eigen the same way, so it reads the same split.
struct EigenPairSplit {
  std::vector<int> batch, contracted, free_a, free_b;
};
EigenPairSplit eigen_pair_split(const std::vector<int>& a, const std::vector<int>& b, const std::vector<bool>& needed_later);

namespace detail {

/// Test hook: contracts `a` (m×k) with `b` (k2×n), both f64, with one Eigen index pair and no
/// check that k == k2. A mis-sized call throws EigenAssertionFailure instead of returning garbage.
Tensor eigen_contract_unchecked(const Tensor& a, const Tensor& b);

}  // namespace detail
}  // namespace einfuzz
