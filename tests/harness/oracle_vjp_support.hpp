// Helpers shared by the multiset VJP oracle's tests: a VJP case's truth and the any-order verdict
// on an answer, for einsum and reduce, from text.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/harness/judge_vjp.hpp"
#include "einfuzz/reference/multiset_vjp.hpp"
#include "einfuzz/reference/vjp.hpp"
#include "support/values_text.hpp"

namespace einfuzz::vjp_test {

inline CheckedEinsum checked_einsum(const std::string& pattern, const std::vector<Tensor>& inputs) {
  std::vector<Shape> shapes;
  for (const Tensor& t : inputs) shapes.push_back(t.shape());
  auto checked = check_einsum(pattern, shapes);
  if (!checked) ADD_FAILURE() << pattern << ": " << render(checked.error());
  return *checked;
}

inline CheckedReduce checked_reduce(const std::string& pattern, const std::string& kind, const Tensor& x) {
  auto checked = check_reduce(pattern, kind, x.shape(), {}, x.dtype());
  if (!checked) ADD_FAILURE() << pattern << ": " << render(checked.error());
  return *checked;
}

inline Tensor f64(Shape shape, const std::string& values) { return test::tensor_from_text(DType::f64, shape, values); }
inline Tensor f32(Shape shape, const std::string& values) { return test::tensor_from_text(DType::f32, shape, values); }

/// The any-order verdict on `answer` (one tensor per input) for the einsum VJP case.
inline Verdict judge_einsum(const std::string& pattern, const std::vector<Tensor>& inputs, const Tensor& g,
                            std::vector<Tensor> answer, const VjpJudgeOptions& options = {}) {
  const CheckedEinsum e = checked_einsum(pattern, inputs);
  return judge_vjp_any_order(reference::multiset_vjp_einsum(e, inputs, g), Gradients{std::move(answer)}, options);
}

/// The any-order verdict on `answer` for the reduce VJP case.
inline Verdict judge_reduce(const std::string& pattern, const std::string& kind, const Tensor& x, const Tensor& g,
                            std::vector<Tensor> answer, const VjpJudgeOptions& options = {}) {
  const CheckedReduce r = checked_reduce(pattern, kind, x);
  return judge_vjp_any_order(reference::multiset_vjp_reduce(r, x, g), Gradients{std::move(answer)}, options);
}

/// "mismatch(value)" etc. with the first element's evidence, for failure messages.
inline std::string explain(const Verdict& v) {
  std::string s = v.label() + " " + v.detail;
  if (v.first) {
    s += " [input " + std::to_string(v.first->gradient_of) + " element " + std::to_string(v.first->flat_index) +
         ": expected " + v.first->expected + ", actual " + v.first->actual + ", exact " + v.first->exact + "]";
  }
  return s;
}

}  // namespace einfuzz::vjp_test
