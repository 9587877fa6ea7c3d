// Two checkouts of one project at different paths share one cache through
// base_dir: the second one's archive and link steps are hits whose outputs
// equal what a plain build in that checkout writes, byte for byte; a link
// whose output records a path of the checkout (a build-tree rpath) misses.
#include <stdlib.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <sstream>
#include <string>

#include "base/process.h"
#include "tests/support/servers.h"
#include "tests/support/summary_counts.h"
#include "tests/support/test_dir.h"

namespace lexpack::testing {
namespace {

class LinkRelocationE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (base::find_program("g++").empty()) GTEST_SKIP() << "g++ not installed";
    root_ = dir_.real_path();
  }

  // The project's sources in checkout `c`.
  void write_sources(const std::string& c) {
    // A linker warning where foo1 is used: GNU ld's message names the object
    // that uses it as the command line does.
    dir_.write(c + "/src/foo1.cpp",
               "int foo1() { return 1; }\n"
               "__attribute__((used, section(\".gnu.warning._Z4foo1v\")))\n"
               "static const char warning[] = \"foo1 is old\";\n");
    dir_.write(c + "/src/foo2.cpp", "int foo2() { return 2; }\n");
    dir_.write(c + "/src/shared.cpp",
               "int hidden() { return 3; }\nint shared_value() { return hidden() + 4; }\n");
    dir_.write(c + "/src/vers.map", "{ global: _Z12shared_valuev; local: *; };\n");
    dir_.write(c + "/src/main_static.cpp",
               "int foo1(); int foo2();\nint main() { return foo1() + foo2(); }\n");
    dir_.write(c + "/src/main_shared.cpp",
               "int shared_value();\nint main() { return shared_value(); }\n");
  }

  // A hand-written ninja file that names every file by its absolute path
  // (objects, -o, -L, the version script), as generators outside the build
  // tree do; `app_flags` go on the executable linking the shared library.
  void write_ninja(const std::string& c, const std::string& app_flags = "") {
    write_sources(c);
    std::string top = root_ + "/" + c;
    std::string text = "top = " + top +
                       "\n"
                       "rule cc\n  command = g++ -O1 -fPIC " +
                       cflags_ +
                       " -c $src -o $out\n"
                       "rule ar\n  command = rm -f $out && ar qc $out $in && ranlib $out\n"
                       "rule so\n  command = g++ -shared $in -o $out "
                       "-Wl,--version-script=$top/src/vers.map\n"
                       "rule exe\n  command = g++ $in -o $out $flags\n";
    for (const char* tu : {"foo1", "foo2", "shared", "main_static", "main_shared"}) {
      text += "build $top/build/" + std::string(tu) + ".o: cc $top/src/" + tu +
              ".cpp\n  src = ../src/" + tu + ".cpp\n";
    }
    text +=
        "build $top/build/libs/libfoo.a: ar $top/build/foo1.o $top/build/foo2.o\n"
        "build $top/build/libshared.so: so $top/build/shared.o | $top/src/vers.map\n"
        "build $top/build/app_static: exe $top/build/main_static.o | $top/build/libs/libfoo.a\n"
        "  flags = -L$top/build/libs -lfoo\n"
        "build $top/build/app_shared: exe $top/build/main_shared.o | $top/build/libshared.so\n"
        "  flags = -L$top/build -lshared " +
        app_flags + "\n";
    dir_.write(c + "/build/build.ninja", text);
  }

  // A CMake project: a static library and the executable linking it, a
  // shared library and the executable linking that.
  void write_cmake(const std::string& c) {
    write_sources(c);
    dir_.write(c + "/src/CMakeLists.txt",
               "cmake_minimum_required(VERSION 3.16)\n"
               "project(demo CXX)\n"
               "add_library(foo STATIC foo1.cpp foo2.cpp)\n"
               "add_executable(app_static main_static.cpp)\n"
               "target_link_libraries(app_static foo)\n"
               "add_library(shared SHARED shared.cpp)\n"
               "add_executable(app_shared main_shared.cpp)\n"
               "target_link_libraries(app_shared shared)\n");
  }

  base::ProcessResult sh(const std::string& c, const std::string& command) {
    std::string env = "LEXPACK_DIR=" + shell_quote(root_ + "/" + cache_) + extra_env_ +
                      " LEXPACK_LOGFILE=" + shell_quote(root_ + "/log.txt") +
                      " LEXPACK_PLUGIN=" + shell_quote(LEXPACK_PLUGIN_SO) +
                      " LEXPACK_BASE_DIR=" + shell_quote(root_);
    return base::run_captured(
        {"/bin/sh", "-c",
         "cd " + shell_quote(root_ + "/" + c) + " || exit 99; export " + env + "; " + command},
        true);
  }

  // Runs `lexpack ninja` in c/build; returns the archive/link line's counts.
  std::map<std::string, int> lexpack_ninja(const std::string& c) {
    base::ProcessResult r = sh(c + "/build", std::string(LEXPACK_BIN) + " ninja");
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    last_out_ = r.out;
    last_err_ = r.err;
    return summary_counts(r.err, "archive/link step");
  }

  // A plain ninja build in c/build: its outputs, then removed again (ninja
  // -t clean), so that the next build makes them all.
  std::map<std::string, std::string> plain_outputs(const std::string& c,
                                                   const std::vector<std::string>& files,
                                                   const std::string& ninja = "ninja") {
    base::ProcessResult r = sh(c + "/build", ninja);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    std::map<std::string, std::string> out = outputs(c, files);
    r = sh(c + "/build", "ninja -t clean");
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return out;
  }
  std::map<std::string, std::string> outputs(const std::string& c,
                                             const std::vector<std::string>& files) {
    std::map<std::string, std::string> out;
    for (const std::string& f : files) {
      std::string path = c + "/build/" + f;
      out[f] = dir_.exists(path) ? dir_.read(path) : "(absent)";
    }
    return out;
  }

  TestDir dir_;
  std::string root_;
  std::string cache_ = "cache";  // the machine's cache directory, under root_
  std::string extra_env_;        // " NAME=value ..." for every command
  std::string cflags_;
  std::string last_out_, last_err_;
};

const std::vector<std::string> kNinjaOutputs = {"libs/libfoo.a", "libshared.so", "app_static",
                                                "app_shared"};

TEST_F(LinkRelocationE2eTest, SecondCheckoutHitsEveryArchiveAndLinkStep) {
  write_ninja("a");
  write_ninja("b");
  std::map<std::string, std::string> want = plain_outputs("b", kNinjaOutputs);

  std::map<std::string, int> first = lexpack_ninja("a");
  EXPECT_EQ(first["misses"], 5) << last_err_;  // ar, ranlib, the shared library, two programs

  std::map<std::string, int> second = lexpack_ninja("b");
  EXPECT_EQ(second["hits"], 5) << last_err_ << dir_.read("log.txt");
  EXPECT_EQ(second["misses"], 0) << last_err_;
  EXPECT_EQ(outputs("b", kNinjaOutputs), want);
  EXPECT_EQ(sh("b/build", "./app_static").exit_code, 3);
  EXPECT_EQ(sh("b/build", "LD_LIBRARY_PATH=. ./app_shared").exit_code, 7);
  // The linker's warning, replayed, names this checkout's object.
  std::string warned = root_ + "/b/build/main_static.o: in function";
  EXPECT_NE(last_out_.find(warned), std::string::npos) << last_out_;
  EXPECT_EQ(last_out_.find(root_ + "/a/"), std::string::npos) << last_out_;
}

// Another machine (a cache directory of its own) with the remote the first
// one filled: every archive and link step is taken from the remote (a link
// never run there keys the files another machine's run read, as found
// here), and its outputs are a plain build's there. Where an input differs
// on the second machine, the steps that read it run.
TEST_F(LinkRelocationE2eTest, AnotherMachineTakesTheStepsFromTheRemote) {
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  write_ninja("a");
  write_ninja("b");
  write_ninja("c");
  dir_.write("c/src/foo2.cpp", "int foo2() { return 5; }\n");
  std::map<std::string, std::string> want_b = plain_outputs("b", kNinjaOutputs);
  std::map<std::string, std::string> want_c = plain_outputs("c", kNinjaOutputs);
  // The team's g++, first on PATH on every machine; it logs every run.
  dir_.write("bin/g++", "#!/bin/sh\necho \"$@\" >> " + shell_quote(root_ + "/runs.log") +
                            "\nexec " + base::find_program("g++") + " \"$@\"\n");
  ASSERT_EQ(sh("", "chmod +x bin/g++").exit_code, 0);
  extra_env_ = " PATH=" + shell_quote(root_ + "/bin") +
               ":$PATH LEXPACK_REMOTE_STORAGE=" + shell_quote(redis.url());

  std::map<std::string, int> first = lexpack_ninja("a");
  EXPECT_EQ(first["misses"], 5) << last_err_;
  EXPECT_NE(last_err_.find(" of 10 stored entries uploaded"), std::string::npos) << last_err_;
  // A loaded machine may leave some for the next build: a no-op build sends them.
  for (int i = 0; i < 5 && last_err_.find("wait for the next build") != std::string::npos; ++i) {
    lexpack_ninja("a");
  }

  dir_.remove("runs.log");
  cache_ = "cache-b";
  std::map<std::string, int> second = lexpack_ninja("b");
  // No compiler, driver or linker ran: the toolchain's answers came too.
  EXPECT_FALSE(dir_.exists("runs.log")) << dir_.read("runs.log") << dir_.read("log.txt");
  EXPECT_EQ(second["hits"], 5) << last_err_ << dir_.read("log.txt");
  EXPECT_EQ(second["misses"], 0) << last_err_;
  EXPECT_EQ(outputs("b", kNinjaOutputs), want_b);
  EXPECT_EQ(sh("b/build", "./app_static").exit_code, 3);
  EXPECT_EQ(sh("b/build", "LD_LIBRARY_PATH=. ./app_shared").exit_code, 7);
  base::ProcessResult stats = sh("b", std::string(LEXPACK_BIN) + " stats");
  EXPECT_NE(stats.out.find("link_remote_hits  5"), std::string::npos) << stats.out;
  // Taken from the remote (two steps linking at once may each take it).
  const size_t taken = stats.out.find("link_toolchain_answers_taken ");
  ASSERT_NE(taken, std::string::npos) << stats.out;
  EXPECT_GE(std::atoi(stats.out.c_str() + taken + 29), 1) << stats.out;
  // What B took is kept: with no remote, its steps hit from its own cache.
  ASSERT_EQ(sh("b/build", "rm libs/libfoo.a libshared.so app_static app_shared").exit_code, 0);
  const std::string with_remote = extra_env_;
  extra_env_ = " PATH=" + shell_quote(root_ + "/bin") + ":$PATH";
  EXPECT_EQ(lexpack_ninja("b")["hits"], 5) << last_err_ << dir_.read("log.txt");
  EXPECT_EQ(outputs("b", kNinjaOutputs), want_b);
  extra_env_ = with_remote;

  // foo2 differs here: the archive, its ranlib and the program linking it
  // run; the shared library and its program are taken.
  cache_ = "cache-c";
  std::map<std::string, int> third = lexpack_ninja("c");
  EXPECT_EQ(third["hits"], 2) << last_err_ << dir_.read("log.txt");
  EXPECT_EQ(third["misses"], 3) << last_err_;
  EXPECT_EQ(outputs("c", kNinjaOutputs), want_c);
  EXPECT_EQ(sh("c/build", "./app_static").exit_code, 6);
}

// Objects with debug info name their checkout (no prefix map), and so does
// every archive and program made of them: such entries are stored for the
// checkout that made them. Its rebuild hits them; the other checkout misses
// and builds what a plain build there writes.
TEST_F(LinkRelocationE2eTest, OutputsNamingTheCheckoutAreStoredForItAlone) {
  cflags_ = "-g";
  write_ninja("a");
  write_ninja("b");
  std::map<std::string, std::string> want = plain_outputs("b", kNinjaOutputs);
  ASSERT_NE(want["app_static"].find(root_ + "/b/build"), std::string::npos);

  EXPECT_EQ(lexpack_ninja("a")["misses"], 5) << last_err_;
  std::string log = dir_.read("log.txt");
  EXPECT_NE(log.find("not relocatable: the output names a path under " + root_ +
                     "; stored for this checkout only"),
            std::string::npos)
      << log;
  ASSERT_EQ(sh("a/build", "rm libs/libfoo.a libshared.so app_static app_shared").exit_code, 0);
  EXPECT_EQ(lexpack_ninja("a")["hits"], 5) << last_err_;

  std::map<std::string, int> second = lexpack_ninja("b");
  EXPECT_EQ(second["misses"], 5) << last_err_;
  EXPECT_EQ(outputs("b", kNinjaOutputs), want);
}

TEST_F(LinkRelocationE2eTest, BuildTreeRpathUnderBaseDirMissesInTheSecondCheckout) {
  write_ninja("a", "-Wl,-rpath,$top/build");
  write_ninja("b", "-Wl,-rpath,$top/build");
  std::map<std::string, std::string> want = plain_outputs("b", kNinjaOutputs);
  // The plain build's program records b's own directory.
  ASSERT_NE(want["app_shared"].find(root_ + "/b/build"), std::string::npos);

  lexpack_ninja("a");
  std::map<std::string, int> second = lexpack_ninja("b");
  EXPECT_EQ(second["hits"], 4) << last_err_;
  EXPECT_EQ(second["misses"], 1) << last_err_;  // app_shared
  EXPECT_EQ(outputs("b", kNinjaOutputs), want);
  EXPECT_EQ(sh("b/build", "./app_shared").exit_code, 7);  // found through its rpath

  // Why, in the decision log and from `lexpack explain`.
  std::string why = "not relocatable: the linker writes -rpath " + root_ + "/b/build";
  EXPECT_NE(dir_.read("log.txt").find(why), std::string::npos) << dir_.read("log.txt");
  // libshared.so, served a moment before, may share the clock's tick with
  // the link's start: then the link is not stored (correctly), and is
  // linked once more for the checks below.
  if (dir_.read("log.txt").find(root_ + "/b/build/app_shared: not stored: an input changed") !=
      std::string::npos) {
    ::usleep(50 * 1000);
    ASSERT_EQ(sh("b/build", "rm app_shared").exit_code, 0);
    EXPECT_EQ(lexpack_ninja("b")["misses"], 1) << last_err_;
  }
  base::ProcessResult explain =
      sh("b/build", std::string(LEXPACK_BIN) + " explain $(ninja -t commands " + root_ +
                        "/b/build/app_shared | tail -n 1)");
  EXPECT_EQ(explain.exit_code, 0) << explain.err;
  EXPECT_NE(explain.out.find(why), std::string::npos) << explain.out;
  EXPECT_NE(explain.out.find("would hit"), std::string::npos)
      << explain.out << dir_.read("log.txt");

  // A third build in b hits its own entry.
  ASSERT_EQ(sh("b/build", "rm app_shared").exit_code, 0);
  EXPECT_EQ(lexpack_ninja("b")["hits"], 1) << last_err_;
  EXPECT_EQ(outputs("b", kNinjaOutputs), want);
}

const std::vector<std::string> kCmakeOutputs = {"libfoo.a", "libshared.so", "app_static",
                                                "app_shared"};

// CMake writes `-Wl,-rpath,<build dir>` into every executable that links a
// shared library of the build tree: that link misses in another checkout,
// the other archive and link steps hit. Without build rpaths
// (CMAKE_SKIP_BUILD_RPATH) every step hits.
TEST_F(LinkRelocationE2eTest, CmakeBuildTreeRpathMissesOnlyThatLink) {
  if (base::find_program("cmake").empty()) GTEST_SKIP() << "cmake not installed";
  for (bool skip : {false, true}) {
    SCOPED_TRACE(skip ? "CMAKE_SKIP_BUILD_RPATH=ON" : "default");
    ASSERT_EQ(sh("", "rm -rf a b cache log.txt").exit_code, 0);
    for (const char* c : {"a", "b"}) {
      write_cmake(c);
      base::ProcessResult r =
          sh(c, std::string("cmake -S src -B build -G Ninja ") +
                    "-DCMAKE_CXX_COMPILER=g++ -DCMAKE_SKIP_BUILD_RPATH=" + (skip ? "ON" : "OFF"));
      ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    }
    std::map<std::string, std::string> want = plain_outputs("b", kCmakeOutputs);
    EXPECT_EQ(want["app_shared"].find(root_ + "/b/build") == std::string::npos, skip);

    lexpack_ninja("a");
    std::map<std::string, int> second = lexpack_ninja("b");
    // ar, ranlib, the shared library, app_static; app_shared without the rpath.
    EXPECT_EQ(second["hits"], skip ? 5 : 4) << last_err_;
    EXPECT_EQ(second["misses"], skip ? 0 : 1) << last_err_;
    EXPECT_EQ(outputs("b", kCmakeOutputs), want);
    EXPECT_EQ(sh("b/build", "./app_static").exit_code, 3);
    EXPECT_EQ(sh("b/build", "LD_LIBRARY_PATH=. ./app_shared").exit_code, 7);
  }
}

// With CMAKE_BUILD_RPATH_USE_ORIGIN CMake writes `-Wl,-rpath,"\$ORIGIN"`
// instead: that link is relocatable and hits in the other checkout too, as
// CMake's linker launcher and under `lexpack ninja` (whose plugin routes that
// one quoted form).
TEST_F(LinkRelocationE2eTest, CmakeOriginRpathHitsThroughTheLinkerLauncher) {
  if (base::find_program("cmake").empty()) GTEST_SKIP() << "cmake not installed";
  for (const char* c : {"a", "b"}) {
    write_cmake(c);
    base::ProcessResult r = sh(c,
                               "cmake -S src -B build -G Ninja -DCMAKE_CXX_COMPILER=g++ "
                               "-DCMAKE_BUILD_RPATH_USE_ORIGIN=ON -DCMAKE_CXX_LINKER_LAUNCHER=" +
                                   std::string(LEXPACK_BIN));
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  std::map<std::string, std::string> want =
      plain_outputs("b", kCmakeOutputs, "LEXPACK_DISABLE=1 ninja");
  ASSERT_EQ(want["app_shared"].find(root_), std::string::npos);

  ASSERT_EQ(sh("a/build", "ninja").exit_code, 0);
  ASSERT_EQ(sh("", "rm log.txt").exit_code, 0);
  ASSERT_EQ(sh("b/build", "ninja").exit_code, 0);
  std::string log = dir_.read("log.txt");
  for (const char* f : {"app_static", "libshared.so", "app_shared"}) {
    EXPECT_NE(log.find(std::string(f) + ": hit"), std::string::npos) << f << "\n" << log;
  }
  EXPECT_EQ(outputs("b", kCmakeOutputs), want);
  EXPECT_EQ(sh("b/build", "./app_shared").exit_code, 7);
}

TEST_F(LinkRelocationE2eTest, CmakeOriginRpathHitsUnderLexpackNinja) {
  if (base::find_program("cmake").empty()) GTEST_SKIP() << "cmake not installed";
  for (const char* c : {"a", "b"}) {
    write_cmake(c);
    base::ProcessResult r = sh(c,
                               "cmake -S src -B build -G Ninja -DCMAKE_CXX_COMPILER=g++ "
                               "-DCMAKE_BUILD_RPATH_USE_ORIGIN=ON");
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  std::map<std::string, std::string> want = plain_outputs("b", kCmakeOutputs);
  ASSERT_EQ(want["app_shared"].find(root_), std::string::npos);
  lexpack_ninja("a");
  std::map<std::string, int> second = lexpack_ninja("b");
  // ar, ranlib, the shared library, app_static and app_shared.
  EXPECT_EQ(second["hits"], 5) << last_err_;
  EXPECT_EQ(second["misses"], 0) << last_err_;
  EXPECT_EQ(outputs("b", kCmakeOutputs), want);
  EXPECT_EQ(sh("b/build", "./app_shared").exit_code, 7);
}

// The relocation the README advises for CMake, -DCMAKE_CXX_FLAGS with a
// prefix map of the checkout: CMake copies the flags onto its link lines,
// where the map changes nothing the link writes. Every archive and link
// step of the second checkout hits, the outputs those of a plain build.
TEST_F(LinkRelocationE2eTest, PrefixMapOnTheLinkLineKeepsLinksRelocatable) {
  if (base::find_program("cmake").empty()) GTEST_SKIP() << "cmake not installed";
  for (const char* c : {"a", "b"}) {
    write_cmake(c);
    base::ProcessResult r = sh(c,
                               "cmake -S src -B build -G Ninja -DCMAKE_CXX_COMPILER=g++ "
                               "-DCMAKE_BUILD_RPATH_USE_ORIGIN=ON "
                               "-DCMAKE_CXX_FLAGS=-ffile-prefix-map=$PWD=.");
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  ASSERT_NE(dir_.read("b/build/build.ninja").find("-ffile-prefix-map=" + root_ + "/b=."),
            std::string::npos);
  std::map<std::string, std::string> want = plain_outputs("b", kCmakeOutputs);
  lexpack_ninja("a");
  std::map<std::string, int> second = lexpack_ninja("b");
  // ar, ranlib, the shared library, app_static and app_shared.
  EXPECT_EQ(second["hits"], 5) << last_err_ << dir_.read("log.txt");
  EXPECT_EQ(second["misses"], 0) << last_err_;
  EXPECT_EQ(outputs("b", kCmakeOutputs), want);
  EXPECT_EQ(sh("b/build", "./app_shared").exit_code, 7);
}

}  // namespace
}  // namespace lexpack::testing
