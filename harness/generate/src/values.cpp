// Value generators for `einfuzz check` (the fuzzing generators of a later stage reuse edge_values).
#include "einfuzz/harness/values.hpp"

#include <cmath>
#include <limits>

#include "einfuzz/core/choice.hpp"

namespace einfuzz {

namespace {

/// Every value mode with the name the CLI and case files use.
struct ValueModeName {
  ValueMode mode;
  std::string_view name;
};
constexpr ValueModeName kValueModes[] = {
    {ValueMode::random, "random"}, {ValueMode::iota, "iota"}, {ValueMode::ones, "ones"}, {ValueMode::edge, "edge"}};

}  // namespace

std::string_view value_mode_name(ValueMode mode) noexcept {
  for (const ValueModeName& m : kValueModes) {
    if (m.mode == mode) return m.name;
  }
  return "?";
}

std::optional<ValueMode> value_mode_from_name(std::string_view name) noexcept {
  for (const ValueModeName& m : kValueModes) {
    if (m.name == name) return m.mode;
  }
  return std::nullopt;
}

template <class T>
std::vector<T> edge_values() {
  using L = std::numeric_limits<T>;
  if constexpr (is_half_type_v<T>) {
    // The same list for the 16-bit formats, each value computed in double and converted (exactly,
    // except sqrt(max), which is only meant to be near the overflow threshold).
    const auto t = [](double x) { return static_cast<T>(x); };
    const double max = static_cast<float>(L::max()), min = static_cast<float>(L::min());
    const double eps = std::ldexp(1.0, 1 - L::digits);
    return {
        L::quiet_NaN(), -L::quiet_NaN(), L::infinity(), -L::infinity(), T(0), -T(0), L::denorm_min(),
        -L::denorm_min(),
        t(min - static_cast<float>(L::denorm_min())),  // largest subnormal
        L::min(), L::max(), -L::max(),
        t(1 + eps), t(1 - eps / 2), t(1), t(-1),
        t(std::ldexp(1.0, L::digits)), t(-std::ldexp(1.0, L::digits)),
        t(std::sqrt(max)), t(min * 3),
        // Half-ulp ties: 1 + 2^-p lies exactly between 1 and 1 + ulp (rounds down to 1), (1 + ulp)
        // + 2^-p exactly between 1 + ulp and 1 + 2 ulp (rounds up); max + 2^(emax-p) is the
        // overflow threshold (rounds to infinity). Only the 16-bit lists grow: the f32/f64 streams
        // of existing seeds stay as they were.
        t(std::ldexp(1.0, -L::digits)), t(std::ldexp(1.0, L::max_exponent - 1 - L::digits)),
    };
  } else {
    const T one = 1;
    return {
        L::quiet_NaN(),
        -L::quiet_NaN(),
        L::infinity(),
        -L::infinity(),
        T(0),
        -T(0),
        L::denorm_min(),
        -L::denorm_min(),
        std::nextafter(L::min(), T(0)),  // largest subnormal
        L::min(),                        // smallest normal
        L::max(),
        -L::max(),
        std::nextafter(one, T(2)),       // 1 + ulp
        std::nextafter(one, T(0)),       // 1 - ulp
        one,
        -one,
        std::ldexp(one, L::digits),      // 2^p: adding 1 is lost (cancellation partner)
        -std::ldexp(one, L::digits),
        std::sqrt(L::max()),             // squares land near the overflow threshold
        std::ldexp(one, L::min_exponent - 1) * 3,  // products underflow
    };
  }
}
template std::vector<float> edge_values<float>();
template std::vector<double> edge_values<double>();
template std::vector<Float16> edge_values<Float16>();
template std::vector<BFloat16> edge_values<BFloat16>();

namespace {

template <class T>
T random_value(Rng& rng) {
  if constexpr (is_float_type_v<T>) {
    // Small integers and halves/quarters: products and sums stay exact for short contractions,
    // so differences between backends point at semantics, not rounding. 1 in 64 is an edge value.
    if (rng.chance(1, 64)) {
      static const std::vector<T> edges = edge_values<T>();
      return edges[rng.below(edges.size())];
    }
    return static_cast<T>(rng.between(-16, 16)) / static_cast<T>(std::int64_t{1} << rng.below(3));
  } else {
    if (rng.chance(1, 32)) {
      return rng.chance(1, 2) ? std::numeric_limits<T>::max() : std::numeric_limits<T>::min();
    }
    return static_cast<T>(rng.between(-9, 9));
  }
}

template <class T>
T edge_value(Rng& rng) {
  if constexpr (is_float_type_v<T>) {
    static const std::vector<T> edges = edge_values<T>();
    return edges[rng.below(edges.size())];
  } else {
    using L = std::numeric_limits<T>;
    static const T edges[] = {L::min(), L::max(), T(0), T(1), T(-1), T(L::max() / 2 + 1), T(L::min() / 2)};
    return edges[rng.below(std::size(edges))];
  }
}

}  // namespace

Tensor make_values(DType dtype, const Shape& shape, ValueMode mode, std::uint64_t seed, std::size_t operand) {
  Tensor t(dtype, shape);
  Rng rng(Rng::mix(seed, operand));
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    auto v = t.values<T>();
    for (std::size_t i = 0; i < v.size(); ++i) {
      if constexpr (std::is_same_v<T, Bool8>) {
        v[i] = mode == ValueMode::ones ? 1 : mode == ValueMode::iota ? Bool8(i % 2) : Bool8(rng.below(2));
      } else {
        switch (mode) {
          case ValueMode::random: v[i] = random_value<T>(rng); break;
          case ValueMode::iota: v[i] = static_cast<T>(i + 1); break;
          case ValueMode::ones: v[i] = T(1); break;
          case ValueMode::edge: v[i] = edge_value<T>(rng); break;
        }
      }
    }
  });
  return t;
}

}  // namespace einfuzz
