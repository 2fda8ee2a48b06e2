// Parser of the spec's compact value notation for tests.
#include "support/values_text.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace einfuzz::test {

std::vector<double> parse_value_list(std::string_view text) {
  std::vector<double> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    std::string token(text.substr(start, comma - start));
    token.erase(0, token.find_first_not_of(' '));
    token.erase(token.find_last_not_of(' ') + 1);
    if (const auto dots = token.find(".."); dots != std::string::npos) {
      const long lo = std::stol(token.substr(0, dots));
      const long hi = std::stol(token.substr(dots + 2));
      for (long v = lo; v <= hi; ++v) out.push_back(static_cast<double>(v));
    } else if (const auto star = token.find('*'); star != std::string::npos) {
      const long n = std::stol(token.substr(0, star));
      const double v = std::strtod(token.substr(star + 1).c_str(), nullptr);
      out.insert(out.end(), static_cast<std::size_t>(n), v);
    } else {
      char* end = nullptr;
      const double v = std::strtod(token.c_str(), &end);
      if (token.empty() || *end != '\0') throw std::invalid_argument("bad value token '" + token + "'");
      out.push_back(v);
    }
    start = comma + 1;
  }
  return out;
}

Tensor tensor_from_text(DType dtype, const Shape& shape, std::string_view text) {
  const std::vector<double> values = parse_value_list(text);
  Tensor t(dtype, shape);
  if (static_cast<std::int64_t>(values.size()) != t.size()) {
    throw std::invalid_argument("value count " + std::to_string(values.size()) + " != element count of " +
                                format_shape(shape));
  }
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    auto v = t.values<T>();
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<T>(values[i]);
  });
  return t;
}

}  // namespace einfuzz::test
