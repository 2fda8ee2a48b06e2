// Internal to the shuffle backend: random but valid summation trees and product associations
// (Shuffler) and the accumulator choice (Wider) both evaluations share.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "einfuzz/core/choice.hpp"
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
        return {std::fma(p.a, p.b, resolve(fuse_x ? y : x))};
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
    return add(halving(v, lo, split), halving(v, split, hi));
  }

  /// Split-K / vector lanes: s partial sums (strided or in contiguous chunks), then combined.
  Node<W> lanes(std::vector<Node<W>>& v) {
    const std::size_t n = v.size();
    const std::size_t s = 1 + rng_.below(std::min<std::size_t>(n, 16));
    const bool strided = rng_.chance(1, 2);
    const std::size_t chunk = (n + s - 1) / s;
    std::vector<Node<W>> acc;
    std::vector<bool> used(s, false);
    acc.resize(s);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t lane = strided ? i % s : i / chunk;
      acc[lane] = used[lane] ? add(acc[lane], v[i]) : v[i];
      used[lane] = true;
    }
    std::vector<Node<W>> partial;
    for (std::size_t l = 0; l < s; ++l) {
      if (used[l]) partial.push_back(acc[l]);
    }
    return rng_.chance(1, 2) ? sequential(partial, 0, partial.size()) : pairwise(partial);
  }

  Rng& rng_;
  bool fma_;
};

template <class T>
struct Wider;
template <> struct Wider<float> { using type = double; };
// x87 extended (or quad) where long double is wider than double; otherwise no wider format.
template <> struct Wider<double> { using type = long double; };
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

}  // namespace einfuzz::shuffle_detail
