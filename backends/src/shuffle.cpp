// The shuffle backend: a correct any-order einsum and reduce that evaluates every element along random
// valid paths (summation trees, product associations, FMA, wider accumulators, pairwise contractions).
#include "einfuzz/backends/shuffle.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/core/choice.hpp"
#include "einfuzz/core/scalar.hpp"

namespace einfuzz {
namespace {

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
  Shuffler(Rng& rng, bool fma) : rng_(rng), fma_(fma && std::is_floating_point_v<W>) {}

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
    if constexpr (std::is_floating_point_v<W>) {
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

/// Calls fn() once per row-major coordinate of `axes` (global axis indices), with coords[a] set
/// for each a in `axes`; never when a length is 0; once when `axes` is empty.
template <class Fn>
void for_each_coord(const std::vector<int>& axes, const Shape& lengths, std::vector<std::int64_t>& coords, Fn&& fn) {
  for (const int a : axes) {
    if (lengths[static_cast<std::size_t>(a)] == 0) return;
    coords[static_cast<std::size_t>(a)] = 0;
  }
  for (;;) {
    fn();
    std::size_t i = axes.size();
    for (;;) {
      if (i == 0) return;
      const auto a = static_cast<std::size_t>(axes[--i]);
      if (++coords[a] < lengths[a]) break;
      coords[a] = 0;
    }
  }
}

/// Per operand and global axis: the stride of that axis in the operand's storage (diagonal
/// dimensions add up; size-1 dimensions are broadcast and contribute 0).
std::vector<std::vector<std::int64_t>> physical_strides(const CheckedEinsum& e) {
  std::vector<std::vector<std::int64_t>> strides;
  for (const CheckedOperand& op : e.operands) {
    std::vector<std::int64_t> s(e.axes.size(), 0);
    std::int64_t step = 1;
    for (std::size_t d = op.shape.size(); d-- > 0;) {
      if (op.shape[d] != 1) s[static_cast<std::size_t>(op.axes[d])] += step;
      step *= op.shape[d];
    }
    strides.push_back(std::move(s));
  }
  return strides;
}

std::int64_t offset(const std::vector<std::int64_t>& stride, const std::vector<std::int64_t>& coords) {
  std::int64_t at = 0;
  for (std::size_t a = 0; a < coords.size(); ++a) at += coords[a] * stride[a];
  return at;
}

/// An intermediate of a pairwise contraction path: dense over a set of global axes.
template <class W>
struct Partial {
  std::vector<int> axes;              ///< the global axes it varies along (distinct)
  std::vector<std::int64_t> stride;   ///< per global axis, its row-major stride here (0 if absent)
  std::vector<W> values;              ///< row-major over [L(a) for a in axes]

  Partial(std::vector<int> a, const Shape& lengths) : axes(std::move(a)), stride(lengths.size(), 0) {
    std::int64_t step = 1;
    for (std::size_t i = axes.size(); i-- > 0;) {
      stride[static_cast<std::size_t>(axes[i])] = step;
      step *= lengths[static_cast<std::size_t>(axes[i])];
    }
    values.resize(static_cast<std::size_t>(step));
  }
  W& at(const std::vector<std::int64_t>& coords) {
    std::int64_t i = 0;
    for (const int a : axes) i += coords[static_cast<std::size_t>(a)] * stride[static_cast<std::size_t>(a)];
    return values[static_cast<std::size_t>(i)];
  }
  // Every axis here has length >= 1 (the caller handles empty outputs and contractions), so a
  // present axis has a non-zero stride.
  bool has(int a) const { return stride[static_cast<std::size_t>(a)] != 0; }
};

template <class T>
struct Wider;
template <> struct Wider<float> { using type = double; };
// x87 extended (or quad) where long double is wider than double; otherwise no wider format.
template <> struct Wider<double> { using type = long double; };
template <> struct Wider<std::int32_t> { using type = std::int64_t; };  // wraps to the same low bits
template <> struct Wider<std::int64_t> { using type = std::int64_t; };

/// One call's evaluation of a checked einsum with K >= 1 and a non-empty output.
template <class T, class W>
class Evaluation {
 public:
  Evaluation(const CheckedEinsum& e, std::span<const Tensor> inputs, Rng& rng, bool fma)
      : e_(e), rng_(rng), sh_(rng, fma), strides_(physical_strides(e)), coords_(e.axes.size(), 0) {
    for (const Axis& a : e.axes) lengths_.push_back(a.length);
    contracted_.assign(e.axes.size(), false);
    for (const int c : e.contracted) contracted_[static_cast<std::size_t>(c)] = true;
    for (const Tensor& t : inputs) x_.push_back(t.values<T>());
  }

  /// Every term's product along its own random tree, then a random summation tree per element.
  void per_term(std::span<T> out) {
    std::vector<Node<W>> nodes;
    std::vector<W> factors;
    std::size_t o = 0;
    for_each_coord(e_.output, lengths_, coords_, [&] {
      nodes.clear();
      for_each_coord(e_.contracted, lengths_, coords_, [&] {
        factors.clear();
        for (std::size_t m = 0; m < x_.size(); ++m) factors.push_back(read(m));
        nodes.push_back(sh_.product(factors));
      });
      out[o++] = static_cast<T>(sh_.sum(nodes));
    });
  }

  /// A random pairwise contraction path (numpy/opt_einsum/torch style): labels used by one operand
  /// only may be summed inside it first; each pairwise product sums every label no remaining
  /// operand (and not the output) uses. `collapse` drops broadcast (size-1) dimensions, as torch does.
  void factored(std::span<T> out, bool collapse) {
    std::vector<Partial<W>> parts;
    for (std::size_t m = 0; m < x_.size(); ++m) parts.push_back(operand(m, collapse));
    for (std::size_t i = 0; i < parts.size(); ++i) {
      if (!rng_.chance(1, 2)) continue;
      const std::vector<int> own = private_contracted(parts, parts[i].axes, i, i);
      if (!own.empty()) parts[i] = sum_out(parts[i], own);
    }
    while (parts.size() > 1) {
      const std::size_t i = rng_.below(parts.size());
      std::size_t j = rng_.below(parts.size() - 1);
      if (j >= i) ++j;
      std::vector<int> both = parts[i].axes;
      for (const int a : parts[j].axes) {
        if (!parts[i].has(a)) both.push_back(a);
      }
      const std::vector<int> summed = private_contracted(parts, both, i, j);
      std::vector<int> keep;
      for (const int a : both) {
        if (std::find(summed.begin(), summed.end(), a) == summed.end()) keep.push_back(a);
      }
      for (std::size_t q = keep.size(); q > 1; --q) std::swap(keep[q - 1], keep[rng_.below(q)]);
      Partial<W> joined = contract(parts[i], parts[j], keep, summed);
      const std::size_t hi = std::max(i, j), lo = std::min(i, j);
      parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(hi));
      parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(lo));
      parts.insert(parts.begin() + static_cast<std::ptrdiff_t>(rng_.below(parts.size() + 1)), std::move(joined));
    }
    Partial<W>& last = parts[0];
    const std::vector<int> rest = private_contracted(parts, last.axes, 0, 0);
    if (!rest.empty()) last = sum_out(last, rest);
    std::size_t o = 0;
    for_each_coord(e_.output, lengths_, coords_, [&] { out[o++] = static_cast<T>(last.at(coords_)); });
  }

 private:
  W read(std::size_t m) {
    return static_cast<W>(x_[m][static_cast<std::size_t>(offset(strides_[m], coords_))]);
  }

  Partial<W> operand(std::size_t m, bool collapse) {
    const CheckedOperand& op = e_.operands[m];
    std::vector<int> axes;
    for (std::size_t d = 0; d < op.shape.size(); ++d) {
      if (collapse && op.shape[d] == 1) continue;
      if (std::find(axes.begin(), axes.end(), op.axes[d]) == axes.end()) axes.push_back(op.axes[d]);
    }
    Partial<W> p(std::move(axes), lengths_);
    for_each_coord(p.axes, lengths_, coords_, [&] { p.at(coords_) = read(m); });
    return p;
  }

  /// The contracted axes among `axes` that no part other than parts[i] and parts[j] uses.
  std::vector<int> private_contracted(const std::vector<Partial<W>>& parts, const std::vector<int>& axes,
                                      std::size_t i, std::size_t j) const {
    std::vector<int> out;
    for (const int a : axes) {
      if (!contracted_[static_cast<std::size_t>(a)]) continue;
      bool elsewhere = false;
      for (std::size_t q = 0; q < parts.size() && !elsewhere; ++q) {
        if (q != i && q != j && std::find(parts[q].axes.begin(), parts[q].axes.end(), a) != parts[q].axes.end()) {
          elsewhere = true;
        }
      }
      if (!elsewhere) out.push_back(a);
    }
    return out;
  }

  Partial<W> sum_out(Partial<W>& p, const std::vector<int>& summed) {
    std::vector<int> keep;
    for (const int a : p.axes) {
      if (std::find(summed.begin(), summed.end(), a) == summed.end()) keep.push_back(a);
    }
    Partial<W> r(std::move(keep), lengths_);
    std::vector<Node<W>> nodes;
    for_each_coord(r.axes, lengths_, coords_, [&] {
      nodes.clear();
      for_each_coord(summed, lengths_, coords_, [&] { nodes.push_back({p.at(coords_)}); });
      r.at(coords_) = sh_.sum(nodes);
    });
    return r;
  }

  Partial<W> contract(Partial<W>& a, Partial<W>& b, const std::vector<int>& keep, const std::vector<int>& summed) {
    Partial<W> r(keep, lengths_);
    std::vector<Node<W>> nodes;
    for_each_coord(r.axes, lengths_, coords_, [&] {
      nodes.clear();
      for_each_coord(summed, lengths_, coords_, [&] { nodes.push_back(sh_.pending(a.at(coords_), b.at(coords_))); });
      r.at(coords_) = sh_.sum(nodes);
    });
    return r;
  }

  const CheckedEinsum& e_;
  Rng& rng_;
  Shuffler<W> sh_;
  std::vector<std::vector<std::int64_t>> strides_;
  std::vector<std::int64_t> coords_;
  Shape lengths_;
  std::vector<bool> contracted_;
  std::vector<std::span<const T>> x_;
};

/// Per elementary axis of a checked reduce, its stride in the input's row-major storage (a
/// composite group (x y z) is row-major inside its dimension).
std::vector<std::int64_t> elementary_strides(const CheckedReduce& r) {
  // In unsigned arithmetic: an empty input's other lengths may multiply past int64 (the checker
  // bounds only the element count, 0); such strides are never used, since nothing is read.
  std::vector<std::int64_t> stride(r.axes.size(), 0);
  std::uint64_t dim_stride = 1;
  for (std::size_t d = r.input_groups.size(); d-- > 0;) {
    std::uint64_t s = dim_stride;
    for (std::size_t k = r.input_groups[d].size(); k-- > 0;) {
      const auto a = static_cast<std::size_t>(r.input_groups[d][k]);
      stride[a] = static_cast<std::int64_t>(s);
      s *= static_cast<std::uint64_t>(r.axes[a].length);
    }
    dim_stride *= static_cast<std::uint64_t>(r.input_shape[d]);
  }
  return stride;
}

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
                   [&] { fibre.push_back(x[static_cast<std::size_t>(offset(stride, coords))]); });
    fn(std::span<const T>(fibre));
  });
}

/// IEEE 754-2019 minimum/maximum when `zero_order` (-0 < +0), else a plain comparison whose ±0 tie
/// keeps `a`, as numpy's does; NaN propagates either way: both are the `propagate` profile (§5).
template <class T>
T extreme(T a, T b, bool is_max, bool zero_order) {
  if constexpr (std::is_floating_point_v<T>) {
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
    const W n = static_cast<W>(x.size());
    const W s = sum(x);
    return static_cast<T>(rng_.chance(1, 2) ? s / n : s * (W(1) / n));
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

/// FNV-1a over everything that makes a case what it is (op, pattern, reduction, supplied lengths,
/// dtype, shapes, value bytes): the stream a case's choices are drawn from, so a case gets the same
/// evaluation whichever cases ran before it (CASES.md: any order of cases). Every field is
/// length-prefixed, so two different cases never feed the same byte sequence.
class ContentHash {
 public:
  void bytes(const void* data, std::size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) h_ = (h_ ^ p[i]) * 0x100000001b3ULL;
  }
  void number(std::uint64_t v) {
    unsigned char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
    bytes(b, sizeof b);
  }
  void text(std::string_view s) {
    number(s.size());
    bytes(s.data(), s.size());
  }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ULL;
};

std::uint64_t case_content_hash(const Case& c) {
  ContentHash h;
  h.number(static_cast<std::uint64_t>(c.op));
  h.text(c.pattern);
  h.number(c.reduction.has_value());
  h.text(c.reduction.value_or(""));
  h.number(c.axis_lengths.size());
  for (const auto& [name, length] : c.axis_lengths) {
    h.text(name);
    h.number(static_cast<std::uint64_t>(length));
  }
  h.number(static_cast<std::uint64_t>(c.dtype));
  h.number(c.inputs.size());
  for (const Tensor& t : c.inputs) {
    h.number(static_cast<std::uint64_t>(t.dtype()));
    h.number(t.shape().size());
    for (const std::int64_t length : t.shape()) h.number(static_cast<std::uint64_t>(length));
    const auto raw = t.bytes();
    h.number(raw.size());
    h.bytes(raw.data(), raw.size());
  }
  return h.value();
}

class ShuffleBackend final : public Backend {
 public:
  explicit ShuffleBackend(const ShuffleOptions& options) : options_(options) {
    caps_.ops = {Op::einsum, Op::reduce};
    caps_.dtypes = {DType::f32, DType::f64, DType::i32, DType::i64, DType::boolean};  // bool: any/all
    caps_.reductions = {"sum", "prod", "mean", "min", "max", "any", "all"};
    caps_.semantics = Semantics::any_order;
    caps_.nan_profile = NanProfile::propagate;
    caps_.factoring = options.factoring;
    caps_.version = "einfuzz shuffle (seed " + std::to_string(options.seed) + ")";
  }
  std::string_view name() const override { return "shuffle"; }
  const Capabilities& capabilities() const override { return caps_; }

 private:
  // Defined before einsum() and reduce(): clang 14 does not find a member template used in a
  // generic lambda before its definition.
  /// Whether this call accumulates in Wider<T>, rounding once at the end (the one extra rounding
  /// that N' and mean's γ_{n+2} pay for, ORACLE.md §2, §4).
  template <class T>
  bool wider(Rng& rng) const {
    using Wide = typename Wider<T>::type;
    return options_.wider && std::numeric_limits<Wide>::digits > std::numeric_limits<T>::digits && rng.chance(1, 4);
  }

  template <class T>
  Tensor evaluate(const CheckedEinsum& e, std::span<const Tensor> inputs, Rng& rng) const {
    Tensor out(dtype_of_v<T>, e.output_shape);  // +0 / 0 everywhere
    // K = 0: no term exists and the value is +0 on every path; factoring must not turn it into
    // (Σ a)·(Σ_∅ b) = Inf·0 (ORACLE.md §3).
    if (e.output_size == 0 || e.contraction_size == 0) return out;
    if (wider<T>(rng)) {
      run_with<T, typename Wider<T>::type>(e, inputs, rng, out.values<T>());
    } else {
      run_with<T, T>(e, inputs, rng, out.values<T>());
    }
    return out;
  }

  template <class T, class W>
  void run_with(const CheckedEinsum& e, std::span<const Tensor> inputs, Rng& rng, std::span<T> out) const {
    const bool fma = options_.fma && rng.chance(2, 3);
    Evaluation<T, W> eval(e, inputs, rng, fma);
    if (options_.factoring && e.operands.size() >= 2 && rng.chance(1, 2)) {
      eval.factored(out, rng.chance(1, 2));
    } else {
      eval.per_term(out);
    }
  }

  template <class T>
  Tensor evaluate_reduce(const CheckedReduce& r, const Tensor& input, Rng& rng) const {
    Tensor out(dtype_of_v<T>, r.output_shape);
    if constexpr (std::is_same_v<T, Bool8>) {
      reduce_with<T, T>(r, input, rng, out.values<T>());
    } else {
      if (wider<T>(rng)) {
        reduce_with<T, typename Wider<T>::type>(r, input, rng, out.values<T>());
      } else {
        reduce_with<T, T>(r, input, rng, out.values<T>());
      }
    }
    return out;
  }

  template <class T, class W>
  static void reduce_with(const CheckedReduce& r, const Tensor& input, Rng& rng, std::span<T> out) {
    ReduceEvaluation<T, W> eval(rng);
    std::size_t o = 0;
    for_each_fibre<T>(r, input.values<T>(), [&](std::span<const T> fibre) { out[o++] = eval.fibre(r.kind, fibre); });
  }

 public:
  BackendResult run(const Case& c) override {
    for (std::size_t k = 0; k < c.inputs.size(); ++k) {
      if (c.inputs[k].dtype() != c.dtype) {
        return Rejected{"invalidArgument",
                        "input " + std::to_string(k) + " is not " + std::string(dtype_name(c.dtype))};
      }
    }
    return c.op == Op::einsum ? einsum(c) : reduce(c);
  }

 private:
  BackendResult einsum(const Case& c) {
    if (!is_float(c.dtype) && !is_integer(c.dtype)) return Unsupported{"shuffle: no einsum on bool"};
    std::vector<Shape> shapes;
    for (const Tensor& t : c.inputs) shapes.push_back(t.shape());
    auto checked = check_einsum(c.pattern, shapes, options_.limits);
    if (!checked) return Rejected{std::string(code_name(checked.error().code)), checked.error().message};
    Rng rng(Rng::mix(options_.seed, case_content_hash(c)));
    return visit_dtype(c.dtype, [&](auto tag) -> BackendResult {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, Bool8>) {
        return Unsupported{"shuffle: no einsum on bool"};
      } else {
        return evaluate<T>(*checked, c.inputs, rng);
      }
    });
  }

  BackendResult reduce(const Case& c) {
    if (c.inputs.size() != 1) return Rejected{"invalidArgument", "a reduce case has exactly one input"};
    auto checked = check_reduce(c.pattern, c.reduction.value_or(""), c.inputs[0].shape(), c.axis_lengths, c.dtype,
                                options_.limits);
    if (!checked) return Rejected{std::string(code_name(checked.error().code)), checked.error().message};
    Rng rng(Rng::mix(options_.seed, case_content_hash(c)));
    return visit_dtype(c.dtype, [&](auto tag) -> BackendResult {
      return evaluate_reduce<decltype(tag)>(*checked, c.inputs[0], rng);
    });
  }

 private:
  ShuffleOptions options_;
  Capabilities caps_;
};

}  // namespace

std::unique_ptr<Backend> make_shuffle_backend(const ShuffleOptions& options) {
  return std::make_unique<ShuffleBackend>(options);
}

std::unique_ptr<Backend> make_shuffle_backend(std::uint64_t seed) {
  ShuffleOptions options;
  options.seed = seed;
  return make_shuffle_backend(options);
}

}  // namespace einfuzz
