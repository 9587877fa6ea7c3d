// `lexpack ninja` asks ninja for the compile database only when an output
// may be missing: read from the .ninja_log a real ninja wrote.
#include "ninja_integration/ninja_log.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/time.h>

#include <string>

#include "base/process.h"
#include "tests/support/test_dir.h"

namespace lexpack::ninja_integration {
namespace {

// A build directory with two outputs, built once by ninja.
void build_two_outputs(const testing::TestDir& dir) {
  dir.write("b/build.ninja",
            "rule copy\n  command = cp $in $out\n"
            "build one.out: copy ../in.txt\n"
            "build sub/two.out: copy ../in.txt\n");
  dir.write("in.txt", "x\n");
  base::ProcessResult p = base::run_captured({"ninja", "-C", dir.at("b")}, false, nullptr);
  ASSERT_TRUE(p.started && p.exit_code == 0) << p.err;
}

// Sets the file's modification time `seconds` from now.
void stamp(const std::string& path, int seconds) {
  struct timeval now;
  ::gettimeofday(&now, nullptr);
  now.tv_sec += seconds;
  const struct timeval times[2] = {now, now};
  ASSERT_EQ(::utimes(path.c_str(), times), 0) << path;
}

TEST(NinjaLog, EveryOutputThereAfterABuild) {
  testing::TestDir dir;
  build_two_outputs(dir);
  EXPECT_TRUE(every_logged_output_exists(dir.at("b")));
}

TEST(NinjaLog, ARemovedOutputIsSeen) {
  testing::TestDir dir;
  build_two_outputs(dir);
  dir.remove("b/sub/two.out");
  EXPECT_FALSE(every_logged_output_exists(dir.at("b")));
}

TEST(NinjaLog, AManifestNewerThanTheLogIsNotTrusted) {
  testing::TestDir dir;
  build_two_outputs(dir);
  stamp(dir.at("b/build.ninja"), 5);
  EXPECT_FALSE(every_logged_output_exists(dir.at("b")));
}

TEST(NinjaLog, NoLogOrAnotherVersionIsNotKnown) {
  testing::TestDir dir;
  dir.write("b/build.ninja", "");
  EXPECT_FALSE(every_logged_output_exists(dir.at("b")));
  dir.write("b/.ninja_log", "# ninja log v4\n1\t2\t3\tbuild.ninja\tabc\n");
  stamp(dir.at("b/.ninja_log"), 5);
  EXPECT_FALSE(every_logged_output_exists(dir.at("b")));
  dir.write("b/.ninja_log", "# ninja log v5\n");
  stamp(dir.at("b/.ninja_log"), 5);
  EXPECT_FALSE(every_logged_output_exists(dir.at("b"))) << "a log of nothing tells nothing";
}

TEST(NinjaLog, AnUnfinishedLastLineIsLeftOutAndABadLineIsNotKnown) {
  testing::TestDir dir;
  dir.write("b/build.ninja", "");
  dir.write("b/there.out", "");
  dir.write("b/.ninja_log", "# ninja log v5\n1\t2\t3\tthere.out\tabc\n4\t5\t6\tgone.o");
  stamp(dir.at("b/.ninja_log"), 5);
  EXPECT_TRUE(every_logged_output_exists(dir.at("b")));
  dir.write("b/.ninja_log", "# ninja log v5\n1\t2\t3\tthere.out\tabc\nnot a line\n");
  stamp(dir.at("b/.ninja_log"), 5);
  EXPECT_FALSE(every_logged_output_exists(dir.at("b")));
  dir.write("b/.ninja_log", "# ninja log v6\n1\t2\t3\t" + dir.at("b/there.out") + "\tabc\n");
  stamp(dir.at("b/.ninja_log"), 5);
  EXPECT_TRUE(every_logged_output_exists(dir.at("b"))) << "an absolute output";
}

}  // namespace
}  // namespace lexpack::ninja_integration
