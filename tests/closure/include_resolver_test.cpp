// Include search order, #include_next, and the failed candidates reported.
#include "closure/include_resolver.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "base/file_stat.h"
#include "base/file_util.h"
#include "closure/scan_file_cache.h"
#include "tests/support/test_dir.h"

namespace lexpack::closure {
namespace {

class IncludeResolverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.write("src/local.h", "");
    dir_.write("q/quoted.h", "");
    dir_.write("i1/both.h", "");
    dir_.write("i2/both.h", "");
    dir_.write("i2/local.h", "");
    dir_.write("sys/sub/deep.h", "");
    list_.quote_dirs = {dir_.at("q")};
    list_.bracket_dirs = {dir_.at("i1"), dir_.at("i2"), dir_.at("sys")};
  }
  testing::TestDir dir_;
  compiler::SearchList list_;
};

TEST_F(IncludeResolverTest, QuotedSearchesIncluderDirFirst) {
  IncludeResolver r(list_, compiler::CompilerKind::kGcc);
  std::vector<std::string> failed;
  Resolution res = r.resolve("local.h", false, false, dir_.at("src"), kFoundOutsideChain, &failed);
  ASSERT_TRUE(res.found);
  EXPECT_EQ(res.path, dir_.at("src/local.h"));
  EXPECT_EQ(res.chain_index, kFoundInIncluderDir);
  EXPECT_TRUE(failed.empty());
}

TEST_F(IncludeResolverTest, AngledSkipsQuoteDirsAndRecordsFailures) {
  IncludeResolver r(list_, compiler::CompilerKind::kGcc);
  std::vector<std::string> failed;
  Resolution res = r.resolve("local.h", true, false, dir_.at("src"), kFoundOutsideChain, &failed);
  ASSERT_TRUE(res.found);
  EXPECT_EQ(res.path, dir_.at("i2/local.h"));
  EXPECT_EQ(failed, (std::vector<std::string>{dir_.at("i1/local.h")}));

  failed.clear();
  res = r.resolve("quoted.h", false, false, dir_.at("src"), kFoundOutsideChain, &failed);
  ASSERT_TRUE(res.found);
  EXPECT_EQ(res.path, dir_.at("q/quoted.h"));
  EXPECT_EQ(failed, (std::vector<std::string>{dir_.at("src/quoted.h")}));

  failed.clear();
  res = r.resolve("sub/deep.h", true, false, "", kFoundOutsideChain, &failed);
  ASSERT_TRUE(res.found);
  EXPECT_EQ(failed.size(), 2u);
}

TEST_F(IncludeResolverTest, IncludeNextContinuesAfterFoundDir) {
  IncludeResolver r(list_, compiler::CompilerKind::kGcc);
  std::vector<std::string> failed;
  Resolution first = r.resolve("both.h", true, false, "", kFoundOutsideChain, &failed);
  ASSERT_TRUE(first.found);
  EXPECT_EQ(first.path, dir_.at("i1/both.h"));
  Resolution next = r.resolve("both.h", true, true, dir_.at("i1"), first.chain_index, &failed);
  ASSERT_TRUE(next.found);
  EXPECT_EQ(next.path, dir_.at("i2/both.h"));
  Resolution none = r.resolve("both.h", true, true, dir_.at("i2"), next.chain_index, &failed);
  EXPECT_FALSE(none.found);
  EXPECT_EQ(failed.back(), dir_.at("sys/both.h"));
}

TEST_F(IncludeResolverTest, MissingEverywhereListsEveryCandidate) {
  IncludeResolver r(list_, compiler::CompilerKind::kClang);
  std::vector<std::string> failed;
  Resolution res =
      r.resolve("nothere.h", false, false, dir_.at("src"), kFoundOutsideChain, &failed);
  EXPECT_FALSE(res.found);
  EXPECT_EQ(failed.size(), 5u);  // includer dir + q + i1 + i2 + sys
}

// "../x.h" from a subdirectory names x.h as it was named before (an include
// cycle through ".." then meets the same node), but not where the
// subdirectory is a symlink: the kernel climbs out of its target.
TEST_F(IncludeResolverTest, ClimbingOutOfASubdirectoryNamesTheFileAsBefore) {
  dir_.write("src/sub/plat.h", "");
  dir_.write("elsewhere/deep/sub/plat.h", "");
  dir_.write("elsewhere/deep/local.h", "");
  std::filesystem::create_directory_symlink("../elsewhere/deep/sub", dir_.at("src/link"));
  for (ScanFileCache* shared : {static_cast<ScanFileCache*>(nullptr), new ScanFileCache()}) {
    std::unique_ptr<ScanFileCache> owned(shared);
    IncludeResolver r(list_, compiler::CompilerKind::kGcc, shared, dir_.path());
    std::vector<std::string> failed;
    Resolution res =
        r.resolve("../local.h", false, false, dir_.at("src/sub"), kFoundOutsideChain, &failed);
    ASSERT_TRUE(res.found);
    EXPECT_EQ(res.path, dir_.at("src/local.h"));
    res = r.resolve("../local.h", false, false, dir_.at("src/link"), kFoundOutsideChain, &failed);
    ASSERT_TRUE(res.found);
    EXPECT_EQ(res.path, dir_.at("src/link/../local.h"));
    base::StatSignature there;
    ASSERT_TRUE(base::stat_file(dir_.at("elsewhere/deep/local.h"), &there));
    EXPECT_EQ(res.stat.ino, there.ino);
    // Through the chain as well: an -I dir written with "..".
    compiler::SearchList up;
    up.bracket_dirs = {dir_.at("src/sub/../sub")};
    IncludeResolver chained(up, compiler::CompilerKind::kGcc, shared, dir_.path());
    res = chained.resolve("plat.h", true, false, "", kFoundOutsideChain, &failed);
    ASSERT_TRUE(res.found);
    EXPECT_EQ(res.path, dir_.at("src/sub/plat.h"));
  }
}

TEST(IncludePaths, JoinAndDir) {
  EXPECT_EQ(base::join_path("", "a.h"), "a.h");
  EXPECT_EQ(base::join_path("inc", "a.h"), "inc/a.h");
  EXPECT_EQ(base::join_path("inc/", "a.h"), "inc/a.h");
  EXPECT_EQ(base::join_path("inc", "/abs/a.h"), "/abs/a.h");
  EXPECT_EQ(base::dir_of("a.cpp"), "");
  EXPECT_EQ(base::dir_of("src/a.cpp"), "src");
  EXPECT_EQ(base::dir_of("/a.h"), "/");
}

}  // namespace
}  // namespace lexpack::closure
