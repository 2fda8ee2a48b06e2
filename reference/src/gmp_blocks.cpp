// GMP's memory functions with a per-thread cache of freed limb blocks.
//
// The multiset oracle's general path builds and drops many small GMP integers per element: on a
// corpus libFuzzer grew, GMP's allocations were 79% of all of fuzz_einsum_diff's mallocs
// (docs/performance.md, "GMP's blocks"). Each freed block of a small size goes to this thread's
// list for that exact size and is handed out again for the next allocation of that size.
//
// Every block is an ordinary malloc block of exactly the size GMP asked for, so blocks GMP took
// with its default functions (before these were installed, or by another library) are freed and
// reused correctly: a block is only ever reused for a request of its own size. Each list holds at
// most kDepth blocks; the rest go back to free(). A thread's lists are freed when it ends.
//
// A thread fills its lists on its first GMP allocation (the main thread while the program starts).
// From then on a piece of work that frees every GMP integer it made also calls malloc() exactly as
// often as free(): libFuzzer, which counts both per run under -detect_leaks, sees no unmatched
// malloc that would make it search that run for leaks.
#include "gmp_blocks.hpp"

#include <gmp.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

// Allocator plumbing, not code under test: libFuzzer's coverage of it (a list hit or missed) would
// only tell it how full a list was.
#if defined(__clang__)
#define EINFUZZ_NO_COVERAGE __attribute__((no_sanitize("coverage")))
#else
#define EINFUZZ_NO_COVERAGE
#endif

namespace einfuzz::reference {
namespace {

constexpr std::size_t kLimb = sizeof(mp_limb_t);
constexpr std::size_t kSizes = detail::kGmpCachedLimbs;
constexpr int kDepth = detail::kGmpListDepth;

/// One thread's lists: trivially destructible, so it stays readable after Release ran.
struct Lists {
  void* blocks[kSizes][kDepth];
  int count[kSizes];
  bool filled;    ///< the lists were filled once
  bool released;  ///< the thread is ending: free() from now on
};
thread_local Lists lists;

/// Frees the thread's cached blocks when it ends (the main thread's before static destructors, which
/// may still free GMP integers: those then go to free()).
struct Release {
  EINFUZZ_NO_COVERAGE ~Release() {
    for (std::size_t s = 0; s < kSizes; ++s) {
      for (int i = 0; i < lists.count[s]; ++i) std::free(lists.blocks[s][i]);
      lists.count[s] = 0;
    }
    lists.released = true;
  }
};
thread_local Release release;

[[noreturn]] void out_of_memory(std::size_t bytes) {
  std::fprintf(stderr, "einfuzz: GMP could not allocate %zu bytes\n", bytes);
  std::abort();
}

/// Fills every list of this thread to kDepth blocks (once).
EINFUZZ_NO_COVERAGE void fill() {
  lists.filled = true;
  (void)release;  // odr-use: constructs this thread's Release, which frees the lists at its end
  for (std::size_t s = 0; s < kSizes; ++s) {
    const std::size_t bytes = (s + 1) * kLimb;
    for (; lists.count[s] < kDepth; ++lists.count[s]) {
      void* p = std::malloc(bytes);
      if (!p) out_of_memory(bytes);
      lists.blocks[s][lists.count[s]] = p;
    }
  }
}

/// The list for blocks of `bytes`, or -1 when blocks of that size are not cached.
EINFUZZ_NO_COVERAGE int list_of(std::size_t bytes) {
  if (bytes == 0 || bytes % kLimb != 0 || bytes / kLimb > kSizes) return -1;
  return static_cast<int>(bytes / kLimb - 1);
}

EINFUZZ_NO_COVERAGE void* allocate(std::size_t bytes) {
  if (!lists.filled && !lists.released) fill();
  const int s = list_of(bytes);
  if (s >= 0 && lists.count[s] > 0) return lists.blocks[s][--lists.count[s]];
  void* p = std::malloc(bytes);
  if (!p) out_of_memory(bytes);
  return p;
}

EINFUZZ_NO_COVERAGE void deallocate(void* p, std::size_t bytes) {
  const int s = list_of(bytes);
  if (s >= 0 && lists.filled && !lists.released && lists.count[s] < kDepth) {
    lists.blocks[s][lists.count[s]++] = p;
    return;
  }
  std::free(p);
}

/// A grown or shrunk block: through the lists when either size is cached, so that every size's
/// list gets back as many blocks as were taken from it (realloc() would move a taken block into
/// another size's list, and libFuzzer would count its malloc or free in a later run).
EINFUZZ_NO_COVERAGE void* reallocate(void* p, std::size_t old_bytes, std::size_t new_bytes) {
  if (old_bytes == new_bytes) return p;
  if (list_of(old_bytes) < 0 && list_of(new_bytes) < 0) {
    void* q = std::realloc(p, new_bytes);
    if (!q) out_of_memory(new_bytes);
    return q;
  }
  void* q = allocate(new_bytes);
  std::memcpy(q, p, old_bytes < new_bytes ? old_bytes : new_bytes);
  deallocate(p, old_bytes);
  return q;
}

/// Installed once, while the program starts (single-threaded).
const bool installed = [] {
  mp_set_memory_functions(allocate, reallocate, deallocate);
  fill();
  return true;
}();

}  // namespace

/// Referenced from exact.cpp, so that a static link keeps this file (and its installer).
bool gmp_blocks_installed() { return installed; }

int detail::gmp_cached_blocks(std::size_t limbs) {
  const int s = list_of(limbs * kLimb);
  return s < 0 ? 0 : lists.count[s];
}

}  // namespace einfuzz::reference
