// Dense row-major tensor: construction, sizes, raw bytes, bitwise comparison.
#include "einfuzz/core/tensor.hpp"

#include <cstring>

namespace einfuzz {

std::string format_shape(std::span<const std::int64_t> shape) {
  if (shape.empty()) return "()";
  std::string out;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) out += 'x';
    out += std::to_string(shape[i]);
  }
  return out;
}

Tensor::Tensor(DType dtype, Shape shape) : shape_(std::move(shape)) {
  const auto n = static_cast<std::size_t>(checked_element_count(shape_).value());
  visit_dtype(dtype, [&](auto tag) { storage_ = std::vector<decltype(tag)>(n); });
}

std::int64_t Tensor::size() const noexcept {
  return std::visit([](const auto& v) { return static_cast<std::int64_t>(v.size()); }, storage_);
}

std::span<const std::byte> Tensor::bytes() const noexcept {
  return std::visit([](const auto& v) { return std::as_bytes(std::span(v)); }, storage_);
}

bool bitwise_equal(const Tensor& a, const Tensor& b) noexcept {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  const auto x = a.bytes();
  const auto y = b.bytes();
  return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size()) == 0);
}

}  // namespace einfuzz
