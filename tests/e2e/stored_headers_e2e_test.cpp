// End to end, g++ and clang++, with no server: each launcher evaluates its
// TU in its own process, and the header evaluations it made are kept in the
// store for the next (closure/header_records.h). A kept evaluation must be
// replayed only for the macro state it read, and never after the header
// changed. Each object is compared with a plain compile's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "tests/support/launcher_fixture.h"

namespace lexpack::testing {
namespace {

constexpr char kNoServer[] = "LEXPACK_SERVER=0";
constexpr char kSelect[] =
    "#if USE_X\n#define SEL_HEADER <x.h>\n#else\n#define SEL_HEADER <y.h>\n#endif\n"
    "#include SEL_HEADER\n";

class StoredHeaders : public LauncherTest, public ::testing::WithParamInterface<const char*> {
 protected:
  // Evaluations naming a file younger than a second are not kept.
  static void settle() { ::usleep(1100 * 1000); }
  // Compiles `source` through lexpack and plainly; the objects must be
  // equal. Returns this compile's decision log.
  std::string compile(const std::string& source) {
    dir_.write("log.txt", "");
    const std::string args = std::string(GetParam()) + " -Iinc -c " + source;
    EXPECT_EQ(sh(args + " -o ref.o").exit_code, 0);
    base::ProcessResult r = lexpack(args + " -o out.o", kNoServer);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(dir_.read("out.o") == dir_.read("ref.o"))
        << source << ": a wrong object: " << dir_.read("log.txt");
    return dir_.read("log.txt");
  }
  static bool says(const std::string& log, const char* what) {
    return log.find(what) != std::string::npos;
  }
  // sel.h includes x.h or y.h as USE_X says, through a computed include:
  // each TU that includes it is evaluated.
  void write_project() {
    dir_.write("inc/sel.h", kSelect);
    dir_.write("inc/x.h", "#define V 10\n");
    dir_.write("inc/y.h", "#define V 20\n");
    for (const char* tu : {"a", "a2", "a3"}) {
      dir_.write(std::string(tu) + ".cpp", "#define USE_X 1\n#include \"sel.h\"\nint " +
                                               std::string(tu) + "() { return V; }\n");
    }
    dir_.write("b.cpp", "#define USE_X 0\n#include \"sel.h\"\nint b() { return V; }\n");
  }
};

TEST_P(StoredHeaders, AKeptEvaluationIsReplayedOnlyForItsMacroState) {
  write_project();
  settle();
  std::string log = compile("a.cpp");
  EXPECT_TRUE(says(log, "headers: 0 replayed, 2 evaluated")) << log;
  // USE_X differs: sel.h's kept evaluation does not apply.
  log = compile("b.cpp");
  EXPECT_TRUE(says(log, "headers: 0 replayed, 2 evaluated")) << log;
  // Another TU with a.cpp's state: sel.h and x.h replayed from the store.
  log = compile("a2.cpp");
  EXPECT_TRUE(says(log, "headers: 2 replayed, 0 evaluated")) << log;
  // b.cpp's closure holds y.h, a's x.h: a change of y.h is b.cpp's alone.
  settle();
  dir_.write("inc/y.h", "#define V 21\n");
  compile("b.cpp");
  EXPECT_TRUE(last_was_miss()) << dir_.read("log.txt");
  compile("a.cpp");
  EXPECT_TRUE(last_was_hit()) << dir_.read("log.txt");
}

TEST_P(StoredHeaders, AKeptEvaluationIsNotUsedAfterTheHeaderChanged) {
  write_project();
  settle();
  compile("a.cpp");
  // sel.h now includes z.h too: a TU evaluated after must hold it.
  dir_.write("inc/z.h", "#undef V\n#define V 30\n");
  dir_.write("inc/sel.h", std::string(kSelect) + "#if USE_X\n#include <z.h>\n#endif\n");
  settle();
  // sel.h and z.h evaluated, x.h (unchanged) replayed.
  std::string log = compile("a3.cpp");
  EXPECT_TRUE(says(log, "headers: 1 replayed, 2 evaluated")) << log;
  settle();
  dir_.write("inc/z.h", "#undef V\n#define V 31\n");
  compile("a3.cpp");
  EXPECT_TRUE(last_was_miss()) << dir_.read("log.txt");
}

// A header's kept evaluation found its include in one directory; a file of
// that name appears earlier on the search path: replayed, the include
// would name the old file, so the header is evaluated again.
TEST_P(StoredHeaders, AnIncludeFoundElsewhereIsEvaluatedAgain) {
  write_project();
  dir_.write("inc2/keep.txt", "");
  settle();
  dir_.write("log.txt", "");
  const std::string cxx = GetParam();
  const std::string args = cxx + " -Iinc2 -Iinc -c a.cpp";
  ASSERT_EQ(lexpack(args + " -o out.o", kNoServer).exit_code, 0);
  dir_.write("inc2/x.h", "#define V 40\n");
  settle();
  dir_.write("log.txt", "");
  ASSERT_EQ(sh(cxx + " -Iinc2 -Iinc -c a2.cpp -o ref.o").exit_code, 0);
  ASSERT_EQ(lexpack(cxx + " -Iinc2 -Iinc -c a2.cpp -o out.o", kNoServer).exit_code, 0);
  EXPECT_TRUE(dir_.read("out.o") == dir_.read("ref.o")) << dir_.read("log.txt");
  EXPECT_FALSE(says(dir_.read("log.txt"), "2 replayed")) << dir_.read("log.txt");
}

INSTANTIATE_TEST_SUITE_P(Compilers, StoredHeaders, ::testing::Values("g++", "clang++-14"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param) == "g++" ? "gcc" : "clang";
                         });

}  // namespace
}  // namespace lexpack::testing
