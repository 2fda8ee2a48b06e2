// Bitwise comparison for tests, independent of the harness's judge (which it helps to test).
#include "support/compare.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace einfuzz::test {

::testing::AssertionResult bitwise_same(const Tensor& expected, const Tensor& actual, bool strict_nan) {
  if (expected.dtype() != actual.dtype() || expected.shape() != actual.shape()) {
    return ::testing::AssertionFailure() << "expected " << dtype_name(expected.dtype()) << " "
                                         << format_shape(expected.shape()) << ", got " << dtype_name(actual.dtype())
                                         << " " << format_shape(actual.shape());
  }
  ::testing::AssertionResult result = ::testing::AssertionSuccess();
  visit_dtype(expected.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const auto e = expected.values<T>();
    const auto a = actual.values<T>();
    for (std::size_t i = 0; i < e.size(); ++i) {
      bool same = std::memcmp(&e[i], &a[i], sizeof(T)) == 0;
      if constexpr (is_float_type_v<T>) {
        if (!strict_nan && std::isnan(e[i]) && std::isnan(a[i])) same = true;
      }
      if (!same) {
        std::ostringstream os;
        if constexpr (is_float_type_v<T>) {
          char be[64], ba[64];
          std::snprintf(be, sizeof be, "%a", static_cast<double>(e[i]));
          std::snprintf(ba, sizeof ba, "%a", static_cast<double>(a[i]));
          os << "element " << i << ": expected " << be << ", got " << ba;
        } else {
          os << "element " << i << ": expected " << +e[i] << ", got " << +a[i];
        }
        result = ::testing::AssertionFailure() << os.str();
        return;
      }
    }
  });
  return result;
}

}  // namespace einfuzz::test
