// The shuffle backend: a correct any-order einsum and reduce that evaluates every element along random
// valid paths (summation trees, product associations, FMA, wider accumulators, pairwise contractions).
// This file holds the adapter and the case's random stream; the evaluations are in shuffle_einsum.cpp
// and shuffle_reduce.cpp.
#include "einfuzz/backends/shuffle.hpp"

#include <bit>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "einfuzz/backends/adapter.hpp"
#include "einfuzz/core/check_case.hpp"
#include "einfuzz/core/choice.hpp"
#include "shuffle_eval.hpp"

namespace einfuzz {
namespace {

/// FNV-1a over everything that makes a case what it is (op, pattern, reduction, supplied lengths,
/// dtype, shapes, value bytes): the stream a case's choices are drawn from, so a case gets the same
/// evaluation whichever cases ran before it (CASES.md: any order of cases). Every field is
/// length-prefixed, so two different cases never feed the same byte sequence. The bytes go in eight
/// at a time, as one little-endian word per step (then the rest one by one): a byte per step was
/// 3.5% of a `fused,shuffle` campaign, and Rng::mix spreads the result's bits before any draw.
class ContentHash {
 public:
  void bytes(const void* data, std::size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    std::size_t i = 0;
    for (; i + 8 <= size; i += 8) {
      std::uint64_t word;
      std::memcpy(&word, p + i, sizeof word);
      if constexpr (std::endian::native == std::endian::big) word = __builtin_bswap64(word);
      h_ = (h_ ^ word) * kPrime;
    }
    for (; i < size; ++i) h_ = (h_ ^ p[i]) * kPrime;
  }
  void number(std::uint64_t v) {
    unsigned char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
    bytes(b, sizeof b);
  }
  void text(std::string_view s) {
    number(s.size());
    bytes(s.data(), s.size());
  }
  std::uint64_t value() const { return h_; }

 private:
  static constexpr std::uint64_t kPrime = 0x100000001b3ULL;
  std::uint64_t h_ = 0xcbf29ce484222325ULL;
};

std::uint64_t case_content_hash(const Case& c) {
  ContentHash h;
  h.number(static_cast<std::uint64_t>(c.op));
  h.text(c.pattern);
  h.number(c.reduction.has_value());
  h.text(c.reduction.value_or(""));
  h.number(c.axis_lengths.size());
  for (const auto& [name, length] : c.axis_lengths) {
    h.text(name);
    h.number(static_cast<std::uint64_t>(length));
  }
  h.number(static_cast<std::uint64_t>(c.dtype));
  h.number(c.inputs.size());
  for (const Tensor& t : c.inputs) {
    h.number(static_cast<std::uint64_t>(t.dtype()));
    h.number(t.shape().size());
    for (const std::int64_t length : t.shape()) h.number(static_cast<std::uint64_t>(length));
    const auto raw = t.bytes();
    h.number(raw.size());
    h.bytes(raw.data(), raw.size());
  }
  // A VJP case's cotangent (a forward case hashes as it always has).
  if (c.cotangent) {
    const auto raw = c.cotangent->bytes();
    h.number(raw.size());
    h.bytes(raw.data(), raw.size());
  }
  return h.value();
}

/// What shuffle evaluates: the standard dtypes and kinds plus f16 and bf16.
Evaluates shuffle_evaluates() {
  Evaluates e = standard_evaluates();
  e.dtypes.push_back(DType::f16);
  e.dtypes.push_back(DType::bf16);
  return e;
}

/// "f16 accumulate f32, bf16 accumulate bf16, f32 accumulate f64 round_inputs tf32, f64 accumulate f64".
/// Appended piece by piece: the fuzz targets build a shuffle backend, and so this text, per input.
void append_profiles_text(std::string& s, const Capabilities& caps) {
  bool first = true;
  for (const DType d : {DType::f16, DType::bf16, DType::f32, DType::f64}) {
    const PrecisionProfile p = caps.profile(d);
    if (!first) s += ", ";
    first = false;
    s += dtype_name(d);
    s += " accumulate ";
    s += dtype_name(p.accumulate);
    if (p.round_inputs != InputRounding::none) {
      s += " round_inputs ";
      s += input_rounding_name(p.round_inputs);
    }
  }
}

class ShuffleBackend final : public Backend {
 public:
  explicit ShuffleBackend(const ShuffleOptions& options)
      : options_(options),
        caps_(full_capabilities(Semantics::any_order, NanProfile::propagate, options.factoring, "", shuffle_evaluates())) {
    caps_.vjp = options.vjp;  // tie rule equal-share (the default)
    caps_.accumulate.reserve(4);
    for (const DType d : {DType::f16, DType::bf16, DType::f32, DType::f64}) {
      const PrecisionProfile p = shuffle_profile(options, d);
      if (!is_valid_profile(d, p)) throw std::invalid_argument("shuffle: an invalid precision profile for " + std::string(dtype_name(d)));
      caps_.accumulate.emplace_back(d, p.accumulate);
      if (p.round_inputs != InputRounding::none) caps_.round_inputs.emplace_back(d, p.round_inputs);
    }
    std::string& v = caps_.version;
    v.reserve(256);  // one allocation: at most 203 characters (a 20-digit seed, every profile with rounded inputs)
    v = "einfuzz shuffle (seed ";
    v += std::to_string(options.seed);
    v += "; ";
    append_profiles_text(v, caps_);
    v += ')';
  }
  std::string_view name() const override { return "shuffle"; }
  const Capabilities& capabilities() const override { return caps_; }

  BackendResult run(const Case& c) override {
    // An einsum on bool is outside what shuffle implements, decided before the checker runs.
    if (auto mixed = reject_mixed_dtypes(c)) return *std::move(mixed);
    if (c.op == Op::einsum && !is_float(c.dtype) && !is_integer(c.dtype)) {
      return Unsupported{"shuffle: no einsum on bool"};
    }
    if (c.is_vjp()) return options_.vjp ? vjp(c) : BackendResult(Unsupported{"shuffle: VJPs are off (ShuffleOptions::vjp)"});
    // Each evaluation draws from the case's own stream.
    const PrecisionProfile profile = caps_.profile(c.dtype);
    return run_checked<true>(
        c, options_.limits,
        [&](auto tag, const CheckedEinsum& e, const Case& x) -> BackendResult {
          Rng rng(Rng::mix(options_.seed, case_content_hash(x)));
          return shuffle_detail::shuffle_einsum<decltype(tag)>(e, x.inputs, rng, options_, profile);
        },
        [&](auto tag, const CheckedReduce& r, const Case& x) -> BackendResult {
          Rng rng(Rng::mix(options_.seed, case_content_hash(x)));
          return shuffle_detail::shuffle_reduce<decltype(tag)>(r, x.inputs[0], rng, options_, profile);
        });
  }

 private:
  /// A VJP case: the checker's rules (the forward case's, then notDifferentiable and the
  /// cotangent's), then one random valid evaluation of each cotangent.
  BackendResult vjp(const Case& c) {
    auto checked = check_case(c, options_.limits);
    if (!checked) return rejected(checked.error());
    Rng rng(Rng::mix(options_.seed, case_content_hash(c)));
    const auto eval = [&](auto tag) -> BackendResult {
      using T = decltype(tag);
      if (const auto* e = std::get_if<CheckedEinsum>(&*checked)) {
        return Gradients{shuffle_detail::shuffle_vjp_einsum<T>(*e, c.inputs, *c.cotangent, rng, caps_.profile(c.dtype))};
      }
      return Gradients{{shuffle_detail::shuffle_vjp_reduce<T>(std::get<CheckedReduce>(*checked), c.inputs[0],
                                                               *c.cotangent, rng)}};
    };
    // check_case has said notDifferentiable for every other dtype.
    return c.dtype == DType::f32 ? eval(float{}) : eval(double{});
  }

  ShuffleOptions options_;
  Capabilities caps_;
};

}  // namespace

PrecisionProfile shuffle_profile(const ShuffleOptions& options, DType dtype) {
  for (const auto& [d, p] : options.profiles) {
    if (d == dtype) return p;
  }
  PrecisionProfile p = storage_profile(dtype);
  if (!options.random_profiles || !is_float(dtype) || dtype == DType::f64) return p;
  // A stream of its own per dtype, from the seed alone: the profile is the backend's, not a case's.
  Rng rng(Rng::mix(options.seed, 0x5052'4f46'0000'0000ULL + static_cast<std::uint64_t>(dtype)));
  if (is_half(dtype)) {
    constexpr DType kAccumulators[] = {DType::f32, DType::f64};
    const std::uint64_t pick = rng.below(3);
    if (pick > 0) p.accumulate = kAccumulators[pick - 1];
  } else {
    if (rng.chance(1, 2)) p.accumulate = DType::f64;
    if (rng.chance(1, 3)) p.round_inputs = InputRounding::tf32;
  }
  return p;
}

std::unique_ptr<Backend> make_shuffle_backend(const ShuffleOptions& options) {
  return std::make_unique<ShuffleBackend>(options);
}

std::unique_ptr<Backend> make_shuffle_backend(std::uint64_t seed) {
  ShuffleOptions options;
  options.seed = seed;
  return make_shuffle_backend(options);
}

}  // namespace einfuzz
