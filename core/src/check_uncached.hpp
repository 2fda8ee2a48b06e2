// The pattern checkers without their memos, for check_case: its own memo keeps the whole case's
// result, so going through the pattern memos too would copy each checked pattern once more.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/check_reduce.hpp"

namespace einfuzz::detail {

/// parse_einsum + check_einsum, computed afresh.
Result<CheckedEinsum> check_einsum_uncached(std::string_view pattern, std::span<const Shape> shapes,
                                            const Limits& limits);

/// check_reduce, computed afresh.
Result<CheckedReduce> check_reduce_uncached(std::string_view pattern, std::string_view reduction, const Shape& input,
                                            std::span<const std::pair<std::string, std::int64_t>> axis_lengths,
                                            DType dtype, const Limits& limits);

/// Drop this thread's check_einsum_shared and check_reduce_shared memos (release_check_memos).
void release_einsum_memo() noexcept;
void release_reduce_memo() noexcept;

}  // namespace einfuzz::detail
