// The multiset oracle for einsum (ORACLE.md §1–§3): per output element, the exact value of the
// multiset of product terms, its enclosure for any evaluation order, and its special-value class
// with the certificates that make the class certain.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/core/precision.hpp"
#include "einfuzz/core/tensor.hpp"
#include "einfuzz/reference/einsum.hpp"
#include "einfuzz/reference/exact.hpp"
#include "einfuzz/reference/exact_fixed.hpp"

namespace einfuzz::reference {

/// The order-independent class of an element, from the classes of its terms (ORACLE.md §3).
enum class ValueClass { finite, nan, pos_inf, neg_inf };

/// Everything the any-order judge needs about one output element of a float einsum. (The flags
/// sit together: a VJP truth holds one per input element, so its size is the oracle's memory.)
struct ElementTruth {
  ValueClass value_class = ValueClass::finite;  ///< from the term classes (§3)
  int factors = 0;                  ///< k: operands
  std::int64_t terms = 0;           ///< K: terms of this element (0: empty contraction, value +0)
  bool nan_input = false;           ///< a NaN input reaches a term: NaN on every evaluation path
  bool zero_times_inf = false;      ///< some term multiplies a zero by an infinity
  bool mixed_inf = false;           ///< both +Inf and -Inf terms exist
  /// certificate (§2, §3): M·(1+u)^N' < Ω over the finite factors, decided exactly. Holds for every
  /// path, factored or not; it is the one that makes a special class certain.
  bool no_overflow = true;
  /// certificate (§2, non-factoring backends only): max_j P_j·(1+u)^(k−1) < Ω and S·(1+u)^N' < Ω,
  /// decided exactly. Implied by `no_overflow`; reductions never factor, so it equals it there.
  bool no_overflow_nonfactoring = true;
  /// certificate: finite factors of Inf terms cannot underflow to 0 (prod: no sub-product underflows)
  bool no_inf_underflow = true;
  bool zero_negative = false;       ///< sign of an exact zero when every order agrees on it (prod)
  bool bounded = true;              ///< false when γ_N' is unbounded (N'·u >= 1): no enclosure
  Exact exact;                      ///< s(o), exact; meaningful when the class is finite
  std::int64_t divisor = 1;         ///< the exact value is exact / divisor (mean: n), else 1
  double abs_sum = 0;               ///< S(o) = Σ|t_j| rounded up
  double magnitude = 0;             ///< M(o) = Σ Π max(1,|x|) rounded up
  /// B(o)·divisor as an exact dyadic upper bound of the formula (γ_N' and (1+u)^N' bounded above,
  /// S, M and η exact: a zero sum has a zero bound, f64's η = 2^-1075 is not rounded to a double).
  /// The judge compares |r·divisor − exact| with it exactly. Meaningful when `bounded`.
  ExactBound scaled_bound;
  double bound = 0;                 ///< B(o) rounded up to a double, for reports (+inf when unbounded)

  /// The no-overflow certificate that applies to a backend that does (not) factor (§2).
  bool no_overflow_for(bool factoring) const noexcept { return factoring ? no_overflow : no_overflow_nonfactoring; }

  /// Both §3 certificates hold, so a special class is certain on every path (finite elements use
  /// `no_overflow_for`, which is sharper for non-factoring backends).
  bool certain() const noexcept { return no_overflow && no_inf_underflow; }
};

/// Per-element truth plus ŝ*, the exact value rounded once to the element type (NaN / ±Inf for
/// the special classes, +0 for empty contractions).
struct MultisetEinsum {
  Tensor rounded;
  std::vector<ElementTruth> elements;  ///< row-major over the output
  /// The precision profile whose ORACLE §8 bound the enclosures are; none: the dtype's default (§2).
  std::optional<PrecisionProfile> profile;
};

/// The multiset oracle of a checked float einsum. Inputs as for evaluate_einsum. The enclosures are
/// ORACLE §2's (the dtype's default profile).
MultisetEinsum multiset_einsum(const CheckedEinsum& einsum, std::span<const Tensor> inputs);
/// The same with the enclosures of a backend's precision `profile` (ORACLE §8: the accumulator's
/// u, η, Ω, input rounding, the final conversion); the default profile gives the two-argument result.
MultisetEinsum multiset_einsum(const CheckedEinsum& einsum, std::span<const Tensor> inputs,
                               const PrecisionProfile& profile);
/// The two above from broadcast_einsum(einsum, inputs), for a caller that has it already (the run
/// boundary: the ordered fold materialised it for the same inputs).
MultisetEinsum multiset_einsum(const CheckedEinsum& einsum, const BroadcastOperands& broadcast);
MultisetEinsum multiset_einsum(const CheckedEinsum& einsum, const BroadcastOperands& broadcast,
                               const PrecisionProfile& profile);

/// Which exact arithmetic the per-element truth uses. `fixed` (the two-argument default) computes
/// elements whose terms span few enough bits in machine integers (exact_fixed.hpp: one-term and
/// few-term einsum elements, sums and means, under any profile) and everything else in GMP;
/// `general` always uses the GMP accumulators. Both give the same values; `general` exists so
/// tests can show it.
enum class ExactPath { fixed, general };

/// The two-argument multiset_einsum with the exact arithmetic chosen.
MultisetEinsum multiset_einsum(const CheckedEinsum& einsum, std::span<const Tensor> inputs, ExactPath path);
/// The same under a precision `profile`.
MultisetEinsum multiset_einsum(const CheckedEinsum& einsum, std::span<const Tensor> inputs,
                               const PrecisionProfile& profile, ExactPath path);
/// The truths under several precision `profiles` at once (result i: multiset_einsum(einsum,
/// broadcast, profiles[i]) along `path`): each element's terms are walked and summed exactly once,
/// and only the bounds are computed per profile (ORACLE §2 for a dtype's default, §8 otherwise).
std::vector<MultisetEinsum> multiset_einsum(const CheckedEinsum& einsum, const BroadcastOperands& broadcast,
                                            std::span<const PrecisionProfile> profiles,
                                            ExactPath path = ExactPath::fixed);

/// What any correct min/max must return for one fibre, per NaN profile (ORACLE.md §4–§5).
struct ExtremeTruth {
  bool any_nan = false;           ///< some fibre value is NaN
  bool all_nan = false;           ///< every fibre value is NaN
  double extreme = 0;             ///< the extreme non-NaN value (exact: every f32/f64 is a double)
  bool zero_tie = false;          ///< the extreme is a zero and both zero signs occur in the fibre
};

/// The multiset oracle of a checked float reduce: ŝ* per output element (the exact value rounded
/// once; for min/max the `propagate` answer), and per element either an ElementTruth (sum, mean,
/// prod) or an ExtremeTruth (min, max). any/all and integer reduces are exact: judge them bitwise.
struct MultisetReduce {
  Reduction kind = Reduction::sum;
  Tensor rounded;
  std::vector<ElementTruth> elements;   ///< sum, mean, prod
  std::vector<ExtremeTruth> extremes;   ///< min, max
  /// The precision profile whose ORACLE §8 bound the enclosures are; none: the dtype's default (§4).
  std::optional<PrecisionProfile> profile;
};

/// The multiset oracle of a checked float reduce of kind sum, mean, prod, min or max.
MultisetReduce multiset_reduce(const CheckedReduce& reduce, const Tensor& input);
/// The same under a precision `profile` (ORACLE §8: sum as k = 1, prod as one term of n factors,
/// mean's two extra roundings; min/max exact; `round_inputs` never applies to reductions).
MultisetReduce multiset_reduce(const CheckedReduce& reduce, const Tensor& input, const PrecisionProfile& profile);
/// The two-argument multiset_reduce with the exact arithmetic chosen.
MultisetReduce multiset_reduce(const CheckedReduce& reduce, const Tensor& input, ExactPath path);
/// The same under a precision `profile`.
MultisetReduce multiset_reduce(const CheckedReduce& reduce, const Tensor& input, const PrecisionProfile& profile,
                               ExactPath path);

/// Unit roundoff, half the smallest subnormal, and Ω of a float type (ORACLE.md §2), as doubles.
/// For f64, η = 2^-1075 is not a double: `eta` is rounded up to 2^-1074 (an upper bound, for
/// reports); the bounds use the exact η = 2^eta_exponent.
struct FormatConstants {
  double u, eta, omega;
  int digits;        ///< p
  int min_exponent;  ///< emin of the smallest normal, 2^emin
  int eta_exponent;  ///< η = 2^(emin − p) exactly
};
template <class T>
FormatConstants format_constants();
/// The same for a format without a dtype (TF32, `input_rounding_format`).
FormatConstants format_constants(const FloatFormat& format);

/// Upper bounds, computed with outward rounding: γ_n = n·u/(1 − n·u), or, where n·u >= 1 (long sums
/// in f16 or bf16), (1 + u)^n − 1 itself (ORACLE §2: always finite, still sound; +inf only past the
/// largest double); and (1 + u)^n.
double gamma_up(std::int64_t n, double u);
double one_plus_u_pow_up(std::int64_t n, double u);
/// (1 + u)^n − 1 rounded up, u a power of two: the exact power's upper bound with 128-bit mantissas.
double one_plus_u_pow_minus_one_up(std::int64_t n, double u);

}  // namespace einfuzz::reference
