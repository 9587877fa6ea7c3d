// The run paths of shared libraries made by the real compiler: DT_RUNPATH
// and DT_RPATH, $ORIGIN expanded; nothing for other files.
#include "link/elf_runpath.h"

#include <gtest/gtest.h>

#include "base/process.h"
#include "tests/support/test_dir.h"

namespace lexpack::link {
namespace {

using Words = std::vector<std::string>;

TEST(ElfRunpathTest, RunpathAndRpathWithOrigin) {
  testing::TestDir dir;
  dir.write("x.cpp", "int x() { return 1; }\n");
  for (const char* tags : {"--enable-new-dtags", "--disable-new-dtags"}) {
    base::ProcessResult made =
        base::run_captured({"g++", "-shared", "-fPIC", dir.at("x.cpp"), "-o", dir.at("libx.so"),
                            "-Wl,-rpath,$ORIGIN/lib:/opt/y:${ORIGIN}", std::string("-Wl,") + tags},
                           true);
    ASSERT_EQ(made.exit_code, 0) << made.err;
    std::optional<Words> dirs = elf_runpath_dirs(dir.at("libx.so"));
    ASSERT_TRUE(dirs.has_value());
    EXPECT_EQ(*dirs, (Words{dir.path() + "/lib", "/opt/y", dir.path()})) << tags;
  }
  base::ProcessResult plain = base::run_captured(
      {"g++", "-shared", "-fPIC", dir.at("x.cpp"), "-o", dir.at("libplain.so")}, true);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(elf_runpath_dirs(dir.at("libplain.so")), Words{});
  // A linker script (libc.so), a short file, an absent one.
  dir.write("libc.so", "GROUP ( /lib/libc.so.6 )\n");
  dir.write("short.so",
            "\x7f"
            "EL");
  EXPECT_EQ(elf_runpath_dirs(dir.at("libc.so")), Words{});
  EXPECT_EQ(elf_runpath_dirs(dir.at("short.so")), Words{});
  EXPECT_EQ(elf_runpath_dirs(dir.at("absent.so")), Words{});
}

}  // namespace
}  // namespace lexpack::link
