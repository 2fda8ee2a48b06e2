// The shuffle backend's einsum (ORACLE.md §6): every element along a random valid path, per term or
// along a random pairwise contraction path.
#include <algorithm>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "einfuzz/core/coords.hpp"
#include "shuffle_common.hpp"
#include "shuffle_eval.hpp"

namespace einfuzz::shuffle_detail {
namespace {

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

/// One call's evaluation of a checked einsum with K >= 1 and a non-empty output.
template <class T, class W>
class Evaluation {
 public:
  Evaluation(const CheckedEinsum& e, std::span<const Tensor> inputs, Rng& rng, bool fma, bool tf32)
      : e_(e), rng_(rng), sh_(rng, fma), tf32_(tf32), strides_(operand_strides(e)), coords_(e.axes.size(), 0) {
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
        for (std::size_t m = 0; m < x_.size(); ++m) factors.push_back(tf32_if(tf32_, read(m)));
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
    return static_cast<W>(x_[m][static_cast<std::size_t>(storage_offset(strides_[m], coords_))]);
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
      for_each_coord(summed, lengths_, coords_, [&] {
        nodes.push_back(sh_.pending(tf32_if(tf32_, a.at(coords_)), tf32_if(tf32_, b.at(coords_))));
      });
      r.at(coords_) = sh_.sum(nodes);
    });
    return r;
  }

  const CheckedEinsum& e_;
  Rng& rng_;
  Shuffler<W> sh_;
  bool tf32_;  ///< every product's inputs are rounded to TF32 (ORACLE §8 `round_inputs`)
  std::vector<std::vector<std::int64_t>> strides_;
  std::vector<std::int64_t> coords_;
  Shape lengths_;
  std::vector<bool> contracted_;
  std::vector<std::span<const T>> x_;
};

template <class T, class W>
void run_with(const CheckedEinsum& e, std::span<const Tensor> inputs, Rng& rng, const ShuffleOptions& options,
              bool tf32, std::span<T> out) {
  const bool fma = options.fma && rng.chance(2, 3);
  Evaluation<T, W> eval(e, inputs, rng, fma, tf32);
  if (options.factoring && e.operands.size() >= 2 && rng.chance(1, 2)) {
    eval.factored(out, rng.chance(1, 2));
  } else {
    eval.per_term(out);
  }
}

}  // namespace

template <class T>
Tensor shuffle_einsum(const CheckedEinsum& e, std::span<const Tensor> inputs, Rng& rng, const ShuffleOptions& options,
                      const PrecisionProfile& profile) {
  Tensor out(dtype_of_v<T>, e.output_shape);  // +0 / 0 everywhere
  // K = 0: no term exists and the value is +0 on every path; factoring must not turn it into
  // (Σ a)·(Σ_∅ b) = Inf·0 (ORACLE.md §3).
  if (e.output_size == 0 || e.contraction_size == 0) return out;
  // TF32 holds every f16 and bf16 value: rounding them is the identity, only f32 is rounded.
  const bool tf32 = std::is_same_v<T, float> && profile.round_inputs == InputRounding::tf32;
  with_profile_accumulator<T>(profile, options.wider, rng, [&](auto wide) {
    run_with<T, typename decltype(wide)::type>(e, inputs, rng, options, tf32, out.values<T>());
  });
  return out;
}

#define EINFUZZ_SHUFFLE_EINSUM(T)                                                                     \
  template Tensor shuffle_einsum<T>(const CheckedEinsum&, std::span<const Tensor>, Rng&, const ShuffleOptions&, \
                                    const PrecisionProfile&);
EINFUZZ_SHUFFLE_EINSUM(float)
EINFUZZ_SHUFFLE_EINSUM(double)
EINFUZZ_SHUFFLE_EINSUM(Float16)
EINFUZZ_SHUFFLE_EINSUM(BFloat16)
EINFUZZ_SHUFFLE_EINSUM(std::int32_t)
EINFUZZ_SHUFFLE_EINSUM(std::int64_t)
#undef EINFUZZ_SHUFFLE_EINSUM

}  // namespace einfuzz::shuffle_detail
