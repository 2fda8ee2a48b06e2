// check_case: one case's inputs, dtype and limits checked, then its einsum or reduce pattern.
#include "einfuzz/core/check_case.hpp"

#include <string>
#include <utility>
#include <vector>

namespace einfuzz {

Result<CheckedCase> check_case(const Case& c, const Limits& limits) {
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
    auto checked = check_reduce(c.pattern, c.reduction.value_or(""), c.inputs[0].shape(), c.axis_lengths, c.dtype,
                                limits);
    if (!checked) return std::move(checked).error();
    return CheckedCase(std::move(*checked));
  }
  std::vector<Shape> shapes;
  for (const Tensor& t : c.inputs) shapes.push_back(t.shape());
  auto checked = check_einsum(c.pattern, shapes, limits);
  if (!checked) return std::move(checked).error();
  if (c.dtype == DType::boolean) {
    return make_diagnostic(Code::unsupportedDtype,
                           "einsum needs +, ·, 0 and 1: dtype bool is only for the reductions any/all");
  }
  return CheckedCase(std::move(*checked));
}

}  // namespace einfuzz
