// pread_all: a range read whole however the kernel splits it, and refused
// (never padded) when the file ends before it.
#include "base/file_util.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/support/test_dir.h"

namespace lexpack::base {
namespace {

TEST(PreadAll, ReadsExactlyTheRangeAndRefusesAShortFile) {
  testing::TestDir dir;
  std::string bytes(300000, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = char(i * 7 + i / 251);
  dir.write("f", bytes);
  int fd = ::open(dir.at("f").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  std::string out;
  ASSERT_TRUE(pread_all(fd, 12345, 200000, &out));
  EXPECT_EQ(out, bytes.substr(12345, 200000));
  ASSERT_TRUE(pread_all(fd, 0, 0, &out));
  EXPECT_TRUE(out.empty());
  EXPECT_FALSE(pread_all(fd, 299990, 11, &out));  // one byte past the end
  EXPECT_FALSE(pread_all(-1, 0, 1, &out));
  ::close(fd);
}

}  // namespace
}  // namespace lexpack::base
