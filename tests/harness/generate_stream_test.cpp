// Case i of a seed is the same case in every build of one generator version: `einfuzz fuzz --seed S`
// printed by a clang build reproduces with a gcc build, and the other way round. The digest below is
// of the cases the gcc (release) build draws; CI runs this test in that build and again in the clang
// (ASan + UBSan) tree. A draw whose order C++ leaves unspecified — two draws as the operands of one
// call, such as T(a) / T(b) on the 16-bit formats or insert(pos(), value()) — makes the clang run
// fail here. A deliberate change of the streams bumps kGeneratorVersion and this digest together.
// The same holds for the `shuffle` backend's summation orders: `--shuffle-seed S` gives one sum in
// every build (its halving recursion drew the split of each half as two operands of one call).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <variant>

#include "einfuzz/backends/shuffle.hpp"
#include "einfuzz/core/case.hpp"
#include "einfuzz/harness/campaign.hpp"
#include "einfuzz/harness/generate.hpp"

namespace einfuzz {
namespace {

/// FNV-1a, one byte at a time.
struct Fnv {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  void add(unsigned char byte) { h = (h ^ byte) * 0x100000001b3ULL; }
};

/// FNV-1a over the written cases (write_case: every field, every value's bits) of cases
/// 0 … count − 1 of `seed`, with `options`.
std::uint64_t stream_digest(std::uint64_t seed, std::uint64_t count, const GenOptions& options) {
  Fnv f;
  for (std::uint64_t i = 0; i < count; ++i) {
    SeededChoices s(Rng::mix(seed, i));
    for (const char byte : write_case(generate_case(s, options))) f.add(static_cast<unsigned char>(byte));
  }
  return f.h;
}

/// FNV-1a over the `shuffle` backend's answers (every tensor's bytes, or the kind of a non-answer)
/// to cases 0 … count − 1 of `seed`, with `options`.
std::uint64_t shuffle_digest(std::uint64_t shuffle_seed, std::uint64_t seed, std::uint64_t count,
                             const GenOptions& options) {
  const auto shuffle = make_shuffle_backend(shuffle_seed);
  Fnv f;
  const auto add_tensor = [&f](const Tensor& t) {
    for (const std::byte b : t.bytes()) f.add(static_cast<unsigned char>(b));
  };
  for (std::uint64_t i = 0; i < count; ++i) {
    SeededChoices s(Rng::mix(seed, i));
    const Case c = generate_case(s, options);
    if (!shuffle->supports(c)) continue;
    const BackendResult r = shuffle->run(c);
    f.add(static_cast<unsigned char>(r.index()));
    if (const auto* t = std::get_if<Tensor>(&r)) add_tensor(*t);
    if (const auto* g = std::get_if<Gradients>(&r)) {
      for (const Tensor& t : g->tensors) add_tensor(t);
    }
  }
  return f.h;
}

/// The campaign's options with every kind of case frequent: f16/bf16 fractions, the invalid
/// mutations (one axis inserted), VJP cases (their cotangent's other shapes) and input layouts.
GenOptions every_kind() {
  GenOptions o = campaign_gen_options();
  o.invalid_percent = 40;
  o.vjp_percent = 30;
  o.layout_percent = 30;
  return o;
}

TEST(GenerateStream, CaseIOfASeedIsTheSameInEveryBuild) {
  ASSERT_EQ(kGeneratorVersion, "einfuzz-gen/5") << "a new generator version needs a new digest below";
  // einfuzz-gen/4 drew 0xa0b879a613ac4a71 and 0xd1f74a011a7d2707.
  EXPECT_EQ(stream_digest(1, 400, campaign_gen_options()), 0xdc61df7a189748d9ULL);
  EXPECT_EQ(stream_digest(2, 400, every_kind()), 0xef1450ac49670117ULL);
}

TEST(GenerateStream, ShuffleSumsOfASeedAreTheSameInEveryBuild) {
  ASSERT_EQ(kGeneratorVersion, "einfuzz-gen/5") << "a new generator version needs a new digest below";
  // Since shuffle's case hash reads the bytes a word at a time (was 0x7de9c03a5bd81ff2), since its
  // einsum VJPs follow its declared precision profile (was 0x9806c0e432578307), and since
  // einfuzz-gen/5 (was 0x76b4f0db1a33da1b).
  EXPECT_EQ(shuffle_digest(1, 3, 400, every_kind()), 0x974cd59dfda9cbd6ULL);
}

}  // namespace
}  // namespace einfuzz
