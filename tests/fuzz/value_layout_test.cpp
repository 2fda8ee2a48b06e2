// The value-aware mutator's layouts (fuzz/fuzz_input.hpp): a layout value_layout finds recorded is
// the one decoding the input afresh gives, whatever was decoded in between, for each op.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <vector>

#include "einfuzz/core/choice.hpp"
#include "fuzz_input.hpp"

namespace einfuzz::fuzz {
namespace {

/// A generated-mode input: kind, knobs (bit 0 set), a uint16 length, the generator's bytes, values.
std::vector<std::uint8_t> generated_input(Rng& rng) {
  const std::size_t choices = 8 + rng.below(120);
  const std::size_t values = rng.below(64);
  std::vector<std::uint8_t> data = {static_cast<std::uint8_t>(rng.next()), static_cast<std::uint8_t>(rng.next() | 1),
                                    static_cast<std::uint8_t>(choices & 0xff), static_cast<std::uint8_t>(choices >> 8)};
  for (std::size_t i = 0; i < choices + values; ++i) data.push_back(static_cast<std::uint8_t>(rng.next()));
  if (rng.below(8) == 0) data.resize(4 + rng.below(choices));  // cut inside the generator's bytes
  return data;
}

bool same(const ValueLayout& a, const ValueLayout& b) {
  return a.offset == b.offset && a.width == b.width && a.dtype == b.dtype;
}

TEST(ValueLayout, ARecordedLayoutIsTheFreshOne) {
  Rng rng(7);
  std::vector<std::vector<std::uint8_t>> inputs;
  for (int i = 0; i < 300; ++i) inputs.push_back(generated_input(rng));
  int widths_differ = 0;
  for (const auto& data : inputs) {
    for (OpChoice op : {OpChoice::einsum, OpChoice::reduce, OpChoice::any}) {
      (void)decode_case(data, op);  // records the layout
      // Other inputs decoded in between, some under another op.
      const auto& other = inputs[rng.below(inputs.size())];
      (void)decode_case(other, op == OpChoice::reduce ? OpChoice::einsum : OpChoice::reduce);
      const ValueLayout found = value_layout(data, op);
      const ValueLayout fresh = value_layout_uncached(data, op);
      EXPECT_TRUE(same(found, fresh)) << "op " << static_cast<int>(op) << ": found offset " << found.offset
                                      << " width " << found.width << ", fresh offset " << fresh.offset << " width "
                                      << fresh.width;
      // The values after the generator's bytes decide nothing: changing them keeps the layout.
      std::vector<std::uint8_t> revalued = data;
      if (fresh.offset < revalued.size()) revalued[fresh.offset] ^= 0x5a;
      revalued.push_back(0x33);
      EXPECT_TRUE(same(value_layout(revalued, op), value_layout_uncached(revalued, op)));
    }
    widths_differ += value_layout_uncached(data, OpChoice::einsum).width !=
                     value_layout_uncached(data, OpChoice::reduce).width;
  }
  // The ops give different layouts for some inputs: a record under one op must not answer another.
  EXPECT_GT(widths_differ, 0);
}

}  // namespace
}  // namespace einfuzz::fuzz
