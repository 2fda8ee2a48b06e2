// Names and sizes of the element types.
#include "einfuzz/core/dtype.hpp"

namespace einfuzz {

std::string_view dtype_name(DType dtype) noexcept {
  switch (dtype) {
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::boolean: return "bool";
  }
  return "?";
}

std::optional<DType> dtype_from_name(std::string_view name) noexcept {
  for (DType d : {DType::f32, DType::f64, DType::i32, DType::i64, DType::boolean}) {
    if (dtype_name(d) == name) return d;
  }
  return std::nullopt;
}

std::size_t dtype_size(DType dtype) noexcept {
  switch (dtype) {
    case DType::f32: return 4;
    case DType::f64: return 8;
    case DType::i32: return 4;
    case DType::i64: return 8;
    case DType::boolean: return 1;
  }
  return 0;
}

}  // namespace einfuzz
