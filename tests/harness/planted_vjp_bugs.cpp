// The planted VJP executor: the ordered VJPs of SEMANTICS §13.8 in plain loops (einsum: one
// scatter-add per operand over the global axes in row-major order; reduce: per fibre), plus one
// deliberate defect per bug.
#include "harness/planted_vjp_bugs.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "einfuzz/core/check_case.hpp"
#include "einfuzz/core/scalar.hpp"
#include "einfuzz/reference/reduce.hpp"
#include "support/einsum_strides.hpp"

namespace einfuzz::test {
namespace {

/// Row-major strides of `shape`.
std::vector<std::int64_t> row_major(const Shape& shape) {
  std::vector<std::int64_t> s(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

class PlantedVjpBackend final : public Backend {
 public:
  PlantedVjpBackend(PlantedVjpBug bug, Semantics semantics)
      : bug_(bug), name_("planted-vjp-" + std::string(planted_vjp_bug_name(bug))) {
    caps_.ops = {Op::einsum, Op::reduce};
    caps_.dtypes = {DType::f32, DType::f64};
    caps_.reductions = {"sum", "prod", "mean", "min", "max"};
    caps_.semantics = semantics;
    caps_.nan_profile = NanProfile::ordered;
    caps_.factoring = false;
    caps_.vjp = true;
    caps_.tie_rule = TieRule::equal_share;
    caps_.version = "einfuzz test: planted VJP bug";
  }
  std::string_view name() const override { return name_; }
  const Capabilities& capabilities() const override { return caps_; }

  // Defined after the class: clang 14 left the member templates this calls (through visit_dtype's
  // generic lambda) uninstantiated when the body was inline here (-Wundefined-internal, a link error).
  BackendResult run(const Case& c) override;

 private:
  template <class T>
  std::vector<Tensor> einsum_vjp(const CheckedEinsum& e, const std::vector<Tensor>& inputs, const Tensor& g) const {
    const Shape lengths = axis_lengths(e);
    std::vector<int> all(e.axes.size());
    for (std::size_t a = 0; a < all.size(); ++a) all[a] = static_cast<int>(a);
    const auto out_strides = row_major(e.output_shape);
    std::vector<std::vector<std::int64_t>> strides;
    for (const CheckedOperand& op : e.operands) strides.push_back(row_major(op.shape));
    // The physical index of operand m at global coordinates; `diagonal_off` reads a repeated label's
    // later dimensions as 0 when writing the gradient.
    auto index = [&](std::size_t m, const std::vector<std::int64_t>& coords, bool writing) {
      const CheckedOperand& op = e.operands[m];
      std::int64_t at = 0;
      for (std::size_t d = 0; d < op.shape.size(); ++d) {
        if (op.shape[d] == 1) continue;
        bool repeated = false;
        for (std::size_t earlier = 0; earlier < d; ++earlier) repeated |= op.axes[earlier] == op.axes[d];
        if (writing && repeated && bug_ == PlantedVjpBug::diagonal_off) continue;
        at += coords[static_cast<std::size_t>(op.axes[d])] * strides[m][d];
      }
      return static_cast<std::size_t>(at);
    };
    const auto gv = g.values<T>();
    std::vector<Tensor> grads;
    for (std::size_t m = 0; m < inputs.size(); ++m) {
      Tensor grad(dtype_of_v<T>, inputs[m].shape());
      auto acc = grad.values<T>();
      std::vector<std::int64_t> coords(e.axes.size(), 0);
      for_each_coord(all, lengths, coords, [&] {
        if (bug_ == PlantedVjpBug::broadcast_ignored) {
          // The defect: a size-1 dimension broadcast to L > 1 receives only coordinate 0's terms.
          const CheckedOperand& op = e.operands[m];
          for (std::size_t d = 0; d < op.shape.size(); ++d) {
            const auto axis = static_cast<std::size_t>(op.axes[d]);
            if (op.shape[d] == 1 && lengths[axis] > 1 && coords[axis] != 0) return;
          }
        }
        std::int64_t o = 0;
        for (std::size_t d = 0; d < e.output.size(); ++d) o += coords[static_cast<std::size_t>(e.output[d])] * out_strides[d];
        T p = T(1);
        for (std::size_t q = 0; q < inputs.size(); ++q) {
          if (q != m) p = scalar_mul(p, inputs[q].values<T>()[index(q, coords, false)]);
        }
        T& a = acc[index(m, coords, true)];
        a = scalar_add(a, scalar_mul(gv[static_cast<std::size_t>(o)], p));
      });
      grads.push_back(std::move(grad));
    }
    return grads;
  }

  template <class T>
  Tensor reduce_vjp(const CheckedReduce& r, const Tensor& input, const Tensor& g) const {
    // Each input element's output index o and position j in its fibre (row-major over `reduced`).
    const auto n = static_cast<std::size_t>(r.fibre_size);
    const auto size = static_cast<std::size_t>(input.size());
    std::vector<std::size_t> out_of(size), pos_of(size);
    std::vector<int> kept;
    for (const auto& group : r.output_groups)
      for (int a : group) kept.push_back(a);
    std::vector<std::int64_t> coord(r.axes.size(), 0);
    for (std::size_t flat = 0; flat < size; ++flat) {
      std::size_t rest = flat;
      for (std::size_t d = r.input_groups.size(); d-- > 0;) {
        for (std::size_t k = r.input_groups[d].size(); k-- > 0;) {
          const auto a = static_cast<std::size_t>(r.input_groups[d][k]);
          const auto len = static_cast<std::size_t>(r.axes[a].length);
          coord[a] = static_cast<std::int64_t>(rest % len);
          rest /= len;
        }
      }
      std::size_t o = 0, j = 0;
      for (int a : kept) o = o * static_cast<std::size_t>(r.axes[static_cast<std::size_t>(a)].length) + static_cast<std::size_t>(coord[static_cast<std::size_t>(a)]);
      for (int a : r.reduced) j = j * static_cast<std::size_t>(r.axes[static_cast<std::size_t>(a)].length) + static_cast<std::size_t>(coord[static_cast<std::size_t>(a)]);
      out_of[flat] = o;
      pos_of[flat] = j;
    }
    std::vector<std::vector<T>> fibres(static_cast<std::size_t>(r.output_size), std::vector<T>(n));
    const auto x = input.values<T>();
    for (std::size_t flat = 0; flat < size; ++flat) fibres[out_of[flat]][pos_of[flat]] = x[flat];
    std::vector<T> forward;
    if (r.kind == Reduction::min || r.kind == Reduction::max) {
      const Tensor f = reference::evaluate_reduce(r, input);
      forward.assign(f.values<T>().begin(), f.values<T>().end());
    }
    const auto tie = [](T a, T b) { return a == b || (std::isnan(a) && std::isnan(b)); };
    const auto gv = g.values<T>();
    Tensor grad(dtype_of_v<T>, input.shape());
    auto out = grad.values<T>();
    for (std::size_t flat = 0; flat < size; ++flat) {
      const std::size_t o = out_of[flat], j = pos_of[flat];
      const std::vector<T>& fibre = fibres[o];
      const T go = gv[o];
      switch (r.kind) {
        case Reduction::sum: out[flat] = go; break;
        case Reduction::mean: out[flat] = bug_ == PlantedVjpBug::mean_unscaled ? go : go / static_cast<T>(n); break;
        case Reduction::prod: {
          T p = T(1);
          if (bug_ == PlantedVjpBug::prod_division) {
            for (const T v : fibre) p = scalar_mul(p, v);
            out[flat] = scalar_mul(p, go) / fibre[j];
          } else {
            for (std::size_t i = 0; i < n; ++i)
              if (i != j) p = scalar_mul(p, fibre[i]);
            out[flat] = scalar_mul(p, go);
          }
          break;
        }
        case Reduction::min:
        case Reduction::max: {
          std::size_t ties = 0, first = n;
          for (std::size_t i = 0; i < n; ++i) {
            if (!tie(fibre[i], forward[o])) continue;
            ++ties;
            if (first == n) first = i;
          }
          if (!tie(fibre[j], forward[o])) {
            out[flat] = T(0);
          } else if (bug_ == PlantedVjpBug::max_first_tie) {
            out[flat] = j == first ? go : T(0);
          } else {
            out[flat] = go / static_cast<T>(ties);
          }
          break;
        }
        default: out[flat] = T(0); break;  // any/all: the checker rejected them already
      }
    }
    return grad;
  }

  PlantedVjpBug bug_;
  std::string name_;
  Capabilities caps_;
};

BackendResult PlantedVjpBackend::run(const Case& c) {
  if (!c.is_vjp()) return Unsupported{"planted VJP bugs answer VJP cases only"};
  auto checked = check_case(c, Limits{});
  if (!checked) return Rejected{std::string(code_name(checked.error().code)), checked.error().message};
  return visit_dtype(c.dtype, [&](auto tag) -> BackendResult {
    using T = decltype(tag);
    if constexpr (!std::is_floating_point_v<T>) {
      return Unsupported{"VJPs are f32/f64 only"};
    } else if (const auto* e = std::get_if<CheckedEinsum>(&*checked)) {
      return Gradients{einsum_vjp<T>(*e, c.inputs, *c.cotangent)};
    } else {
      return Gradients{{reduce_vjp<T>(std::get<CheckedReduce>(*checked), c.inputs[0], *c.cotangent)}};
    }
  });
}

}  // namespace

std::string_view planted_vjp_bug_name(PlantedVjpBug bug) {
  switch (bug) {
    case PlantedVjpBug::none: return "none";
    case PlantedVjpBug::mean_unscaled: return "mean-unscaled";
    case PlantedVjpBug::max_first_tie: return "max-first-tie";
    case PlantedVjpBug::broadcast_ignored: return "broadcast-ignored";
    case PlantedVjpBug::diagonal_off: return "diagonal-off";
    case PlantedVjpBug::prod_division: return "prod-division";
  }
  return "?";
}

std::unique_ptr<Backend> make_planted_vjp_backend(PlantedVjpBug bug, Semantics semantics) {
  return std::make_unique<PlantedVjpBackend>(bug, semantics);
}

}  // namespace einfuzz::test
