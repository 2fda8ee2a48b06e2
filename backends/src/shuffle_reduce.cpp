// The shuffle backend's reduce (ORACLE.md §4): every fibre folded along its own random tree.
#include <cmath>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "einfuzz/core/coords.hpp"
#include "shuffle_common.hpp"
#include "shuffle_eval.hpp"

namespace einfuzz::shuffle_detail {
namespace {

/// Calls fn(fibre) once per output element in row-major order, with the element's fibre read in
/// row-major order over the reduced axes (empty when a reduced length is 0).
template <class T, class Fn>
void for_each_fibre(const CheckedReduce& r, std::span<const T> x, Fn&& fn) {
  const std::vector<std::int64_t> stride = elementary_strides(r);
  Shape lengths;
  for (const ElementaryAxis& a : r.axes) lengths.push_back(a.length);
  std::vector<int> kept;
  for (const std::vector<int>& group : r.output_groups) kept.insert(kept.end(), group.begin(), group.end());
  std::vector<std::int64_t> coords(r.axes.size(), 0);
  std::vector<T> fibre;
  for_each_coord(kept, lengths, coords, [&] {
    fibre.clear();
    for_each_coord(r.reduced, lengths, coords,
                   [&] { fibre.push_back(x[static_cast<std::size_t>(storage_offset(stride, coords))]); });
    fn(std::span<const T>(fibre));
  });
}

/// IEEE 754-2019 minimum/maximum when `zero_order` (-0 < +0), else a plain comparison whose ±0 tie
/// keeps `a`, as numpy's does; NaN propagates either way: both are the `propagate` profile (§5).
template <class T>
T extreme(T a, T b, bool is_max, bool zero_order) {
  if constexpr (is_float_type_v<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
    if (a == b && zero_order) return std::signbit(a) != is_max ? a : b;
  }
  return (is_max ? b > a : b < a) ? b : a;
}

/// One call's evaluation of a checked reduce (ORACLE.md §4): every fibre in its own random order,
/// in the accumulator type W where it may round (sum, mean, prod) and T elsewhere.
template <class T, class W>
class ReduceEvaluation {
 public:
  explicit ReduceEvaluation(Rng& rng) : rng_(rng), sh_(rng, false), zero_order_(rng.chance(1, 2)) {}

  /// One output element of kind `kind` from its fibre `x` (empty only for sum, prod, any, all: the
  /// checker rejects empty fibres for mean, min and max).
  T fibre(Reduction kind, std::span<const T> x) {
    switch (kind) {
      case Reduction::sum: return static_cast<T>(sum(x));
      case Reduction::mean: return mean(x);
      case Reduction::prod: return prod(x);
      case Reduction::min:
      case Reduction::max: return extreme_of(x, kind == Reduction::max);
      case Reduction::any: return logical(x, true);
      case Reduction::all: return logical(x, false);
    }
    return T{};
  }

 private:
  /// A random summation tree (+0 for an empty fibre).
  W sum(std::span<const T> x) {
    nodes_.clear();
    for (const T v : x) nodes_.push_back({static_cast<W>(v)});
    return sh_.sum(nodes_);
  }

  /// The random-tree sum divided by n or multiplied by 1/n (the two paths §4's γ_{n+2} allows),
  /// in W, rounded once to T.
  T mean(std::span<const T> x) {
    const W s = sum(x);
    if constexpr (is_half_type_v<W>) {
      // n is not a 16-bit value past 2048 (and +Inf past 65519): divide in binary32, round once.
      const float n = static_cast<float>(x.size());
      return static_cast<T>(W(rng_.chance(1, 2) ? static_cast<float>(s) / n : static_cast<float>(s) * (1.0f / n)));
    } else {
      const W n = static_cast<W>(x.size());
      return static_cast<T>(rng_.chance(1, 2) ? s / n : s * (W(1) / n));
    }
  }

  /// A random association (1 for an empty fibre).
  T prod(std::span<const T> x) {
    factors_.assign(x.begin(), x.end());
    return static_cast<T>(sh_.product_value(factors_));
  }

  /// min or max along a random tree, the operands of each comparison in random order.
  T extreme_of(std::span<const T> x, bool is_max) {
    values_.assign(x.begin(), x.end());
    merge_randomly(rng_, values_, 1, [&](T a, T b) { return extreme(a, b, is_max, zero_order_); });
    return values_[0];
  }

  /// any (or all) along a random tree; false (true) for an empty fibre.
  T logical(std::span<const T> x, bool any) {
    values_.assign(1, static_cast<T>(any ? 0 : 1));
    for (const T v : x) values_.push_back(static_cast<T>(v != 0));
    merge_randomly(rng_, values_, 1, [&](T a, T b) { return static_cast<T>(any ? (a || b) : (a && b)); });
    return values_[0];
  }

  Rng& rng_;
  Shuffler<W> sh_;
  bool zero_order_;  ///< this call's min/max order ±0 as IEEE minimum/maximum do
  // Scratch reused by every fibre.
  std::vector<Node<W>> nodes_;
  std::vector<W> factors_;
  std::vector<T> values_;
};

}  // namespace

template <class T>
Tensor shuffle_reduce(const CheckedReduce& r, const Tensor& input, Rng& rng, const ShuffleOptions& options,
                      const PrecisionProfile& profile) {
  Tensor out(dtype_of_v<T>, r.output_shape);
  with_profile_accumulator<T>(profile, options.wider, rng, [&](auto wide) {
    ReduceEvaluation<T, typename decltype(wide)::type> eval(rng);
    std::span<T> o = out.values<T>();
    std::size_t i = 0;
    for_each_fibre<T>(r, input.values<T>(), [&](std::span<const T> fibre) { o[i++] = eval.fibre(r.kind, fibre); });
  });
  return out;
}

#define EINFUZZ_SHUFFLE_REDUCE(T) \
  template Tensor shuffle_reduce<T>(const CheckedReduce&, const Tensor&, Rng&, const ShuffleOptions&, const PrecisionProfile&);
EINFUZZ_SHUFFLE_REDUCE(float)
EINFUZZ_SHUFFLE_REDUCE(double)
EINFUZZ_SHUFFLE_REDUCE(Float16)
EINFUZZ_SHUFFLE_REDUCE(BFloat16)
EINFUZZ_SHUFFLE_REDUCE(std::int32_t)
EINFUZZ_SHUFFLE_REDUCE(std::int64_t)
EINFUZZ_SHUFFLE_REDUCE(Bool8)
#undef EINFUZZ_SHUFFLE_REDUCE

}  // namespace einfuzz::shuffle_detail
