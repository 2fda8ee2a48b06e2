// Small helpers shared by the any-order oracle's newer test files: building cases from text, a
// backend that returns a fixed tensor, and judging one hand-picked result.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "einfuzz/core/case.hpp"
#include "einfuzz/core/check.hpp"
#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/harness/judge.hpp"
#include "einfuzz/harness/run.hpp"
#include "einfuzz/reference/multiset.hpp"
#include "support/values_text.hpp"

namespace einfuzz::oracle_test {

struct Input {
  Shape shape;
  std::string values;  ///< values_text notation: "1, -1e16, inf, nan, 3*0.5"
};

inline Case einsum_case(std::string pattern, DType dtype, const std::vector<Input>& inputs) {
  Case c;
  c.pattern = std::move(pattern);
  c.dtype = dtype;
  for (const Input& in : inputs) c.inputs.push_back(test::tensor_from_text(dtype, in.shape, in.values));
  return c;
}

inline Case reduce_case(std::string pattern, std::string reduction, Tensor input) {
  Case c;
  c.op = Op::reduce;
  c.pattern = std::move(pattern);
  c.reduction = std::move(reduction);
  c.dtype = input.dtype();
  c.inputs.push_back(std::move(input));
  return c;
}

inline reference::MultisetEinsum einsum_truth(const Case& c) {
  std::vector<Shape> shapes;
  for (const Tensor& t : c.inputs) shapes.push_back(t.shape());
  auto checked = check_einsum(c.pattern, shapes);
  if (!checked) ADD_FAILURE() << render(checked.error());
  return reference::multiset_einsum(*checked, c.inputs);
}

inline reference::MultisetReduce reduce_truth(const Case& c) {
  auto checked = check_reduce(c.pattern, *c.reduction, c.inputs[0].shape(), c.axis_lengths, c.dtype);
  if (!checked) ADD_FAILURE() << render(checked.error());
  return reference::multiset_reduce(*checked, c.inputs[0]);
}

/// A backend that returns a fixed tensor, with the declared factoring and NaN profile.
class FixedBackend final : public Backend {
 public:
  FixedBackend(Tensor result, bool factoring, NanProfile profile = NanProfile::propagate) : result_(std::move(result)) {
    caps_.ops = {Op::einsum, Op::reduce};
    caps_.reductions = {"sum", "mean", "prod", "min", "max"};
    caps_.dtypes = {DType::f32, DType::f64};
    caps_.factoring = factoring;
    caps_.nan_profile = profile;
  }
  std::string_view name() const override { return "fixed"; }
  const Capabilities& capabilities() const override { return caps_; }
  BackendResult run(const Case&) override { return result_; }

 private:
  Tensor result_;
  Capabilities caps_;
};

inline Verdict run_on(const Case& c, Backend& backend, const RunOptions& options = {}) {
  Backend* list[] = {&backend};
  return run_case(c, list, options).backends.at(0).verdict;
}

/// Runs `c` on a FixedBackend returning the rank-0 or rank-1 `values`.
template <class T>
Verdict run_fixed(const Case& c, Shape shape, std::vector<T> values, bool factoring,
                  NanProfile profile = NanProfile::propagate) {
  FixedBackend backend(Tensor(std::move(shape), std::move(values)), factoring, profile);
  return run_on(c, backend);
}

}  // namespace einfuzz::oracle_test
