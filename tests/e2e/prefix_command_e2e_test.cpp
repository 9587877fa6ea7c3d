// prefix_command runs a miss's compile through distcc (a real distccd on
// localhost): the object is the plain compiler's, and the hit afterwards
// needs neither.
#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/support/launcher_fixture.h"
#include "tests/support/servers.h"

namespace lexpack::testing {
namespace {

// distccd writes a job's line to its log after the client has the job's
// answer: waited for, up to five seconds.
bool distccd_logged(const DistccServer& distccd, const char* what) {
  for (int i = 0; i < 100; ++i) {
    if (distccd.log().find(what) != std::string::npos) return true;
    ::usleep(50 * 1000);
  }
  return false;
}

TEST_F(LauncherTest, PrefixCommandRunsTheMissThroughDistcc) {
  DistccServer distccd;
  ASSERT_TRUE(distccd.start());
  dir_.write("a.cpp",
             "#include <vector>\nint f(int x) { return int(std::vector<int>(x).size()); }\n");
  std::string line = "g++ -O2 -c a.cpp -o a.o";
  ASSERT_EQ(sh(line).exit_code, 0);
  std::string ref = dir_.read("a.o");
  dir_.remove("a.o");
  std::string env = "LEXPACK_PREFIX_COMMAND=distcc DISTCC_HOSTS=" + distccd.hosts() +
                    " DISTCC_FALLBACK=0 DISTCC_DIR=" + shell_quote(distccd.state_dir());
  base::ProcessResult p = lexpack(line, env);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_TRUE(last_was_miss()) << last_decision();
  EXPECT_TRUE(dir_.read("a.o") == ref);
  EXPECT_TRUE(distccd_logged(distccd, "COMPILE_OK")) << distccd.log();
  dir_.remove("a.o");
  distccd.stop();
  ASSERT_EQ(lexpack(line, env).exit_code, 0);
  EXPECT_TRUE(last_was_hit()) << last_decision();
  EXPECT_TRUE(dir_.read("a.o") == ref);
}

// A prefix that cannot run is a bad setting: reported and ignored, never a
// failed compile.
TEST_F(LauncherTest, PrefixCommandThatCannotRunIsIgnored) {
  dir_.write("a.cpp", "int f(int x) { return x * 3; }\n");
  for (const char* compiler : {"g++", "clang++-14"}) {
    for (const char* prefix : {"lexpack-no-such-distcc", "/nonexistent/distcc --x"}) {
      SCOPED_TRACE(std::string(compiler) + " with " + prefix);
      // A token of its own (a comment would hit by the token key).
      dir_.write("a.cpp", std::string("int f(int x) { return x * 3; }\nconst char* tag = \"") +
                              prefix + "\";\n");
      const std::string line = std::string(compiler) + " -O2 -c a.cpp -o a.o";
      ASSERT_EQ(sh(line).exit_code, 0);
      const std::string ref = dir_.read("a.o");
      dir_.remove("a.o");
      const std::string env = "LEXPACK_PREFIX_COMMAND=" + shell_quote(prefix);
      base::ProcessResult p = lexpack(line, env);
      ASSERT_EQ(p.exit_code, 0) << p.err;
      EXPECT_NE(p.err.find("lexpack: warning: prefix_command ignored"), std::string::npos) << p.err;
      EXPECT_TRUE(last_was_miss()) << last_decision();
      EXPECT_TRUE(dir_.read("a.o") == ref);
      EXPECT_NE(dir_.read("log.txt").find("prefix_command ignored"), std::string::npos);
      // The stored result replays the compiler's stderr alone.
      dir_.remove("a.o");
      p = lexpack(line, env);
      ASSERT_EQ(p.exit_code, 0) << p.err;
      EXPECT_TRUE(last_was_hit()) << last_decision();
      EXPECT_EQ(p.err, "");
      EXPECT_TRUE(dir_.read("a.o") == ref);
    }
  }
  base::ProcessResult stats = lexpack("stats");
  EXPECT_NE(stats.out.find("prefix_command_failed"), std::string::npos) << stats.out;
}

}  // namespace
}  // namespace lexpack::testing
