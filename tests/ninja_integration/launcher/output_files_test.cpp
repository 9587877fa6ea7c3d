// Writing outputs on a hit: the atomic write, and leaving an output that
// already holds the bytes in place with only its modification time renewed.
#include "ninja_integration/launcher/output_files.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/test_dir.h"

namespace lexpack::launcher {
namespace {

// Sets both times of `path` an hour back; returns the stat after that.
struct stat age(const std::string& path) {
  struct timespec times[2];
  ::clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec -= 3600;
  times[1] = times[0];
  EXPECT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  struct stat st;
  EXPECT_EQ(::stat(path.c_str(), &st), 0);
  return st;
}

struct stat stat_of(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::stat(path.c_str(), &st), 0);
  return st;
}

TEST(OutputFiles, AtomicWriteReplacesTheFile) {
  testing::TestDir dir;
  std::string err;
  ASSERT_TRUE(write_file_atomic(dir.at("a.o"), "new", &err)) << err;
  EXPECT_EQ(dir.read("a.o"), "new");
  dir.write("b.o", "old bytes");
  ASSERT_TRUE(write_file_atomic(dir.at("b.o"), "new", &err)) << err;
  EXPECT_EQ(dir.read("b.o"), "new");
  EXPECT_FALSE(write_file_atomic(dir.at("nodir/c.o"), "x", &err));
  EXPECT_NE(err.find("nodir"), std::string::npos) << err;
}

TEST(OutputFiles, IdenticalOutputIsOnlyTouched) {
  testing::TestDir dir;
  std::string bytes(200000, 'x');
  bytes[123456] = 'y';
  dir.write("a.o", bytes);
  struct stat before = age(dir.at("a.o"));
  EXPECT_TRUE(touch_if_identical(dir.at("a.o"), bytes));
  struct stat after = stat_of(dir.at("a.o"));
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_GT(after.st_mtim.tv_sec, before.st_mtim.tv_sec + 1800);
  EXPECT_EQ(dir.read("a.o"), bytes);
}

TEST(OutputFiles, DifferentOrMissingOutputIsLeftAlone) {
  testing::TestDir dir;
  EXPECT_FALSE(touch_if_identical(dir.at("missing.o"), "x"));
  EXPECT_FALSE(dir.exists("missing.o"));
  dir.write("a.o", "abcd");
  struct stat before = age(dir.at("a.o"));
  EXPECT_FALSE(touch_if_identical(dir.at("a.o"), "abce"));   // same size, other bytes
  EXPECT_FALSE(touch_if_identical(dir.at("a.o"), "abc"));    // a prefix
  EXPECT_FALSE(touch_if_identical(dir.at("a.o"), "abcde"));  // longer
  EXPECT_FALSE(touch_if_identical(dir.at("a.o"), ""));
  struct stat after = stat_of(dir.at("a.o"));
  EXPECT_EQ(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
  EXPECT_EQ(dir.read("a.o"), "abcd");
  // A symlink is replaced by a write, as before, even to identical bytes.
  ASSERT_EQ(::symlink(dir.at("a.o").c_str(), dir.at("link.o").c_str()), 0);
  EXPECT_FALSE(touch_if_identical(dir.at("link.o"), "abcd"));
  // So is a directory in the output's place.
  ::mkdir(dir.at("d.o").c_str(), 0755);
  EXPECT_FALSE(touch_if_identical(dir.at("d.o"), ""));
}

}  // namespace
}  // namespace lexpack::launcher
