// End-to-end tests of `lexpack ninja`: a generated CMake project built by the
// real ninja and g++ through the plugin and the launcher, compared with a
// plain ninja build of the same project.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>

#include "base/process.h"
#include "tests/support/summary_counts.h"
#include "tests/support/test_dir.h"

namespace lexpack::testing {
namespace {

namespace fs = std::filesystem;

// Six TUs: t0, t1 include a.h; t2, t3 include b.h; t4, t5 include nothing of
// the project. A library, an executable (link steps) and a custom command.
void write_project(const TestDir& dir) {
  dir.write("src/CMakeLists.txt",
            "cmake_minimum_required(VERSION 3.22)\n"
            "project(demo CXX)\n"
            "add_library(parts STATIC t0.cpp t1.cpp t2.cpp t3.cpp t4.cpp)\n"
            "target_include_directories(parts PUBLIC include)\n"
            "add_executable(app t5.cpp)\n"
            "target_link_libraries(app parts)\n"
            "add_custom_command(OUTPUT stamp.txt COMMAND g++ -dumpversion\n"
            "  COMMAND sh -c \"echo made > stamp.txt\" VERBATIM)\n"
            "add_custom_target(stamp ALL DEPENDS stamp.txt)\n");
  dir.write("src/include/a.h", "#pragma once\ninline int a_value() { return 1; }\n");
  dir.write("src/include/b.h", "#pragma once\ninline int b_value() { return 2; }\n");
  for (int i = 0; i < 5; ++i) {
    std::string header = i < 2 ? "#include \"a.h\"\n" : i < 4 ? "#include \"b.h\"\n" : "";
    std::string body = i < 2 ? "a_value()" : i < 4 ? "b_value()" : "4";
    dir.write("src/t" + std::to_string(i) + ".cpp", header + "int t" + std::to_string(i) +
                                                        "() { return " + body + " + " +
                                                        std::to_string(i) + "; }\n");
  }
  dir.write("src/t5.cpp",
            "int t0(); int t2(); int t4();\nint main() { return t0() + t2() + t4() - 13; }\n");
}

class NinjaE2eTest : public ::testing::Test {
 protected:
  void SetUp() override { write_project(dir_); }

  base::ProcessResult sh(const std::string& command) {
    std::string env = "LEXPACK_DIR=" + shell_quote(dir_.at("cache")) +
                      " LEXPACK_LOGFILE=" + shell_quote(dir_.at("log.txt")) +
                      " LEXPACK_PLUGIN=" + shell_quote(LEXPACK_PLUGIN_SO);
    return shell_in(dir_, env, command);
  }
  void configure(const std::string& build, const std::string& extra = "") {
    base::ProcessResult r = sh("rm -rf " + build + " && cmake -S src -B " + build +
                               " -G Ninja -DCMAKE_CXX_COMPILER=g++ " + extra);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  base::ProcessResult lexpack_ninja(const std::string& args) {
    return sh(std::string(LEXPACK_BIN) + " ninja " + args);
  }
  // The environment of a build with the server on, left running for a minute.
  static constexpr const char* kServerOn = "LEXPACK_SERVER= LEXPACK_SERVER_IDLE=60 ";
  // Stops the server when it goes.
  std::shared_ptr<void> server_stopped_at_end() {
    return std::shared_ptr<void>(
        nullptr, [this](void*) { sh(std::string(kServerOn) + LEXPACK_BIN + " server --stop"); });
  }
  // `build` configured and built through `lexpack ninja` with the server on,
  // its files a second old first (the memos are kept by signature, and the
  // server trusts them).
  base::ProcessResult cold_build_with_server() {
    configure("build");
    sleep(2);
    return sh(std::string(kServerOn) + LEXPACK_BIN + " ninja -C build");
  }
  // The object files under a build directory, by relative path.
  std::map<std::string, std::string> objects(const std::string& build) {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir_.at(build))) {
      if (e.path().extension() != ".o") continue;
      std::ifstream in(e.path(), std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      out[fs::relative(e.path(), dir_.at(build)).string()] = ss.str();
    }
    return out;
  }
  // The TUs ninja said it compiled ("Building CXX object CMakeFiles/...t3.cpp.o").
  static std::set<std::string> compiled(const std::string& ninja_out) {
    std::set<std::string> tus;
    std::istringstream in(ninja_out);
    for (std::string line; std::getline(in, line);) {
      size_t at = line.find("Building CXX object ");
      if (at == std::string::npos) continue;
      std::string obj = line.substr(line.rfind('/') + 1);
      tus.insert(obj.substr(0, obj.find('.')));
    }
    return tus;
  }
  // "lexpack: 6 compiles, 0 hits, ..." -> {"compiles": 6, "hits": 0, ...}
  static std::map<std::string, int> summary(const std::string& err) { return summary_counts(err); }

  TestDir dir_;
};

TEST_F(NinjaE2eTest, ObjectsMatchPlainBuildAndRebuildHitsEverything) {
  configure("plain");
  base::ProcessResult plain = sh("ninja -C plain");
  ASSERT_EQ(plain.exit_code, 0) << plain.out << plain.err;

  configure("build");
  base::ProcessResult first = lexpack_ninja("-C build");
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  auto s1 = summary(first.err);
  EXPECT_EQ(s1["compiles"], 6) << first.err;
  EXPECT_EQ(s1["misses"], 6) << first.err;
  EXPECT_EQ(s1["hits"], 0) << first.err;
  EXPECT_EQ(s1["uncacheable"], 0) << first.err;  // links and the custom command stay outside
  EXPECT_EQ(first.err.find("another launcher"), std::string::npos) << first.err;
  auto want = objects("plain");
  ASSERT_EQ(want.size(), 6u);
  EXPECT_EQ(objects("build"), want);
  EXPECT_EQ(sh("build/app").exit_code, 0);
  EXPECT_EQ(dir_.read("build/stamp.txt"), "made\n");

  configure("build");
  base::ProcessResult second = lexpack_ninja("-C build");
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  auto s2 = summary(second.err);
  EXPECT_EQ(s2["compiles"], 6) << second.err;
  EXPECT_EQ(s2["hits"], 6) << second.err;
  EXPECT_EQ(s2["misses"], 0) << second.err;
  EXPECT_EQ(objects("build"), want);
  EXPECT_EQ(sh("build/app").exit_code, 0);

  base::ProcessResult noop = lexpack_ninja("-C build");
  EXPECT_EQ(noop.out.find("Building"), std::string::npos) << noop.out;
  EXPECT_EQ(summary(noop.err)["compiles"], 0) << noop.err;
}

TEST_F(NinjaE2eTest, HeaderEditRebuildsExactlyItsDependents) {
  configure("build");
  base::ProcessResult first = lexpack_ninja("-C build");
  ASSERT_EQ(first.exit_code, 0);
  EXPECT_NE(first.err.find("lexpack: 6 misses: 6 new compiles (or arguments changed)\n"),
            std::string::npos)
      << first.err;

  std::string original = dir_.read("src/include/b.h");
  dir_.write("src/include/b.h", "#pragma once\ninline int b_value() { return 3; }\n");
  base::ProcessResult edit = lexpack_ninja("-C build");
  ASSERT_EQ(edit.exit_code, 0) << edit.out << edit.err;
  EXPECT_EQ(compiled(edit.out), (std::set<std::string>{"t2", "t3"})) << edit.out;
  auto s = summary(edit.err);
  EXPECT_EQ(s["compiles"], 2) << edit.err;
  EXPECT_EQ(s["misses"], 2) << edit.err;
  // The summary says why they missed: the header, by the path they read.
  const std::string why = "lexpack: 2 misses: 2 because " + dir_.at("src/include/b.h") + " changed";
  EXPECT_NE(edit.err.find(why), std::string::npos) << edit.err;

  configure("plain");
  ASSERT_EQ(sh("ninja -C plain").exit_code, 0);
  EXPECT_EQ(objects("build"), objects("plain"));

  // Back to the old header: the old objects come from the cache.
  dir_.write("src/include/b.h", original);
  base::ProcessResult back = lexpack_ninja("-C build");
  ASSERT_EQ(back.exit_code, 0) << back.out << back.err;
  EXPECT_EQ(compiled(back.out), (std::set<std::string>{"t2", "t3"})) << back.out;
  EXPECT_EQ(summary(back.err)["hits"], 2) << back.err;
}

// `lexpack explain -C BUILD` says again why the last build missed, and per
// output on request; a build with no miss leaves the last record as it was.
TEST_F(NinjaE2eTest, ExplainOfABuildNamesWhyItsCompilesMissed) {
  configure("build");
  ASSERT_EQ(lexpack_ninja("-C build").exit_code, 0);
  const std::string lexpack = LEXPACK_BIN;
  EXPECT_EQ(sh(lexpack + " explain -C build").out,
            "lexpack: 6 misses: 6 new compiles (or arguments changed)\n");
  dir_.write("src/include/b.h", "#pragma once\ninline int b_value() { return 4; }\n");
  base::ProcessResult edit = lexpack_ninja("-C build");
  ASSERT_EQ(edit.exit_code, 0) << edit.err;
  const std::string header = dir_.at("src/include/b.h");
  base::ProcessResult r = sh(lexpack + " explain -C build");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "lexpack: 2 misses: 2 because " + header + " changed\n");
  EXPECT_NE(r.err.find("that compiled something, ended "), std::string::npos) << r.err;
  EXPECT_NE(edit.err.find(r.out), std::string::npos) << edit.err;
  r = sh(lexpack + " explain -C build CMakeFiles/parts.dir/t2.cpp.o CMakeFiles/parts.dir/t0.cpp.o");
  EXPECT_EQ(r.out, "CMakeFiles/parts.dir/t2.cpp.o: missed: changed: " + header +
                       "\nCMakeFiles/parts.dir/t0.cpp.o: not a miss of the last build (a hit, "
                       "not run, or not a compile)\n");
  r = sh(lexpack + " explain -C no-such-dir");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("no-such-dir: no such directory"), std::string::npos) << r.err;
  configure("other");
  r = sh(lexpack + " explain -C other");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("no build of " + dir_.at("other") + " through `lexpack ninja`"),
            std::string::npos)
      << r.err;
}

// With the server on (the default): the server that finds a header changed
// evaluates the closure again in the hit request and stores its memo, so the
// launcher finds a memo that holds and no entry; the cause is still the
// header (what changed since the memo before).
TEST_F(NinjaE2eTest, ExplainNamesTheChangedHeaderWithTheServerOn) {
  configure("build");
  sleep(2);  // settled files: the memos are kept by signature, and the server trusts them
  const std::string on = "LEXPACK_SERVER= LEXPACK_SERVER_IDLE=60 ";
  const std::string lexpack = LEXPACK_BIN;
  ASSERT_EQ(sh(on + lexpack + " ninja -C build").exit_code, 0);
  // Until the server answers every compile from memory.
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(sh("ninja -C build -t clean").exit_code, 0);
    base::ProcessResult again = sh(on + lexpack + " ninja -C build");
    ASSERT_EQ(again.exit_code, 0) << again.err;
    if (again.err.find("6 hits") != std::string::npos) break;
    sleep(1);
  }
  dir_.write("src/include/b.h", "#pragma once\ninline int b_value() { return 6; }\n");
  base::ProcessResult edit = sh(on + lexpack + " ninja -C build");
  sh(on + lexpack + " server --stop");
  ASSERT_EQ(edit.exit_code, 0) << edit.err;
  EXPECT_NE(edit.err.find("2 misses: 2 because " + dir_.at("src/include/b.h") + " changed"),
            std::string::npos)
      << edit.err << dir_.read("log.txt");
}

// A cold build leaves the server nothing to check while the compilers run
// (each compile ran the compiler); the next `lexpack ninja`, finding a
// server that trusts none of the entries it knows, has the build checked
// before ninja starts, and every compile is answered from memory.
TEST_F(NinjaE2eTest, AfterAColdBuildTheNextBuildIsCheckedAhead) {
  const std::string on = kServerOn;
  const std::string lexpack = LEXPACK_BIN;
  std::shared_ptr<void> stop = server_stopped_at_end();
  base::ProcessResult cold = cold_build_with_server();
  ASSERT_EQ(cold.exit_code, 0) << cold.err;
  EXPECT_NE(cold.err.find("6 misses"), std::string::npos) << cold.err;
  ::usleep(500 * 1000);  // idle time, in which nothing is checked
  std::string status = "\n" + sh(on + lexpack + " server --status").out;
  EXPECT_NE(status.find("\ntrusted 0\n"), std::string::npos) << status;
  ASSERT_EQ(sh("ninja -C build -t clean").exit_code, 0);
  dir_.write("log.txt", "");
  base::ProcessResult again = sh(on + lexpack + " ninja -C build");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("checked ahead by the server: 6 of 6 compiles answered from memory"),
            std::string::npos)
      << again.err;
  EXPECT_NE(again.err.find("6 hits"), std::string::npos) << again.err;
  EXPECT_EQ(dir_.read("log.txt").find("server declined: busy"), std::string::npos)
      << dir_.read("log.txt");
}

// A build's check ahead runs each entry's stat check on a second thread
// while it watches the next entry's paths: a header rewritten with its own
// bytes since the last build is compared by its content (in turn, after the
// others), and its includers are still answered from memory; the includers
// of a header changed since are compiled, as a plain build compiles them.
TEST_F(NinjaE2eTest, ACheckAheadComparesARewrittenHeaderByItsContent) {
  const std::string on = kServerOn;
  const std::string lexpack = LEXPACK_BIN;
  std::shared_ptr<void> stop = server_stopped_at_end();
  base::ProcessResult cold = cold_build_with_server();
  ASSERT_EQ(cold.exit_code, 0) << cold.err;
  ASSERT_EQ(sh(on + lexpack + " server --stop").exit_code, 0);
  dir_.write("src/include/a.h", dir_.read("src/include/a.h"));
  dir_.write("src/include/b.h", "#pragma once\ninline int b_value() { return 3; }\n");
  ASSERT_EQ(sh("ninja -C build -t clean").exit_code, 0);
  base::ProcessResult again = sh(on + lexpack + " ninja -C build");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("checked ahead by the server: 4 of 6 compiles answered from memory"),
            std::string::npos)
      << again.err;
  EXPECT_NE(again.err.find("4 hits, 2 misses"), std::string::npos) << again.err;
  const std::string status = "\n" + sh(on + lexpack + " server --status").out;
  EXPECT_EQ(status.find("\ncontent_trusts 0\n"), std::string::npos) << status;
  EXPECT_NE(status.find("\ncontent_trusts "), std::string::npos) << status;
  // Each of the six validated once by the check ahead (those checked again
  // by content are not counted twice), the two that changed at most twice
  // more when compiled (their memo out of date, then the one evaluated
  // again): at most ten; counting the re-checks twice made it fourteen.
  const size_t at = status.find("\nvalidations ");
  ASSERT_NE(at, std::string::npos) << status;
  EXPECT_LE(std::stol(status.substr(at + 13)), 10) << status;
  configure("plain");
  ASSERT_EQ(sh("ninja -C plain").exit_code, 0);
  EXPECT_EQ(objects("build"), objects("plain"));
}

// The same server after an edit: every output ninja logged is there, so
// no compile is to be checked ahead, and ninja is not asked for the compile
// database (a parse of the whole manifest) before it starts; after a clean,
// it is, and the compiles are checked ahead again. `ninja` on the PATH logs
// how it is run and runs the real one.
TEST_F(NinjaE2eTest, AnIncrementalBuildAsksNinjaForNoCompileDatabase) {
  std::string real_ninja = sh("command -v ninja").out;
  real_ninja.erase(real_ninja.find_last_not_of('\n') + 1);
  ASSERT_FALSE(real_ninja.empty());
  dir_.write("bin/ninja", "#!/bin/sh\necho \"$*\" >> " + shell_quote(dir_.at("ninja_runs.txt")) +
                              "\nexec " + shell_quote(real_ninja) + " \"$@\"\n");
  ASSERT_EQ(::chmod(dir_.at("bin/ninja").c_str(), 0755), 0);
  configure("build");
  sleep(2);  // settled files: the memos are kept by signature, and the server trusts them
  const std::string on =
      "PATH=" + shell_quote(dir_.at("bin")) + ":$PATH LEXPACK_SERVER= " + "LEXPACK_SERVER_IDLE=60 ";
  const std::string lexpack = LEXPACK_BIN;
  std::shared_ptr<void> stop(nullptr, [&](void*) { sh(on + lexpack + " server --stop"); });
  ASSERT_EQ(sh(on + lexpack + " ninja -C build").exit_code, 0);
  ::usleep(500 * 1000);
  ASSERT_NE(("\n" + sh(on + lexpack + " server --status").out).find("\ntrusted 0\n"),
            std::string::npos)
      << "a server as good as new, which has the compiles to run checked ahead";
  dir_.write("src/t4.cpp", dir_.read("src/t4.cpp") + "int t4_more() { return 5; }\n");
  dir_.write("ninja_runs.txt", "");
  base::ProcessResult edit = sh(on + lexpack + " ninja -C build");
  ASSERT_EQ(edit.exit_code, 0) << edit.err;
  EXPECT_EQ(dir_.read("ninja_runs.txt").find("compdb"), std::string::npos)
      << dir_.read("ninja_runs.txt");
  EXPECT_EQ(edit.err.find("checked ahead"), std::string::npos) << edit.err;
  EXPECT_NE(edit.err.find("1 miss"), std::string::npos) << edit.err;
  ASSERT_EQ(sh("ninja -C build -t clean").exit_code, 0);
  dir_.write("ninja_runs.txt", "");
  base::ProcessResult again = sh(on + lexpack + " ninja -C build");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(dir_.read("ninja_runs.txt").find("-t compdb"), std::string::npos)
      << dir_.read("ninja_runs.txt");
  // (The source edited a moment ago is too young for its memo to be kept.)
  EXPECT_NE(again.err.find("checked ahead by the server: "), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("6 hits"), std::string::npos) << again.err;
}

TEST_F(NinjaE2eTest, ExitCodeAndFailingCommandOutputPassThrough) {
  dir_.write("src/t4.cpp", "int t4() { return missing_name_42; }\n");
  configure("build");
  base::ProcessResult plain = sh("ninja -C build -j1");
  configure("build");
  base::ProcessResult wrapped = lexpack_ninja("-j1 -C build");
  EXPECT_NE(plain.exit_code, 0);
  EXPECT_EQ(wrapped.exit_code, plain.exit_code);
  EXPECT_NE(plain.out.find("missing_name_42"), std::string::npos) << plain.out;
  EXPECT_EQ(wrapped.out, plain.out);
  EXPECT_EQ(summary(wrapped.err)["failed"], 1) << wrapped.err;

  base::ProcessResult plain_bad = sh("ninja -C build no_such_target");
  base::ProcessResult wrapped_bad = lexpack_ninja("-C build no_such_target");
  EXPECT_EQ(wrapped_bad.exit_code, plain_bad.exit_code);
  EXPECT_NE(wrapped_bad.exit_code, 0);
  EXPECT_EQ(wrapped_bad.out, plain_bad.out);
  EXPECT_NE(wrapped_bad.err.find(plain_bad.err), std::string::npos) << wrapped_bad.err;
}

TEST_F(NinjaE2eTest, CommandsWithALauncherAreLeftAlone) {
  dir_.write("other-cache",
             "#!/bin/sh\necho \"$@\" >> \"$(dirname \"$0\")/other-cache.log\"\nexec \"$@\"\n");
  ASSERT_EQ(sh("chmod +x other-cache").exit_code, 0);
  configure("build", "-DCMAKE_CXX_COMPILER_LAUNCHER=" + dir_.at("other-cache"));
  base::ProcessResult r = lexpack_ninja("-C build");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(summary(r.err)["compiles"], 0) << r.err;
  // The summary says why nothing was cached.
  EXPECT_NE(r.err.find("lexpack: note: 6 compiles already went through another launcher (" +
                       dir_.at("other-cache") + ")"),
            std::string::npos)
      << r.err;
  std::string log = dir_.read("other-cache.log");
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 6) << log;
  EXPECT_EQ(log.find(LEXPACK_BIN), std::string::npos) << log;
  // The archive and link steps have no launcher of their own: lexpack runs
  // those, and only those.
  std::istringstream lines(dir_.exists("log.txt") ? dir_.read("log.txt") : "");
  for (std::string line; std::getline(lines, line);) {
    EXPECT_TRUE(line.find(" libparts.a: ") != std::string::npos ||
                line.find(" app: ") != std::string::npos)
        << line;
  }
}

TEST_F(NinjaE2eTest, ToolsAndDryRunsPrintWhatNinjaPrints) {
  configure("build");
  for (std::string args : {"-t targets all", "-t commands app", "--version", "-n"}) {
    base::ProcessResult plain = sh("ninja -C build " + args);
    base::ProcessResult wrapped = lexpack_ninja("-C build " + args);
    EXPECT_EQ(wrapped.exit_code, plain.exit_code) << args;
    EXPECT_EQ(wrapped.out, plain.out) << args;
    EXPECT_EQ(wrapped.err, plain.err) << args;
  }
}

TEST_F(NinjaE2eTest, WarmCountsWhatWouldHit) {
  configure("build");
  base::ProcessResult cold = sh(std::string(LEXPACK_BIN) + " warm -C build");
  EXPECT_EQ(cold.exit_code, 0) << cold.err;
  EXPECT_NE(cold.err.find("6 compiles, 0 would hit, 6 would miss"), std::string::npos) << cold.err;
  ASSERT_EQ(lexpack_ninja("-C build").exit_code, 0);
  dir_.write("src/include/b.h", "#pragma once\ninline int b_value() { return 5; }\n");
  base::ProcessResult warm = sh(std::string(LEXPACK_BIN) + " warm -C build");
  EXPECT_NE(warm.err.find("6 compiles, 4 would hit, 2 would miss"), std::string::npos) << warm.err;
}

// A compile behind another launcher is left to it by the build: warm says
// so, for each such compile and in a note, instead of counting a miss.
TEST_F(NinjaE2eTest, WarmTellsTheCompilesLeftToAnotherLauncher) {
  dir_.write("bin/ccache", "#!/bin/sh\nexec \"$@\"\n");
  ASSERT_EQ(sh("chmod +x bin/ccache").exit_code, 0);
  configure("build", "-DCMAKE_CXX_COMPILER_LAUNCHER=" + dir_.at("bin/ccache"));
  base::ProcessResult r = sh(std::string(LEXPACK_BIN) + " warm -v -C build");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("t0.cpp -> CMakeFiles/parts.dir/t0.cpp.o: left to " + dir_.at("bin/ccache") +
                       " by the build\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("would miss"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("lexpack: note: 6 compiles run behind another launcher (" +
                       dir_.at("bin/ccache") + "), which the build leaves them to"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("warm: 0 compiles"), std::string::npos) << r.err;
}

// warm -v tells each compile by source and output, and why it would miss;
// neither warm nor the explain it runs changes the counters.
TEST_F(NinjaE2eTest, WarmVerboseSaysWhyAndCountsNothing) {
  configure("build");
  base::ProcessResult cold = sh(std::string(LEXPACK_BIN) + " warm -v -C build");
  EXPECT_NE(cold.out.find("t0.cpp -> CMakeFiles/parts.dir/t0.cpp.o: would miss: no cached result "
                          "for this key (never compiled with these arguments)\n"),
            std::string::npos)
      << cold.out;
  ASSERT_EQ(lexpack_ninja("-C build").exit_code, 0);
  auto counters = [&] {
    std::string json = sh(std::string(LEXPACK_BIN) + " stats --json").out;
    size_t at = json.find("\"counters\"");
    return at == std::string::npos ? std::string() : json.substr(at);
  };
  const std::string before = counters();
  EXPECT_NE(before.find("\"misses\": 6"), std::string::npos) << before;
  sleep(2);
  dir_.write("src/include/b.h", "#pragma once\ninline int b_value() { return 5; }\n");
  base::ProcessResult warm = sh(std::string(LEXPACK_BIN) + " warm -v -C build");
  EXPECT_NE(warm.out.find("t2.cpp -> CMakeFiles/parts.dir/t2.cpp.o: would miss: no cached result "
                          "for this key (changed: " +
                          dir_.at("src/include/b.h") + ")\n"),
            std::string::npos)
      << warm.out;
  EXPECT_NE(warm.out.find("t0.cpp -> CMakeFiles/parts.dir/t0.cpp.o: would hit\n"),
            std::string::npos)
      << warm.out;
  EXPECT_EQ(counters(), before);
  // With the server on (the default), explain's first line is the server's
  // answer; the verdicts are still the launcher's.
  const std::string on = "LEXPACK_SERVER= LEXPACK_SERVER_IDLE=60 ";
  base::ProcessResult served = sh(on + LEXPACK_BIN + " warm -v -C build");
  sh(on + LEXPACK_BIN + " server --stop");
  auto sorted_lines = [](const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    std::sort(lines.begin(), lines.end());
    return lines;
  };
  EXPECT_EQ(sorted_lines(served.out), sorted_lines(warm.out));  // printed as each is done
  EXPECT_EQ(counters(), before);
}

// The README's CI recipe: save the cache directory as one archive, restore it
// on a fresh machine (here: another directory), build: everything hits.
TEST_F(NinjaE2eTest, RestoredCacheArchiveServesAFreshBuild) {
  configure("build");
  ASSERT_EQ(lexpack_ninja("-C build").exit_code, 0);
  ASSERT_EQ(sh("tar -C cache -czf ci-cache.tgz . && mkdir restored && "
               "tar -C restored -xzf ci-cache.tgz && rm -rf cache")
                .exit_code,
            0);
  configure("build");
  base::ProcessResult r =
      sh("LEXPACK_DIR=restored " + std::string(LEXPACK_BIN) + " ninja -C build");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(summary(r.err)["hits"], 6) << r.err;
}

// The plugin must be inert outside the ninja that `lexpack ninja` started.
TEST_F(NinjaE2eTest, PluginIsPassiveInOtherPrograms) {
  configure("build");
  std::string preload = "LD_PRELOAD=" + shell_quote(LEXPACK_PLUGIN_SO) + " ";
  std::string active_env = "LEXPACK_NINJA_LAUNCHER=/bin/false LEXPACK_NINJA_PID=$$ ";
  const char* programs[] = {
      "sh -c 'echo hi; g++ -c src/t4.cpp -o t4.o && echo compiled'",
      "python3 -c 'import subprocess; subprocess.run([\"sh\", \"-c\", \"g++ -c src/t4.cpp -o "
      "t4.o && echo py\"])'",
      "ninja -C build -t targets all",
  };
  for (const char* program : programs) {
    base::ProcessResult plain = sh(program);
    // The pid matches but the program is not ninja; then no pid at all.
    base::ProcessResult same_pid = sh(active_env + preload + "exec " + program);
    base::ProcessResult no_pid = sh(preload + program);
    EXPECT_EQ(plain.exit_code, 0) << program << plain.err;
    for (const base::ProcessResult* r : {&same_pid, &no_pid}) {
      EXPECT_EQ(r->exit_code, plain.exit_code) << program;
      EXPECT_EQ(r->out, plain.out) << program;
      EXPECT_EQ(r->err, plain.err) << program;
    }
  }
  // A ninja that was not started by `lexpack ninja` (other pid) builds as usual:
  // with /bin/false as the launcher, any rewritten compile would fail.
  base::ProcessResult ninja =
      sh("LEXPACK_NINJA_LAUNCHER=/bin/false LEXPACK_NINJA_PID=1 " + preload + "ninja -C build");
  EXPECT_EQ(ninja.exit_code, 0) << ninja.out << ninja.err;
  // And the same with the right pid fails: the test above can fail.
  configure("build");
  base::ProcessResult active = sh(active_env + preload + "exec ninja -C build");
  EXPECT_NE(active.exit_code, 0) << active.out;
}

// A compile made of plain words starts the launcher without "sh -c"; one the
// shell must read (quotes) still goes through the shell. Both give the
// objects a plain ninja gives, with -g (the compile directory is in the
// object) and run from a symlinked path (the compiler takes it from $PWD).
TEST_F(NinjaE2eTest, PlainCompilesSkipTheShellWithTheShellsResult) {
  dir_.write("src/q.cpp", "const char* q() { return NAME; }\n");
  dir_.write("real/build.ninja",
             "rule cxx\n  command = g++ $flags -c $in -o $out\n"
             "build plain.o: cxx ../src/t4.cpp\n  flags = -O1 -g\n"
             "build quoted.o: cxx ../src/q.cpp\n  flags = -O1 -g -DNAME='\"q\"'\n");
  ASSERT_EQ(sh("ln -s real link").exit_code, 0);
  auto read_objects = [&] {
    return std::map<std::string, std::string>{{"plain.o", dir_.read("real/plain.o")},
                                              {"quoted.o", dir_.read("real/quoted.o")}};
  };
  base::ProcessResult plain = sh("cd link && ninja");
  ASSERT_EQ(plain.exit_code, 0) << plain.out << plain.err;
  auto want = read_objects();
  ASSERT_NE(want["plain.o"].find(dir_.path() + "/link"), std::string::npos);
  for (const char* round : {"misses", "hits"}) {
    ASSERT_EQ(sh("cd link && ninja -t clean").exit_code, 0);
    base::ProcessResult r =
        sh("cd link && LEXPACK_PLUGIN_DEBUG=1 " + std::string(LEXPACK_BIN) + " ninja");
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(summary(r.err)[round], 2) << r.err;
    EXPECT_NE(r.err.find("routed without a shell: g++ -O1 -g -c ../src/t4.cpp -o plain.o"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("without a shell: g++ -O1 -g -DNAME"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("routed: "), std::string::npos) << r.err;
    EXPECT_TRUE(read_objects() == want) << round;
  }
  // From the build directory's own path ($PWD not naming it): the same. (A
  // cache of its own: the objects above name the symlinked path, and $PWD is
  // not part of the key.)
  ASSERT_EQ(sh("ninja -C real -t clean && ninja -C real").exit_code, 0);
  want = read_objects();
  ASSERT_EQ(want["plain.o"].find(dir_.path() + "/link"), std::string::npos);
  ASSERT_EQ(sh("ninja -C real -t clean").exit_code, 0);
  base::ProcessResult r =
      sh("LEXPACK_DIR=" + shell_quote(dir_.at("cache2")) + " " + LEXPACK_BIN + " ninja -C real");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(read_objects() == want);
}

// An environment the shell would not pass on as it is (a variable name it
// drops) sends even a plain compile through the shell, which then decides.
TEST_F(NinjaE2eTest, AnEnvironmentTheShellWouldChangeKeepsTheShell) {
  dir_.write("b/build.ninja",
             "rule cxx\n  command = g++ -O1 -c $in -o $out\n"
             "build plain.o: cxx ../src/t4.cpp\n");
  ASSERT_EQ(sh("ninja -C b").exit_code, 0);
  std::string want = dir_.read("b/plain.o");
  ASSERT_EQ(sh("ninja -C b -t clean").exit_code, 0);
  base::ProcessResult r =
      sh("env 'ODD-NAME=1' LEXPACK_PLUGIN_DEBUG=1 " + std::string(LEXPACK_BIN) + " ninja -C b");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.err.find("without a shell"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("routed: "), std::string::npos) << r.err;
  EXPECT_TRUE(dir_.read("b/plain.o") == want);
  // The same command without that variable skips the shell (so the test above
  // can fail).
  ASSERT_EQ(sh("ninja -C b -t clean").exit_code, 0);
  r = sh("LEXPACK_PLUGIN_DEBUG=1 " + std::string(LEXPACK_BIN) + " ninja -C b");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("without a shell"), std::string::npos) << r.err;
  EXPECT_TRUE(dir_.read("b/plain.o") == want);
}

}  // namespace
}  // namespace lexpack::testing
