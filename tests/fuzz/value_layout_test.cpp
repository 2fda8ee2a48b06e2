// The value-aware mutator's layouts (fuzz/fuzz_input.hpp): a layout value_layout finds recorded is
// the one decoding the input afresh gives, whatever was decoded in between, for each op.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
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

// fuzz_external's views (kExternalLayoutPercent): value bytes overwrite the generated values after
// the layouts were drawn, and every laid-out input must still be a storage its view can hold (an
// expanded axis reads one slice: its values made equal again); with layout percent 0 the same bytes
// decode to the same case without layouts.
TEST(ValueLayout, ValueBytesKeepEveryViewConsistent) {
  Rng rng(11);
  int laid_out = 0, expanded = 0;
  for (int i = 0; i < 3000; ++i) {
    std::vector<std::uint8_t> data = generated_input(rng);
    for (int k = 0; k < 256; ++k) data.push_back(static_cast<std::uint8_t>(rng.next()));  // value bytes
    const std::optional<Decoded> viewed = decode_case(data, OpChoice::any, kExternalLayoutPercent);
    const std::optional<Decoded> dense = decode_case(data, OpChoice::any, 0);
    ASSERT_EQ(viewed.has_value(), dense.has_value());
    if (!viewed) continue;
    EXPECT_TRUE(dense->c.layouts.empty());
    EXPECT_EQ(viewed->c.pattern, dense->c.pattern);
    ASSERT_EQ(viewed->c.inputs.size(), dense->c.inputs.size());
    for (std::size_t k = 0; k < viewed->c.inputs.size(); ++k) {
      EXPECT_EQ(viewed->c.inputs[k].shape(), dense->c.inputs[k].shape());
    }
    laid_out += !viewed->c.layouts.empty();
    for (std::size_t k = 0; k < viewed->c.layouts.size(); ++k) {
      if (!viewed->c.layouts[k]) continue;
      const auto& strides = viewed->c.layouts[k]->strides;
      const Shape& shape = viewed->c.inputs[k].shape();
      for (std::size_t d = 0; d < strides.size(); ++d) expanded += strides[d] == 0 && shape[d] > 1;
      const Result<Tensor> storage = layout_storage(viewed->c.inputs[k], *viewed->c.layouts[k]);
      EXPECT_TRUE(static_cast<bool>(storage)) << "input " << k << " of '" << viewed->c.pattern
                                       << "': " << (storage ? "" : storage.error().message);
    }
  }
  // Both kinds of view occur, so the assertions above were exercised.
  EXPECT_GT(laid_out, 100);
  EXPECT_GT(expanded, 10);
}

}  // namespace
}  // namespace einfuzz::fuzz
