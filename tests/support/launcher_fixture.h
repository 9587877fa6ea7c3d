// End-to-end fixture: a temporary project with its own cache dir and
// decision log, and helpers that run the real `lexpack` binary (or the plain
// compiler) in it through /bin/sh.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/process.h"
#include "tests/support/test_dir.h"

namespace lexpack::testing {

class LauncherTest : public ::testing::Test {
 protected:
  // Runs `command` in the project dir with the cache and log of this test.
  base::ProcessResult sh(const std::string& command, const std::string& extra_env = "") {
    std::string env = "LEXPACK_DIR=" + shell_quote(dir_.at("cache")) +
                      " LEXPACK_LOGFILE=" + shell_quote(dir_.at("log.txt")) + " " + extra_env;
    return shell_in(dir_, env, command);
  }
  base::ProcessResult lexpack(const std::string& args, const std::string& extra_env = "") {
    return sh(std::string(LEXPACK_BIN) + " " + args, extra_env);
  }
  // The last decision lexpack logged ("hit", "miss: ...", "passthrough: ...").
  std::string last_decision() {
    std::string log = dir_.read("log.txt");
    std::string last;
    size_t pos = 0;
    while (pos < log.size()) {
      size_t nl = log.find('\n', pos);
      std::string line = log.substr(pos, nl - pos);
      pos = nl == std::string::npos ? log.size() : nl + 1;
      size_t colon = line.find(": ");
      std::string what = colon == std::string::npos ? line : line.substr(colon + 2);
      if (what.rfind("hit", 0) == 0 || what.rfind("miss", 0) == 0 ||
          what.rfind("passthrough", 0) == 0) {
        last = what;
      }
    }
    return last;
  }
  bool last_was_hit() { return last_decision().rfind("hit", 0) == 0; }
  bool last_was_miss() { return last_decision().rfind("miss", 0) == 0; }

  TestDir dir_;
};

// No false hits: each change that alters what a fresh compile produces must
// make the next compile a miss, and the object must then match a fresh one.
class NoFalseHit : public LauncherTest {
 protected:
  // Compiles through lexpack; checks the object equals the compiler's own.
  // `env`: variables for both compiles ("NAME=value ...").
  void compile_and_compare(const std::string& args, const std::string& env = "") {
    ASSERT_EQ(sh(args + " -o ref.o", env).exit_code, 0) << args;
    base::ProcessResult r = lexpack(args + " -o out.o", env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(dir_.read("out.o") == dir_.read("ref.o")) << args;
  }
  void expect_hit(const std::string& args, const std::string& env = "") {
    compile_and_compare(args, env);
    EXPECT_TRUE(last_was_hit()) << last_decision();
  }
  void expect_miss(const std::string& args, const std::string& env = "") {
    compile_and_compare(args, env);
    EXPECT_TRUE(last_was_miss()) << last_decision();
  }
};

}  // namespace lexpack::testing
