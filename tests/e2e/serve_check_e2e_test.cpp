// Served reads hand the compiler bytes straight from the packs. When those
// bytes change while the compiler reads them, the object it makes must not
// be stored: a later build would get it as a hit for the unchanged header.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "base/process.h"
#include "tests/support/test_dir.h"

namespace lexpack::testing {
namespace {

class ServeCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    real_ = base::find_program("g++");
    if (real_.empty()) GTEST_SKIP() << "g++ is not installed";
    dir_.write("inc/value.h", "#pragma once\n#define THE_VALUE 1111\n");
    dir_.write("a.cpp", "#include \"value.h\"\nint value() { return THE_VALUE; }\n");
    // A g++ that, when asked to compile with served reads, first rewrites the
    // header's bytes inside the pack (same length, another value).
    dir_.write("wrap/g++",
               "#!/bin/sh\n"
               "if [ -n \"$CHANGE_PACK\" ] && [ -n \"$LEXPACK_READ_MANIFEST\" ]; then\n"
               "  for p in \"$LEXPACK_DIR\"/packs/*.lpk; do\n"
               "    off=$(grep -obUa 'THE_VALUE 1111' \"$p\" | head -n 1 | cut -d: -f1)\n"
               "    [ -n \"$off\" ] && printf 'THE_VALUE 2222' |\n"
               "      dd of=\"$p\" bs=1 seek=\"$off\" conv=notrunc status=none\n"
               "  done\n"
               "fi\n"
               "exec " +
                   real_ + " \"$@\"\n");
    ASSERT_EQ(::chmod(dir_.at("wrap/g++").c_str(), 0755), 0);
  }
  base::ProcessResult sh(const std::string& command, const std::string& env) {
    std::string all = "LEXPACK_DIR=" + shell_quote(dir_.at("cache")) +
                      " LEXPACK_LOGFILE=" + shell_quote(dir_.at("log.txt")) +
                      " LEXPACK_PLUGIN=" + shell_quote(LEXPACK_PLUGIN_SO) +
                      " PATH=" + shell_quote(dir_.at("wrap")) + ":$PATH " + env;
    return base::run_captured(
        {"/bin/sh", "-c",
         "cd " + shell_quote(dir_.path()) + " || exit 99; export " + all + "; " + command},
        true);
  }
  std::string log() { return dir_.exists("log.txt") ? dir_.read("log.txt") : ""; }
  std::string real_;
  TestDir dir_;
};

TEST_F(ServeCheckTest, BytesChangedInAPackDuringTheCompileAreNeverStored) {
  const std::string compile = "g++ -O1 -Iinc -c a.cpp -o a.o";
  ASSERT_EQ(sh(compile, "").exit_code, 0);
  const std::string good = dir_.read("a.o");
  dir_.remove("a.o");

  base::ProcessResult changed =
      sh(std::string(LEXPACK_BIN) + " " + compile, "LEXPACK_SERVE_READS=1 CHANGE_PACK=1");
  ASSERT_EQ(changed.exit_code, 0) << changed.err << log();
  ASSERT_NE(log().find("serving reads: "), std::string::npos) << log();
  // The compiler did read the changed bytes (otherwise the test proves nothing).
  ASSERT_FALSE(dir_.read("a.o") == good) << "the pack change did not reach the compiler";
  EXPECT_NE(log().find("whose bytes changed during the compile"), std::string::npos) << log();
  dir_.remove("a.o");

  // The header on disk never changed: the next build must produce the object
  // of the bytes the key names.
  base::ProcessResult next = sh(std::string(LEXPACK_BIN) + " " + compile, "");
  ASSERT_EQ(next.exit_code, 0) << next.err << log();
  EXPECT_TRUE(dir_.read("a.o") == good) << log();
}

}  // namespace
}  // namespace lexpack::testing
