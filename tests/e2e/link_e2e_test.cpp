// End-to-end tests of archive and link caching under `lexpack ninja`: a
// hand-written ninja project (a static library, a shared library with a
// version script, an executable) built with g++ and clang++ through the
// plugin, compared byte for byte with a plain ninja build, and each change
// that must make a step run again.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <sstream>
#include <string>

#include "base/process.h"
#include "tests/support/summary_counts.h"
#include "tests/support/test_dir.h"

namespace lexpack::testing {
namespace {

constexpr const char* kOutputs[] = {"libfoo.a", "libshared.so", "app"};

class LinkE2eTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (base::find_program(GetParam()).empty()) GTEST_SKIP() << GetParam() << " not installed";
    dir_.write("foo1.cpp", "int foo1() { return 1; }\n");
    dir_.write("foo2.cpp", "int foo2() { return 2; }\n");
    dir_.write("shared.cpp",
               "int hidden() { return 3; }\nint shared_value() { return hidden() + 4; }\n");
    dir_.write("vers.map", "{ global: _Z12shared_valuev; local: *; };\n");
    dir_.write("main.cpp",
               "int foo1(); int foo2(); int shared_value();\n"
               "int main() { return foo1() + foo2() + shared_value(); }\n");
    dir_.write("extra.cpp", "int extra_value() { return 5; }\n");
    dir_.write("first/.keep", "");
    write_ninja("");
  }

  // rsp: the executable's objects go through a response file, as CMake
  // writes them for long lists (ninja's rspfile).
  void write_ninja(const std::string& app_flags, bool rsp = false,
                   const std::string& app_extra = "", const std::string& cc_flags = "") {
    const std::string objects = rsp ? "@$out.rsp" : "$in";
    dir_.write("build.ninja",
               "cxx = " + GetParam() +
                   "\n"
                   "rule cc\n  command = $cxx -O1 -fPIC " +
                   cc_flags +
                   " -c $in -o $out\n"
                   "rule ar\n  command = rm -f $out && ar qc $out $in && ranlib $out\n"
                   "rule so\n  command = $cxx -shared $in -o $out -Wl,--version-script=vers.map\n"
                   "rule exe\n  command = $cxx " +
                   objects + " -o $out -L. -lshared -Lfirst -Llibs -lfoo " + app_flags +
                   (rsp ? "\n  rspfile = $out.rsp\n  rspfile_content = $in" : "") +
                   "\n"
                   "build extra.o: cc extra.cpp\n"
                   "build foo1.o: cc foo1.cpp\nbuild foo2.o: cc foo2.cpp\n"
                   "build shared.o: cc shared.cpp\nbuild main.o: cc main.cpp\n"
                   "build libs/libfoo.a: ar foo1.o foo2.o\n"
                   "build libshared.so: so shared.o | vers.map\n"
                   "build app: exe main.o " +
                   app_extra + " | libs/libfoo.a libshared.so\n");
  }

  base::ProcessResult sh(const std::string& command, const std::string& extra_env = "") {
    std::string env = "LEXPACK_DIR=" + shell_quote(dir_.at("cache")) +
                      " LEXPACK_LOGFILE=" + shell_quote(dir_.at("log.txt")) +
                      " LEXPACK_PLUGIN=" + shell_quote(LEXPACK_PLUGIN_SO) + " " + extra_env;
    return base::run_captured(
        {"/bin/sh", "-c",
         "cd " + shell_quote(dir_.path()) + " || exit 99; export " + env + "; " + command},
        true);
  }

  // Runs `lexpack ninja` and returns the archive/link line's counts.
  std::map<std::string, int> lexpack_ninja(const std::string& extra_env = "") {
    base::ProcessResult r = sh(std::string(LEXPACK_BIN) + " ninja", extra_env);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    last_err_ = r.err;
    return summary_counts(r.err, "archive/link step");
  }

  std::map<std::string, std::string> outputs() {
    std::map<std::string, std::string> out;
    for (const char* o : kOutputs) {
      std::string path = std::string(o) == "libfoo.a" ? "libs/libfoo.a" : o;
      out[o] = dir_.exists(path) ? dir_.read(path) : "";
    }
    return out;
  }
  // The names of the outputs whose bytes are not `want`'s ("" when none).
  std::string differing(const std::map<std::string, std::string>& want) {
    std::string names;
    for (const auto& [name, bytes] : outputs()) {
      if (want.count(name) == 0 || want.at(name) != bytes) names += name + " ";
    }
    return names;
  }
  void remove_outputs() {
    for (const char* o : {"libs/libfoo.a", "libshared.so", "app"}) {
      if (dir_.exists(o)) dir_.remove(o);
    }
  }
  int run_app() { return sh("LD_LIBRARY_PATH=. ./app").exit_code; }

  // A plain build, then a cold and a warm `lexpack ninja`: all four steps
  // routed, then hits writing the plain build's outputs.
  void expect_routed_then_hits() {
    base::ProcessResult plain = sh("ninja");
    ASSERT_EQ(plain.exit_code, 0) << plain.out << plain.err;
    std::map<std::string, std::string> want = outputs();
    ASSERT_EQ(run_app(), 10);
    remove_outputs();
    EXPECT_EQ(lexpack_ninja()["steps"], 4) << last_err_;
    remove_outputs();
    EXPECT_EQ(lexpack_ninja()["hits"], 4) << last_err_;
    EXPECT_EQ(outputs(), want);
  }

  // A counter of the cache, as `lexpack stats` prints it (0 when absent).
  int64_t counter(const std::string& name) {
    std::istringstream in(sh(std::string(LEXPACK_BIN) + " stats").out);
    for (std::string line; std::getline(in, line);) {
      std::istringstream words(line);
      std::string n;
      int64_t v = 0;
      if (words >> n >> v && n == name) return v;
    }
    return 0;
  }

  TestDir dir_;
  std::string last_err_;
};

TEST_P(LinkE2eTest, OutputsEqualPlainBuildAndRebuildHitsEveryStep) {
  base::ProcessResult plain = sh("ninja");
  ASSERT_EQ(plain.exit_code, 0) << plain.out << plain.err;
  std::map<std::string, std::string> want = outputs();
  ASSERT_EQ(run_app(), 10);
  remove_outputs();

  std::map<std::string, int> cold = lexpack_ninja();
  EXPECT_EQ(cold["steps"], 4) << last_err_;  // ar, ranlib, the shared library, app
  EXPECT_EQ(cold["misses"], 4) << last_err_;
  EXPECT_EQ(outputs(), want);
  remove_outputs();

  std::map<std::string, int> warm = lexpack_ninja();
  EXPECT_EQ(warm["hits"], 4) << last_err_;
  EXPECT_EQ(warm["misses"], 0) << last_err_;
  EXPECT_EQ(outputs(), want);
  EXPECT_EQ(run_app(), 10);
  EXPECT_EQ(sh("test -x app").exit_code, 0);
  // The links' time saved is on their own line, not counted as compiler CPU.
  EXPECT_NE(last_err_.find(" s of link time saved"), std::string::npos) << last_err_;
  EXPECT_NE(last_err_.find("0 compiles, 0 hits, 0 misses, 0 uncacheable, 0 failed, 0.0 s of "
                           "compiler CPU saved"),
            std::string::npos)
      << last_err_;

  // Off by request: every step runs as it is.
  remove_outputs();
  std::map<std::string, int> off = lexpack_ninja("LEXPACK_CACHE_LINKS=0");
  EXPECT_EQ(off["steps"], 0) << last_err_;
  EXPECT_EQ(outputs(), want);
}

// Meson's link lines: arguments holding a shell character in single quotes
// ('-Wl,-rpath,$ORIGIN/'), which the plugin routes as it routes CMake's
// double-quoted "\$ORIGIN". The rebuild hits every step.
TEST_P(LinkE2eTest, MesonQuotedLinkArgumentsAreRouted) {
  write_ninja(
      "-Wl,--as-needed -Wl,--no-undefined '-Wl,-rpath,$$ORIGIN/' "
      "'-Wl,-rpath-link,$$ORIGIN/first'");
  expect_routed_then_hits();
  EXPECT_EQ(sh("./app").exit_code, 10);  // found through $ORIGIN
}

// CMake's quoted paths in a link line (LINK_FLAGS such as
// -Wl,--version-script,"/src/lib.map"): a double-quoted part of path
// characters alone is routed like the rest. The rebuild hits every step.
TEST_P(LinkE2eTest, CMakeQuotedPathsAreRouted) {
  write_ninja("-L\"" + dir_.real_path() + "/libs\" -Wl,-rpath-link,\"" + dir_.real_path() +
              "/first\"");
  expect_routed_then_hits();
  EXPECT_EQ(run_app(), 10);
}

// The objects and archives a warm build's hits write are vouched for in the
// file table, so its links hash none of them again.
TEST_P(LinkE2eTest, WarmRebuildHashesNoObjectTwice) {
  // Sources and the version script old enough for the file table to keep.
  ::usleep(1'100'000);
  lexpack_ninja();
  int64_t cold = counter("link_files_hashed");
  EXPECT_GT(cold, 0);  // the objects the compiler wrote were read by the links
  remove_outputs();
  ASSERT_EQ(sh("rm -f *.o").exit_code, 0);
  std::map<std::string, int> warm = lexpack_ninja();
  EXPECT_EQ(warm["hits"], 4) << last_err_;
  EXPECT_EQ(counter("link_files_hashed") - cold, 0) << dir_.read("log.txt");
  EXPECT_EQ(run_app(), 10);
}

// An object changed in place after a hit wrote it (same size, its mtime set
// back) is not taken for the one the hit wrote: the link runs.
TEST_P(LinkE2eTest, ObjectChangedAfterTheHitWroteItMissesTheLink) {
  lexpack_ninja();
  std::string app = dir_.read("app");
  remove_outputs();
  ASSERT_EQ(sh("rm -f *.o").exit_code, 0);
  EXPECT_EQ(lexpack_ninja()["hits"], 4) << last_err_;
  ASSERT_EQ(dir_.read("app"), app);

  // Change one letter of the compiler's .comment string: the linked program
  // keeps it, so a link from the old object would differ from a fresh one.
  std::string object = dir_.read("main.o");
  size_t at = object.find("GCC: (");
  if (at == std::string::npos) at = object.find("clang version");
  ASSERT_NE(at, std::string::npos);
  object[at] = object[at] == 'G' ? 'g' : 'C';
  struct stat before;
  ASSERT_EQ(::stat(dir_.at("main.o").c_str(), &before), 0);
  int fd = ::open(dir_.at("main.o").c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, object.data(), object.size(), 0), ssize_t(object.size()));
  struct timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(::futimens(fd, times), 0);
  ::close(fd);

  dir_.remove("app");
  std::map<std::string, int> r = lexpack_ninja();
  EXPECT_EQ(r["misses"], 1) << last_err_;
  EXPECT_EQ(r["hits"], 0) << last_err_;
  EXPECT_NE(dir_.read("app"), app);
  EXPECT_EQ(run_app(), 10);
}

TEST_P(LinkE2eTest, ChangedObjectAndArchiveMemberMiss) {
  lexpack_ninja();
  dir_.write("main.cpp",
             "int foo1(); int foo2(); int shared_value();\n"
             "int main() { return foo1() + foo2() + shared_value() + 1; }\n");
  std::map<std::string, int> object = lexpack_ninja();
  EXPECT_EQ(object["misses"], 1) << last_err_;  // app
  EXPECT_EQ(object["hits"], 0) << last_err_;
  EXPECT_EQ(run_app(), 11);
  // main.o, compiled a moment before, may share the file clock's tick with
  // the link's start on a loaded machine: then the link is (rightly) not
  // stored, and is linked once more so that the way back below can hit it.
  if (dir_.read("log.txt").find("app: not stored: an input changed") != std::string::npos) {
    ::usleep(50 * 1000);
    dir_.remove("app");
    EXPECT_EQ(lexpack_ninja()["misses"], 1) << last_err_;
  }

  dir_.write("foo2.cpp", "int foo2() { return 20; }\n");
  std::map<std::string, int> member = lexpack_ninja();
  EXPECT_EQ(member["misses"], 3) << last_err_;  // ar, ranlib, app
  EXPECT_EQ(run_app(), 29);

  // Back to the first member: every step is a hit again.
  dir_.write("foo2.cpp", "int foo2() { return 2; }\n");
  std::map<std::string, int> back = lexpack_ninja();
  EXPECT_EQ(back["hits"], 3) << last_err_ << dir_.read("log.txt");
  EXPECT_EQ(run_app(), 11);
}

TEST_P(LinkE2eTest, LibraryAddedEarlierInTheSearchMisses) {
  lexpack_ninja();
  ASSERT_EQ(run_app(), 10);
  // first/ comes before libs/ in -L: a libfoo.a there must be the one linked.
  std::string cxx = GetParam();
  dir_.write("other/foo1.cpp", "int foo1() { return 100; }\nint foo2() { return 200; }\n");
  ASSERT_EQ(sh(cxx + " -c other/foo1.cpp -o other/o.o && ar qc first/libfoo.a other/o.o").exit_code,
            0);
  dir_.remove("app");
  std::map<std::string, int> r = lexpack_ninja();
  EXPECT_EQ(r["misses"], 1) << last_err_;
  EXPECT_EQ(r["hits"], 0) << last_err_;
  EXPECT_EQ(run_app(), (100 + 200 + 7) % 256);

  // Gone again: the first link's inputs, so its stored output.
  dir_.remove("first/libfoo.a");
  dir_.remove("app");
  EXPECT_EQ(lexpack_ninja()["hits"], 1) << last_err_;
  EXPECT_EQ(run_app(), 10);
}

TEST_P(LinkE2eTest, ReplacedLibraryInLocalSearchDirMisses) {
  lexpack_ninja();
  std::string cxx = GetParam();
  // Stand-in for a system library replaced behind the build's back.
  dir_.write("other/foo.cpp", "int foo1() { return 5; }\nint foo2() { return 6; }\n");
  ASSERT_EQ(sh(cxx + " -c other/foo.cpp -o other/o.o && rm -f libs/libfoo.a && "
                     "ar qc libs/libfoo.a other/o.o")
                .exit_code,
            0);
  dir_.remove("app");
  // ninja sees libs/libfoo.a newer than app's inputs only as the missing app.
  std::map<std::string, int> r = lexpack_ninja();
  EXPECT_EQ(r["misses"], 1) << last_err_;
  EXPECT_EQ(run_app(), 18);
}

TEST_P(LinkE2eTest, ChangedVersionScriptAndLinkerFlagMiss) {
  lexpack_ninja();
  ASSERT_EQ(sh("nm -D libshared.so | grep -c hidden").out, "0\n");
  dir_.write("vers.map", "{ global: _Z12shared_valuev; _Z6hiddenv; local: *; };\n");
  std::map<std::string, int> script = lexpack_ninja();
  EXPECT_EQ(script["misses"], 2) << last_err_;  // the shared library, and app linking it
  EXPECT_EQ(sh("nm -D libshared.so | grep -c hidden").out, "1\n");

  write_ninja("-Wl,-z,now");
  std::map<std::string, int> flag = lexpack_ninja();
  EXPECT_EQ(flag["misses"], 1) << last_err_;
  EXPECT_EQ(flag["hits"], 0) << last_err_;
  EXPECT_EQ(sh("readelf -d app | grep -q BIND_NOW").exit_code, 0);
  EXPECT_EQ(run_app(), 10);
}

// A link whose objects come in a response file is cached, keyed by what the
// file says: another object in it is a miss, with the right program.
TEST_P(LinkE2eTest, ResponseFileLinkIsCachedByItsContent) {
  write_ninja("", true);
  std::map<std::string, int> cold = lexpack_ninja();
  EXPECT_EQ(cold["misses"], 4) << last_err_;
  ASSERT_EQ(run_app(), 10);
  std::string app = dir_.read("app");
  dir_.remove("app");
  std::map<std::string, int> warm = lexpack_ninja();
  EXPECT_EQ(warm["hits"], 1) << last_err_;
  EXPECT_TRUE(dir_.read("app") == app);
  write_ninja("", true, "extra.o");
  std::map<std::string, int> more = lexpack_ninja();
  EXPECT_EQ(more["misses"], 1) << last_err_;
  EXPECT_EQ(more["hits"], 0) << last_err_;
  EXPECT_EQ(sh("nm app | grep -c extra_value").out, "1\n");
  EXPECT_EQ(run_app(), 10);
}

// The linker's own @file (-Wl,@file, -Xlinker @file, nested @files in it)
// is read by ld, not by the driver, and ld's dependency file does not list
// it: what it says must still be keyed.
TEST_P(LinkE2eTest, ChangedLinkerResponseFileMisses) {
  dir_.write("main.cpp",
             "extern \"C\" int pick_a() { return 1; }\n"
             "extern \"C\" int pick_b() { return 2; }\n"
             "extern \"C\" int pick();\n"
             "int foo1(); int foo2(); int shared_value();\n"
             "int main() { return foo1() + foo2() + shared_value() + pick(); }\n");
  dir_.write("opts.txt", "--defsym=pick=pick_a\n");
  write_ninja("-Wl,@opts.txt");
  EXPECT_EQ(lexpack_ninja()["misses"], 4) << last_err_;
  ASSERT_EQ(run_app(), 11);

  dir_.write("opts.txt", "--defsym=pick=pick_b\n");
  dir_.remove("app");  // ninja does not know the link reads opts.txt
  std::map<std::string, int> changed = lexpack_ninja();
  EXPECT_EQ(changed["misses"], 1) << last_err_;
  EXPECT_EQ(changed["hits"], 0) << last_err_;
  EXPECT_EQ(run_app(), 12);

  // A nested @file, quoted and escaped as ld reads it.
  dir_.write("opts.txt", "-z now \"@inner file.txt\"\n");
  dir_.write("inner file.txt", "--defsym=pick\\=pick_a\n");
  dir_.remove("app");
  EXPECT_EQ(lexpack_ninja()["misses"], 1) << last_err_;
  EXPECT_EQ(run_app(), 11);
  dir_.write("inner file.txt", "--defsym=pick=pick_b\n");
  dir_.remove("app");
  std::map<std::string, int> inner = lexpack_ninja();
  EXPECT_EQ(inner["misses"], 1) << last_err_;
  EXPECT_EQ(inner["hits"], 0) << last_err_;
  EXPECT_EQ(run_app(), 12);

  // Back to what an earlier run read: its stored program.
  dir_.write("inner file.txt", "--defsym=pick\\=pick_a\n");
  dir_.remove("app");
  EXPECT_EQ(lexpack_ninja()["hits"], 1) << last_err_;
  EXPECT_EQ(run_app(), 11);

  // An option that is never cached, inside the linker's @file: the link
  // runs as written, counted with its reason.
  dir_.write("inner file.txt", "--defsym=pick=pick_b -Map=app.map\n");
  dir_.remove("app");
  std::map<std::string, int> map = lexpack_ninja();
  EXPECT_EQ(map["uncacheable"], 1) << last_err_;
  EXPECT_EQ(run_app(), 12);
  EXPECT_TRUE(dir_.exists("app.map"));
  EXPECT_EQ(counter("link_uncacheable_linker_option"), 1);
}

// --retain-symbols-file is read by ld outside its dependency file.
TEST_P(LinkE2eTest, ChangedRetainSymbolsFileMisses) {
  dir_.write("keep.txt", "main\n");
  write_ninja("-Xlinker --retain-symbols-file -Xlinker keep.txt");
  lexpack_ninja();
  ASSERT_EQ(run_app(), 10);
  ASSERT_EQ(sh("nm app | grep -c foo1").out, "0\n");
  dir_.write("keep.txt", "main\n_Z4foo1v\n");
  dir_.remove("app");
  std::map<std::string, int> r = lexpack_ninja();
  EXPECT_EQ(r["misses"], 1) << last_err_;
  EXPECT_EQ(r["hits"], 0) << last_err_;
  EXPECT_EQ(sh("nm app | grep -c foo1").out, "1\n");
  EXPECT_EQ(run_app(), 10);
}

// A script given as an input names an object by a name with a directory
// (INPUT), which ld finds under a -L directory (libs/); one of that name in
// the working directory, or under an earlier -L directory, is taken first.
// (An INCLUDEd script is listed by ld under the name written: found
// through -L, the link is not stored.)
TEST_P(LinkE2eTest, ScriptInputFoundEarlierInTheSearchMisses) {
  std::string cxx = GetParam();
  dir_.write("main.cpp",
             "extern \"C\" int pick();\n"
             "int foo1(); int foo2(); int shared_value();\n"
             "int main() { return foo1() + foo2() + shared_value() + pick(); }\n");
  dir_.write("pick/a.cpp", "extern \"C\" int pick() { return 1; }\n");
  dir_.write("pick/b.cpp", "extern \"C\" int pick() { return 2; }\n");
  ASSERT_EQ(sh("mkdir -p libs/sub first/sub sub && " + cxx +
               " -c pick/a.cpp -o libs/sub/pick.o && " + cxx + " -c pick/b.cpp -o pick/b.o")
                .exit_code,
            0);
  dir_.write("top.ld", "INPUT(sub/pick.o)\n");
  write_ninja("top.ld");
  lexpack_ninja();
  ASSERT_EQ(run_app(), 11);
  ASSERT_EQ(sh("cp pick/b.o first/sub/pick.o").exit_code, 0);
  dir_.remove("app");
  std::map<std::string, int> r = lexpack_ninja();
  EXPECT_EQ(r["misses"], 1) << last_err_;
  EXPECT_EQ(r["hits"], 0) << last_err_;
  EXPECT_EQ(run_app(), 12);

  dir_.remove("first/sub/pick.o");
  dir_.remove("app");
  EXPECT_EQ(lexpack_ninja()["hits"], 1) << last_err_;
  ASSERT_EQ(run_app(), 11);
  ASSERT_EQ(sh("cp pick/b.o sub/pick.o").exit_code, 0);
  dir_.remove("app");
  std::map<std::string, int> cwd = lexpack_ninja();
  EXPECT_EQ(cwd["misses"], 1) << last_err_;
  EXPECT_EQ(cwd["hits"], 0) << last_err_;
  EXPECT_EQ(run_app(), 12);
}

// A library a shared library needs is looked for along -rpath-link, then
// LD_RUN_PATH, LD_LIBRARY_PATH and the shared library's own run path: one
// that appears in an earlier directory there is the one ld checks against.
TEST_P(LinkE2eTest, NeededLibraryEarlierInItsSearchMisses) {
  std::string cxx = GetParam();
  dir_.write("dep/dep.cpp", "int dep_value() { return 1; }\n");
  dir_.write("dep/other.cpp", "int other_value() { return 1; }\n");
  dir_.write("shared.cpp", "int dep_value();\nint shared_value() { return dep_value() + 6; }\n");
  dir_.write("main.cpp", "int shared_value();\nint main() { return shared_value(); }\n");
  for (const char* how :
       {"-Wl,-rpath-link,d1:d2", "LD_LIBRARY_PATH=d1:d2", "LD_RUN_PATH=d1:d2", "runpath"}) {
    SCOPED_TRACE(how);
    const bool env = how[0] == 'L';
    // "runpath": libshared.so's own DT_RUNPATH names d1 and d2.
    const bool runpath = how[0] == 'r';
    ASSERT_EQ(sh("rm -rf d1 d2 app && mkdir -p d1 d2 && " + cxx +
                 " -shared -fPIC dep/dep.cpp -o d2/libdep.so")
                  .exit_code,
              0);
    // libshared.so needs libdep.so (found through -Ld2 when it is made).
    dir_.write("build.ninja", "cxx = " + cxx +
                                  "\n"
                                  "rule cc\n  command = $cxx -O1 -fPIC -c $in -o $out\n"
                                  "rule so\n  command = $cxx -shared $in -o $out -Ld2 -ldep" +
                                  (runpath ? " -Wl,-rpath,d1:d2" : "") +
                                  "\nrule exe\n  command = $cxx $in -o $out -L. -lshared " +
                                  (env || runpath ? "" : how) +
                                  "\n"
                                  "build shared.o: cc shared.cpp\nbuild main.o: cc main.cpp\n"
                                  "build libshared.so: so shared.o\n"
                                  "build app: exe main.o | libshared.so\n");
    const std::string extra = env ? how : "";
    lexpack_ninja(extra);
    ASSERT_EQ(sh("LD_LIBRARY_PATH=.:d2 ./app").exit_code, 7);
    // A libdep.so without dep_value in d1: ld takes it and the link fails,
    // as a plain build's does.
    ASSERT_EQ(sh(cxx + " -shared -fPIC dep/other.cpp -o d1/libdep.so").exit_code, 0);
    dir_.remove("app");
    ASSERT_NE(sh("ninja", extra).exit_code, 0);
    base::ProcessResult r = sh(std::string(LEXPACK_BIN) + " ninja", extra);
    EXPECT_NE(r.exit_code, 0) << r.err;
    EXPECT_FALSE(dir_.exists("app"));
  }
}

// An LTO link runs the compiler in the link: gcc's is cached with its LTO
// tools (lto-wrapper, lto1, the linker plugin) keyed, the objects lto-wrapper
// compiles on the way left out of the key, and its output is the plain
// link's. clang's (through the LLVM gold plugin, not keyed) is not cached and
// says why.
TEST_P(LinkE2eTest, LtoLinksAreCachedWhereTheirToolsAreKeyed) {
  // -frandom-seed: gcc's LTO objects are the same bytes each time.
  for (const std::string cc_flags : {"-flto -frandom-seed=$out", "-flto -g -frandom-seed=$out"}) {
    SCOPED_TRACE(cc_flags);
    // clang's objects stay native: its shared library is linked without LTO.
    write_ninja("-flto=auto", false, "", GetParam() == "g++" ? cc_flags : "");
    base::ProcessResult plain = sh("ninja");
    if (GetParam() != "g++") {
      // clang's LTO link needs the LLVM gold plugin, which may not be installed.
      if (plain.exit_code != 0)
        GTEST_SKIP() << "no LTO link with " << GetParam() << ": " << plain.out;
      remove_outputs();
      std::map<std::string, int> r = lexpack_ninja();
      EXPECT_EQ(r["uncacheable"], 1) << last_err_;
      EXPECT_EQ(run_app(), 10);
      EXPECT_GT(counter("link_uncacheable_lto"), 0);
      base::ProcessResult explain = sh(std::string(LEXPACK_BIN) + " explain " + GetParam() +
                                       " main.o -o app2 -L. -lshared -Llibs -lfoo -flto");
      EXPECT_NE(explain.out.find("LTO link"), std::string::npos) << explain.out;
      return;
    }
    ASSERT_EQ(plain.exit_code, 0) << plain.out << plain.err;
    std::map<std::string, std::string> want = outputs();
    ASSERT_EQ(run_app(), 10);
    remove_outputs();
    std::map<std::string, int> cold = lexpack_ninja();
    EXPECT_EQ(cold["misses"], 4) << last_err_;
    EXPECT_EQ(differing(want), "");
    EXPECT_NE(dir_.read("log.txt").find("temporary objects of the LTO plugin not keyed"),
              std::string::npos);
    remove_outputs();
    std::map<std::string, int> warm = lexpack_ninja();
    EXPECT_EQ(warm["hits"], 4) << last_err_;
    EXPECT_EQ(differing(want), "");
    EXPECT_EQ(run_app(), 10);

    // The IR of an object changes: the link misses, and its program is the
    // plain link's of the new object.
    dir_.write("foo2.cpp", "int foo2() { return 4; }\n");
    ASSERT_EQ(sh("ninja").exit_code, 0);
    want = outputs();
    ASSERT_EQ(run_app(), 12);
    // Why the link would miss: the archive holding the changed IR.
    base::ProcessResult why = sh(std::string(LEXPACK_BIN) +
                                 " explain g++ main.o -o app -L. -lshared -Lfirst -Llibs -lfoo "
                                 "-flto=auto");
    EXPECT_NE(why.out.find("would miss: no cached result for this key; changed since the run "
                           "stored last: libs/libfoo.a"),
              std::string::npos)
        << why.out;
    remove_outputs();
    ASSERT_EQ(sh("rm -f foo2.o").exit_code, 0);
    std::map<std::string, int> edited = lexpack_ninja();
    EXPECT_EQ(edited["hits"], 1) << last_err_;  // the shared library
    EXPECT_EQ(differing(want), "");
    EXPECT_EQ(run_app(), 12);
    dir_.write("foo2.cpp", "int foo2() { return 2; }\n");
    ASSERT_EQ(sh("ninja").exit_code, 0);
  }
  EXPECT_EQ(counter("link_uncacheable_lto"), 0);
  EXPECT_EQ(counter("link_not_stored_temporary_input"), 0);
}

TEST_P(LinkE2eTest, InterruptedLinkStoresNothing) {
  // A driver that links and is then killed before it can exit normally.
  std::string real = base::find_program(GetParam());
  dir_.write("bin/" + GetParam(),
             "#!/bin/sh\n\"" + real +
                 "\" \"$@\" || exit $?\n"
                 "case \" $* \" in *\" -o app \"*) if [ -n \"$KILL_LINK\" ]; then kill -9 $$; fi;; "
                 "esac\n");
  ASSERT_EQ(sh("chmod +x bin/" + GetParam()).exit_code, 0);
  std::string path = "PATH=" + shell_quote(dir_.at("bin")) + ":\"$PATH\"";
  base::ProcessResult killed = sh(std::string(LEXPACK_BIN) + " ninja", path + " KILL_LINK=1");
  EXPECT_NE(killed.exit_code, 0) << killed.out << killed.err;
  dir_.remove("app");
  std::map<std::string, int> again = lexpack_ninja(path);
  EXPECT_EQ(again["misses"], 1) << last_err_;  // nothing was stored for app
  EXPECT_EQ(again["hits"], 0) << last_err_;
  EXPECT_EQ(run_app(), 10);
}

TEST_P(LinkE2eTest, LinkerWithoutDependencyFileStillLinks) {
  // A driver whose linker refuses --dependency-file, as GNU ld before 2.35.
  std::string real = base::find_program(GetParam());
  dir_.write("bin/" + GetParam(),
             "#!/bin/sh\ncase \"$*\" in *--dependency-file*) echo unknown option >&2; exit 1;; "
             "esac\nexec \"" +
                 real + "\" \"$@\"\n");
  ASSERT_EQ(sh("chmod +x bin/" + GetParam()).exit_code, 0);
  std::string path = "PATH=" + shell_quote(dir_.at("bin")) + ":\"$PATH\"";
  std::map<std::string, int> first = lexpack_ninja(path);
  EXPECT_EQ(run_app(), 10);
  EXPECT_EQ(first["misses"], 4) << last_err_;
  EXPECT_EQ(last_err_.find("unknown option"), std::string::npos) << last_err_;
  remove_outputs();
  std::map<std::string, int> second = lexpack_ninja(path);
  EXPECT_EQ(second["hits"], 2) << last_err_;  // ar and ranlib; links are not stored
  EXPECT_EQ(second["misses"], 2) << last_err_;
  EXPECT_EQ(run_app(), 10);
}

// gcc's collect2 runs the `ld` PATH finds: one installed in a directory
// earlier in PATH (here one that adds a symbol) must make both links miss,
// though PATH, the driver and the ld found before are unchanged.
TEST_P(LinkE2eTest, LinkerInstalledEarlierInPathMisses) {
  if (GetParam() != "g++") GTEST_SKIP() << "clang names its linker by the path it found";
  dir_.write("bin/.keep", "");
  const std::string path = "PATH=" + shell_quote(dir_.at("bin")) + ":\"$PATH\"";
  std::map<std::string, int> first = lexpack_ninja(path);
  EXPECT_EQ(first["misses"], 4) << last_err_;
  remove_outputs();
  EXPECT_EQ(lexpack_ninja(path)["hits"], 4) << last_err_;
  dir_.write("bin/ld", "#!/bin/sh\nexec /usr/bin/ld --defsym=lexpack_other_ld=1 \"$@\"\n");
  ASSERT_EQ(sh("chmod +x bin/ld").exit_code, 0);
  remove_outputs();
  std::map<std::string, int> other = lexpack_ninja(path);
  EXPECT_EQ(other["misses"], 2) << last_err_;  // the shared library and the executable
  EXPECT_EQ(other["hits"], 2) << last_err_;    // ar and ranlib
  EXPECT_NE(sh("nm app").out.find("lexpack_other_ld"), std::string::npos);
  EXPECT_EQ(run_app(), 10);
}

// Links run side by side ask their driver about its toolchain once (each
// answer hashes the programs it names): the others wait, then take the
// answer the first remembered.
TEST_P(LinkE2eTest, LinksSideBySideAskTheDriverOnce) {
  ASSERT_EQ(sh(GetParam() + " -O1 -fPIC -c shared.cpp -o shared.o").exit_code, 0);
  // The driver, by its own name, first on the PATH: a script that notes
  // each toolchain question and is slow to answer it.
  const std::string real = base::find_program(GetParam());
  dir_.write("bin/" + GetParam(), "#!/bin/sh\ncase \"$1\" in -print-prog-name=ld) echo asked >> " +
                                      shell_quote(dir_.at("asked.txt")) +
                                      "; sleep 0.5;; esac\nexec " + shell_quote(real) +
                                      " \"$@\"\n");
  ASSERT_EQ(sh("chmod +x bin/" + GetParam()).exit_code, 0);
  const std::string link = std::string(LEXPACK_BIN) + " " + GetParam() + " -shared shared.o -o ";
  base::ProcessResult r = sh(link + "one.so & " + link + "two.so & " + link + "three.so & wait",
                             "PATH=" + shell_quote(dir_.at("bin")) + ":\"$PATH\"");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* so : {"one.so", "two.so", "three.so"}) EXPECT_TRUE(dir_.exists(so)) << so;
  EXPECT_EQ(dir_.read("asked.txt"), "asked\n") << dir_.read("log.txt");
}

// CMake's linker launcher (no plugin, plain ninja): executables and shared
// libraries linked through `lexpack` hit on a rebuild and equal a plain link.
TEST_P(LinkE2eTest, CmakeLinkerLauncher) {
  dir_.write("src/CMakeLists.txt",
             "cmake_minimum_required(VERSION 3.21)\n"
             "project(demo CXX)\n"
             "add_library(foo STATIC foo1.cpp foo2.cpp)\n"
             "add_library(shared SHARED shared.cpp)\n"
             "add_executable(app main.cpp)\n"
             "target_link_libraries(app foo shared)\n");
  for (const char* f : {"foo1.cpp", "foo2.cpp", "shared.cpp", "main.cpp"}) {
    dir_.write(std::string("src/") + f, dir_.read(f));
  }
  base::ProcessResult conf = sh("cmake -S src -B b -G Ninja -DCMAKE_CXX_COMPILER=" + GetParam() +
                                " -DCMAKE_CXX_LINKER_LAUNCHER=" + LEXPACK_BIN);
  ASSERT_EQ(conf.exit_code, 0) << conf.out << conf.err;
  ASSERT_EQ(sh("ninja -C b").exit_code, 0);
  std::string app = dir_.read("b/app"), so = dir_.read("b/libshared.so");
  ASSERT_EQ(sh("rm b/app b/libshared.so && ninja -C b").exit_code, 0);
  EXPECT_EQ(dir_.read("b/app"), app);
  EXPECT_EQ(dir_.read("b/libshared.so"), so);
  std::string log = dir_.read("log.txt");
  EXPECT_NE(log.find("app: hit"), std::string::npos) << log;
  EXPECT_NE(log.find("libshared.so: hit"), std::string::npos) << log;
  EXPECT_EQ(sh("b/app").exit_code, 10);

  ASSERT_EQ(sh("rm b/app b/libshared.so && LEXPACK_DISABLE=1 ninja -C b").exit_code, 0);
  EXPECT_EQ(dir_.read("b/app"), app);  // a plain link gives the same bytes
  EXPECT_EQ(dir_.read("b/libshared.so"), so);
}

// CMake's archive rule under `lexpack ninja`: its `cmake -E rm -f` is done
// by lexpack (no cmake started), so a stale archive is gone before `ar qc`
// and the archive equals a plain build's.
TEST_P(LinkE2eTest, CmakeArchiveRuleRemovesTheOldArchive) {
  dir_.write("src/CMakeLists.txt",
             "cmake_minimum_required(VERSION 3.21)\n"
             "project(demo CXX)\n"
             "add_library(foo STATIC foo1.cpp foo2.cpp)\n"
             "add_executable(app main.cpp)\n"
             "target_link_libraries(app foo)\n");
  dir_.write("src/foo1.cpp", dir_.read("foo1.cpp"));
  dir_.write("src/foo2.cpp", dir_.read("foo2.cpp"));
  dir_.write("src/main.cpp", "int foo1(); int foo2();\nint main() { return foo1() + foo2(); }\n");
  for (const char* b : {"plain", "b"}) {
    base::ProcessResult conf =
        sh(std::string("cmake -S src -B ") + b + " -G Ninja -DCMAKE_CXX_COMPILER=" + GetParam());
    ASSERT_EQ(conf.exit_code, 0) << conf.out << conf.err;
  }
  ASSERT_EQ(sh("ninja -C plain").exit_code, 0);
  std::string want = dir_.read("plain/libfoo.a");
  base::ProcessResult built = sh(std::string(LEXPACK_BIN) + " ninja -C b");
  ASSERT_EQ(built.exit_code, 0) << built.out << built.err;
  EXPECT_EQ(dir_.read("b/libfoo.a"), want);
  EXPECT_NE(dir_.read("log.txt").find("libfoo.a: removed"), std::string::npos)
      << dir_.read("log.txt");

  // A stale archive with a member of its own: ar qc would add to it.
  ASSERT_EQ(sh("cp plain/libfoo.a b/libfoo.a && ar q b/libfoo.a b/CMakeFiles/app.dir/main.cpp.o && "
               "sleep 0.01 && touch src/foo1.cpp")
                .exit_code,
            0);
  built = sh(std::string(LEXPACK_BIN) + " ninja -C b");
  ASSERT_EQ(built.exit_code, 0) << built.out << built.err;
  EXPECT_EQ(dir_.read("b/libfoo.a"), want);
  EXPECT_EQ(sh("b/app").exit_code, 3);
}

INSTANTIATE_TEST_SUITE_P(Drivers, LinkE2eTest, ::testing::Values("g++", "clang++"),
                         [](const auto& info) {
                           return info.param == "g++" ? std::string("gxx") : std::string("clangxx");
                         });

}  // namespace
}  // namespace lexpack::testing
