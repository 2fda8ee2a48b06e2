// Judges a backend's result against the reference (ORACLE.md: the ordered oracle).
#pragma once

#include "einfuzz/core/tensor.hpp"
#include "einfuzz/harness/verdict.hpp"

namespace einfuzz {

struct OrderedJudgeOptions {
  bool strict_nan_payload = false;  ///< compare NaN payloads and signs too (default: "is NaN")
};

/// Ordered oracle: every element must have the reference's bit pattern (NaNs compared as "is NaN"
/// unless strict). Shape or dtype differences are `mismatch(shape)`; otherwise the first differing
/// element is reported with both values as hex-float and decimal.
Verdict judge_ordered(const Tensor& expected, const Tensor& actual, const OrderedJudgeOptions& options = {});

/// "0x1.8p+1 (3)" — the CASES.md spelling followed by the shortest round-trip decimal.
std::string describe_value(const Tensor& t, std::int64_t flat_index);

}  // namespace einfuzz
