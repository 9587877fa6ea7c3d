// The scan's heap settings, in a process of their own (they change malloc
// for the whole process).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "base/heap_pages.h"

namespace lexpack::base {
namespace {

std::string read_text(const char* path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Whether some mapping of the heap may take transparent huge pages.
bool heap_takes_huge_pages() {
  std::ifstream smaps("/proc/self/smaps");
  bool in_heap = false;
  for (std::string line; std::getline(smaps, line);) {
    if (line.find('-') != std::string::npos && line.find(':') != 2 && line[0] != ' ' &&
        std::isxdigit(static_cast<unsigned char>(line[0]))) {
      in_heap = line.find("[heap]") != std::string::npos;
    } else if (in_heap && line.rfind("THPeligible:", 0) == 0 &&
               line.find('1') != std::string::npos) {
      return true;
    }
  }
  return false;
}

// Whether the mapping that holds `address` was advised MADV_HUGEPAGE (its
// VmFlags name "hg").
bool advised_huge(const void* address) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx ", &lo, &hi) == 2 && line.find(':') > 8) {
      inside = at >= lo && at < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line.find(" hg") != std::string::npos;
    }
  }
  return false;
}

// Runs `f` on a thread of its own (which malloc gives a heap of its own).
template <typename F>
void on_a_new_thread(F f) {
  std::thread t(f);
  t.join();
}

// Defined first: gtest runs a file's tests in order, and the next test asks
// for huge pages for the whole process.
TEST(HugeHeapPages, AThreadsHeapIsLeftAloneUntilTheProcessAsks) {
  on_a_new_thread([] {
    EXPECT_EQ(use_huge_thread_heap_pages(), 0u);
    void* block = std::malloc(4096);
    ASSERT_NE(block, nullptr);
    EXPECT_FALSE(advised_huge(block));
    std::free(block);
  });
}

TEST(HugeHeapPages, LargeBlocksComeFromAnAdvisedHeap) {
  const std::string mode = read_text("/sys/kernel/mm/transparent_hugepage/enabled");
  const bool madvise_only = mode.find("[madvise]") != std::string::npos;
  if (madvise_only) {
    ASSERT_FALSE(heap_takes_huge_pages()) << "the heap was advised before the call";
  }
  const size_t advised = use_huge_heap_pages(size_t(64) << 20);
  // A block far above malloc's default threshold (128 kB) is served by the
  // heap, below its break, instead of a mapping of its own.
  void* big = std::malloc(size_t(8) << 20);
  ASSERT_NE(big, nullptr);
  EXPECT_LT(reinterpret_cast<uintptr_t>(big), reinterpret_cast<uintptr_t>(sbrk(0)));
  std::free(big);
  if (mode.empty() || mode.find("[never]") != std::string::npos) {
    GTEST_SKIP() << "transparent huge pages are off on this machine";
  }
  EXPECT_GE(advised, size_t(64) << 20);
  EXPECT_EQ(advised % (size_t(2) << 20), 0u);
  EXPECT_TRUE(heap_takes_huge_pages());
}

}  // namespace
}  // namespace lexpack::base

namespace lexpack::base {
namespace {

TEST(HugeHeapPages, AWorkerThreadsHeapIsAdvisedOnceTheProcessAsked) {
  use_huge_heap_pages(size_t(64) << 20);
  const std::string mode = read_text("/sys/kernel/mm/transparent_hugepage/enabled");
  if (mode.empty() || mode.find("[never]") != std::string::npos) {
    GTEST_SKIP() << "transparent huge pages are off on this machine";
  }
  // The main thread's heap is the one use_huge_heap_pages advised.
  EXPECT_EQ(use_huge_thread_heap_pages(), 0u);
  on_a_new_thread([] {
    void* before = std::malloc(1 << 20);  // a block of the thread's own heap
    ASSERT_NE(before, nullptr);
    EXPECT_FALSE(advised_huge(before));
    EXPECT_EQ(use_huge_thread_heap_pages(), size_t(64) << 20);
    void* after = std::malloc(1 << 20);
    ASSERT_NE(after, nullptr);
    EXPECT_TRUE(advised_huge(before));
    EXPECT_TRUE(advised_huge(after));
    std::free(after);
    std::free(before);
  });
}

}  // namespace
}  // namespace lexpack::base
