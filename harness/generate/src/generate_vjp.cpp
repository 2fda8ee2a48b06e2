// VJP cases for the generator (CASES.md, the vjp case): a differentiable forward case (f32/f64 einsum,
// or a sum/prod/mean/min/max reduce) with a cotangent of its output's shape drawn from the same value
// mixtures as the inputs, and the deliberately invalid VJP cases the checker must reject.
#include <algorithm>

#include "einfuzz/core/check_case.hpp"
#include "einfuzz/harness/generate.hpp"

namespace einfuzz {
namespace {

constexpr Reduction kDifferentiable[] = {Reduction::sum, Reduction::prod, Reduction::mean, Reduction::min,
                                         Reduction::max};

/// f32 and f64 among `dtypes` (both when there is neither): VJPs are defined for them only (f16/bf16
/// VJPs are out of the project's scope and `notDifferentiable`).
std::vector<DType> float_dtypes(const std::vector<DType>& dtypes) {
  std::vector<DType> out;
  for (DType d : dtypes)
    if (d == DType::f32 || d == DType::f64) out.push_back(d);
  if (out.empty()) out = {DType::f32, DType::f64};
  return out;
}

/// A shape near `shape` but different from it: one length changed, one axis added or one removed.
Shape other_shape(const Shape& shape, ChoiceSource& s) {
  Shape out = shape;
  const std::uint64_t way = s.choose(3);
  if (way == 0 || out.empty()) {
    // The length before the position: the order gcc gave the former insert(pos(), length()) call.
    const std::int64_t length = 1 + s.between(0, 2);
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(s.choose(out.size() + 1)), length);
  } else if (way == 1) {
    out.erase(out.begin() + static_cast<std::ptrdiff_t>(s.choose(out.size())));
  } else {
    std::int64_t& n = out[s.choose(out.size())];
    n = n == 0 ? 1 + s.between(0, 2) : n - 1;
  }
  return out;
}

}  // namespace

std::optional<Shape> forward_output_shape(const Case& forward) {
  Case plain = forward;
  plain.cotangent.reset();
  auto checked = check_case(plain, Limits{});
  if (!checked) return std::nullopt;
  return std::visit([](const auto& x) { return x.output_shape; }, *checked);
}

Case make_vjp(Case forward, ChoiceSource& s) {
  // A forward case the checker rejects keeps a rank-0 cotangent: the forward diagnostic comes first.
  const Shape shape = forward_output_shape(forward).value_or(Shape{});
  forward.cotangent = generate_values(s, forward.dtype, shape);
  return forward;
}

Case generate_vjp_case(ChoiceSource& s, const GenOptions& options) {
  const bool reduce = s.chance(static_cast<std::uint64_t>(std::max(0, options.reduce_percent)), 100);
  Case c;
  if (reduce) {
    ReduceGenOptions r = options.reduce;
    r.kind = kDifferentiable[s.choose(std::size(kDifferentiable))];
    const std::vector<DType> allowed = float_dtypes(options.reduce.dtypes);
    r.dtype = s.chance(1, 2) ? DType::f32 : DType::f64;
    if (std::find(allowed.begin(), allowed.end(), *r.dtype) == allowed.end()) r.dtype = allowed.front();
    c = generate_reduce(s, r);
  } else {
    GenOptions e = options;
    e.dtypes = float_dtypes(options.dtypes);
    c = generate_einsum(s, e);
  }
  c = make_vjp(std::move(c), s);
  if (s.chance(static_cast<std::uint64_t>(std::max(0, options.invalid_percent)), 100)) {
    c = make_invalid_vjp(c, s, generated_dtypes(options));
  }
  return c;
}

Case make_invalid_vjp(const Case& valid, ChoiceSource& s, std::span<const DType> allowed) {
  const auto listed = [&](DType d) { return allowed.empty() || std::find(allowed.begin(), allowed.end(), d) != allowed.end(); };
  switch (s.choose(4)) {
    case 0: {  // the cotangent of another shape: cotangentShapeMismatch
      Case c = valid;
      const Shape shape = other_shape(valid.cotangent ? valid.cotangent->shape() : Shape{}, s);
      c.cotangent = generate_values(s, c.dtype, shape);
      return c;
    }
    case 1: {  // an integer dtype: notDifferentiable (when one is allowed; else the forward case invalid)
      const bool i32 = listed(DType::i32), i64 = listed(DType::i64);
      if (!i32 && !i64) break;
      Case c = valid;
      c.dtype = i32 && i64 ? (s.chance(1, 2) ? DType::i32 : DType::i64) : i32 ? DType::i32 : DType::i64;
      for (Tensor& t : c.inputs) t = generate_values(s, c.dtype, t.shape());
      c.cotangent = generate_values(s, c.dtype, valid.cotangent ? valid.cotangent->shape() : Shape{});
      return c;
    }
    case 2: {  // a logical reduce (bool): notDifferentiable, when bool is allowed
      if (!listed(DType::boolean)) break;
      ReduceGenOptions r;
      r.kind = s.chance(1, 2) ? Reduction::any : Reduction::all;
      return make_vjp(generate_reduce(s, r), s);
    }
    default: break;
  }
  // The forward case invalid, the cotangent kept.
  Case c = make_invalid(valid, s, allowed);
  if (!c.cotangent) c.cotangent = valid.cotangent;
  return c;
}

}  // namespace einfuzz
