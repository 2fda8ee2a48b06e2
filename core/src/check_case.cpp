// check_case: one case's inputs, dtype and limits checked, then its einsum or reduce pattern.
#include "einfuzz/core/check_case.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "check_memo.hpp"
#include "check_uncached.hpp"

namespace einfuzz {

namespace {

/// A VJP case's own rules, after its forward case checked (ORACLE §7, CASES.md): a differentiable
/// kind on a floating dtype, and a cotangent of the forward output's dtype and shape.
std::optional<Diagnostic> check_vjp(const Case& c, const CheckedCase& forward, const Limits& limits) {
  if (const auto* r = std::get_if<CheckedReduce>(&forward); r && !reduction_info(r->kind).differentiable) {
    return make_diagnostic(Code::notDifferentiable, "reduce " + std::string(reduction_name(r->kind)) +
                                                        " has no vector-Jacobian product (ORACLE §7: any/all are logical)");
  }
  if (!is_float(c.dtype)) {
    return make_diagnostic(Code::notDifferentiable, "a VJP case needs a floating dtype; this one is " +
                                                        std::string(dtype_name(c.dtype)));
  }
  if (is_half(c.dtype)) {
    return make_diagnostic(Code::notDifferentiable, "einfuzz judges VJPs in f32 and f64; " +
                                                        std::string(dtype_name(c.dtype)) + " VJPs are not implemented");
  }
  const Tensor& g = *c.cotangent;
  if (auto size = check_tensor_size(g.shape(), limits, "the cotangent"); !size) return std::move(size).error();
  if (g.dtype() != c.dtype) {
    return make_diagnostic(Code::invalidArgument, "the cotangent has dtype " + std::string(dtype_name(g.dtype())) +
                                                      " but the case says " + std::string(dtype_name(c.dtype)));
  }
  const Shape& out = std::visit([](const auto& checked) -> const Shape& { return checked.output_shape; }, forward);
  if (g.shape() != out) {
    return make_diagnostic(Code::cotangentShapeMismatch, "the cotangent has shape " + format_shape(g.shape()) +
                                                             " but the forward output has shape " + format_shape(out));
  }
  // A prod's VJP: the reference holds every element's exact leave-one-out product, up to fibre − 1
  // factors of up to 53 bits each, and the prefix and suffix products it forms them from, so its
  // memory grows as four times the input's size times the fibre (8000 f64 factors in [1, 2): 1.8 GB,
  // 32000 would not fit in 24 GB). A harness limit, as if those factors were materialised elements.
  if (const auto* r = std::get_if<CheckedReduce>(&forward); r && r->kind == Reduction::prod) {
    const std::int64_t in = c.inputs.empty() ? 0 : c.inputs[0].size();
    std::int64_t held = 0;
    if (__builtin_mul_overflow(in, r->fibre_size, &held) || __builtin_mul_overflow(held, 4, &held) ||
        held > limits.max_materialised_elements) {
      return make_diagnostic(Code::sizeLimitExceeded,
                             "the VJP of a prod: the reference holds the exact leave-one-out product of each of the " +
                                 std::to_string(in) + " input elements over its fibre of " +
                                 std::to_string(r->fibre_size) + " factors (4 x input x fibre), over the limit "
                                 "max-materialised-elements = " + std::to_string(limits.max_materialised_elements));
    }
  }
  return std::nullopt;
}

Result<CheckedCase> check_forward(const Case& c, const Limits& limits) {
  for (std::size_t k = 0; k < c.inputs.size(); ++k) {
    auto size = check_tensor_size(c.inputs[k].shape(), limits, "input " + std::to_string(k));
    if (!size) return std::move(size).error();
    if (c.inputs[k].dtype() != c.dtype) {
      return make_diagnostic(Code::invalidArgument, "input " + std::to_string(k) + " has dtype " +
                                                        std::string(dtype_name(c.inputs[k].dtype())) +
                                                        " but the case says " + std::string(dtype_name(c.dtype)));
    }
  }
  if (c.op == Op::reduce) {
    if (c.inputs.size() != 1) {
      return make_diagnostic(Code::invalidArgument,
                             "a reduce case has exactly one input; this one has " + std::to_string(c.inputs.size()));
    }
    auto checked = detail::check_reduce_uncached(c.pattern, c.reduction.value_or(""), c.inputs[0].shape(),
                                                 c.axis_lengths, c.dtype, limits);
    if (!checked) return std::move(checked).error();
    return CheckedCase(std::move(*checked));
  }
  // Reused per thread: the copies would cost an allocation per operand each time.
  thread_local std::vector<Shape> shapes;
  shapes.resize(c.inputs.size());
  for (std::size_t k = 0; k < c.inputs.size(); ++k) shapes[k] = c.inputs[k].shape();
  // Not through check_einsum's memo, whose result this would copy: check_case's own memo keeps the
  // result, and the adapters share it from there (check_case_memoised).
  auto checked = detail::check_einsum_uncached(c.pattern, shapes, limits);
  if (!checked) return std::move(checked).error();
  if (c.dtype == DType::boolean) {
    return make_diagnostic(Code::unsupportedDtype,
                           "einsum needs +, ·, 0 and 1: dtype bool is only for the reductions any/all");
  }
  return CheckedCase(std::move(*checked));
}

/// What check_case reads of a case (every field it reads: a field added to its reads must be
/// compared here too), for its memo.
struct CaseCheckKey {
  Op op = Op::einsum;
  std::string pattern;
  std::optional<std::string> reduction;
  std::vector<std::pair<std::string, std::int64_t>> axis_lengths;
  DType dtype = DType::f64;
  std::vector<std::pair<DType, Shape>> inputs;
  bool vjp = false;  ///< with a cotangent of this dtype and shape
  DType cotangent_dtype = DType::f64;
  Shape cotangent_shape;
  Limits limits;

  bool matches(const Case& c, const Limits& l) const {
    if (c.op != op || c.dtype != dtype || c.pattern != pattern || c.reduction != reduction ||
        c.axis_lengths != axis_lengths || !detail::same_limits(l, limits) || c.inputs.size() != inputs.size() ||
        c.is_vjp() != vjp) {
      return false;
    }
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      if (c.inputs[k].dtype() != inputs[k].first || c.inputs[k].shape() != inputs[k].second) return false;
    }
    return !vjp || (c.cotangent->dtype() == cotangent_dtype && c.cotangent->shape() == cotangent_shape);
  }
  void assign(const Case& c, const Limits& l) {
    op = c.op;
    pattern = c.pattern;
    reduction = c.reduction;
    axis_lengths = c.axis_lengths;
    dtype = c.dtype;
    inputs.resize(c.inputs.size());
    for (std::size_t k = 0; k < inputs.size(); ++k) inputs[k] = {c.inputs[k].dtype(), c.inputs[k].shape()};
    vjp = c.is_vjp();
    if (vjp) {
      cotangent_dtype = c.cotangent->dtype();
      cotangent_shape = c.cotangent->shape();
    }
    limits = l;
  }
};

Result<CheckedCase> check_case_uncached(const Case& c, const Limits& limits) {
  auto forward = check_forward(c, limits);
  if (!forward || !c.is_vjp()) return forward;
  if (auto bad = check_vjp(c, *forward, limits)) return std::move(*bad);
  return forward;
}

thread_local detail::CheckMemo<CaseCheckKey, CheckedCase> case_memo;

}  // namespace

std::shared_ptr<const Result<CheckedCase>> check_case_shared(const Case& c, const Limits& limits) {
  return case_memo.get_shared([&] { return check_case_uncached(c, limits); }, c, limits);
}

std::shared_ptr<const Result<CheckedCase>> check_case_memoised(const Case& c, const Limits& limits) {
  return case_memo.find(c, limits);
}

Result<CheckedCase> check_case(const Case& c, const Limits& limits) { return *check_case_shared(c, limits); }

void release_check_memos() noexcept {
  case_memo.release();
  detail::release_einsum_memo();
  detail::release_reduce_memo();
}

std::size_t answer_rank_bound(const Case& c) {
  std::size_t ranks = 0;
  for (const Tensor& t : c.inputs) ranks += t.rank();
  return std::max({std::size_t{64}, ranks, c.pattern.size()});
}

}  // namespace einfuzz
