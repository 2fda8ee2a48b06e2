// The generator's value mixtures (see generate.hpp): per tensor one profile, per element one draw.
#include <cmath>
#include <cstring>
#include <algorithm>
#include <span>
#include <limits>
#include <type_traits>

#include "einfuzz/harness/generate.hpp"
#include "einfuzz/harness/values.hpp"

namespace einfuzz {
namespace {

/// `runs` (f16/bf16 only): one value repeated, whose long sums saturate in the storage format.
enum class Profile { mixture, small_integers, fractions, edges, cancellation, raw_bits, wide_exponents, runs };

template <class T>
T from_bits(std::uint64_t bits) {
  T v;
  if constexpr (is_half_type_v<T>) {
    return T::from_bits(static_cast<std::uint16_t>(bits));
  } else if constexpr (sizeof(T) == 4) {
    const auto b = static_cast<std::uint32_t>(bits);
    std::memcpy(&v, &b, sizeof v);
  } else {
    std::memcpy(&v, &bits, sizeof v);
  }
  return v;
}

/// NaNs other than the default quiet one: payloads, the sign bit, a signalling NaN.
template <class T, class S>
T nan_with_payload(S& s) {
  if constexpr (std::is_same_v<T, Float16>) {
    static constexpr std::uint16_t kNans[] = {0x7e01u, 0xfe00u, 0x7c01u, 0x7fffu, 0xfeefu};
    return from_bits<T>(kNans[s.choose(std::size(kNans))]);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    static constexpr std::uint16_t kNans[] = {0x7fc1u, 0xffc0u, 0x7f81u, 0x7fffu, 0xffefu};
    return from_bits<T>(kNans[s.choose(std::size(kNans))]);
  } else if constexpr (sizeof(T) == 4) {
    static constexpr std::uint32_t kNans[] = {0x7fc00123u, 0xffc00000u, 0x7f800001u, 0x7fffffffu, 0xffc0beefu};
    return from_bits<T>(kNans[s.choose(std::size(kNans))]);
  } else {
    static constexpr std::uint64_t kNans[] = {0x7ff8000000000123ULL, 0xfff8000000000000ULL, 0x7ff0000000000001ULL,
                                              0x7fffffffffffffffULL, 0xfff800000000beefULL};
    return from_bits<T>(kNans[s.choose(std::size(kNans))]);
  }
}

template <class T, class S>
T edge_float(S& s) {
  static const std::vector<T> edges = edge_values<T>();
  return s.chance(1, 6) ? nan_with_payload<T>(s) : edges[s.choose(edges.size())];
}

template <class T, class S>
T wide_exponent(S& s) {
  using L = std::numeric_limits<T>;
  const int e = static_cast<int>(s.between(L::min_exponent - L::digits, L::max_exponent - 1));
  // static_cast: for the 16-bit formats ldexp computes in float, and the value rounds once here.
  const T v = static_cast<T>(std::ldexp(static_cast<T>(s.between(128, 255)) / T(128), e));
  return s.chance(1, 2) ? -v : v;
}

/// The fractions a / 2^k (a in [-8, 8], k in [0, 2]) in `T`: exact in every float format, so the
/// table holds the quotients the division would round to, without rounding twice per draw (the
/// 16-bit formats round each operand and the quotient in software).
template <class T>
struct FractionTable {
  T value[17][3];
  FractionTable() {
    for (int a = -8; a <= 8; ++a) {
      for (int k = 0; k < 3; ++k) value[a + 8][k] = static_cast<T>(static_cast<T>(a) / static_cast<T>(1 << k));
    }
  }
};

/// The draws are sequenced explicitly, in the order gcc gave the former `T(a) / T(2^k)`, whose
/// operands' order C++ leaves unspecified: a then k for float and double (the built-in `/`), k then a
/// for the 16-bit formats (their `operator/` is a call, whose arguments gcc evaluates right to left
/// and clang left to right, so a clang build drew other cases from the same seed).
template <class T, class S>
T fraction(S& s) {
  static const FractionTable<T> table;
  std::int64_t a = 0;
  std::uint64_t k = 0;
  if constexpr (is_half_type_v<T>) {
    k = s.choose(3);
    a = s.between(-8, 8);
  } else {
    a = s.between(-8, 8);
    k = s.choose(3);
  }
  return table.value[a + 8][k];
}

/// A term that cancels against others: ±2^(p..p+8) (adding 1 to it is lost), its negation, or 1.
template <class T, class S>
T cancellation(S& s, std::span<const T> earlier) {
  switch (s.choose(4)) {
    case 0: return T(1);
    case 1:
      if (!earlier.empty()) return -earlier[s.choose(earlier.size())];
      [[fallthrough]];
    case 2: {
      // Capped at the format's largest power of two (f16: 2^15; never reached by f32/f64).
      using L = std::numeric_limits<T>;
      const int e = std::min(L::digits + static_cast<int>(s.choose(9)), L::max_exponent - 1);
      const T big = static_cast<T>(std::ldexp(T(1), e));
      return s.chance(1, 2) ? -big : big;
    }
    default: return static_cast<T>(s.between(-3, 3));
  }
}

template <class T, class S>
T draw_float(S& s, Profile profile, std::span<const T> earlier) {
  switch (profile) {
    case Profile::small_integers: return static_cast<T>(s.between(-4, 4));
    case Profile::fractions: return fraction<T>(s);
    case Profile::edges: return s.chance(3, 4) ? edge_float<T>(s) : fraction<T>(s);
    case Profile::cancellation: return cancellation<T>(s, earlier);
    case Profile::raw_bits: return from_bits<T>(s.bits());
    case Profile::wide_exponents: return s.chance(1, 4) ? edge_float<T>(s) : wide_exponent<T>(s);
    case Profile::runs:  // generate_values fills runs itself
    case Profile::mixture: break;
  }
  // fractions 65, edges 15, wide exponents 5, moderate arbitrary bits 8, cancellation 7
  static constexpr std::uint32_t kWeights[] = {65, 15, 5, 8, 7};
  switch (s.choose_weighted(kWeights)) {
    case 0: return fraction<T>(s);
    case 1: return edge_float<T>(s);
    case 2: return wide_exponent<T>(s);
    case 3: return static_cast<T>(static_cast<double>(s.bits() >> 11) * 0x1p-53 * 8.0 - 4.0);
    default: return cancellation<T>(s, earlier);
  }
}

template <class T, class S>
T draw_integer(S& s, Profile profile) {
  using L = std::numeric_limits<T>;
  static constexpr T kEdges[] = {L::min(), L::max(), T(L::max() / 2 + 1), T(L::min() / 2), T(-1), T(0), T(1),
                                 T(L::min() + 1), T(L::max() - 1)};
  switch (profile) {
    case Profile::small_integers: return static_cast<T>(s.between(-5, 5));
    case Profile::raw_bits: return static_cast<T>(s.bits());  // wrap-around everywhere
    case Profile::edges: return s.chance(3, 4) ? kEdges[s.choose(std::size(kEdges))] : static_cast<T>(s.between(-9, 9));
    default: break;
  }
  static constexpr std::uint32_t kWeights[] = {80, 10, 10};
  switch (s.choose_weighted(kWeights)) {
    case 0: return static_cast<T>(s.between(-9, 9));
    case 1: return kEdges[s.choose(std::size(kEdges))];
    default: return static_cast<T>(s.bits());
  }
}

/// A run that makes a long sum separate accumulators (ORACLE §8): all ones (the storage format
/// stops at 2^p: f16 at 2048, bf16 at 256), 1 followed by half-ulps of 1 (each addition a tie that
/// rounds back to 1), or 2^p followed by ones (saturated from the start).
template <class T, class S>
void fill_run(S& s, std::span<T> values) {
  const T half_ulp = static_cast<T>(std::ldexp(1.0, -std::numeric_limits<T>::digits));
  const T big = static_cast<T>(std::ldexp(1.0, std::numeric_limits<T>::digits));
  const std::uint64_t kind = s.choose(3);
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = kind == 1 && i > 0 ? half_ulp : kind == 2 && i == 0 ? big : T(1);
  }
}

/// generate_values drawing from `S`: ChoiceSource, or the final SeededChoices, whose draws the
/// compiler can inline (one draw per element is most of a campaign's generation).
template <class S>
Tensor values_from(S& s, DType dtype, const Shape& shape) {
  Tensor t(dtype, shape);
  // mixture first (what an exhausted source draws), then the pure profiles; the 16-bit formats
  // also draw runs (the other dtypes keep their table, so their streams are unchanged).
  static constexpr std::uint32_t kProfileWeights[] = {55, 10, 8, 10, 7, 5, 5};
  static constexpr std::uint32_t kHalfProfileWeights[] = {55, 10, 8, 10, 7, 5, 5, 8};
  const auto profile = static_cast<Profile>(is_half(dtype) ? s.choose_weighted(kHalfProfileWeights)
                                                           : s.choose_weighted(kProfileWeights));
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    auto values = t.values<T>();
    if constexpr (is_half_type_v<T>) {
      if (profile == Profile::runs) {
        fill_run<T>(s, values);
        return;
      }
    }
    for (std::size_t i = 0; i < values.size(); ++i) {
      if constexpr (std::is_same_v<T, Bool8>) {
        values[i] = profile == Profile::small_integers ? Bool8(1) : profile == Profile::fractions ? Bool8(0)
                                                                                                 : Bool8(s.choose(2));
      } else if constexpr (is_float_type_v<T>) {
        values[i] = draw_float<T>(s, profile, std::span<const T>(values.data(), i));
      } else {
        values[i] = draw_integer<T>(s, profile);
      }
    }
  });
  return t;
}

}  // namespace

Tensor generate_values(ChoiceSource& s, DType dtype, const Shape& shape) {
  if (auto* seeded = dynamic_cast<SeededChoices*>(&s)) return values_from(*seeded, dtype, shape);
  return values_from(s, dtype, shape);
}

}  // namespace einfuzz
