// The planted-bug executor: SEMANTICS §6 literally (row-major output, row-major contraction with
// C[0] outermost, S = 0 + P_0 + P_1 + …, P = 1 · x_0 · x_1 · …), plus one deliberate defect.
#include "planted_bugs.hpp"

#include <span>
#include <string>
#include <vector>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/coords.hpp"
#include "einfuzz/core/scalar.hpp"
#include "support/einsum_strides.hpp"

namespace einfuzz::test {
namespace {

class PlantedBugBackend final : public Backend {
 public:
  explicit PlantedBugBackend(PlantedBug bug) : bug_(bug), name_("planted-" + std::string(planted_bug_name(bug))) {
    caps_.ops = {Op::einsum};
    caps_.dtypes = {DType::f32, DType::f64, DType::i32, DType::i64};
    caps_.semantics = Semantics::ordered;
    caps_.nan_profile = NanProfile::ordered;
    caps_.factoring = false;
    caps_.version = "einfuzz test: planted bug";
  }
  std::string_view name() const override { return name_; }
  const Capabilities& capabilities() const override { return caps_; }

  // Defined after the class: clang 14 left the member templates this calls (through visit_dtype's
  // generic lambda) uninstantiated when the body was inline here (-Wundefined-internal, a link error).
  BackendResult run(const Case& c) override;

 private:
  template <class T>
  Tensor evaluate(const CheckedEinsum& e, std::span<const Tensor> inputs) const {
    const Shape lengths = axis_lengths(e);
    std::vector<std::vector<std::int64_t>> stride = operand_strides(e);
    if (bug_ == PlantedBug::size1_stride) {
      for (std::size_t m = 0; m < e.operands.size(); ++m) {
        const CheckedOperand& op = e.operands[m];
        for (std::size_t d = 0; d < op.shape.size(); ++d) {
          const auto axis = static_cast<std::size_t>(op.axes[d]);
          if (op.shape[d] == 1 && lengths[axis] > 1) stride[m][axis] += 1;  // (a) broadcast gets stride 1, not 0
        }
      }
    }
    auto read = [&](std::size_t m, const std::vector<std::int64_t>& coords) {
      const auto values = inputs[m].values<T>();
      std::int64_t at = 0;
      for (std::size_t a = 0; a < coords.size(); ++a) at += coords[a] * stride[m][a];
      if (values.empty()) return T(0);  // unreachable: an empty operand empties the loops
      return values[static_cast<std::size_t>(at) % values.size()];  // wrap: stay in bounds
    };
    std::vector<int> contracted = e.contracted;
    if (bug_ == PlantedBug::innermost_first) contracted.assign(e.contracted.rbegin(), e.contracted.rend());  // (c)
    const bool drop_last = bug_ == PlantedBug::dropped_term && e.contraction_size % 8 != 0;                  // (d)

    Tensor out(dtype_of_v<T>, e.output_shape);
    auto result = out.values<T>();
    std::vector<std::int64_t> coords(e.axes.size(), 0);
    std::size_t o = 0;
    for_each_coord(e.output, lengths, coords, [&] {
      T acc = T(0);
      std::int64_t term = 0;
      for_each_coord(contracted, lengths, coords, [&] {
        ++term;
        if (drop_last && term == e.contraction_size) return;
        T p = T(1);
        for (std::size_t m = 0; m < e.operands.size(); ++m) p = scalar_mul(p, read(m, coords));
        acc = bug_ == PlantedBug::seeded_accumulator && term == 1 ? p : scalar_add(acc, p);  // (b)
      });
      result[o++] = acc;
    });
    return out;
  }

  PlantedBug bug_;
  std::string name_;
  Capabilities caps_;
};

BackendResult PlantedBugBackend::run(const Case& c) {
  if (c.op != Op::einsum) return Unsupported{"planted bugs evaluate einsums only"};
  std::vector<Shape> shapes;
  for (const Tensor& t : c.inputs) {
    if (t.dtype() != c.dtype) return Rejected{"invalidArgument", "an input's dtype differs from the case's"};
    shapes.push_back(t.shape());
  }
  // Only core: the same source also builds the planted plugins (tests/harness/planted_plugin.cpp).
  auto checked = check_einsum(c.pattern, shapes);
  if (!checked) return Rejected{std::string(code_name(checked.error().code)), checked.error().message};
  const CheckedEinsum& e = *checked;
  return visit_dtype(c.dtype, [&](auto tag) -> BackendResult {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Bool8>) {
      return Unsupported{"bool"};
    } else {
      return evaluate<T>(e, c.inputs);
    }
  });
}

}  // namespace

std::string_view planted_bug_name(PlantedBug bug) {
  switch (bug) {
    case PlantedBug::none: return "none";
    case PlantedBug::size1_stride: return "size1-stride";
    case PlantedBug::seeded_accumulator: return "seeded-accumulator";
    case PlantedBug::innermost_first: return "innermost-first";
    case PlantedBug::dropped_term: return "dropped-term";
  }
  return "?";
}

std::unique_ptr<Backend> make_planted_bug_backend(PlantedBug bug) { return std::make_unique<PlantedBugBackend>(bug); }

}  // namespace einfuzz::test
