// The one per-element computation of ORACLE §1–§3 shared by the forward einsum oracle and the
// einsum VJP oracle: the exact value, enclosure, special class and certificates of one element
// from "the terms of this element" (global indices) over k factor arrays, with a per-element K.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "einfuzz/core/half.hpp"
#include "einfuzz/core/precision.hpp"
#include "einfuzz/reference/exact.hpp"
#include "einfuzz/reference/exact_fixed.hpp"
#include "einfuzz/reference/multiset.hpp"
#include "exact_bounds.hpp"
#include "exact_sum.hpp"

namespace einfuzz::reference::detail {

/// ORACLE §8's parameters of one (dtype, profile) that is not the dtype's default: the
/// accumulator's u, η, Ω, the input rounding's (when inputs are rounded) and the output's.
struct ProfileBound {
  FormatConstants acc;       ///< the format products and partial sums are held in
  FormatConstants out;       ///< the output dtype (the final conversion)
  bool rounds_inputs = false;
  FormatConstants in{};      ///< the input rounding's format (TF32), when rounds_inputs
};

/// The ProfileBound of `dtype` under `profile`, or nullopt for its default profile (§2 applies).
/// `profile` must be valid for `dtype` (is_valid_profile), else a harness bug.
std::optional<ProfileBound> profile_bound(DType dtype, const PrecisionProfile& profile);

/// §8's final conversion in one fixed part, every quantity scaled by `scale` (mean's n, else 1):
/// `scaled` = E + u_o·(|s| + E) + scale·η_o and `below_omega` = |s| + E < scale·Ω_o, from
/// `e` = E and `magnitude` = |s|. False (outputs unchanged) when a sum does not fit 192 bits.
bool fixed_conversion(const FixedDyadic& e, const FixedDyadic& magnitude, std::int64_t scale,
                      const FormatConstants& out, FixedDyadic& scaled, bool& below_omega);

/// An upper bound of e^x − 1 for x >= 0 (0 for x = 0; +inf past double's range).
double expm1_up(double x);

/// Computes ElementTruth for elements whose terms are products of k factors, factor m of the term
/// at global index a being factors[m][a]. K = terms.size() may differ from element to element (a
/// VJP's diagonals and size-1 broadcasts); the constants that depend on K are cached per K.
/// Reused across elements: its scratch buffers keep their capacity.
template <class T>
class TermTruth {
 public:
  TermTruth(const FormatConstants& fc, int k, ExactPath path = ExactPath::fixed);
  /// The same under ORACLE §8's bound for `profile` (none: §2, as the constructor above); a profile
  /// never takes the one-term fast path, whose bound is §2's.
  TermTruth(const FormatConstants& fc, int k, ExactPath path, const std::optional<ProfileBound>& profile);

  /// The truth of one element from its terms (row-major global indices, possibly none) and ŝ*
  /// (its exact value rounded once; NaN / ±Inf for the special classes, +0 when K = 0).
  void compute(std::span<const std::int64_t> terms, std::span<const T* const> factors, ElementTruth& t, T& rounded);
  /// compute() of the element `first` computed last, under this truth's profile: the term list,
  /// exact sums and special classes `first` collected do not depend on the profile and are reused;
  /// only the bound and the certificates are this truth's. `first` has the same format and k; the
  /// result is the one compute() would give.
  void compute_again(const TermTruth& first, ElementTruth& t, T& rounded);

 private:
  /// The > 127-bit products of an element, only constructed when one occurs (four GMP integers
  /// otherwise initialised and cleared per element).
  struct Wide {
    ExactAccumulator sum, abs_sum, magnitude;
    Dyadic max_grow;  ///< max_j P_j over the > 127-bit ones
  };
  /// What the pass over an element's terms found, whatever the profile: with finite_terms_ and
  /// grow_terms_, everything the bound needs.
  struct Collected {
    std::int64_t terms = 0;
    std::unique_ptr<Wide> wide;  ///< a pointer: an empty optional<Wide> still costs a 128-byte clear
    ExactTerm max_grow{0, 0};    ///< max_j P_j over the others (m = 0: none yet)
    bool any_wide = false;
    bool pos_inf = false, neg_inf = false, nan_term = false;
    bool nan_input = false, zero_times_inf = false;
    double max_input = 0;        ///< the largest |x| of a finite non-zero factor (§8's input overflow)
    bool inf_term = false;       ///< some term is ±Inf
    Dyadic min_shrink;           ///< the least Π min(1,|x|) over the finite factors of an Inf term
  };
  /// The pass over one element's terms: finite_terms_, grow_terms_ and collected_.
  void collect(std::span<const std::int64_t> terms, std::span<const T* const> factors);
  /// The truth from a pass's findings (this truth's own or another profile's).
  void finish(const std::vector<ExactTerm>& finite_terms, const std::vector<ExactTerm>& grow_terms,
              const Collected& found, ElementTruth& t, T& r);

  /// What depends on N = K + k − 2 only.
  struct KConstants {
    double gamma = 0;        ///< γ_N' (upper bound; +inf when unbounded)
    Dyadic gamma_exact;      ///< the same double as an exact dyadic (when bounded)
    Dyadic underflow_scale;  ///< (k−1)·(1+u)^N'·η (upper bound), 0 when k = 1
    OverflowCertificate sum_certificate;
    Decomposed gamma_parts{0, 0};      ///< gamma_exact as an odd mantissa and exponent (0: zero or unbounded)
    Decomposed underflow_parts{0, 0};  ///< its (k−1)·growth·η part likewise (0 when k = 1)
    Decomposed input_underflow_parts{0, 0};  ///< §8's ni·growth·η_i part (0 without rounded inputs)
  };
  /// §8's bound and certificates of one element (profile_ set); `max_p()` is max_j P_j.
  template <class MaxP>
  void profile_element(KConstants& c, const Dyadic& abs_exact, const Dyadic& magnitude_exact, double magnitude_down,
                       MaxP&& max_p, bool input_overflow, ElementTruth& t);
  /// Input roundings a term can see under profile_ (k, or 2k − 2 for a pairwise path of k >= 3
  /// operands, whose intermediates are rounded again as the next product's inputs); 0 without.
  std::int64_t input_roundings() const;
  KConstants& constants(std::int64_t K);

  /// The one-term element without GMP (exact_fixed.hpp): the fast path of ExactPath::fixed.
  /// `term` is the finite term (m = 0: none), `grow` its Π max(1,|x|) (m = 0: K = 0); `rounded`
  /// gets ŝ* for the finite class.
  void compute_single(const ExactTerm& term, const ExactTerm& grow, KConstants& c, ElementTruth& t, T& rounded);
  /// The few-term element without GMP, for every float format and profile: when the finite terms
  /// and the growth terms each span at most 139 bits with their carries, S, s and M are 192-bit
  /// integers and γ·S fits 192. `input_overflow`: some finite
  /// input lies above the input rounding's Ω (§8). False, with nothing written, when the bound's
  /// parts do not fit (the caller takes the digit accumulators and GMP).
  bool compute_fixed(const std::vector<ExactTerm>& finite_terms, const std::vector<ExactTerm>& grow_terms,
                     const ExactTerm& max_grow, bool input_overflow, KConstants& c, ElementTruth& t);

  FormatConstants fc_;
  int k_;
  ExactPath path_;
  std::optional<ProfileBound> profile_;
  Dyadic underflow_floor_;  ///< 2^emin·(1+u)^k exactly
  OverflowCertificate product_certificate_;
  std::map<std::int64_t, KConstants> by_k_;
  std::int64_t last_k_ = -1;
  KConstants* last_ = nullptr;
  std::vector<ExactTerm> finite_terms_, grow_terms_;
  Collected collected_;
  DigitAccumulator positive_, negative_part_, grow_sum_;
};

extern template class TermTruth<float>;
extern template class TermTruth<double>;
extern template class TermTruth<Float16>;
extern template class TermTruth<BFloat16>;

}  // namespace einfuzz::reference::detail
