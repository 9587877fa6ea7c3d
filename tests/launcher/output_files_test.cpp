// Writing outputs on a hit: the atomic write, and leaving an output that
// already holds the bytes in place with only its modification time renewed.
#include "launcher/output_files.h"

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

// A vouched signature names the bytes written: a write in place right after
// (same size, most often within the same tick of the file clock, where a
// kernel without multigrain timestamps would stamp the same times) still
// gives another signature.
TEST(OutputFiles, VouchedSignatureChangesWithAnyLaterWrite) {
  testing::TestDir dir;
  std::string path = dir.at("a.o");
  std::string err;
  for (int i = 0; i < 50; ++i) {
    std::string bytes(4096, char('a' + i % 26));
    std::optional<base::StatSignature> vouched;
    ASSERT_TRUE(write_file_atomic(path, bytes, &err, 0666, &vouched)) << err;
    ASSERT_TRUE(vouched.has_value()) << "the test directory is not on a local filesystem";
    base::StatSignature now;
    ASSERT_TRUE(base::stat_file(path, &now));
    EXPECT_EQ(now, *vouched);
    EXPECT_LE(vouched->mtime_ns, base::now_ns());
    // The stamp no kernel time can equal (and no coarser filesystem keeps).
    EXPECT_NE(vouched->mtime_ns % 2, 0);
    EXPECT_NE(vouched->mtime_ns % 5, 0);
    int fd = ::open(path.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, "Z", 1, 0), 1);
    ::close(fd);
    ASSERT_TRUE(base::stat_file(path, &now));
    EXPECT_NE(now, *vouched) << "write " << i << " in place left the signature as vouched";
    EXPECT_NE(now.mtime_ns, vouched->mtime_ns);
  }
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
