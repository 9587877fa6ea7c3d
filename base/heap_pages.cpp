#include "base/heap_pages.h"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>

// The end of the program's data, where the main heap starts.
extern "C" char end;

namespace lexpack::base {
namespace {
std::atomic<bool> huge_pages_asked{false};
}  // namespace

size_t use_huge_heap_pages(size_t reserve) {
  constexpr uintptr_t kHuge = uintptr_t(2) << 20;
  // Large blocks from the heap (freed ones are reused, not unmapped and
  // faulted in again), no trimming, and growth in steps of `reserve`.
  huge_pages_asked = true;
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

size_t use_huge_thread_heap_pages() {
  // glibc's heaps for threads other than the main one: mappings of
  // HEAP_MAX_SIZE (64 MB on 64-bit machines), aligned to their size, that
  // hold their own bookkeeping at the start and are used from the bottom up.
  constexpr uintptr_t kThreadHeap = uintptr_t(64) << 20;
  if (!huge_pages_asked) return 0;
  void* probe = std::malloc(64);
  if (!probe) return 0;
  const uintptr_t at = reinterpret_cast<uintptr_t>(probe);
  std::free(probe);
  // The main heap lies below the break and is use_huge_heap_pages's.
  const uintptr_t brk = reinterpret_cast<uintptr_t>(sbrk(0));
  if (at >= reinterpret_cast<uintptr_t>(&end) && at < brk) return 0;
  const uintptr_t start = at & ~(kThreadHeap - 1);
  if (madvise(reinterpret_cast<void*>(start), kThreadHeap, MADV_HUGEPAGE) != 0) return 0;
  return kThreadHeap;
}

void reuse_freed_heap_blocks(size_t keep) {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, int(keep));
}

}  // namespace lexpack::base
