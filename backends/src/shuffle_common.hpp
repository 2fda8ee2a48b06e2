// Internal to the shuffle backend: random but valid summation trees and product associations
// (Shuffler) and the accumulator choice (Wider) both evaluations share.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "einfuzz/core/choice.hpp"
#include "einfuzz/core/half.hpp"
#include "einfuzz/core/precision.hpp"
#include "einfuzz/core/scalar.hpp"
#include "einfuzz/core/tensor.hpp"

namespace einfuzz::shuffle_detail {

/// Merges random pairs of `v` with `op` (operands in random order) until `keep` (>= 1) values
/// remain: every tree shape and every operand order is reachable.
template <class V, class Op>
void merge_randomly(Rng& rng, std::vector<V>& v, std::size_t keep, Op&& op) {
  while (v.size() > keep) {
    const std::size_t i = rng.below(v.size());
    std::size_t j = rng.below(v.size() - 1);
    if (j >= i) ++j;
    v[i] = op(v[i], v[j]);
    v[j] = v.back();
    v.pop_back();
  }
}

/// A leaf or partial result of a summation tree: a value, or a product whose rounding is still
/// pending so that the addition consuming it may fuse it (std::fma).
template <class W>
struct Node {
  W a{};                 ///< the value, or the left factor of a pending product
  W b{};                 ///< the right factor of a pending product
  bool pending = false;  ///< a·b has not been rounded yet
};

/// Random but valid ways to multiply and add in the accumulator type W.
template <class W>
class Shuffler {
 public:
  Shuffler(Rng& rng, bool fma) : rng_(rng), fma_(fma && is_float_type_v<W>) {}

  /// The product of `f` (consumed) along a random binary tree; the last multiplication is left
  /// pending when FMA is in play.
  Node<W> product(std::vector<W>& f) {
    if (f.empty()) return {W(1)};
    merge_randomly(rng_, f, 2, [&](W x, W y) { return mul(x, y); });
    if (f.size() == 1) return {f[0]};
    if (fma_) return {f[0], f[1], true};
    return {mul(f[0], f[1])};
  }

  /// The product of `f` (consumed) along a random binary tree, every multiplication rounded.
  W product_value(std::vector<W>& f) { return resolve(product(f)); }

  /// A pending product a·b (rounded by whichever addition or resolution consumes it).
  Node<W> pending(W a, W b) { return fma_ ? Node<W>{a, b, true} : Node<W>{mul(a, b)}; }

  /// The sum of `nodes` (consumed) along a random tree; +0 when there are none.
  W sum(std::vector<Node<W>>& nodes) {
    if (nodes.empty()) return W{};
    // An explicit +0 start somewhere in the tree (as `0 + x` does): exact, except that -0 + +0 = +0.
    if (rng_.chance(1, 4)) {
      nodes.insert(nodes.begin() + static_cast<std::ptrdiff_t>(rng_.below(nodes.size() + 1)), Node<W>{});
    }
    switch (rng_.below(5)) {
      case 0: return resolve(sequential(nodes, 0, nodes.size()));
      case 1: shuffle(nodes); return resolve(sequential(nodes, 0, nodes.size()));
      case 2: return resolve(pairwise(nodes));
      case 3: return resolve(halving(nodes, 0, nodes.size()));
      default: return resolve(lanes(nodes));
    }
  }

 private:
  W mul(W x, W y) { return rng_.chance(1, 2) ? scalar_mul(x, y) : scalar_mul(y, x); }
  static W resolve(const Node<W>& n) { return n.pending ? scalar_mul(n.a, n.b) : n.a; }

  Node<W> add(const Node<W>& x, const Node<W>& y) {
    if constexpr (is_float_type_v<W>) {
      if ((x.pending || y.pending) && rng_.chance(3, 4)) {
        const bool fuse_x = x.pending && (!y.pending || rng_.chance(1, 2));
        const Node<W>& p = fuse_x ? x : y;
        // A 16-bit W fuses in binary32 and rounds once more: still within the two roundings an
        // unfused multiply-add would have.
        return {static_cast<W>(std::fma(p.a, p.b, resolve(fuse_x ? y : x)))};
      }
    }
    const W l = resolve(x);
    const W r = resolve(y);
    return {rng_.chance(1, 2) ? scalar_add(l, r) : scalar_add(r, l)};
  }

  void shuffle(std::vector<Node<W>>& v) {
    for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng_.below(i)]);
  }

  Node<W> sequential(const std::vector<Node<W>>& v, std::size_t lo, std::size_t hi) {
    Node<W> acc = v[lo];
    for (std::size_t i = lo + 1; i < hi; ++i) acc = add(acc, v[i]);
    return acc;
  }

  /// Random pairwise merges: every binary tree shape is reachable.
  Node<W> pairwise(std::vector<Node<W>>& v) {
    merge_randomly(rng_, v, 1, [&](const Node<W>& x, const Node<W>& y) { return add(x, y); });
    return v[0];
  }

  /// Recursive halving at a random split in the middle half (depth stays logarithmic).
  Node<W> halving(const std::vector<Node<W>>& v, std::size_t lo, std::size_t hi) {
    const std::size_t n = hi - lo;
    if (n == 1) return v[lo];
    if (n <= 3 && rng_.chance(1, 2)) return sequential(v, lo, hi);
    const std::size_t first = std::max<std::size_t>(1, n / 4);
    const std::size_t last = std::min(n - 1, std::max(first, n - n / 4));
    const std::size_t split = lo + first + rng_.below(last - first + 1);
    // The right half first: the order gcc gave the former add(halving(left), halving(right)),
    // whose arguments' order C++ leaves unspecified (clang's differs: other sums for one seed).
    const Node<W> right = halving(v, split, hi);
    const Node<W> left = halving(v, lo, split);
    return add(left, right);
  }

  /// Split-K / vector lanes: s partial sums (strided or in contiguous chunks), then combined.
  Node<W> lanes(std::vector<Node<W>>& v) {
    const std::size_t n = v.size();
    const std::size_t s = 1 + rng_.below(std::min<std::size_t>(n, kMaxLanes));
    const bool strided = rng_.chance(1, 2);
    const std::size_t chunk = (n + s - 1) / s;
    std::array<Node<W>, kMaxLanes> acc{};
    std::array<bool, kMaxLanes> used{};
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t lane = strided ? i % s : i / chunk;
      acc[lane] = used[lane] ? add(acc[lane], v[i]) : v[i];
      used[lane] = true;
    }
    // pairwise merges in place: a member reused from call to call, not a vector per element.
    partial_.clear();
    for (std::size_t l = 0; l < s; ++l) {
      if (used[l]) partial_.push_back(acc[l]);
    }
    return rng_.chance(1, 2) ? sequential(partial_, 0, partial_.size()) : pairwise(partial_);
  }

  static constexpr std::size_t kMaxLanes = 16;
  Rng& rng_;
  bool fma_;
  std::vector<Node<W>> partial_;  ///< lanes' partial sums (lanes never nests)
};

template <class T>
struct Wider;
template <> struct Wider<float> { using type = double; };
// x87 extended (or quad) where long double is wider than double; otherwise no wider format.
template <> struct Wider<double> { using type = long double; };
// The 16-bit formats: binary32, rounded once at the end (the N' rounding of ORACLE §2).
template <> struct Wider<Float16> { using type = float; };
template <> struct Wider<BFloat16> { using type = float; };
template <> struct Wider<std::int32_t> { using type = std::int64_t; };  // wraps to the same low bits
template <> struct Wider<std::int64_t> { using type = std::int64_t; };

/// Calls fn(std::type_identity<W>{}) with W the accumulator of this call: Wider<T> (rounded once at
/// the end, the one extra rounding that N' and mean's γ_{n+2} pay for, ORACLE.md §2, §4) with
/// probability 1/4 when `allow_wider` and Wider<T> has more digits, else T; bool always T.
template <class T, class Fn>
decltype(auto) with_accumulator(bool allow_wider, Rng& rng, Fn&& fn) {
  if constexpr (std::is_same_v<T, Bool8>) {
    return fn(std::type_identity<T>{});
  } else {
    using Wide = typename Wider<T>::type;
    if (allow_wider && std::numeric_limits<Wide>::digits > std::numeric_limits<T>::digits && rng.chance(1, 4)) {
      return fn(std::type_identity<Wide>{});
    }
    return fn(std::type_identity<T>{});
  }
}

/// with_accumulator under a declared precision profile (ORACLE §8): a float T whose profile
/// accumulates in T itself may still be accumulated wider (§2 allows it; §8's final conversion
/// pays for it under TF32 input rounding); one that declares a wider accumulator is accumulated in
/// exactly that format and rounded once to T at the end. Other T as with_accumulator.
template <class T, class Fn>
decltype(auto) with_profile_accumulator(const PrecisionProfile& profile, bool allow_wider, Rng& rng, Fn&& fn) {
  if constexpr (is_float_type_v<T>) {
    if (profile.accumulate != dtype_of_v<T>) {
      if (profile.accumulate == DType::f32) return fn(std::type_identity<float>{});
      return fn(std::type_identity<double>{});  // is_valid_profile: f32 or f64 only, wider than T
    }
  }
  return with_accumulator<T>(allow_wider, rng, std::forward<Fn>(fn));
}

/// x rounded to nearest even in TF32 (ORACLE §8's `round_inputs`: 11 significant bits, binary32's
/// exponent range with subnormals, so that a value below 2^-126 keeps only multiples of 2^-136);
/// ±Inf past TF32's overflow threshold; NaN, ±Inf and ±0 unchanged.
inline double round_to_tf32(double x) {
  if (!std::isfinite(x) || x == 0) return x;
  const int e = std::max(std::ilogb(x), -126);
  const double q = std::ldexp(1.0, e - 10);         // one unit in TF32's last place here
  const double r = std::nearbyint(x / q) * q;        // exact scalings; ties to even (default mode)
  if (std::fabs(r) > std::ldexp(2.0 - std::ldexp(1.0, -10), 127)) return std::copysign(HUGE_VAL, x);
  return r == 0 ? std::copysign(0.0, x) : r;
}

/// W rounded to TF32 when `on` (W = float or double; a 16-bit W is TF32 already), else unchanged.
template <class W>
W tf32_if(bool on, W x) {
  if constexpr (std::is_same_v<W, float> || std::is_same_v<W, double>) {
    if (on) return static_cast<W>(round_to_tf32(static_cast<double>(x)));
  }
  return x;
}

}  // namespace einfuzz::shuffle_detail
