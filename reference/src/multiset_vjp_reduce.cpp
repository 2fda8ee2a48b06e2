// The multiset oracle of reduce VJPs (ORACLE §7): sum's copy of g, mean's g/n, prod's leave-one-out
// product with its two certificates, and the tie sets min/max are judged by.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "einfuzz/core/harness_bug.hpp"
#include "einfuzz/reference/multiset_vjp.hpp"
#include "exact_bounds.hpp"
#include "materialise.hpp"

namespace einfuzz::reference {
namespace {

/// ŝ* of a truth: NaN / ±Inf for the special classes, else exact/divisor rounded once (a zero
/// with the sign every order agrees on).
template <class T>
T rounded_of(const ElementTruth& t) {
  switch (t.value_class) {
    case ValueClass::nan: return std::numeric_limits<T>::quiet_NaN();
    case ValueClass::pos_inf: return std::numeric_limits<T>::infinity();
    case ValueClass::neg_inf: return -std::numeric_limits<T>::infinity();
    case ValueClass::finite: break;
  }
  const T v = t.exact.round_quotient<T>(t.divisor, Rounding::nearest_even);
  return (v == 0 && t.zero_negative) ? -T(0) : v;
}

/// g / divisor with the bound γ_rounds·|g| + divisor·η on |r·divisor − g| (divisor 1, rounds 0:
/// an exact copy). The class and the sign of a zero are g's; one factor, so nothing factors.
template <class T>
ElementTruth quotient_truth(T g, std::int64_t divisor, std::int64_t rounds, const FormatConstants& fc) {
  ElementTruth t;
  t.terms = 1;
  t.factors = 1;
  t.divisor = divisor;
  t.nan_input = std::isnan(g);
  t.value_class = std::isnan(g) ? ValueClass::nan
                  : std::isinf(g) ? (g > 0 ? ValueClass::pos_inf : ValueClass::neg_inf)
                                  : ValueClass::finite;
  t.zero_negative = std::signbit(g);
  if (t.value_class != ValueClass::finite) {
    t.bound = std::numeric_limits<double>::infinity();
    return t;
  }
  t.exact = Dyadic::of(g);
  const Dyadic magnitude = t.exact.abs();
  t.abs_sum = std::fabs(static_cast<double>(g));
  t.magnitude = t.abs_sum;
  // |g/n| <= |g| and the reciprocal 1/n <= 1: no step of g/n or g·(1/n) can overflow.
  if (rounds > 0) {
    t.scaled_bound = Dyadic::of(gamma_up(rounds, fc.u)) * magnitude + Dyadic(mpz_class(static_cast<long>(divisor)), fc.eta_exponent);
  }
  t.bound = t.scaled_bound.round_quotient<double>(divisor, Rounding::up);
  return t;
}

/// Running exact products of one fibre's finite values, for leave-one-out products in O(n).
struct Products {
  Dyadic value{1, 0}, grow{1, 0}, shrink{1, 0};
  void times(double x) {
    if (!std::isfinite(x)) return;
    const Dyadic d = Dyadic::of(x);
    const Dyadic a = d.abs(), one(1, 0);
    value = value * d;
    grow = grow * (compare(a, one) > 0 ? a : one);
    shrink = shrink * (compare(a, one) < 0 ? a : one);
  }
};

/// prod: g·Π_{j≠p} x_j, γ_{n+1}·|exact| when, over the leave-one-out factors and g,
/// Π max(1,|·|)·(1+u)^{n+1} < Ω and (no factor zero) Π min(1,|·|) >= 2^emin·(1+u)^{n+1}.
template <class T>
void product_truths(std::span<const T> fibre, T g, const FormatConstants& fc, std::span<ElementTruth> out) {
  const std::size_t n = fibre.size();
  const auto rounds = static_cast<std::int64_t>(n) + 1;
  std::vector<Products> prefix(n + 1), suffix(n + 1);
  int nan_count = 0, inf_count = 0, zero_count = 0, negative_count = 0;
  for (std::size_t j = 0; j < n; ++j) {
    prefix[j + 1] = prefix[j];
    prefix[j + 1].times(static_cast<double>(fibre[j]));
    const T x = fibre[j];
    nan_count += std::isnan(x);
    inf_count += std::isinf(x);
    zero_count += x == 0;
    negative_count += !std::isnan(x) && std::signbit(x);
  }
  for (std::size_t j = n; j-- > 0;) {
    suffix[j] = suffix[j + 1];
    suffix[j].times(static_cast<double>(fibre[j]));
  }
  Products own_g;
  own_g.times(static_cast<double>(g));
  detail::OverflowCertificate certificate(rounds, fc);
  Dyadic floor(1, fc.min_exponent);
  const Dyadic one_plus_u(mpz_class(1) + (mpz_class(1) << fc.digits), -fc.digits);
  for (std::int64_t i = 0; i < rounds; ++i) floor = floor * one_plus_u;
  const double gamma = gamma_up(rounds, fc.u);
  for (std::size_t p = 0; p < n; ++p) {
    const T x = fibre[p];
    ElementTruth& t = out[p];
    t.terms = 1;
    t.factors = static_cast<int>(std::min<std::size_t>(n, std::numeric_limits<int>::max()));  // n−1 others and g
    const bool nan = nan_count - std::isnan(x) > 0 || std::isnan(g);
    const bool inf = inf_count - std::isinf(x) > 0 || std::isinf(g);
    const bool zero = zero_count - (x == 0) > 0 || g == 0;
    const bool negative = ((negative_count - (!std::isnan(x) && std::signbit(x))) + (!std::isnan(g) && std::signbit(g))) % 2;
    t.nan_input = nan;
    t.zero_times_inf = zero && inf;
    t.value_class = (nan || t.zero_times_inf) ? ValueClass::nan
                    : inf ? (negative ? ValueClass::neg_inf : ValueClass::pos_inf)
                          : ValueClass::finite;
    t.zero_negative = negative;  // a zero product's sign is the same on every association
    t.exact = prefix[p].value * suffix[p + 1].value * own_g.value;
    t.no_overflow = certificate.below_omega(prefix[p].grow * suffix[p + 1].grow * own_g.grow);
    t.no_overflow_nonfactoring = t.no_overflow;
    if (!zero) t.no_inf_underflow = compare(prefix[p].shrink * suffix[p + 1].shrink * own_g.shrink, floor) >= 0;
    t.abs_sum = t.value_class == ValueClass::finite ? t.exact.abs().round<double>(Rounding::up) : 0;
    t.magnitude = t.abs_sum;
    t.bounded = !std::isinf(gamma);
    if (t.bounded) t.scaled_bound = Dyadic::of(gamma) * t.exact.abs();
    t.bound = t.bounded ? t.scaled_bound.round<double>(Rounding::up) : std::numeric_limits<double>::infinity();
  }
}

template <class T>
bool ieee_equal(T a, T b) {
  return a == b;
}

/// ORACLE §5's NaN profiles, as the tie sets are computed for each (backends/backend.hpp's
/// NanProfile, which the reference does not depend on).
enum class NanView { propagate, ignore, ordered };

/// The tie sets of a min/max VJP under a NaN profile (ORACLE §5). `propagate`: any NaN makes the
/// fibre's result NaN and the fibre a NaN fibre. `ignore`: a fibre's extreme is that of its non-NaN
/// elements, and only an all-NaN fibre is a NaN fibre. `ordered`: SEMANTICS §8.4's fold, NaN iff
/// the first (max) or last (min) element is NaN, else the extreme of the numbers (max) or of those
/// after the last NaN (min). `mixed` is set when some fibre holds both a NaN and a number (the
/// views differ only then).
template <class T>
VjpTies tie_sets(const CheckedReduce& r, const Tensor& g, const std::vector<T>& rows,
                 const std::vector<std::int64_t>& source, NanView profile, bool& mixed) {
  const FormatConstants fc = format_constants<T>();
  const auto gv = g.values<T>();
  const auto n = static_cast<std::size_t>(r.fibre_size);
  const auto size = static_cast<std::size_t>(element_count(r.input_shape));
  mixed = false;
  {
    VjpTies ties;
    ties.fibre_of.assign(size, 0);
    ties.in_tie.assign(size, false);
    ties.nan_fibre.assign(static_cast<std::size_t>(r.output_size), false);
    ties.cotangent = g;
    ties.input_shape = r.input_shape;
    std::vector<ElementTruth> share, whole;
    std::vector<T> share_rounded, whole_rounded;
    for (std::size_t o = 0; o < static_cast<std::size_t>(r.output_size); ++o) {
      const std::span<const T> fibre = std::span<const T>(rows).subspan(n == 0 ? 0 : o * n, n);
      bool any_nan = false, any_number = false;
      T best = 0;
      // Under `ordered`, min's result is the least of the elements after the last NaN.
      const bool after_last_nan = profile == NanView::ordered && r.kind == Reduction::min;
      for (std::size_t j = 0; j < n; ++j) {
        const T x = fibre[j];
        ties.fibre_of[static_cast<std::size_t>(source[o * n + j])] = static_cast<std::int64_t>(o);
        if (std::isnan(x)) {
          any_nan = true;
          if (after_last_nan) any_number = false;  // the fold starts again after it
        } else {
          if (!any_number || (r.kind == Reduction::max ? x > best : x < best)) best = x;
          any_number = true;
        }
      }
      if (n == 0) continue;
      bool numbers = false;
      for (const T x : fibre) numbers = numbers || !std::isnan(x);
      mixed = mixed || (any_nan && numbers);
      bool nan_result = false;
      switch (profile) {
        case NanView::propagate: nan_result = any_nan; break;
        case NanView::ignore: nan_result = !numbers; break;
        case NanView::ordered:
          nan_result = std::isnan(r.kind == Reduction::max ? fibre.front() : fibre.back());
          break;
      }
      if (nan_result) {
        ties.nan_fibre[o] = true;
        continue;
      }
      std::int64_t count = 0;
      for (const T x : fibre) count += ieee_equal(x, best);
      for (std::size_t j = 0; j < n; ++j) {
        if (!ieee_equal(fibre[j], best)) continue;
        const std::int64_t flat = source[o * n + j];
        ties.in_tie[static_cast<std::size_t>(flat)] = true;
        ties.tie_elements.push_back(flat);
        share.push_back(quotient_truth<T>(gv[o], count, 2, fc));
        whole.push_back(quotient_truth<T>(gv[o], 1, 0, fc));
        share_rounded.push_back(rounded_of<T>(share.back()));
        whole_rounded.push_back(rounded_of<T>(whole.back()));
      }
    }
    const Shape tie_shape{static_cast<std::int64_t>(ties.tie_elements.size())};
    ties.share = MultisetEinsum{Tensor(tie_shape, std::move(share_rounded)), std::move(share), std::nullopt};
    ties.whole = MultisetEinsum{Tensor(tie_shape, std::move(whole_rounded)), std::move(whole), std::nullopt};
    return ties;
  }
}

template <class T>
MultisetVjp reduce_truth(const CheckedReduce& r, const Tensor& input, const Tensor& g) {
  const FormatConstants fc = format_constants<T>();
  const std::vector<T> rows = detail::fibre_rows<T>(r, input.values<T>());
  const std::vector<std::int64_t> source = detail::fibre_row_sources(r);
  const auto gv = g.values<T>();
  const auto n = static_cast<std::size_t>(r.fibre_size);
  const auto size = static_cast<std::size_t>(input.size());
  MultisetVjp out;
  if (r.kind == Reduction::min || r.kind == Reduction::max) {
    bool mixed = false;
    out.ties = tie_sets<T>(r, g, rows, source, NanView::propagate, mixed);
    if (mixed) {
      out.ties_ignoring_nan = tie_sets<T>(r, g, rows, source, NanView::ignore, mixed);
      out.ties_ordered = tie_sets<T>(r, g, rows, source, NanView::ordered, mixed);
    }
    return out;
  }
  MultisetEinsum& cot = out.inputs.emplace_back();
  cot.rounded = Tensor(dtype_of_v<T>, r.input_shape);
  auto rounded = cot.rounded.values<T>();
  cot.elements.resize(size);
  // A fibre's truths, sized only when there is an output element: with none, the fibre's length is not
  // bounded by the input's (corpus/regressions/vjp-reduce-empty-output-long-fibre: `j (b c) -> c` of a
  // [63050394783186943, 0] input has no output element and fibres of 1.26e17).
  std::vector<ElementTruth> fibre_truths(r.output_size > 0 ? n : 0);
  for (std::size_t o = 0; o < static_cast<std::size_t>(r.output_size) && n > 0; ++o) {
    const std::span<const T> fibre = std::span<const T>(rows).subspan(o * n, n);
    const T go = gv[o];
    switch (r.kind) {
      case Reduction::sum:
        for (std::size_t j = 0; j < n; ++j) fibre_truths[j] = quotient_truth<T>(go, 1, 0, fc);
        break;
      case Reduction::mean:
        for (std::size_t j = 0; j < n; ++j) fibre_truths[j] = quotient_truth<T>(go, static_cast<std::int64_t>(n), 3, fc);
        break;
      case Reduction::prod: product_truths<T>(fibre, go, fc, fibre_truths); break;
      default: harness_bug("multiset_vjp_reduce: a kind without a VJP");
    }
    for (std::size_t j = 0; j < n; ++j) {
      const auto flat = static_cast<std::size_t>(source[o * n + j]);
      rounded[flat] = rounded_of<T>(fibre_truths[j]);
      cot.elements[flat] = std::move(fibre_truths[j]);
    }
  }
  return out;
}

}  // namespace

MultisetVjp multiset_vjp_reduce(const CheckedReduce& reduce, const Tensor& input, const Tensor& g) {
  if (reduce.kind == Reduction::any || reduce.kind == Reduction::all) harness_bug("multiset_vjp_reduce: any/all");
  if (input.dtype() != reduce.dtype || g.dtype() != reduce.dtype) harness_bug("multiset_vjp_reduce: dtype");
  if (input.shape() != reduce.input_shape || g.shape() != reduce.output_shape) harness_bug("multiset_vjp_reduce: shapes");
  if (reduce.dtype == DType::f32) return reduce_truth<float>(reduce, input, g);
  if (reduce.dtype == DType::f64) return reduce_truth<double>(reduce, input, g);
  harness_bug("multiset_vjp_reduce called on a non-float reduce");
}

}  // namespace einfuzz::reference
