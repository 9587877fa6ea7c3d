// The build record lives in the cache directory, which other users may
// write: a symlink planted under the name it is about to use is not followed.
#include "ninja_integration/build_record.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/support/test_dir.h"

namespace lexpack::ninja_integration {
namespace {

TEST(BuildRecord, PlantedLinkIsNotFollowed) {
  testing::TestDir dir;
  std::string cache = dir.at("cache");
  std::filesystem::create_directories(cache + "/builds");
  dir.write("victim.txt", "precious\n");
  std::string planted = cache + "/builds/" + std::to_string(::getpid()) + ".keys";
  ASSERT_EQ(::symlink(dir.at("victim.txt").c_str(), planted.c_str()), 0);
  auto record = start_build_record(cache, dir.at("build"));
  EXPECT_FALSE(record.ok());
  EXPECT_EQ(dir.read("victim.txt"), "precious\n");
}

TEST(BuildRecord, BuildsDirLinkOwnedBySomeoneElseIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to make a symlink owned by another user";
  testing::TestDir dir;
  std::string cache = dir.at("cache");
  std::filesystem::create_directories(cache);
  std::filesystem::create_directories(dir.at("elsewhere"));
  ASSERT_EQ(::symlink(dir.at("elsewhere").c_str(), (cache + "/builds").c_str()), 0);
  ASSERT_EQ(::lchown((cache + "/builds").c_str(), 4242, 4242), 0);
  auto record = start_build_record(cache, dir.at("build"));
  EXPECT_FALSE(record.ok());
  EXPECT_TRUE(std::filesystem::is_empty(dir.at("elsewhere")));
}

TEST(BuildRecord, StartAndFinish) {
  testing::TestDir dir;
  std::string cache = dir.at("cache");
  auto record = start_build_record(cache, dir.at("build"));
  ASSERT_TRUE(record.ok()) << record.message();
  std::ofstream(*record, std::ios::app) << std::string(32, 'a') << "\n";
  ASSERT_TRUE(finish_build_record(cache, *record, dir.at("build")).ok());
  for (const std::string& path :
       {last_build_record(cache), build_dir_record(cache, dir.at("build"))}) {
    auto keys = read_build_record(path);
    ASSERT_TRUE(keys.ok()) << keys.message();
    EXPECT_EQ(keys->size(), 1u);
  }
}

}  // namespace
}  // namespace lexpack::ninja_integration
