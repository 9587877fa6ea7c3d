// The recorded inputs of a link: search candidates before each library, the
// deterministic-archive check on archives made by the real ar, the memo.
#include "link/link_inputs.h"
#include "link/toolchain.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "base/depfile_reader.h"
#include "base/file_stat.h"
#include "base/file_util.h"
#include "base/process.h"
#include "tests/support/test_dir.h"

namespace lexpack::link {
namespace {

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(LinkInputsTest, CandidatesBeforeASearchedLibraryAreRecorded) {
  std::vector<std::string> dirs = {"first", "libs", "/usr/lib"};
  std::vector<std::string> got = recorded_paths({"main.o", "libs/libfoo.a", "/abs/x.o"}, dirs);
  EXPECT_EQ(got[0], "main.o");
  EXPECT_TRUE(has(got, "libs/libfoo.a"));
  EXPECT_TRUE(has(got, "first/libfoo.a"));
  EXPECT_TRUE(has(got, "first/libfoo.so"));
  EXPECT_TRUE(has(got, "libs/libfoo.so"));      // the .so would win in the same directory
  EXPECT_FALSE(has(got, "/usr/lib/libfoo.a"));  // searched after
  EXPECT_FALSE(has(got, "first/x.o"));          // named directly, not searched
  // A one-letter library (-lz, -lm): a libz.so beside libz.a would win.
  std::vector<std::string> z = recorded_paths({"libs/libz.a"}, dirs);
  EXPECT_TRUE(has(z, "libs/libz.so"));
  EXPECT_TRUE(has(z, "first/libz.a"));
  EXPECT_TRUE(has(z, "first/libz.so"));
  // A file found through a linker script's bare name (libgcc_s.so.1).
  std::vector<std::string> so1 = recorded_paths({"/usr/lib/libgcc_s.so.1"}, dirs);
  EXPECT_TRUE(has(so1, "first/libgcc_s.so.1"));
  EXPECT_TRUE(has(so1, "libs/libgcc_s.so.1"));
}

// A linker script names files ld looks for in the working directory first,
// then in the search directories, with directories in their names.
TEST(LinkInputsTest, ScriptNamedFilesRecordTheWorkingDirectoryAndSubdirectories) {
  std::vector<std::string> dirs = {"first", "libs"};
  std::vector<std::string> plain = recorded_paths({"libs/inc.ld", "libs/sub/x.ld"}, dirs);
  EXPECT_FALSE(has(plain, "inc.ld"));
  EXPECT_TRUE(has(plain, "first/inc.ld"));
  EXPECT_FALSE(has(plain, "first/sub/x.ld"));
  std::vector<std::string> got = recorded_paths({"libs/inc.ld", "libs/sub/x.ld"}, dirs, true);
  EXPECT_TRUE(has(got, "inc.ld"));
  EXPECT_TRUE(has(got, "first/inc.ld"));
  EXPECT_TRUE(has(got, "sub/x.ld"));
  EXPECT_TRUE(has(got, "first/sub/x.ld"));
  std::vector<std::string> lib = recorded_paths({"libs/sub/libzz.a"}, dirs, true);
  EXPECT_TRUE(has(lib, "first/sub/libzz.so"));
  EXPECT_TRUE(has(lib, "libs/sub/libzz.so"));
}

TEST(LinkInputsTest, RecordsRoundTrip) {
  std::vector<std::vector<std::string>> records = {{"a.o", "libs/libfoo.a"}, {}, {"b"}};
  std::vector<std::vector<std::string>> back;
  ASSERT_TRUE(decode_records(encode_records(records), &back));
  EXPECT_EQ(back, records);
  std::string bytes = encode_records(records);
  bytes.pop_back();
  back.clear();
  EXPECT_FALSE(decode_records(bytes, &back));
}

TEST(LinkInputsTest, DeterministicArchivesOnly) {
  testing::TestDir dir;
  dir.write("a.o", "not really an object, ar does not care\n");
  dir.write("b.o", "odd");
  std::string cd = "cd " + testing::shell_quote(dir.path()) + " && ";
  ASSERT_EQ(
      base::run_captured({"/bin/sh", "-c", cd + "ar qcD d.a a.o b.o && ar qcU u.a a.o b.o"}, true)
          .exit_code,
      0);
  EXPECT_TRUE(archive_is_deterministic(dir.read("d.a")));
  EXPECT_FALSE(archive_is_deterministic(dir.read("u.a")));
  EXPECT_FALSE(archive_is_deterministic("!<arch>\nshort"));
  EXPECT_FALSE(archive_is_deterministic("not an archive"));
}

// Member names longer than 15 bytes (most CMake objects: "file_util.cpp.o"
// fits, "decision_log.cpp.o" does not) put a name table ("//") in the
// archive, whose header has blank fields: such an archive is still
// deterministic, and one with real dates is still not.
TEST(LinkInputsTest, DeterministicArchiveWithLongMemberNames) {
  testing::TestDir dir;
  dir.write("a_long_member_name.cpp.o", "not really an object\n");
  dir.write("b.o", "odd");
  std::string cd = "cd " + testing::shell_quote(dir.path()) + " && ";
  ASSERT_EQ(base::run_captured({"/bin/sh", "-c",
                                cd + "ar qcD d.a a_long_member_name.cpp.o b.o && ranlib -D d.a && "
                                     "ar qcU u.a a_long_member_name.cpp.o b.o"},
                               true)
                .exit_code,
            0);
  std::string d = dir.read("d.a");
  ASSERT_NE(d.find("\n//              "), std::string::npos);  // has a name table
  EXPECT_TRUE(archive_is_deterministic(d));
  EXPECT_FALSE(archive_is_deterministic(dir.read("u.a")));
  // A name table header with a date in it is not the blank one ar writes.
  size_t at = d.find("\n//              ") + 1;
  d[at + 16] = '1';
  EXPECT_FALSE(archive_is_deterministic(d));
}

TEST(LinkInputsTest, DriverLinkDirsComeFromTheLinkerCommand) {
  testing::TestDir dir;
  dir.write("main.o", "");  // clang checks that inputs exist even with -###
  for (const char* driver : {"g++", "clang++"}) {
    if (base::find_program(driver).empty()) continue;
    base::Result<std::vector<std::string>> dirs =
        driver_link_dirs(driver, {dir.at("main.o"), "-Lmine", "-o", "app"});
    ASSERT_TRUE(dirs.ok()) << dirs.message();
    ASSERT_FALSE(dirs->empty());
    EXPECT_EQ(dirs->front(), "mine") << driver;
    EXPECT_GT(dirs->size(), 2u) << driver;  // the driver's own directories follow
  }
}

TEST(LinkInputsTest, ChangedPathsAreThoseWhoseStateDiffers) {
  const std::string stored = encode_path_states({"a.o", "b.o", "gone.so"}, {"h1", "h2", "absent"});
  EXPECT_EQ(changed_paths(stored, {"a.o", "b.o", "gone.so"}, {"h1", "h2", "absent"}),
            std::vector<std::string>{});
  EXPECT_EQ(changed_paths(stored, {"a.o", "b.o", "gone.so"}, {"h1", "h3", "h4"}),
            (std::vector<std::string>{"b.o", "gone.so"}));
  // A path the stored run did not read: changed unless it is absent now.
  EXPECT_EQ(changed_paths(stored, {"a.o", "new.a", "other.a"}, {"h1", "h5", "absent"}),
            std::vector<std::string>{"new.a"});
  EXPECT_EQ(changed_paths("\xff", {"a.o"}, {"h1"}), std::vector<std::string>{});  // damaged
}

TEST(LinkInputsTest, LtoTemporariesAreTheNamesLtoWrapperGives) {
  ::unsetenv("TMP");
  ::unsetenv("TEMP");
  ::setenv("TMPDIR", "/build/scratch/", 1);
  EXPECT_TRUE(is_lto_temporary("/tmp/ccRdKtXb.ltrans0.ltrans.o"));
  EXPECT_TRUE(is_lto_temporary("/var/tmp/ccw7AkCz.debug.temp.o"));
  EXPECT_TRUE(is_lto_temporary("/build/scratch/ccw7AkCz.ltrans12.ltrans.o"));
  EXPECT_TRUE(is_lto_temporary("/build/scratch//ccw7AkCz.ltrans12.ltrans.o"));
  EXPECT_FALSE(is_lto_temporary("/build/ccw7AkCz.ltrans0.ltrans.o"));  // not a temp dir
  EXPECT_FALSE(is_lto_temporary("/tmp/sub/ccw7AkCz.ltrans0.ltrans.o"));
  EXPECT_FALSE(is_lto_temporary("/tmp/ccw7AkCz.ltrans0.ltrans.a"));  // not an object
  EXPECT_FALSE(is_lto_temporary("/tmp/xxw7AkCz.ltrans0.ltrans.o"));  // not gcc's prefix
  EXPECT_FALSE(is_lto_temporary("/tmp/ccw7Ak-z.ltrans0.ltrans.o"));
  EXPECT_FALSE(is_lto_temporary("/tmp/ccw7AkCzltrans0.o"));
  EXPECT_FALSE(is_lto_temporary("ccw7AkCz.ltrans0.ltrans.o"));
  ::unsetenv("TMPDIR");
  EXPECT_FALSE(is_lto_temporary("/build/scratch/ccw7AkCz.ltrans12.ltrans.o"));
}

// What a real LTO link's dependency file lists: the files that are gone
// after the link are exactly lto-wrapper's objects.
TEST(LinkInputsTest, AnLtoLinksGoneFilesAreItsTemporaries) {
  testing::TestDir dir;
  dir.write("a.cpp", "int f(int);\nint main(int argc, char**) { return f(argc); }\n");
  dir.write("b.cpp", "int f(int x) { return x * 3; }\n");
  const std::string g = "cd " + dir.path() + " && g++ -O2 -g -flto ";
  ASSERT_EQ(std::system((g + "-c a.cpp && " + g + "-c b.cpp && " + g +
                         "a.o b.o -o app -Wl,--dependency-file=app.d")
                            .c_str()),
            0);
  base::Result<std::string> dep = base::read_file(dir.at("app.d"));
  ASSERT_TRUE(dep.ok());
  std::vector<std::string> read;
  std::string err;
  ASSERT_TRUE(base::parse_depfile(*dep, &read, &err)) << err;
  int gone = 0;
  for (const std::string& path : read) {
    base::StatSignature sig;
    if (base::stat_file(path[0] == '/' ? path : dir.at(path), &sig)) continue;
    ++gone;
    EXPECT_TRUE(is_lto_temporary(path)) << path;
  }
  EXPECT_GT(gone, 0) << *dep;
}

}  // namespace
}  // namespace lexpack::link
