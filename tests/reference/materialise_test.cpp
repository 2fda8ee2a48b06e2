// reference/src/materialise.hpp's coordinate walk: step_coords, which the reference's loops use in
// place of a division per element, visits exactly what unravel_into gives for 0, 1, 2, … .
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "einfuzz/core/choice.hpp"
#include "materialise.hpp"  // reference/src

namespace einfuzz {
namespace {

using reference::detail::step_coords;
using reference::detail::unravel_into;

void expect_steps_unravel(const Shape& shape) {
  std::int64_t size = 1;
  for (const std::int64_t length : shape) size *= length;
  std::vector<std::int64_t> stepped(shape.size(), 0), divided(shape.size());
  for (std::int64_t flat = 0; flat < size; ++flat, step_coords(stepped, shape)) {
    unravel_into(flat, shape, divided);
    ASSERT_EQ(stepped, divided) << "element " << flat << " of a rank-" << shape.size() << " shape";
  }
  // Past the last element it wraps to element 0.
  EXPECT_EQ(stepped, std::vector<std::int64_t>(shape.size(), 0));
}

TEST(Materialise, StepCoordsVisitsWhatUnravelGives) {
  expect_steps_unravel({});
  expect_steps_unravel({1});
  expect_steps_unravel({5});
  expect_steps_unravel({1, 1, 1});
  expect_steps_unravel({3, 1, 4});
  expect_steps_unravel({1, 7, 1, 2});
  Rng rng(20261206);
  for (int i = 0; i < 300; ++i) {
    Shape shape(rng.below(6));
    for (std::int64_t& length : shape) length = static_cast<std::int64_t>(1 + rng.below(4));
    expect_steps_unravel(shape);
  }
}

}  // namespace
}  // namespace einfuzz
