// The linker words of a link: the files they make ld read outside its
// dependency file (its @files, nested and quoted, --retain-symbols-file),
// the directories they add to the search, the scripts and refused options.
#include "link/linker_options.h"

#include <gtest/gtest.h>

#include "link/link_step.h"
#include "tests/support/test_dir.h"

namespace lexpack::link {
namespace {

using Words = std::vector<std::string>;

LinkStep link_with(std::vector<std::string> extra) {
  std::vector<std::string> argv = {"g++", "main.o", "-o", "app"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return parse_link_step(argv);
}

TEST(LinkerOptionsTest, LinkerResponseFilesAreKeyedNestedAndRead) {
  testing::TestDir dir;
  const std::string inner = dir.at("in ner.txt");
  dir.write("opts.txt", "--defsym=ZZ=0x10 \"@" + inner + "\"\n");
  dir.write("in ner.txt", "-rpath-link " + dir.at("d1") + ":" + dir.at("d2") +
                              " --retain-symbols-file\\ keep.txt -L lib\\ dir\n");
  LinkStep s = link_with({"-Wl,@" + dir.at("opts.txt")});
  EXPECT_EQ(s.kind, StepKind::kLink);
  EXPECT_EQ(s.uncacheable, "");
  EXPECT_EQ(s.linker.files, (Words{dir.at("opts.txt"), inner}));
  EXPECT_EQ(s.linker.search_dirs, (Words{dir.at("d1"), dir.at("d2"), "lib dir"}));
  // The escaped blank made one word: an option ld does not know, no file.
  EXPECT_FALSE(s.linker.has_script);

  // After -Xlinker, the driver itself reads the file (its words are the
  // driver's arguments): keyed as the command line.
  LinkStep x = link_with({"-Xlinker", "@" + dir.at("opts.txt")});
  EXPECT_EQ(x.args[3], "-Xlinker");
  EXPECT_EQ(x.args[4], "--defsym=ZZ=0x10");
  // What a linker @file says is judged like the command line.
  dir.write("map.txt", "--gc-sections -Map=app.map\n");
  EXPECT_NE(link_with({"-Wl,@" + dir.at("map.txt")}).uncacheable, "");
  // Unreadable (ld would take the word as a file name), or naming itself.
  EXPECT_NE(link_with({"-Wl,@" + dir.at("absent.txt")}).uncacheable, "");
  dir.write("self.txt", "-z now @" + dir.at("self.txt") + "\n");
  EXPECT_NE(link_with({"-Wl,@" + dir.at("self.txt")}).uncacheable, "");
  // ld expands @files anywhere, an option's argument included.
  EXPECT_EQ(link_with({"-Wl,-soname,@" + dir.at("opts.txt")}).linker.files.size(), 2u);
}

TEST(LinkerOptionsTest, FilesLdReadsOutsideItsDependencyFile) {
  for (Words extra :
       {Words{"-Wl,--retain-symbols-file=keep.txt"}, Words{"-Wl,--retain-symbols-file,keep.txt"},
        Words{"-Wl,-retain-symbols-file,keep.txt"},
        Words{"-Wl,--retain-sym=keep.txt"},  // a prefix, as ld takes it
        Words{"-Xlinker", "--retain-symbols-file", "-Xlinker", "keep.txt"},
        Words{"-Wl,--retain-symbols-file", "-Wl,keep.txt"}}) {
    LinkStep s = link_with(extra);
    EXPECT_EQ(s.uncacheable, "") << extra[0];
    EXPECT_EQ(s.linker.files, Words{"keep.txt"}) << extra[0];
  }
  // An option left without its argument before another driver argument.
  EXPECT_NE(link_with({"-Wl,--retain-symbols-file", "x.o"}).uncacheable, "");
  EXPECT_NE(link_with({"-Xlinker", "-rpath-link"}).uncacheable, "");
}

TEST(LinkerOptionsTest, SearchDirectoriesOfNeededLibraries) {
  EXPECT_EQ(link_with({"-Wl,-rpath-link,a:b", "-Wl,-rpath=/c", "-Xlinker", "--rpath-link=d"})
                .linker.search_dirs,
            (Words{"a", "b", "/c", "d"}));
  EXPECT_EQ(link_with({"-Wl,-Lx", "-Wl,--library-path=y", "-Wl,-L,z"}).linker.search_dirs,
            (Words{"x", "y", "z"}));
  // -R with a directory is an rpath; with a file, symbols ld reads (listed).
  testing::TestDir dir;
  dir.write("sub/syms.o", "");
  EXPECT_EQ(link_with({"-Wl,-R," + dir.at("sub")}).linker.search_dirs, Words{dir.at("sub")});
  EXPECT_EQ(link_with({"-Wl,-R," + dir.at("sub/syms.o")}).linker.search_dirs, Words{});
  // The sysroot's directories are not followed.
  EXPECT_NE(link_with({"-Wl,-L=/lib"}).uncacheable, "");
  EXPECT_NE(link_with({"-Wl,--sysroot=/x"}).uncacheable, "");
}

TEST(LinkerOptionsTest, LinkerScriptsAreNoticed) {
  for (Words extra :
       {Words{"-T", "s.ld"}, Words{"-Ts.ld"}, Words{"-Wl,-T,s.ld"}, Words{"-Wl,-Ts.ld"},
        Words{"-Wl,--script=s.ld"}, Words{"-Wl,-dT,s.ld"}, Words{"s.ld"}, Words{"inputs.txt"}}) {
    LinkStep s = link_with(extra);
    EXPECT_EQ(s.uncacheable, "") << extra[0];
    EXPECT_TRUE(s.linker.has_script) << extra[0];
  }
  for (Words extra : {Words{"libfoo.a", "x.so", "y.so.1", "-lbar", "-Wl,--as-needed"}}) {
    EXPECT_FALSE(link_with(extra).linker.has_script);
  }
}

TEST(LinkerOptionsTest, RefusedOptionsEvenAbbreviated) {
  for (const char* opt :
       {"-Wl,--Map=x", "-Wl,-M", "-Wl,--print-map", "-Wl,--trace", "-Wl,-t", "-Wl,--verb",
        "-Wl,-o,other", "-Wl,--output=other", "-Wl,-Ur", "-Wl,--dep=x.d", "-Wl,-c,x.mri",
        "-Wl,-Y,/lib", "-Wl,--plug=x.so", "-Wl,--out=x", "-Wl,-m,elf_i386", "-Wl,-melf_i386"}) {
    EXPECT_NE(link_with({opt}).uncacheable, "") << opt;
  }
  for (const char* opt : {"-Wl,--version-script=v.map", "-Wl,--gc-sections", "-Wl,-O1",
                          "-Wl,--relax", "-Wl,-pie", "-Wl,--threads", "-Wl,-soname,x.so",
                          "-Wl,-z,now", "-Wl,--defsym=ZZ=1", "-Wl,--print-gc-sections"}) {
    EXPECT_EQ(link_with({opt}).uncacheable, "") << opt;
  }
}

}  // namespace
}  // namespace lexpack::link
