// The xtensor backend: einsum as a broadcasting product of views reduced with xt::sum, reductions
// with xtensor's reducers. The only translation unit of the project that includes xtensor.
#include "einfuzz/backends/xtensor.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <xtensor/xadapt.hpp>
#include <xtensor/xarray.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xoperation.hpp>
#include <xtensor/xstrided_view.hpp>
#include <xtensor/xtensor_config.hpp>

#include "einfuzz/backends/adapter.hpp"
#include "einfuzz/core/check.hpp"
#include "einfuzz/core/check_reduce.hpp"
#include "arith.hpp"

namespace einfuzz {
namespace {

using XShape = std::vector<std::size_t>;

using adapter_detail::Arith;
using adapter_detail::arith;

std::size_t count(const XShape& shape) {
  return std::accumulate(shape.begin(), shape.end(), std::size_t{1}, std::multiplies<>());
}

/// A non-owning row-major xtensor view of `data` (never called on empty data: see the header).
template <class A>
auto adapt(const A* data, const XShape& shape) {
  return xt::adapt(data, count(shape), xt::no_ownership(), shape);
}
template <class A>
auto adapt(A* data, const XShape& shape) {
  return xt::adapt(data, count(shape), xt::no_ownership(), shape);
}

/// The permutation that lists positions of `order`'s entries in ascending order of their values.
XShape argsort(const std::vector<int>& order) {
  XShape perm(order.size());
  std::iota(perm.begin(), perm.end(), std::size_t{0});
  std::sort(perm.begin(), perm.end(), [&](std::size_t x, std::size_t y) { return order[x] < order[y]; });
  return perm;
}

/// For `output` (distinct values), where each entry sits among output's entries sorted ascending:
/// transposing a tensor laid out in ascending order by this permutation gives `output`'s order.
XShape rank_permutation(const std::vector<int>& output) {
  std::vector<int> sorted = output;
  std::sort(sorted.begin(), sorted.end());
  XShape perm;
  for (int a : output) {
    perm.push_back(static_cast<std::size_t>(std::lower_bound(sorted.begin(), sorted.end(), a) - sorted.begin()));
  }
  return perm;
}

// ---------------------------------------------------------------------------------------------
// einsum

/// One operand after its diagonals: data, shape and one (distinct) global axis per dimension.
template <class A>
struct Operand {
  const A* data = nullptr;
  XShape shape;
  std::vector<int> axes;
  xt::xarray<A> storage;  ///< owns the data once a diagonal was taken
};

/// Takes every repeated label's diagonal with xt::diagonal (which moves it to the last dimension).
template <class A>
Operand<A> take_diagonals(const CheckedOperand& op, const A* data) {
  Operand<A> o;
  o.data = data;
  o.shape.assign(op.shape.begin(), op.shape.end());
  o.axes = op.axes;
  for (;;) {
    std::size_t d1 = 0, d2 = 0;
    for (std::size_t i = 0; i < o.axes.size() && d2 == 0; ++i) {
      for (std::size_t j = i + 1; j < o.axes.size(); ++j) {
        if (o.axes[i] == o.axes[j]) {
          d1 = i;
          d2 = j;
          break;
        }
      }
    }
    if (d2 == 0) return o;
    xt::xarray<A> diagonal = xt::diagonal(adapt(o.data, o.shape), 0, d1, d2);
    const int axis = o.axes[d1];
    o.axes.erase(o.axes.begin() + static_cast<std::ptrdiff_t>(d2));
    o.axes.erase(o.axes.begin() + static_cast<std::ptrdiff_t>(d1));
    o.axes.push_back(axis);
    o.storage = std::move(diagonal);
    o.data = o.storage.data();
    o.shape.assign(o.storage.shape().begin(), o.storage.shape().end());
  }
}

/// The operand as a view over all global axes: transposed into global order, xt::newaxis where it
/// lacks a label (so the product broadcasts), its own size-1 dimensions broadcast by xtensor.
template <class A>
auto global_view(const Operand<A>& o, std::size_t global_rank) {
  const XShape perm = argsort(o.axes);
  std::vector<int> sorted = o.axes;
  std::sort(sorted.begin(), sorted.end());
  xt::xstrided_slice_vector slices;
  for (std::size_t g = 0; g < global_rank; ++g) {
    if (std::binary_search(sorted.begin(), sorted.end(), static_cast<int>(g))) {
      slices.push_back(xt::all());
    } else {
      slices.push_back(xt::newaxis());
    }
  }
  return xt::strided_view(xt::transpose(adapt(o.data, o.shape), perm), std::move(slices));
}

template <class T>
BackendResult run_einsum(const CheckedEinsum& e, const std::vector<Tensor>& inputs) {
  Tensor out(dtype_of_v<T>, e.output_shape);  // +0 / 0 everywhere
  // Nothing to compute, or no term at all (+0): decided here, so xtensor never sees an empty array.
  if (e.output_size == 0 || e.contraction_size == 0) return out;
  using A = Arith<T>;
  std::vector<Operand<A>> ops;
  for (std::size_t m = 0; m < e.operands.size(); ++m) {
    ops.push_back(take_diagonals(e.operands[m], arith(inputs[m].values<T>().data())));
  }
  const std::size_t rank = e.axes.size();
  const XShape contracted(e.contracted.begin(), e.contracted.end());  // ascending: G order
  xt::xarray<A> reduced;
  if (ops.size() == 1) {
    reduced = xt::sum(global_view(ops[0], rank), contracted);
  } else {
    // Left to right, one product per term: ((x0·x1)·x2)·…, the last product fused into the sum.
    xt::xarray<A> acc = global_view(ops[0], rank);
    for (std::size_t m = 1; m + 1 < ops.size(); ++m) acc = acc * global_view(ops[m], rank);
    reduced = xt::sum(acc * global_view(ops.back(), rank), contracted);
  }
  XShape out_shape(e.output_shape.begin(), e.output_shape.end());
  auto dst = adapt(arith(out.values<T>().data()), out_shape);
  dst = xt::transpose(reduced, rank_permutation(e.output));
  return out;
}

// ---------------------------------------------------------------------------------------------
// reduce

template <class T>
void fill(Tensor& t, T value) {
  auto v = t.values<T>();
  std::fill(v.begin(), v.end(), value);
}

template <class T>
BackendResult run_reduce(const CheckedReduce& r, const Tensor& input) {
  const bool logical = r.kind == Reduction::any || r.kind == Reduction::all;
  Tensor out(logical ? DType::boolean : dtype_of_v<T>, r.output_shape);
  if (r.output_size == 0) return out;
  if (r.fibre_size == 0) {  // the kind's identity (mean/min/max were rejected by the checker)
    if (r.kind == Reduction::all) fill<Bool8>(out, 1);
    if constexpr (!std::is_same_v<T, Bool8>) {
      if (r.kind == Reduction::prod) fill<T>(out, T(1));
    }
    return out;
  }
  XShape elementary;
  for (const ElementaryAxis& a : r.axes) elementary.push_back(static_cast<std::size_t>(a.length));
  std::vector<int> kept;  // elementary axes in output order
  for (const auto& group : r.output_groups) kept.insert(kept.end(), group.begin(), group.end());
  const XShape reduced(r.reduced.begin(), r.reduced.end());  // input order: ascending
  XShape out_shape(r.output_shape.begin(), r.output_shape.end());

  if constexpr (std::is_same_v<T, Bool8>) {
    // xt::any / xt::all reduce a whole expression: lay each fibre out contiguously, one call per fibre.
    XShape order(kept.begin(), kept.end());
    order.insert(order.end(), reduced.begin(), reduced.end());
    const xt::xarray<Bool8> fibres = xt::transpose(adapt(input.values<Bool8>().data(), elementary), order);
    const auto n = static_cast<std::size_t>(r.fibre_size);
    auto o = out.values<Bool8>();
    for (std::size_t q = 0; q < o.size(); ++q) {
      const auto fibre = adapt(fibres.data() + q * n, XShape{n});
      o[q] = (r.kind == Reduction::any ? xt::any(fibre) : xt::all(fibre)) ? 1 : 0;
    }
  } else {
    const XShape perm = rank_permutation(kept);
    auto assign = [&](auto&& result) {
      auto dst = adapt(out.values<T>().data(), out_shape);
      dst = xt::cast<T>(xt::transpose(std::forward<decltype(result)>(result), perm));
    };
    if (!numeric_reduction<T>(r.kind)) return unsupported_reduction("xtensor", r.kind, dtype_of_v<T>);
    using A = Arith<T>;
    const auto x = adapt(input.values<T>().data(), elementary);
    switch (r.kind) {
      case Reduction::sum: {
        auto dst = adapt(arith(out.values<T>().data()), out_shape);
        const xt::xarray<A> s = xt::sum(adapt(arith(input.values<T>().data()), elementary), reduced);
        dst = xt::transpose(s, perm);
        break;
      }
      case Reduction::prod: {
        auto dst = adapt(arith(out.values<T>().data()), out_shape);
        const xt::xarray<A> p = xt::prod(adapt(arith(input.values<T>().data()), elementary), reduced);
        dst = xt::transpose(p, perm);
        break;
      }
      case Reduction::min: assign(xt::xarray<T>(xt::amin(x, reduced))); break;
      case Reduction::max: assign(xt::xarray<T>(xt::amax(x, reduced))); break;
      case Reduction::mean:
        // xt::mean sums in T and divides in double: the result is double, rounded to T here.
        if constexpr (is_float_type_v<T>) assign(xt::xarray<double>(xt::mean(x, reduced)));
        break;
      default: break;  // any/all: not reached (numeric_reduction)
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

std::string xtensor_version() {
  return "xtensor " + std::to_string(XTENSOR_VERSION_MAJOR) + "." + std::to_string(XTENSOR_VERSION_MINOR) + "." +
         std::to_string(XTENSOR_VERSION_PATCH);
}

class XtensorBackend final : public Backend {
 public:
  explicit XtensorBackend(const Limits& limits)
      : limits_(limits),
        caps_(full_capabilities(Semantics::any_order, NanProfile::propagate, false, xtensor_version())) {}
  std::string_view name() const override { return "xtensor"; }
  const Capabilities& capabilities() const override { return caps_; }
  BackendResult run(const Case& c) override {
    return run_checked(
        c, limits_,
        [](auto tag, const CheckedEinsum& e, const Case& x) { return run_einsum<decltype(tag)>(e, x.inputs); },
        [](auto tag, const CheckedReduce& r, const Case& x) { return run_reduce<decltype(tag)>(r, x.inputs[0]); });
  }

 private:
  Limits limits_;
  Capabilities caps_;
};

}  // namespace

std::unique_ptr<Backend> make_xtensor_backend(const Limits& limits) { return std::make_unique<XtensorBackend>(limits); }

}  // namespace einfuzz
