// The relocation of archive and link keys: which path arguments are named
// relative to the working directory (so two checkouts share a key), and
// which ones the output can record, keeping the key absolute.
#include "link/link_relocation.h"

#include <gtest/gtest.h>

#include "tests/support/test_dir.h"

namespace lexpack::link {
namespace {

constexpr const char* kBase = "/ws";

// The key arguments of `argv` run in /ws/<checkout>/build, with every
// "@" in it replaced by the checkout's root.
struct Keyed {
  closure::KeyRelocation relocation;
  std::vector<std::string> args;
};
Keyed keyed(const std::vector<std::string>& argv, const std::string& checkout,
            const std::string& base_dir = kBase) {
  std::string root = std::string(kBase) + "/" + checkout;
  std::vector<std::string> a;
  for (std::string s : argv) {
    for (size_t at = s.find('@'); at != std::string::npos; at = s.find('@', at + root.size())) {
      s.replace(at, 1, root);
    }
    a.push_back(s);
  }
  LinkStep step = parse_link_step(a);
  EXPECT_EQ(step.uncacheable, "");
  Keyed k;
  k.relocation = decide_link_relocation(step, root + "/build", base_dir);
  k.args = relocated_link_args(step, k.relocation);
  return k;
}

// Relocated, and the same key arguments in two checkouts.
void expect_shared(const std::vector<std::string>& argv) {
  Keyed a = keyed(argv, "a"), b = keyed(argv, "b");
  EXPECT_TRUE(a.relocation.relocated) << a.relocation.not_relocatable;
  EXPECT_EQ(a.args, b.args);
}

// Not relocated, with a reason naming `what`, and the arguments as written.
void expect_absolute(const std::vector<std::string>& argv, const std::string& what) {
  Keyed a = keyed(argv, "a"), b = keyed(argv, "b");
  EXPECT_FALSE(a.relocation.relocated);
  EXPECT_NE(a.relocation.not_relocatable.find(what), std::string::npos)
      << a.relocation.not_relocatable;
  EXPECT_NE(a.args, b.args);
}

TEST(LinkRelocationTest, ArchiveAndRanlibNameTheirFilesRelative) {
  Keyed a = keyed({"ar", "qc", "@/build/libs/libfoo.a", "@/build/foo1.o", "rel.o"}, "a");
  EXPECT_TRUE(a.relocation.relocated);
  EXPECT_EQ(a.args, (std::vector<std::string>{"qc", "libs/libfoo.a", "foo1.o", "rel.o"}));
  expect_shared({"ar", "qc", "@/build/libfoo.a", "@/obj/foo1.o", "/elsewhere/x.o"});
  Keyed outside = keyed({"ar", "qc", "@/build/l.a", "/elsewhere/x.o"}, "a");
  EXPECT_EQ(outside.args[2], "/elsewhere/x.o");
  expect_shared({"ranlib", "@/build/libs/libfoo.a"});
}

TEST(LinkRelocationTest, LinkPathsThatOnlyNameWhatIsReadOrWritten) {
  Keyed a = keyed({"g++", "@/build/main.o", "-o", "@/build/app", "-L@/build/libs", "-lfoo", "-L",
                   "@/lib2", "/usr/lib/x86_64-linux-gnu/crt1.o"},
                  "a");
  EXPECT_TRUE(a.relocation.relocated) << a.relocation.not_relocatable;
  EXPECT_EQ(a.args, (std::vector<std::string>{"main.o", "-o", "app", "-Llibs", "-lfoo", "-L",
                                              "../lib2", "/usr/lib/x86_64-linux-gnu/crt1.o"}));
  expect_shared({"g++", "main.o", "-o", "app", "-Wl,--version-script=@/src/v.map"});
  expect_shared({"g++", "main.o", "-o", "app", "-Wl,--version-script,@/src/v.map"});
  expect_shared({"g++", "main.o", "-o", "app", "-Wl,-T,@/src/s.ld", "-T", "@/src/t.ld"});
  expect_shared({"g++", "main.o", "-o", "app", "-Xlinker", "--script", "-Xlinker", "@/src/s.ld"});
  expect_shared({"g++", "main.o", "-o", "app", "-Wl,-rpath-link,@/a:@/b", "-Wl,-L@/c"});
  expect_shared({"g++", "main.o", "-o", "app", "-Wl,--dynamic-list=@/src/d.list"});
  Keyed link = keyed({"g++", "main.o", "-o", "app", "-Wl,-rpath-link,@/x:@/y"}, "a");
  EXPECT_EQ(link.args[3], "-Wl,-rpath-link,../x:../y");
  // A prefix map reaches no link output (a step that compiles a source is
  // not cached): its old prefix is relocated like a path.
  expect_shared({"g++", "main.o", "-o", "app", "-ffile-prefix-map=@=."});
  expect_shared(
      {"g++", "main.o", "-o", "app", "-fdebug-prefix-map=@/src=/src", "-fmacro-prefix-map=@=."});
  Keyed mapped = keyed({"g++", "main.o", "-o", "app", "-ffile-prefix-map=@/build=b"}, "a");
  EXPECT_EQ(mapped.args[3], "-ffile-prefix-map=.=b");
  // Paths outside base_dir and rpaths not under it are kept as written.
  expect_shared({"g++", "@/build/m.o", "-o", "app", "-Wl,-rpath,/opt/lib:$ORIGIN",
                 "-Wl,-soname,libapp.so", "-Wl,--dynamic-linker=/lib/ld.so"});
}

TEST(LinkRelocationTest, PathsTheOutputRecordsKeepTheKeyAbsolute) {
  expect_absolute({"g++", "main.o", "-o", "app", "-Wl,-rpath,@/build"}, "-rpath /ws/a/build");
  expect_absolute({"g++", "main.o", "-o", "app", "-Wl,-rpath=/x:@/build"}, "-rpath");
  expect_absolute({"g++", "main.o", "-o", "app", "-Wl,--rpath=@/build"}, "-rpath");
  expect_absolute({"g++", "main.o", "-o", "app", "-Xlinker", "-rpath", "-Xlinker", "@/build"},
                  "-rpath");
  expect_absolute({"g++", "main.o", "-o", "app", "-Wl,-R@/build"}, "-R");
  expect_absolute({"g++", "main.o", "-o", "app", "-Wl,-R,@/build"}, "-R");
  expect_absolute({"g++", "-shared", "x.o", "-o", "libx.so", "-Wl,-soname,@/build/libx.so"},
                  "-soname");
  expect_absolute({"g++", "-shared", "x.o", "-o", "libx.so", "-Wl,-h,@/build/libx.so"}, "-h");
  expect_absolute({"g++", "main.o", "-o", "app", "-Wl,--dynamic-linker=@/ld.so"},
                  "-dynamic-linker");
  expect_absolute({"g++", "main.o", "-o", "app", "-Wl,-I,@/ld.so"}, "-I");
  // Anything else naming base_dir is not understood: kept absolute.
  expect_absolute({"g++", "main.o", "-o", "app", "-Wl,@/build/x.o"}, "linker argument");
  expect_absolute({"g++", "main.o", "-o", "app", "-Wl,--audit-dir=@/x"}, "linker");
  expect_absolute({"g++", "main.o", "-o", "app", "-fprofile-generate=@/prof"}, "argument");
  expect_absolute({"g++", "main.o", "-o", "app", "-l:@/build/libx.a"}, "argument");
  expect_absolute({"g++", "main.o", "-o", "app", "-ffile-prefix-map=/old=@/new"}, "argument");
}

TEST(LinkRelocationTest, SharedLibraryNamedByItsPathKeepsTheKeyAbsolute) {
  // DT_NEEDED holds the path as given for a library without a soname.
  testing::TestDir dir;
  std::string elf(
      "\x7f"
      "ELF\x02\x01\x01",
      7);
  elf.resize(16, '\0');
  std::string shared = elf + std::string("\x03\x00", 2) + std::string(46, '\0');
  std::string object = elf + std::string("\x01\x00", 2) + std::string(46, '\0');
  dir.write("build/libx.so", shared);
  dir.write("build/x.o", object);
  std::string base = dir.path();
  LinkStep step = parse_link_step({"g++", "main.o", base + "/build/libx.so", "-o", "app"});
  closure::KeyRelocation r = decide_link_relocation(step, base + "/build", base);
  EXPECT_FALSE(r.relocated);
  EXPECT_NE(r.not_relocatable.find("DT_NEEDED"), std::string::npos) << r.not_relocatable;
  step = parse_link_step({"g++", "main.o", base + "/build/x.o", "-o", "app"});
  r = decide_link_relocation(step, base + "/build", base);
  EXPECT_TRUE(r.relocated) << r.not_relocatable;
  EXPECT_EQ(relocated_link_args(step, r)[1], "x.o");
}

TEST(LinkRelocationTest, OffWithoutBaseDir) {
  Keyed a = keyed({"g++", "@/build/main.o", "-o", "@/build/app"}, "a", "");
  EXPECT_FALSE(a.relocation.relocated);
  EXPECT_EQ(a.relocation.not_relocatable, "");
  EXPECT_EQ(a.args[0], "/ws/a/build/main.o");
}

TEST(LinkRelocationTest, RecordedPathsAndOutputs) {
  closure::KeyRelocation r;
  r.base_dir = "/ws";
  r.cwd = "/ws/a/build";
  r.relocated = true;
  EXPECT_EQ(relocated_paths({"/ws/a/build/libs/libfoo.a", "/usr/lib/libc.so", "./libx.so",
                             "/ws/a/src/s.ld", "/wsx/y"},
                            r),
            (std::vector<std::string>{"libs/libfoo.a", "/usr/lib/libc.so", "./libx.so",
                                      "../src/s.ld", "/wsx/y"}));
  r.relocated = false;
  EXPECT_EQ(relocated_paths({"/ws/a/x.o"}, r), (std::vector<std::string>{"/ws/a/x.o"}));

  EXPECT_TRUE(bytes_name_dir(std::string("RUNPATH\0/ws/a/build\0", 20), "/ws"));
  EXPECT_TRUE(bytes_name_dir("x /ws", "/ws"));
  EXPECT_FALSE(bytes_name_dir("/wsx/lib and /usr/wsy", "/ws"));
}

}  // namespace
}  // namespace lexpack::link
