// Products of axis lengths (element counts of shapes and index spaces) without signed overflow.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace einfuzz {

/// The product of `lengths`: 0 as soon as any length is 0, decided before the others are multiplied
/// (an empty tensor's other lengths may multiply far past int64); nullopt when a length is negative
/// or the product of the nonzero lengths does not fit int64. The empty product is 1.
std::optional<std::int64_t> checked_product(std::span<const std::int64_t> lengths) noexcept;

/// checked_product of lengths that the checker or the harness limits have already bounded: 0 for an
/// empty space whatever its other lengths; an overflow or a negative length is a harness bug.
std::int64_t element_count(std::span<const std::int64_t> lengths) noexcept;

}  // namespace einfuzz
