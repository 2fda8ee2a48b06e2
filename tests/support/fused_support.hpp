// Test helper for the fused-executor tests: checking a pattern, running fused, the naive §6 loop
// nest every configuration must equal bit for bit, and order-revealing random inputs.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/scalar.hpp"
#include "einfuzz/core/tensor.hpp"
#include "einfuzz/fused/einsum.hpp"
#include "einfuzz/harness/generate.hpp"
#include "einfuzz/reference/einsum.hpp"

namespace einfuzz::fused_test {

using fused::ExecOptions;

inline CheckedEinsum checked(std::string_view pattern, std::vector<Shape> shapes) {
  auto result = check_einsum(pattern, shapes);
  if (!result) throw std::runtime_error(render(result.error()));
  return std::move(result).value();
}

inline Tensor run_fused(const CheckedEinsum& einsum, std::span<const Tensor> inputs, ExecOptions options = {}) {
  return fused::execute(fused::compile(einsum), inputs, options);
}

// §6 literally: S := 0; for c row-major: P := 1; P := P · x_k[...] in operand order; S := S + P.
// Operand coordinates come from the checked axes and shapes (a length-1 dimension reads 0).
template <class T>
inline Tensor naive_einsum(const CheckedEinsum& e, std::span<const Tensor> inputs) {
  Tensor out(dtype_of_v<T>, e.output_shape);
  std::vector<std::int64_t> coord(e.axes.size(), 0);
  const auto decode = [&](std::int64_t flat, const std::vector<int>& axes, const Shape& shape) {
    for (std::size_t i = axes.size(); i-- > 0;) {
      coord[static_cast<std::size_t>(axes[i])] = flat % shape[i];
      flat /= shape[i];
    }
  };
  for (std::int64_t o = 0; o < e.output_size; ++o) {
    decode(o, e.output, e.output_shape);
    T sum = T(0);
    for (std::int64_t c = 0; c < e.contraction_size; ++c) {
      decode(c, e.contracted, e.contraction_shape);
      T product = T(1);
      for (std::size_t k = 0; k < e.operands.size(); ++k) {
        const CheckedOperand& op = e.operands[k];
        std::int64_t index = 0;
        for (std::size_t d = 0; d < op.shape.size(); ++d)
          index = index * op.shape[d] + (op.shape[d] == 1 ? 0 : coord[static_cast<std::size_t>(op.axes[d])]);
        product = scalar_mul(product, inputs[k].values<T>()[static_cast<std::size_t>(index)]);
      }
      sum = scalar_add(sum, product);
    }
    out.values<T>()[static_cast<std::size_t>(o)] = sum;
  }
  return out;
}

inline Tensor naive(const CheckedEinsum& e, std::span<const Tensor> inputs) {
  return visit_dtype(inputs[0].dtype(), [&](auto tag) -> Tensor {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Bool8>) {
      throw std::logic_error("bool einsum");
    } else {
      return naive_einsum<T>(e, inputs);
    }
  });
}

// Bitwise equality with NaN compared as "is NaN" (ORACLE.md: payloads are ignored by default).
template <class T>
inline bool same_bits(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) && std::isnan(b)) return true;
  }
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

inline testing::AssertionResult same_values(const Tensor& actual, const Tensor& expected) {
  if (actual.dtype() != expected.dtype()) return testing::AssertionFailure() << "dtype differs";
  if (actual.shape() != expected.shape())
    return testing::AssertionFailure() << "shape " << format_shape(actual.shape()) << " vs "
                                       << format_shape(expected.shape());
  return visit_dtype(actual.dtype(), [&](auto tag) -> testing::AssertionResult {
    using T = decltype(tag);
    const auto a = actual.values<T>();
    const auto b = expected.values<T>();
    if (a.size() != b.size()) return testing::AssertionFailure() << "element count differs";
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!same_bits(a[i], b[i]))
        return testing::AssertionFailure() << "element " << i << ": " << +a[i] << " vs " << +b[i];
    return testing::AssertionSuccess();
  });
}

// Values that make order visible: mixed magnitudes, and for floats a sprinkle of NaN, ±Inf, -0.0,
// subnormals and huge values; integers span the full range so products wrap.
template <class T>
inline std::vector<T> random_values(std::int64_t count, std::mt19937_64& rng) {
  std::vector<T> v(static_cast<std::size_t>(count));
  std::uniform_int_distribution<int> pick(0, 99);
  for (T& x : v) {
    const int p = pick(rng);
    if constexpr (std::is_floating_point_v<T>) {
      using L = std::numeric_limits<T>;
      if (p < 40) {
        x = static_cast<T>(std::uniform_int_distribution<int>(-4, 4)(rng));
      } else if (p < 92) {
        const T mantissa = std::uniform_real_distribution<T>(-1, 1)(rng);
        x = std::ldexp(mantissa, std::uniform_int_distribution<int>(-30, 30)(rng));
      } else {
        const T special[] = {L::quiet_NaN(), L::infinity(), -L::infinity(), T(-0.0),
                             L::denorm_min() * 3, -L::denorm_min(), L::max() / 4, L::min()};
        x = special[p - 92];
      }
    } else {
      x = p < 50 ? static_cast<T>(std::uniform_int_distribution<int>(-9, 9)(rng))
                 : static_cast<T>(rng());
    }
  }
  return v;
}

inline std::vector<Tensor> random_inputs(const CheckedEinsum& e, DType dtype, std::mt19937_64& rng) {
  std::vector<Tensor> inputs;
  for (const CheckedOperand& op : e.operands) {
    const std::int64_t count = checked_element_count(op.shape).value();
    visit_dtype(dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (!std::is_same_v<T, Bool8>) inputs.emplace_back(op.shape, random_values<T>(count, rng));
    });
  }
  return inputs;
}

}  // namespace einfuzz::fused_test
