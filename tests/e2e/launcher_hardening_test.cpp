// The launcher when things go wrong around it: killed in the middle of a
// miss (no temporary left beside the output; clear sweeps the cache's), and
// an output directory that does not exist (the compiler's own message).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "tests/cache/full_disk.h"
#include "tests/support/launcher_fixture.h"

namespace lexpack::testing {
namespace {

namespace fs = std::filesystem;

class LauncherHardeningTest : public LauncherTest {
 protected:
  void SetUp() override {
    real_ = base::find_program("g++");
    if (real_.empty()) GTEST_SKIP() << "g++ is not installed";
    dir_.write("a.cpp", "int a() { return 1; }\n");
    // A g++ that, when HOLD is set, says it started and waits for "go".
    dir_.write("wrap/g++",
               "#!/bin/sh\n"
               "if [ -n \"$HOLD\" ]; then case \" $* \" in *\" -c \"*)\n"
               "  touch \"$HOLD/started\"\n"
               "  while [ ! -e \"$HOLD/go\" ]; do sleep 0.05; done;;\n"
               "esac; fi\n"
               "exec " +
                   real_ + " \"$@\"\n");
    ASSERT_EQ(::chmod(dir_.at("wrap/g++").c_str(), 0755), 0);
  }
  // Files whose names lexpack made, anywhere under `rel`.
  std::vector<std::string> lexpack_files(const std::string& rel) {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir_.at(rel))) {
      if (e.path().filename().string().find("lexpack") != std::string::npos) {
        out.push_back(e.path().string());
      }
    }
    return out;
  }
  std::string real_;
};

TEST_F(LauncherHardeningTest, KilledMissLeavesNothingBesideTheOutput) {
  fs::create_directories(dir_.at("out"));
  base::ProcessResult r =
      sh("PATH=\"$PWD/wrap:$PATH\" HOLD=\"$PWD\" " + std::string(LEXPACK_BIN) +
         " g++ -c a.cpp -o out/a.o & pid=$!\n"
         "i=0; while [ ! -e started ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done\n"
         "kill -9 $pid; touch go; wait\n"
         "sleep 0.5\n");  // the held compiler finishes on its own
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(lexpack_files("out").empty()) << lexpack_files("out")[0];
  EXPECT_TRUE(lexpack_files(".").size() == 0 ||
              lexpack_files(".")[0].find("/cache/") != std::string::npos);

  // The killed launcher's own depfile went to the cache's tmp/; once it is a
  // few minutes old, clear removes it (its process is gone).
  ASSERT_TRUE(fs::exists(dir_.at("cache/tmp")));
  base::ProcessResult age = sh("for f in cache/tmp/*; do touch -d '5 minutes ago' \"$f\"; done");
  ASSERT_EQ(age.exit_code, 0) << age.err;
  base::ProcessResult clear = lexpack("clear");
  ASSERT_EQ(clear.exit_code, 0) << clear.err;
  EXPECT_TRUE(fs::is_empty(dir_.at("cache/tmp")));
}

// A cache on a full disk: every command goes on without it, the build gets
// its object (before: SIGBUS, exit 135, no object).
TEST_F(LauncherHardeningTest, FullDiskStillBuilds) {
  cache::testing::FullDisk disk;
  if (!disk.mounted()) GTEST_SKIP() << "needs a full tmpfs (run as root where mount is allowed)";
  const std::string env = "LEXPACK_DIR=" + shell_quote(disk.path() + "/cache");
  base::ProcessResult r = sh(std::string(LEXPACK_BIN) + " g++ -c a.cpp -o a.o", env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(dir_.exists("a.o"));
  for (const char* command : {"stats", "clear", "gc"}) {
    base::ProcessResult c = sh(std::string(LEXPACK_BIN) + " " + command, env);
    EXPECT_TRUE(c.exit_code == 0 || c.exit_code == 1) << command << ": " << c.exit_code << c.err;
  }
}

// g++ into a directory that does not exist: the user must read the
// compiler's own complaint, not one about a file lexpack added.
TEST_F(LauncherHardeningTest, MissingOutputDirectoryGivesTheCompilersMessage) {
  for (const std::string& flags : {std::string(""), std::string("-MD ")}) {
    const std::string compile = "g++ -c a.cpp " + flags + "-o nodir/a.o";
    base::ProcessResult plain = sh(compile);
    ASSERT_NE(plain.exit_code, 0);
    ASSERT_FALSE(plain.err.empty());
    base::ProcessResult through = lexpack(compile);
    EXPECT_EQ(through.exit_code, plain.exit_code) << through.err;
    EXPECT_EQ(through.err, plain.err) << "flags: " << flags;
  }
  // A hit whose output directory was removed since: the compile runs, and
  // its message is the one shown.
  fs::create_directories(dir_.at("gone"));
  ASSERT_EQ(lexpack("g++ -c a.cpp -o gone/a.o").exit_code, 0);
  fs::remove_all(dir_.at("gone"));
  base::ProcessResult plain = sh("g++ -c a.cpp -o gone/a.o");
  base::ProcessResult through = lexpack("g++ -c a.cpp -o gone/a.o");
  EXPECT_EQ(through.exit_code, plain.exit_code);
  EXPECT_EQ(through.err, plain.err);
  EXPECT_TRUE(lexpack_files(".").size() == 0 ||
              lexpack_files(".")[0].find("/cache/") != std::string::npos);
}

}  // namespace
}  // namespace lexpack::testing
