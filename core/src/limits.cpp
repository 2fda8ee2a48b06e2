// Size checks that run before any allocation (SEMANTICS §13.4).
#include "einfuzz/core/limits.hpp"

#include <string>

#include "einfuzz/core/tensor.hpp"

namespace einfuzz {

Result<std::int64_t> check_tensor_size(std::span<const std::int64_t> shape, const Limits& limits,
                                       std::string_view what) {
  for (std::int64_t d : shape) {
    if (d < 0) {
      return make_diagnostic(Code::malformedShape, std::string(what) + " has a negative length " +
                                                       std::to_string(d));
    }
  }
  const auto count = checked_element_count(shape);
  if (!count) {
    return make_diagnostic(Code::sizeLimitExceeded,
                           std::string(what) + " of shape " + format_shape(shape) +
                               " has more elements than int64 can count (limit: max-tensor-elements)");
  }
  if (*count > limits.max_tensor_elements) {
    return make_diagnostic(Code::sizeLimitExceeded,
                           std::string(what) + " of shape " + format_shape(shape) + " has " +
                               std::to_string(*count) + " elements, over the limit max-tensor-elements = " +
                               std::to_string(limits.max_tensor_elements));
  }
  return *count;
}

}  // namespace einfuzz
