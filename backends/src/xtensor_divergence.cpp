// The model of xtensor 0.24's amin/amax fold (see xtensor_divergence.hpp): pure C++, no xtensor.
#include "einfuzz/backends/xtensor_divergence.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <vector>

#include "einfuzz/core/check_reduce.hpp"

namespace einfuzz {
namespace {

/// Calls fn(offset) for each row-major coordinate of `axes` (elementary axis indices) with the
/// input offset `base + Σ coord·stride`; nothing when one of the axes is empty.
template <class Fn>
void for_each_offset(const std::vector<int>& axes, const std::vector<std::int64_t>& lengths,
                     const std::vector<std::int64_t>& stride, std::int64_t base, Fn&& fn) {
  for (int a : axes) {
    if (lengths[static_cast<std::size_t>(a)] == 0) return;
  }
  std::vector<std::int64_t> c(axes.size(), 0);
  for (;;) {
    std::int64_t off = base;
    for (std::size_t i = 0; i < axes.size(); ++i) off += c[i] * stride[static_cast<std::size_t>(axes[i])];
    fn(off);
    std::size_t i = axes.size();
    for (;;) {
      if (i == 0) return;
      --i;
      if (++c[i] < lengths[static_cast<std::size_t>(axes[i])]) break;
      c[i] = 0;
    }
  }
}

template <class T>
class ExtremeFold {
 public:
  ExtremeFold(const CheckedReduce& r, std::span<const T> x) : r_(r), x_(x), stride_(r.axes.size()) {
    for (const ElementaryAxis& a : r.axes) lengths_.push_back(a.length);
    // Unsigned: an empty input's other lengths may multiply past int64; its strides are then never
    // used to read (as in core/coords.hpp's operand strides).
    std::uint64_t step = 1;
    for (std::size_t i = r.axes.size(); i-- > 0;) {
      stride_[i] = static_cast<std::int64_t>(step);
      step *= static_cast<std::uint64_t>(lengths_[i]);
    }
  }

  Tensor evaluate() const {
    std::vector<int> kept;
    for (const auto& g : r_.output_groups) kept.insert(kept.end(), g.begin(), g.end());
    Tensor out(dtype_of_v<T>, r_.output_shape);
    auto o = out.values<T>();
    std::size_t q = 0;
    for_each_offset(kept, lengths_, stride_, 0, [&](std::int64_t base) {
      o[q++] = r_.reduced.empty() ? f(init(), x_[static_cast<std::size_t>(base)]) : aggregate(0, base);
    });
    return out;
  }

 private:
  T init() const { return r_.kind == Reduction::max ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max(); }
  T f(T acc, T v) const { return (r_.kind == Reduction::max ? acc > v : acc < v) ? acc : v; }

  T aggregate(std::size_t level, std::int64_t base) const {
    const auto axis = static_cast<std::size_t>(r_.reduced[level]);
    const std::int64_t n = lengths_[axis];
    if (level + 1 == r_.reduced.size()) {
      T acc = init();
      for (std::int64_t i = 0; i < n; ++i) acc = f(acc, x_[static_cast<std::size_t>(base + i * stride_[axis])]);
      return acc;
    }
    T acc = aggregate(level + 1, base);
    for (std::int64_t i = 1; i < n; ++i) acc = f(acc, aggregate(level + 1, base + i * stride_[axis]));
    return acc;
  }

  const CheckedReduce& r_;
  std::span<const T> x_;
  std::vector<std::int64_t> lengths_;
  std::vector<std::int64_t> stride_;
};

template <class T>
bool same_bits_or_both_nan(std::span<const T> a, std::span<const T> b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) return false;
  }
  return true;
}

}  // namespace

std::optional<Tensor> xtensor_extreme_fold(const Case& c) {
  if (c.op != Op::reduce || !c.reduction || (*c.reduction != "min" && *c.reduction != "max")) return std::nullopt;
  if ((c.dtype != DType::f32 && c.dtype != DType::f64) || c.inputs.size() != 1 || c.inputs[0].dtype() != c.dtype) {
    return std::nullopt;
  }
  auto checked = check_reduce(c.pattern, *c.reduction, c.inputs[0].shape(), c.axis_lengths, c.dtype);
  if (!checked) return std::nullopt;
  if (c.dtype == DType::f32) return ExtremeFold<float>(*checked, c.inputs[0].values<float>()).evaluate();
  return ExtremeFold<double>(*checked, c.inputs[0].values<double>()).evaluate();
}

bool is_xtensor_extreme_divergence(const Case& c, const Tensor& actual) {
  const std::optional<Tensor> model = xtensor_extreme_fold(c);
  if (!model || actual.dtype() != model->dtype() || actual.shape() != model->shape()) return false;
  if (c.dtype == DType::f32) return same_bits_or_both_nan(model->values<float>(), actual.values<float>());
  return same_bits_or_both_nan(model->values<double>(), actual.values<double>());
}

}  // namespace einfuzz
