// The tests' view of the harness reduce generator (see reduce_gen.hpp).
#include "support/reduce_gen.hpp"

namespace einfuzz::test {

ReduceCase generate_reduce_case(Rng& rng, const ReduceGenOptions& options) {
  SeededChoices choices(rng);
  Case c = generate_reduce(choices, options);
  ReduceCase out;
  out.pattern = std::move(c.pattern);
  out.kind = *reduction_from_name(*c.reduction);  // the generator only draws the seven kinds
  out.dtype = c.dtype;
  out.shape = c.inputs.at(0).shape();
  out.axis_lengths = std::move(c.axis_lengths);
  out.input = std::move(c.inputs.at(0));
  return out;
}

std::string ReduceCase::describe() const {
  std::string s = std::string(reduction_name(kind)) + " '" + pattern + "' on " + format_shape(shape);
  for (const auto& [name, length] : axis_lengths) s += " " + name + "=" + std::to_string(length);
  return s + " " + std::string(dtype_name(dtype));
}

Tensor random_values(Rng& rng, DType dtype, const Shape& shape) {
  SeededChoices choices(rng);
  return generate_values(choices, dtype, shape);
}

}  // namespace einfuzz::test
