// GMP's memory functions with a per-thread cache of freed limb blocks (gmp_blocks.cpp).
#pragma once

#include <cstddef>

namespace einfuzz::reference::detail {

/// Blocks of 1 to kGmpCachedLimbs limbs are cached, at most kGmpListDepth of each size per thread.
inline constexpr std::size_t kGmpCachedLimbs = 32;
inline constexpr int kGmpListDepth = 64;

/// How many freed blocks of `limbs` limbs this thread's list holds now (0 for a size not cached).
int gmp_cached_blocks(std::size_t limbs);

}  // namespace einfuzz::reference::detail
