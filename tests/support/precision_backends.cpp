// The planted precision bugs (ORACLE §8): sequential einsums whose accumulator or input rounding is
// not the one they declare.
#include "support/precision_backends.hpp"

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/coords.hpp"
#include "einfuzz/core/half.hpp"
#include "support/einsum_strides.hpp"

namespace einfuzz::test {
namespace {

/// x rounded to nearest even in TF32 (11 significant bits, binary32's exponent range).
float tf32(float x) {
  if (!std::isfinite(x) || x == 0) return x;
  const int e = std::max(std::ilogb(x), -126);
  const double q = std::ldexp(1.0, e - 10);
  const double r = std::nearbyint(static_cast<double>(x) / q) * q;
  if (std::fabs(r) > std::ldexp(2.0 - std::ldexp(1.0, -10), 127)) return std::copysign(INFINITY, x);
  return static_cast<float>(r);
}

class PrecisionBugBackend final : public Backend {
 public:
  explicit PrecisionBugBackend(PrecisionBug bug) : bug_(bug) {
    caps_.ops = {Op::einsum};
    caps_.semantics = Semantics::any_order;
    caps_.factoring = true;
    caps_.version = "einfuzz test: planted precision bug";
    if (bug == PrecisionBug::undeclared_tf32) {
      caps_.dtypes = {DType::f32};
    } else {
      caps_.dtypes = {DType::f16, DType::bf16};
      caps_.accumulate = {{DType::f16, DType::f32}, {DType::bf16, DType::f32}};
    }
  }
  std::string_view name() const override {
    switch (bug_) {
      case PrecisionBug::half_sums_declared_f32: return "planted-half-sums";
      case PrecisionBug::undeclared_tf32: return "planted-tf32";
      case PrecisionBug::half_chunk_accumulator: return "planted-half-chunks";
    }
    return "?";
  }
  const Capabilities& capabilities() const override { return caps_; }

  BackendResult run(const Case& c) override {
    std::vector<Shape> shapes;
    for (const Tensor& t : c.inputs) shapes.push_back(t.shape());
    auto checked = check_einsum(c.pattern, shapes);
    if (!checked) return Rejected{std::string(code_name(checked.error().code)), checked.error().message};
    for (const Tensor& t : c.inputs) {
      if (t.dtype() != c.dtype) return Rejected{"invalidArgument", "mixed dtypes"};
    }
    if (c.dtype == DType::f16 && bug_ != PrecisionBug::undeclared_tf32) return evaluate<Float16>(*checked, c.inputs);
    if (c.dtype == DType::bf16 && bug_ != PrecisionBug::undeclared_tf32) return evaluate<BFloat16>(*checked, c.inputs);
    if (c.dtype == DType::f32 && bug_ == PrecisionBug::undeclared_tf32) return evaluate<float>(*checked, c.inputs);
    return Unsupported{"outside the planted bug's dtypes"};
  }

 private:
  template <class T>
  Tensor evaluate(const CheckedEinsum& e, std::span<const Tensor> inputs) const {
    const Shape lengths = axis_lengths(e);
    const auto stride = operand_strides(e);
    const auto read = [&](std::size_t m, const std::vector<std::int64_t>& coords) {
      return inputs[m].values<T>()[static_cast<std::size_t>(storage_offset(stride[m], coords))];
    };
    Tensor out(dtype_of_v<T>, e.output_shape);
    auto result = out.values<T>();
    std::vector<std::int64_t> coords(e.axes.size(), 0);
    std::size_t o = 0;
    for_each_coord(e.output, lengths, coords, [&] {
      if constexpr (std::is_same_v<T, float>) {
        // (b): every input rounded to TF32, then an honest f32 fold.
        float acc = 0;
        for_each_coord(e.contracted, lengths, coords, [&] {
          float p = 1;
          for (std::size_t m = 0; m < e.operands.size(); ++m) p *= tf32(read(m, coords));
          acc += p;
        });
        result[o++] = acc;
      } else if (bug_ == PrecisionBug::half_sums_declared_f32) {
        // (a): the storage type throughout (each operation rounded to T).
        T acc{};
        for_each_coord(e.contracted, lengths, coords, [&] {
          T p(1);
          for (std::size_t m = 0; m < e.operands.size(); ++m) p = p * read(m, coords);
          acc = acc + p;
        });
        result[o++] = acc;
      } else {
        // (c): chunks of 64 terms in f32, each chunk result added into a T accumulator.
        T acc{};
        float chunk = 0;
        int in_chunk = 0;
        for_each_coord(e.contracted, lengths, coords, [&] {
          float p = 1;
          for (std::size_t m = 0; m < e.operands.size(); ++m) p *= static_cast<float>(read(m, coords));
          chunk += p;
          if (++in_chunk == 64) {
            acc = acc + T(chunk);
            chunk = 0;
            in_chunk = 0;
          }
        });
        if (in_chunk > 0) acc = acc + T(chunk);
        result[o++] = acc;
      }
    });
    return out;
  }

  PrecisionBug bug_;
  Capabilities caps_;
};

}  // namespace

std::unique_ptr<Backend> make_precision_bug_backend(PrecisionBug bug) { return std::make_unique<PrecisionBugBackend>(bug); }

PrecisionProfile real_profile(PrecisionBug bug, DType dtype) {
  if (bug == PrecisionBug::undeclared_tf32) return {DType::f32, InputRounding::tf32};
  return storage_profile(dtype);
}

}  // namespace einfuzz::test
