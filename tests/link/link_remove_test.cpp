// `cmake -E rm -f` done in process: files and symlinks go, absent ones are no
// error, and anything else is left to cmake itself (the step runs as written).
#include <gtest/gtest.h>
#include <unistd.h>

#include "link/link_launcher.h"
#include "tests/support/test_dir.h"

namespace lexpack::link {
namespace {

LinkResult run_remove(const std::vector<std::string>& files, bool explain = false) {
  std::vector<std::string> argv = {"cmake", "-E", "rm", "-f"};
  argv.insert(argv.end(), files.begin(), files.end());
  LinkStep step = parse_link_step(argv);
  EXPECT_EQ(step.kind, StepKind::kRemove);
  return launch_link_step(step, argv, explain);
}

TEST(LinkRemoveTest, RemovesFilesAndSymlinksNotTheirTargets) {
  testing::TestDir dir;
  dir.write("lib.a", "old archive");
  dir.write("target.a", "kept");
  ASSERT_EQ(::symlink(dir.at("target.a").c_str(), dir.at("link.a").c_str()), 0);
  LinkResult r = run_remove({dir.at("lib.a"), dir.at("link.a"), dir.at("absent.a")});
  EXPECT_FALSE(r.exec_tool);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.error, "");
  EXPECT_FALSE(dir.exists("lib.a"));
  EXPECT_EQ(::access(dir.at("link.a").c_str(), F_OK), -1);
  EXPECT_EQ(dir.read("target.a"), "kept");
}

TEST(LinkRemoveTest, DirectoryIsLeftToCmake) {
  testing::TestDir dir;
  dir.write("lib.a", "old archive");
  dir.write("sub/lib.a", "x");
  LinkResult r = run_remove({dir.at("lib.a"), dir.at("sub")});
  EXPECT_TRUE(r.exec_tool);  // cmake runs and says what it says about a directory
  EXPECT_TRUE(dir.exists("sub/lib.a"));
}

TEST(LinkRemoveTest, ExplainRemovesNothing) {
  testing::TestDir dir;
  dir.write("lib.a", "old archive");
  LinkResult r = run_remove({dir.at("lib.a")}, true);
  EXPECT_FALSE(r.exec_tool);
  EXPECT_NE(r.explanation.find("would remove"), std::string::npos) << r.explanation;
  EXPECT_EQ(dir.read("lib.a"), "old archive");
}

}  // namespace
}  // namespace lexpack::link
