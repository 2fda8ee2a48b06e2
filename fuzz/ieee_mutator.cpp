// IEEE-aware value mutations for the differential targets' custom mutator (see ieee_mutator.hpp).
#include "ieee_mutator.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "einfuzz/core/choice.hpp"

namespace einfuzz::fuzz {
namespace {

template <class T>
T float_edge(Rng& rng, const std::uint8_t* neighbour) {
  using L = std::numeric_limits<T>;
  using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  constexpr int kMantissaBits = L::digits - 1;
  constexpr Bits kExponentMask = static_cast<Bits>(((Bits{1} << (sizeof(T) * 8 - 1)) - 1) & ~((Bits{1} << kMantissaBits) - 1));
  const T sign = rng.chance(1, 2) ? T(-1) : T(1);
  switch (rng.below(14)) {
    case 0: {  // NaN: random sign, quiet or signalling, random non-zero payload
      Bits mantissa = static_cast<Bits>(rng.next()) & ((Bits{1} << kMantissaBits) - 1);
      if (rng.chance(1, 2)) mantissa = static_cast<Bits>(mantissa & 0xff);  // small payloads read well
      if (rng.chance(1, 2)) mantissa |= Bits{1} << (kMantissaBits - 1);    // quiet bit
      if (mantissa == 0) mantissa = 1;
      Bits bits = kExponentMask | mantissa;
      if (rng.chance(1, 2)) bits |= Bits{1} << (sizeof(T) * 8 - 1);
      return std::bit_cast<T>(bits);
    }
    case 1: return sign * L::infinity();
    case 2: return sign * T(0);
    case 3: return sign * L::denorm_min();
    case 4: return sign * std::nextafter(L::min(), T(0));  // largest subnormal
    case 5: return sign * L::min();                         // smallest normal
    case 6: return sign * L::max();
    case 7: return std::nextafter(T(1), T(2));              // 1 + ulp
    case 8: return std::nextafter(T(1), T(0));              // the largest value below 1
    case 9: return sign;
    case 10: return sign * std::ldexp(T(1), static_cast<int>(rng.between(L::min_exponent - L::digits, L::max_exponent - 1)));
    case 11: {  // the negation of the neighbour: a cancellation pair
      if (!neighbour) return sign;
      T v;
      std::memcpy(&v, neighbour, sizeof(T));
      return -v;
    }
    case 12: return sign * std::sqrt(L::max());  // squares overflow, products of two stay finite
    default: return sign * T(static_cast<int>(rng.between(0, 16)));
  }
}

/// The same edges for the 16-bit formats, built on their bits and their numeric_limits, plus the
/// half-ulp tie 2^-p (1 + it rounds to 1) and 2^p (adding 1 to it is lost).
template <class T>
T half_edge(Rng& rng, const std::uint8_t* neighbour) {
  using L = std::numeric_limits<T>;
  constexpr int kMantissaBits = L::digits - 1;
  constexpr auto kExponentMask = static_cast<std::uint16_t>(0x7fffu & ~((1u << kMantissaBits) - 1));
  const bool negative = rng.chance(1, 2);
  const auto with_sign = [&](T v) { return negative ? -v : v; };
  switch (rng.below(15)) {
    case 0: {
      auto mantissa = static_cast<std::uint16_t>(rng.next() & ((1u << kMantissaBits) - 1));
      if (rng.chance(1, 2)) mantissa |= static_cast<std::uint16_t>(1u << (kMantissaBits - 1));  // quiet bit
      if (mantissa == 0) mantissa = 1;
      return with_sign(T::from_bits(static_cast<std::uint16_t>(kExponentMask | mantissa)));
    }
    case 1: return with_sign(L::infinity());
    case 2: return with_sign(T(0));
    case 3: return with_sign(L::denorm_min());
    case 4: return with_sign(T::from_bits(static_cast<std::uint16_t>(L::min().bits() - 1)));  // largest subnormal
    case 5: return with_sign(L::min());
    case 6: return with_sign(L::max());
    case 7: return next_toward(T(1), T(2));
    case 8: return next_toward(T(1), T(0));
    case 9: return with_sign(T(1));
    case 10: return with_sign(static_cast<T>(std::ldexp(1.0, static_cast<int>(rng.between(L::min_exponent - L::digits, L::max_exponent - 1)))));
    case 11: {
      if (!neighbour) return with_sign(T(1));
      std::uint16_t bits;
      std::memcpy(&bits, neighbour, sizeof bits);
      return -T::from_bits(bits);
    }
    case 12: return with_sign(static_cast<T>(std::ldexp(1.0, -L::digits)));  // half an ulp of 1: a tie
    case 13: return with_sign(static_cast<T>(std::ldexp(1.0, L::digits)));   // 2^p: + 1 is lost
    default: return with_sign(T(static_cast<int>(rng.between(0, 16))));
  }
}

template <class T>
T integer_edge(Rng& rng) {
  using L = std::numeric_limits<T>;
  switch (rng.below(9)) {
    case 0: return L::min();
    case 1: return L::max();
    case 2: return T(-1);
    case 3: return T(0);
    case 4: return T(1);
    case 5: return T(L::max() / 2 + 1);  // doubling wraps
    case 6: return T(L::min() / 2);
    case 7: return T(L::min() + 1);
    default: return static_cast<T>(rng.next());
  }
}

}  // namespace

std::size_t mutate_value(std::uint8_t* data, std::size_t size, std::size_t max_size, unsigned seed,
                         const ValueLayout& layout) {
  Rng rng(seed);
  if (layout.width == 0 || layout.offset > size || rng.chance(1, 3)) return 0;
  const std::size_t w = layout.width;
  const std::size_t elements = (size - layout.offset) / w;
  const bool can_append = layout.offset + (elements + 1) * w <= max_size;
  if (elements == 0 && !can_append) return 0;
  // Overwrite an existing element, or (one time in eight, when it fits) append a new one.
  const std::size_t k = elements == 0 || (can_append && rng.chance(1, 8)) ? elements : rng.below(elements);
  std::uint8_t* at = data + layout.offset + k * w;
  const std::uint8_t* neighbour = k > 0 ? at - w : (elements > 1 ? at + w : nullptr);
  switch (layout.dtype) {
    case DType::f32: { const float v = float_edge<float>(rng, neighbour); std::memcpy(at, &v, w); break; }
    case DType::f64: { const double v = float_edge<double>(rng, neighbour); std::memcpy(at, &v, w); break; }
    case DType::i32: { const auto v = integer_edge<std::int32_t>(rng); std::memcpy(at, &v, w); break; }
    case DType::i64: { const auto v = integer_edge<std::int64_t>(rng); std::memcpy(at, &v, w); break; }
    case DType::boolean: at[0] = k < elements ? static_cast<std::uint8_t>(at[0] ^ 1) : 1; break;
    case DType::f16: { const std::uint16_t v = half_edge<Float16>(rng, neighbour).bits(); std::memcpy(at, &v, w); break; }
    case DType::bf16: { const std::uint16_t v = half_edge<BFloat16>(rng, neighbour).bits(); std::memcpy(at, &v, w); break; }
  }
  // Appending past `size` grows the input by one element (any trailing partial element is dropped).
  return k < elements ? size : layout.offset + (k + 1) * w;
}

}  // namespace einfuzz::fuzz
