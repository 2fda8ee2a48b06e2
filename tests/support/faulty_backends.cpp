// Faulty any-order backends: a plain sequential einsum (or reduce) with one deliberate defect each.
#include "support/faulty_backends.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/core/coords.hpp"
#include "support/einsum_strides.hpp"

namespace einfuzz::test {
namespace {

enum class Fault { narrow_accumulator, dropped_term, passthrough_ulp, nan_to_zero, factored_empty };

/// x rounded to `bits` significant bits, to nearest even (the default rounding mode).
template <class T>
T round_to_bits(T x, int bits) {
  if (!std::isfinite(x) || x == 0) return x;
  int e = 0;
  const T m = std::frexp(x, &e);
  return std::ldexp(std::nearbyint(std::ldexp(m, bits)), e - bits);
}

class FaultyBackend final : public Backend {
 public:
  FaultyBackend(Fault fault, int bits, std::string name) : fault_(fault), bits_(bits), name_(std::move(name)) {
    caps_.ops = {Op::einsum};
    caps_.dtypes = {DType::f32, DType::f64};
    caps_.semantics = Semantics::any_order;
    caps_.factoring = true;
    caps_.version = "einfuzz test fault";
  }
  std::string_view name() const override { return name_; }
  const Capabilities& capabilities() const override { return caps_; }

  BackendResult run(const Case& c) override {
    std::vector<Shape> shapes;
    for (const Tensor& t : c.inputs) shapes.push_back(t.shape());
    auto checked = check_einsum(c.pattern, shapes);
    if (!checked) return Rejected{std::string(code_name(checked.error().code)), checked.error().message};
    if (c.dtype == DType::f32) return evaluate<float>(*checked, c.inputs);
    if (c.dtype == DType::f64) return evaluate<double>(*checked, c.inputs);
    return Unsupported{"floats only"};
  }

 private:
  template <class T>
  Tensor evaluate(const CheckedEinsum& e, std::span<const Tensor> inputs) const {
    const Shape lengths = axis_lengths(e);
    const auto stride = operand_strides(e);
    auto read = [&](std::size_t m, const std::vector<std::int64_t>& coords) {
      return inputs[m].values<T>()[static_cast<std::size_t>(storage_offset(stride[m], coords))];
    };
    const bool passthrough = e.operands.size() == 1 && e.contraction_size == 1;
    Tensor out(dtype_of_v<T>, e.output_shape);
    auto result = out.values<T>();
    std::vector<std::int64_t> coords(e.axes.size(), 0);
    std::size_t o = 0;
    for_each_coord(e.output, lengths, coords, [&] {
      T acc = 0;
      if (fault_ == Fault::factored_empty && e.contraction_size == 0) {
        acc = 1;
        for (std::size_t m = 0; m < e.operands.size(); ++m) {
          std::vector<int> own;  // operand m's contracted labels
          for (const int a : e.operands[m].axes) {
            const bool is_contracted = std::find(e.contracted.begin(), e.contracted.end(), a) != e.contracted.end();
            if (is_contracted && std::find(own.begin(), own.end(), a) == own.end()) own.push_back(a);
          }
          T partial = 0;
          for_each_coord(own, lengths, coords, [&] { partial += read(m, coords); });
          acc *= partial;
        }
      } else {
        std::int64_t term = 0;
        for_each_coord(e.contracted, lengths, coords, [&] {
          if (fault_ == Fault::dropped_term && ++term == e.contraction_size) return;
          T p = 1;
          for (std::size_t m = 0; m < e.operands.size(); ++m) p *= read(m, coords);
          acc += p;
          if (fault_ == Fault::narrow_accumulator) acc = round_to_bits(acc, bits_);
        });
      }
      if (fault_ == Fault::passthrough_ulp && passthrough) {
        acc = std::nextafter(acc, std::numeric_limits<T>::infinity());
      }
      if (fault_ == Fault::nan_to_zero && std::isnan(acc)) acc = 0;
      result[o++] = acc;
    });
    return out;
  }

  Fault fault_;
  int bits_;
  std::string name_;
  Capabilities caps_;
};

/// Calls `fold(fibre)` for each output element of a checked reduce (row-major), with the fibre's values
/// in the reduced axes' row-major order, and stores what it returns.
template <class T, class Fold>
Tensor reduce_fibres(const CheckedReduce& r, const Tensor& input, Fold&& fold) {
  const std::vector<std::int64_t> stride = elementary_strides(r);
  Shape lengths;
  for (const ElementaryAxis& a : r.axes) lengths.push_back(a.length);
  std::vector<int> kept;
  for (const std::vector<int>& group : r.output_groups) kept.insert(kept.end(), group.begin(), group.end());
  const auto x = input.values<T>();
  Tensor out(dtype_of_v<T>, r.output_shape);
  auto result = out.values<T>();
  std::vector<std::int64_t> coords(r.axes.size(), 0);
  std::vector<T> fibre;
  std::size_t o = 0;
  for_each_coord(kept, lengths, coords, [&] {
    fibre.clear();
    for_each_coord(r.reduced, lengths, coords, [&] {
      fibre.push_back(x[static_cast<std::size_t>(storage_offset(stride, coords))]);
    });
    result[o++] = fold(std::span<const T>(fibre));
  });
  return out;
}

/// (g): sequential sum, mean and prod with one deliberate defect.
class FaultyReduceBackend final : public Backend {
 public:
  explicit FaultyReduceBackend(ReduceFault fault) : fault_(fault) {
    caps_.ops = {Op::reduce};
    caps_.dtypes = {DType::f32, DType::f64};
    caps_.reductions = {"sum", "mean", "prod"};
    caps_.semantics = Semantics::any_order;
    caps_.version = "einfuzz test fault";
  }
  std::string_view name() const override {
    switch (fault_) {
      case ReduceFault::dropped_term: return "reduce-dropped-term";
      case ReduceFault::narrow_accumulator: return "reduce-narrow-accumulator";
      case ReduceFault::wrong_divisor: return "reduce-wrong-divisor";
    }
    return "?";
  }
  const Capabilities& capabilities() const override { return caps_; }

  BackendResult run(const Case& c) override {
    if (c.inputs.size() != 1) return Rejected{"invalidArgument", "a reduce case has exactly one input"};
    auto checked = check_reduce(c.pattern, c.reduction.value_or(""), c.inputs[0].shape(), c.axis_lengths, c.dtype);
    if (!checked) return Rejected{std::string(code_name(checked.error().code)), checked.error().message};
    const Reduction kind = checked->kind;
    if (kind != Reduction::sum && kind != Reduction::mean && kind != Reduction::prod) return Unsupported{"sum/mean/prod"};
    if (c.dtype == DType::f32) return reduce_fibres<float>(*checked, c.inputs[0], [&](auto f) { return fold(kind, f); });
    if (c.dtype == DType::f64) return reduce_fibres<double>(*checked, c.inputs[0], [&](auto f) { return fold(kind, f); });
    return Unsupported{"floats only"};
  }

 private:
  template <class T>
  T narrow(T x) const {
    if (fault_ != ReduceFault::narrow_accumulator) return x;
    if constexpr (std::is_same_v<T, double>) {
      return static_cast<double>(static_cast<float>(x));
    } else {
      return round_to_bits(x, 11);
    }
  }

  template <class T>
  T fold(Reduction kind, std::span<const T> fibre) const {
    std::size_t n = fibre.size();
    if (fault_ == ReduceFault::dropped_term && n > 0) --n;
    T acc = kind == Reduction::prod ? T(1) : T(0);
    for (std::size_t i = 0; i < n; ++i) acc = narrow(kind == Reduction::prod ? acc * fibre[i] : acc + fibre[i]);
    if (kind != Reduction::mean) return acc;
    const std::size_t divisor = fibre.size() + (fault_ == ReduceFault::wrong_divisor ? 1 : 0);
    return acc / static_cast<T>(divisor);
  }

  ReduceFault fault_;
  Capabilities caps_;
};

/// (f): a correct `ignore`-profile min/max (fmin/fmax folds) that declares `propagate`.
class NanIgnoringExtremeBackend final : public Backend {
 public:
  NanIgnoringExtremeBackend() {
    caps_.ops = {Op::reduce};
    caps_.dtypes = {DType::f32, DType::f64};
    caps_.reductions = {"min", "max"};
    caps_.semantics = Semantics::any_order;
    caps_.nan_profile = NanProfile::propagate;  // the defect: its folds behave as `ignore`
    caps_.version = "einfuzz test fault";
  }
  std::string_view name() const override { return "nan-ignoring-extreme"; }
  const Capabilities& capabilities() const override { return caps_; }

  BackendResult run(const Case& c) override {
    if (c.inputs.size() != 1) return Rejected{"invalidArgument", "a reduce case has exactly one input"};
    auto checked = check_reduce(c.pattern, c.reduction.value_or(""), c.inputs[0].shape(), c.axis_lengths, c.dtype);
    if (!checked) return Rejected{std::string(code_name(checked.error().code)), checked.error().message};
    if (checked->kind != Reduction::min && checked->kind != Reduction::max) return Unsupported{"min/max only"};
    if (c.dtype == DType::f32) return evaluate<float>(*checked, c.inputs[0]);
    if (c.dtype == DType::f64) return evaluate<double>(*checked, c.inputs[0]);
    return Unsupported{"floats only"};
  }

 private:
  template <class T>
  static Tensor evaluate(const CheckedReduce& r, const Tensor& input) {
    return reduce_fibres<T>(r, input, [&](std::span<const T> fibre) {
      T acc = std::numeric_limits<T>::quiet_NaN();  // fmin(NaN, v) = v: NaN survives only an all-NaN fibre
      for (const T v : fibre) acc = r.kind == Reduction::max ? std::fmax(acc, v) : std::fmin(acc, v);
      return acc;
    });
  }

  Capabilities caps_;
};

}  // namespace

std::unique_ptr<Backend> make_narrow_accumulator_backend(int mantissa_bits) {
  return std::make_unique<FaultyBackend>(Fault::narrow_accumulator, mantissa_bits,
                                         "narrow-accumulator-" + std::to_string(mantissa_bits));
}
std::unique_ptr<Backend> make_dropped_term_backend() {
  return std::make_unique<FaultyBackend>(Fault::dropped_term, 0, "dropped-term");
}
std::unique_ptr<Backend> make_passthrough_ulp_backend() {
  return std::make_unique<FaultyBackend>(Fault::passthrough_ulp, 0, "passthrough-ulp");
}
std::unique_ptr<Backend> make_nan_to_zero_backend() {
  return std::make_unique<FaultyBackend>(Fault::nan_to_zero, 0, "nan-to-zero");
}
std::unique_ptr<Backend> make_factored_empty_backend() {
  return std::make_unique<FaultyBackend>(Fault::factored_empty, 0, "factored-empty");
}
std::unique_ptr<Backend> make_nan_ignoring_extreme_backend() { return std::make_unique<NanIgnoringExtremeBackend>(); }
std::unique_ptr<Backend> make_faulty_reduce_backend(ReduceFault fault) {
  return std::make_unique<FaultyReduceBackend>(fault);
}

}  // namespace einfuzz::test
