// Shape against std::vector<std::int64_t>, its model: random sequences of every modifier leave both
// with the same elements, across the inline/heap boundary, through copies and moves of either kind.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "einfuzz/core/shape.hpp"

namespace einfuzz {
namespace {

using Model = std::vector<std::int64_t>;

bool same(const Shape& s, const Model& m) {
  if (s.size() != m.size() || s.empty() != m.empty() || s.capacity() < s.size()) return false;
  for (std::size_t i = 0; i < m.size(); ++i) {
    if (s[i] != m[i] || s.data()[i] != m[i]) return false;
  }
  return s.to_vector() == m && Model(s.rbegin(), s.rend()) == Model(m.rbegin(), m.rend());
}

/// One random modifier, applied to both.
void step(Shape& s, Model& m) {
  const auto value = *rc::gen::inRange<std::int64_t>(-3, 40);
  const std::size_t size = m.size();
  const auto pos = [&] { return *rc::gen::inRange<std::size_t>(0, size + 1); };
  switch (*rc::gen::inRange(0, 14)) {
    case 0: s.push_back(value), m.push_back(value); break;
    case 1:
      if (size > 0) s.pop_back(), m.pop_back();
      break;
    case 2: {
      const auto n = *rc::gen::inRange<std::size_t>(0, 14);
      s.resize(n, value), m.resize(n, value);
      break;
    }
    case 3: {
      const std::size_t at = pos();
      s.insert(s.begin() + at, value), m.insert(m.begin() + at, value);
      break;
    }
    case 4: {
      const std::size_t at = pos();
      const auto n = *rc::gen::inRange<std::size_t>(0, 9);
      s.insert(s.begin() + at, n, value), m.insert(m.begin() + at, n, value);
      break;
    }
    case 5: {  // a range of the Shape itself: insert must copy it before moving the elements
      const std::size_t at = pos();
      const std::size_t a = pos(), b = pos();
      const std::size_t lo = std::min(a, b), hi = std::max(a, b);
      const Model range(m.begin() + lo, m.begin() + hi);
      s.insert(s.begin() + at, s.begin() + lo, s.begin() + hi), m.insert(m.begin() + at, range.begin(), range.end());
      break;
    }
    case 6:
      if (size > 0) {
        const std::size_t at = *rc::gen::inRange<std::size_t>(0, size);
        s.erase(s.begin() + at), m.erase(m.begin() + at);
      }
      break;
    case 7: {
      const std::size_t a = pos(), b = pos();
      const std::size_t lo = std::min(a, b), hi = std::max(a, b);
      s.erase(s.begin() + lo, s.begin() + hi), m.erase(m.begin() + lo, m.begin() + hi);
      break;
    }
    case 8: s.clear(), m.clear(); break;
    case 9: {
      const Shape copy(s);
      s = copy;  // copy assignment over a non-empty Shape
      break;
    }
    case 10: {
      Shape moved(std::move(s));
      RC_ASSERT(s.empty());  // NOLINT(bugprone-use-after-move): the moved-from state is specified
      s = std::move(moved);
      break;
    }
    case 11: {
      Shape other{value, value + 1};
      swap(s, other);
      swap(s, other);
      break;
    }
    case 12: {
      const auto n = *rc::gen::inRange<std::size_t>(0, 14);
      s.assign(n, value), m.assign(n, value);
      break;
    }
    default: s.reserve(size + 7); break;
  }
}

RC_GTEST_PROP(ShapeModel, EveryModifierAgreesWithStdVector, ()) {
  Shape s;
  Model m;
  const int steps = *rc::gen::inRange(1, 40);
  for (int i = 0; i < steps; ++i) {
    step(s, m);
    RC_ASSERT(same(s, m));
  }
  // Copies and moves of the final state, inline or on the heap, keep it.
  const Shape copy = s;
  RC_ASSERT(same(copy, m));
  RC_ASSERT(copy == s);
  Shape moved = std::move(s);
  RC_ASSERT(same(moved, m));
  Shape assigned{1, 2, 3, 4, 5, 6, 7, 8};
  assigned = std::move(moved);
  RC_ASSERT(same(assigned, m));
  RC_ASSERT(same(Shape(m.begin(), m.end()), m));
  RC_ASSERT(same(Shape(m), m));
}

RC_GTEST_PROP(ShapeModel, OrdersAsStdVector, (const Model& a, const Model& b)) {
  const Shape sa(a), sb(b);
  RC_ASSERT((sa == sb) == (a == b));
  RC_ASSERT((sa < sb) == (a < b));
  RC_ASSERT((sa <=> sb) == (a <=> b));
}

TEST(Shape, KeepsSixLengthsWithoutAHeapBlockAndMoreInOne) {
  Shape s{2, 3, 5, 7, 11, 13};
  const std::int64_t* inside = s.data();
  EXPECT_EQ(s.capacity(), Shape::kInline);
  // The inline storage is part of the object itself.
  EXPECT_GE(reinterpret_cast<const char*>(inside), reinterpret_cast<const char*>(&s));
  EXPECT_LT(reinterpret_cast<const char*>(inside), reinterpret_cast<const char*>(&s + 1));
  s.push_back(17);
  EXPECT_GT(s.capacity(), Shape::kInline);
  EXPECT_EQ(s, (Shape{2, 3, 5, 7, 11, 13, 17}));
  const std::span<const std::int64_t> view = s;  // contiguous: a span of its lengths
  EXPECT_EQ(view.size(), 7U);
  EXPECT_EQ(view.back(), 17);
  EXPECT_THROW((void)s.at(7), std::out_of_range);
}

}  // namespace
}  // namespace einfuzz
