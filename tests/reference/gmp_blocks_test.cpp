// The reference's GMP block cache (reference/src/gmp_blocks.cpp): GMP integers take their limbs
// from this thread's lists, and work that frees every integer it made leaves every list as it
// found it, so that libFuzzer sees as many mallocs as frees in such a run.
#include <gmpxx.h>
#include <gtest/gtest.h>

#include <array>
#include <thread>
#include <vector>

#include "einfuzz/reference/exact.hpp"
#include "gmp_blocks.hpp"

namespace einfuzz::reference {
namespace {

using detail::gmp_cached_blocks;
using detail::kGmpCachedLimbs;
using detail::kGmpListDepth;

std::array<int, kGmpCachedLimbs + 2> counts() {
  std::array<int, kGmpCachedLimbs + 2> c{};
  for (std::size_t limbs = 0; limbs < c.size(); ++limbs) c[limbs] = gmp_cached_blocks(limbs);
  return c;
}

TEST(GmpBlocks, AnIntegerTakesItsLimbsFromThisThreadsList) {
  const int before = gmp_cached_blocks(3);
  {
    mpz_class x;
    mpz_realloc2(x.get_mpz_t(), 3 * GMP_NUMB_BITS);  // exactly three limbs
    EXPECT_EQ(gmp_cached_blocks(3), before - 1);
  }
  EXPECT_EQ(gmp_cached_blocks(3), before);
  EXPECT_EQ(gmp_cached_blocks(0), 0);                    // no list for nothing
  EXPECT_EQ(gmp_cached_blocks(kGmpCachedLimbs + 1), 0);  // nor for large blocks
}

// In a thread of its own: the main thread's lists are as the tests before left them (a test whose
// reference keeps a truth in a thread-local cache holds some blocks), so which test ran first
// decided whether this one passed.
TEST(GmpBlocks, WorkThatFreesWhatItMadeLeavesEveryListAsItFoundIt) {
  std::thread([] {
    { mpz_class first(1); }  // a thread's first allocation fills its lists
    const auto before = counts();
    for (std::size_t limbs = 1; limbs <= kGmpCachedLimbs; ++limbs) {
      EXPECT_EQ(before[limbs], kGmpListDepth) << limbs << " limbs: a fresh thread's lists are full";
    }
    {
      // Integers that grow one limb at a time through GMP's realloc, past the cached sizes and back,
      // more of them than a list holds, and the dyadic arithmetic of the oracle.
      std::vector<mpz_class> grown;
      for (int i = 0; i < kGmpListDepth + 10; ++i) {
        mpz_class x(i + 1);
        for (int bits = 0; bits < 40 * GMP_NUMB_BITS; bits += 23) {
          x <<= 23;  // grown in place: GMP reallocates x
          x += i;
        }
        mpz_realloc2(x.get_mpz_t(), static_cast<mp_bitcnt_t>(i % 8 + 1) * GMP_NUMB_BITS);  // and shrunk (to 0)
        grown.push_back(x * (i + 2));
      }
      Dyadic sum;
      for (int i = 0; i < 200; ++i) sum = sum + Dyadic::of(0x1.8p-40 * i) - Dyadic::of(1e30 + i);
      EXPECT_NE(sum.sign(), 0);
    }
    EXPECT_EQ(counts(), before);
  }).join();
}

TEST(GmpBlocks, AnotherThreadHasListsOfItsOwn) {
  const auto before = counts();
  int seen_there = -1;
  std::thread([&] {
    mpz_class x(7);  // the thread's first allocation fills its lists, then takes one limb
    seen_there = gmp_cached_blocks(1);
  }).join();
  EXPECT_EQ(seen_there, kGmpListDepth - 1) << "a thread's lists are filled on its first allocation";
  EXPECT_EQ(counts(), before);
}

}  // namespace
}  // namespace einfuzz::reference
