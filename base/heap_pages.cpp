#include "base/heap_pages.h"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

namespace lexpack::base {

size_t use_huge_heap_pages(size_t reserve) {
  constexpr uintptr_t kHuge = uintptr_t(2) << 20;
  // Large blocks from the heap (freed ones are reused, not unmapped and
  // faulted in again), no trimming, and growth in steps of `reserve`.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, int(reserve));
  // A block larger than what is left at the heap's top (a process that
  // just started) makes it grow now, by the block and the pad; freed, it
  // goes back to the top. Its pages are not touched.
  void* grow = std::malloc(size_t(16) << 20);
  if (!grow) return 0;
  uintptr_t start = (reinterpret_cast<uintptr_t>(grow) + kHuge - 1) & ~(kHuge - 1);
  uintptr_t end = reinterpret_cast<uintptr_t>(sbrk(0)) & ~(kHuge - 1);
  size_t advised = 0;
  if (end > start && madvise(reinterpret_cast<void*>(start), end - start, MADV_HUGEPAGE) == 0) {
    advised = end - start;
  }
  std::free(grow);
  return advised;
}

}  // namespace lexpack::base
