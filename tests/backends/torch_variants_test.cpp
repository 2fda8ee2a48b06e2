// The torch variants (`torch-path-right`, `torch-path-outer`, `torch-maxdim`) take `torch`'s answer
// again where they make torch's library call on the same case (backends/src/torch.cpp, LastCall),
// and never where their own call differs: a contraction path on three operands or more, max(dim) on
// a max or min reduce.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "einfuzz/core/case.hpp"
#include "einfuzz/harness/backend_registry.hpp"
#include "einfuzz/harness/run.hpp"
#include "support/values_text.hpp"

namespace einfuzz {
namespace {

std::unique_ptr<Backend> torch_backend(const char* name) { return make_builtin_backend(name, RunOptions{}); }

/// The answer's bytes: the output tensor's, or every gradient's one after the other.
std::vector<std::byte> answer_bytes(const BackendResult& r) {
  std::vector<std::byte> out;
  const auto add = [&](const Tensor& t) { out.insert(out.end(), t.bytes().begin(), t.bytes().end()); };
  if (const auto* t = std::get_if<Tensor>(&r)) add(*t);
  if (const auto* g = std::get_if<Gradients>(&r)) {
    for (const Tensor& t : g->tensors) add(t);
  }
  EXPECT_FALSE(out.empty()) << "the backend gave no tensor";
  return out;
}

/// `backend`'s answer to `c` on a thread of its own, where no other backend has answered anything.
std::vector<std::byte> alone(Backend& backend, const Case& c) {
  std::vector<std::byte> out;
  std::thread([&] { out = answer_bytes(backend.run(c)); }).join();
  return out;
}

TEST(TorchVariants, APathOnThreeOperandsIsComputedNotTakenFromTorch) {
  auto torch = torch_backend("torch");
  if (!torch) GTEST_SKIP() << "libtorch was not found (Debian: libtorch-dev)";
  // f32 (A B) C and A (B C) round differently here: torch goes left to right.
  Case c;
  c.pattern = "a b, b c, c d -> a d";
  c.dtype = DType::f32;
  c.inputs = {test::tensor_from_text(DType::f32, {1, 2}, "0.1,0.7"), test::tensor_from_text(DType::f32, {2, 1}, "0.3,0.9"),
              test::tensor_from_text(DType::f32, {1, 2}, "1.3,0.11")};
  const std::vector<std::byte> left = answer_bytes(torch->run(c));
  for (const char* name : {"torch-path-right", "torch-path-outer"}) {
    SCOPED_TRACE(name);
    auto variant = torch_backend(name);
    ASSERT_NE(variant, nullptr);
    const std::vector<std::byte> own = alone(*variant, c);
    (void)torch->run(c);  // torch's call is this thread's last
    EXPECT_EQ(answer_bytes(variant->run(c)), own);
    if (std::string(name) == "torch-path-right") {
      EXPECT_NE(own, left) << "the case does not tell the paths apart";
    }
  }
  // Two operands take no path: the variant's answer is torch's call, and the same bits.
  Case two = c;
  two.pattern = "a b, b c -> a c";
  two.inputs.pop_back();
  auto right = torch_backend("torch-path-right");
  (void)torch->run(two);
  EXPECT_EQ(answer_bytes(right->run(two)), alone(*torch, two));
}

TEST(TorchVariants, MaxDimOnAMaxReduceIsComputedNotTakenFromTorch) {
  auto torch = torch_backend("torch");
  if (!torch) GTEST_SKIP() << "libtorch was not found (Debian: libtorch-dev)";
  auto maxdim = torch_backend("torch-maxdim");
  ASSERT_NE(maxdim, nullptr);
  // A tie: amax's VJP shares the cotangent (0.5, 0.5), max(dim)'s gives it to one element.
  Case c;
  c.op = Op::reduce;
  c.reduction = "max";
  c.pattern = "a b -> a";
  c.dtype = DType::f64;
  c.inputs = {test::tensor_from_text(DType::f64, {1, 2}, "3,3")};
  c.cotangent = test::tensor_from_text(DType::f64, {1}, "1");
  const std::vector<std::byte> shared = answer_bytes(torch->run(c));
  const std::vector<std::byte> own = alone(*maxdim, c);
  EXPECT_NE(own, shared) << "the tie does not tell the VJPs apart";
  (void)torch->run(c);
  EXPECT_EQ(answer_bytes(maxdim->run(c)), own);
  // A sum reduce is torch's call for both.
  c.reduction = "sum";
  (void)torch->run(c);
  EXPECT_EQ(answer_bytes(maxdim->run(c)), alone(*torch, c));
}

TEST(TorchVariants, AnAnswerIsTakenAgainOnlyForAnEqualCase) {
  auto torch = torch_backend("torch");
  if (!torch) GTEST_SKIP() << "libtorch was not found (Debian: libtorch-dev)";
  auto right = torch_backend("torch-path-right");
  Case c;
  c.pattern = "a b -> a";
  c.dtype = DType::f64;
  c.inputs = {test::tensor_from_text(DType::f64, {2, 2}, "1,2,3,4")};
  (void)torch->run(c);
  // One value changed, the same pattern and shape: computed.
  Case other = c;
  other.inputs = {test::tensor_from_text(DType::f64, {2, 2}, "1,2,3,5")};
  EXPECT_EQ(answer_bytes(right->run(other)), alone(*right, other));
  // A layout, the same logical values: torch reads a strided view, computed.
  (void)torch->run(c);
  Case strided = c;
  strided.layouts = {InputLayout{{1, 2}, 0, 4, std::nullopt}};
  EXPECT_EQ(answer_bytes(right->run(strided)), alone(*right, strided));
}

}  // namespace
}  // namespace einfuzz
