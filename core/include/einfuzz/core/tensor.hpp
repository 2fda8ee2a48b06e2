// A dense, row-major tensor of one dtype, owning its values (value semantics).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "einfuzz/core/dtype.hpp"
#include "einfuzz/core/shape.hpp"
#include "einfuzz/core/shape_math.hpp"

namespace einfuzz {

/// The element count of `shape` (checked_product): 0 when a length is 0, whatever the others;
/// nullopt when a length is negative or the count overflows int64.
inline std::optional<std::int64_t> checked_element_count(std::span<const std::int64_t> shape) noexcept {
  return checked_product(shape);
}

/// "2x3", "()" for rank 0, "2x0x5" — the CLI's shape notation.
std::string format_shape(std::span<const std::int64_t> shape);

/// Dense row-major storage. The caller checks the element count against the size limits *before*
/// constructing (Tensor itself never decides policy).
class Tensor {
 public:
  using Storage = std::variant<std::vector<float>, std::vector<double>, std::vector<std::int32_t>,
                               std::vector<std::int64_t>, std::vector<Bool8>, std::vector<Float16>,
                               std::vector<BFloat16>>;

  Tensor() : Tensor(DType::f64, Shape{}) {}
  /// Zero-filled (+0.0 / 0 / false) tensor of `shape`; `shape` must have a representable count.
  Tensor(DType dtype, Shape shape);
  /// Takes `values` (row-major); its size must equal the element count of `shape`.
  template <class T>
  Tensor(Shape shape, std::vector<T> values) : shape_(std::move(shape)), storage_(std::move(values)) {}

  DType dtype() const noexcept { return static_cast<DType>(storage_.index()); }
  const Shape& shape() const noexcept { return shape_; }
  std::size_t rank() const noexcept { return shape_.size(); }
  std::int64_t size() const noexcept;

  template <class T> std::span<const T> values() const { return std::get<std::vector<T>>(storage_); }
  template <class T> std::span<T> values() { return std::get<std::vector<T>>(storage_); }
  const Storage& storage() const noexcept { return storage_; }

  /// Raw bytes of the values (little-endian on the supported targets), e.g. for checksums.
  std::span<const std::byte> bytes() const noexcept;


 private:
  Shape shape_;
  Storage storage_;
};

/// True when dtype, shape and every value's bit pattern are identical (so -0.0 != +0.0 and two
/// NaNs are equal only with the same payload).
bool bitwise_equal(const Tensor& a, const Tensor& b) noexcept;

}  // namespace einfuzz
