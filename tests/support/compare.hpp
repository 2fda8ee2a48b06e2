// Test helper: bitwise tensor comparison with a readable failure message.
#pragma once

#include <gtest/gtest.h>

#include "einfuzz/core/tensor.hpp"

namespace einfuzz::test {

/// Same dtype, same shape, and every element the same bits — except that any two NaNs are equal
/// unless `strict_nan` (payloads are ignored by default, as ORACLE.md says). -0.0 != +0.0.
::testing::AssertionResult bitwise_same(const Tensor& expected, const Tensor& actual, bool strict_nan = false);

}  // namespace einfuzz::test
