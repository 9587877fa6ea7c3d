// A full disk must make the cache unusable, never crash the process that
// opens it: counters are "no counters", the index an error, the build goes on.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/counters_file.h"
#include "cache/store.h"
#include "full_disk.h"

namespace lexpack::cache {
namespace {

TEST(FullDisk, OpeningAFreshStoreNeverFaults) {
  testing::FullDisk disk;
  const std::string dir = disk.path() + "/cache";
  int status = disk.run([&] {
    StoreOptions options;
    options.dir = dir;
    auto store = Store::open(options);
    if (store.ok()) {
      // Whatever opened must fail cleanly from here on.
      (*store)->add_counter("hits", 1);
      (*store)->put_blob("some bytes");
      (*store)->stats();
      (*store)->clear();
    }
    return 0;
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "on " << disk.how() << ": " << testing::describe_wait(status);
}

TEST(FullDisk, CountersFileIsAnErrorNotAFault) {
  testing::FullDisk disk;
  const std::string path = disk.path() + "/stats";
  int status = disk.run([&] {
    auto counters = CountersFile::open(path, false);
    if (counters.ok()) return (*counters)->add("hits", 1).ok() ? 0 : 2;
    return counters.message().find(path) != std::string::npos ? 0 : 3;
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "on " << disk.how() << ": " << testing::describe_wait(status);
}

TEST(FullDisk, SparseCountersFileOfTheRightSizeIsAnErrorNotAFault) {
  testing::FullDisk disk;
  if (!disk.mounted()) GTEST_SKIP() << "needs a full tmpfs (run as root where mount is allowed)";
  // A file of the right size made with ftruncate has no blocks behind it.
  const std::string path = disk.path() + "/stats";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 8192), 0);
  ::close(fd);
  int status = disk.run([&] {
    auto counters = CountersFile::open(path, false);
    if (counters.ok()) return (*counters)->add("hits", 1).ok() ? 0 : 2;
    return 0;
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "on " << disk.how() << ": " << testing::describe_wait(status);
}

}  // namespace
}  // namespace lexpack::cache
