// The scan's heap settings, in a process of their own (they change malloc
// for the whole process).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

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
