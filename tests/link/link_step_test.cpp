// The command model of archive and link steps: what is recognised, what is
// refused and why.
#include "link/link_step.h"

#include <gtest/gtest.h>

#include "tests/support/test_dir.h"

namespace lexpack::link {
namespace {

TEST(LinkStepTest, ArchiveShapes) {
  LinkStep cmake = parse_link_step({"/usr/bin/ar", "qc", "libfoo.a", "a.o", "b.o"});
  EXPECT_EQ(cmake.kind, StepKind::kArchive);
  EXPECT_EQ(cmake.uncacheable, "");
  EXPECT_EQ(cmake.output, "libfoo.a");
  EXPECT_EQ(cmake.inputs, (std::vector<std::string>{"a.o", "b.o"}));
  EXPECT_EQ(parse_link_step({"ar", "rcs", "l.a", "a.o"}).uncacheable, "");
  EXPECT_EQ(parse_link_step({"ar", "-rcsD", "l.a", "a.o"}).uncacheable, "");
  EXPECT_EQ(parse_link_step({"x86_64-linux-gnu-ar", "qc", "l.a", "a.o"}).kind, StepKind::kArchive);
  // Timestamps, real dates, thin archives, positions, other operations.
  for (const char* ops : {"rcu", "qcU", "qcT", "rb", "x", "t", "qr", "c"}) {
    LinkStep s = parse_link_step({"ar", ops, "l.a", "a.o"});
    EXPECT_EQ(s.kind, StepKind::kArchive) << ops;
    EXPECT_NE(s.uncacheable, "") << ops;
  }
  EXPECT_NE(parse_link_step({"ar", "qc", "l.a", "@objs.rsp"}).uncacheable, "");
  EXPECT_NE(parse_link_step({"ar", "qc"}).uncacheable, "");
}

TEST(LinkStepTest, Ranlib) {
  LinkStep s = parse_link_step({"/usr/bin/ranlib", "libfoo.a"});
  EXPECT_EQ(s.kind, StepKind::kRanlib);
  EXPECT_EQ(s.uncacheable, "");
  EXPECT_EQ(s.output, "libfoo.a");
  EXPECT_NE(parse_link_step({"ranlib", "-U", "libfoo.a"}).uncacheable, "");
  EXPECT_NE(parse_link_step({"ranlib", "a.a", "b.a"}).uncacheable, "");
}

TEST(LinkStepTest, DriverLinks) {
  LinkStep exe = parse_link_step({"/usr/bin/c++", "-O3", "main.o", "-o", "app", "-Wl,-rpath,/x",
                                  "libfoo.a", "-L", "dir", "-lbar"});
  EXPECT_EQ(exe.kind, StepKind::kLink);
  EXPECT_EQ(exe.uncacheable, "");
  EXPECT_EQ(exe.output, "app");
  EXPECT_EQ(exe.inputs, (std::vector<std::string>{"main.o", "libfoo.a"}));
  LinkStep so = parse_link_step(
      {"clang++-14", "-fPIC", "-shared", "-Wl,-soname,libs.so.1", "-o", "libs.so.1", "s.o"});
  EXPECT_EQ(so.kind, StepKind::kLink);
  EXPECT_EQ(so.uncacheable, "");
  // Option arguments are not options: a path with "-M" or "plugin" in it.
  EXPECT_EQ(
      parse_link_step({"g++", "a.o", "-o", "app", "-Wl,-rpath,/opt/x-MBq/plugin"}).uncacheable, "");
  EXPECT_EQ(parse_link_step({"g++", "a.o", "-o", "app", "-Xlinker", "-rpath", "-Xlinker", "/a-M"})
                .uncacheable,
            "");
}

TEST(LinkStepTest, DriverLinksThatAreNotCached) {
  auto why = [](std::vector<std::string> argv) { return parse_link_step(argv).uncacheable; };
  EXPECT_NE(why({"g++", "a.o", "-o", "app", "-fuse-ld=gold"}), "");
  EXPECT_NE(why({"g++", "a.o", "-o", "app", "-Wl,-plugin,x.so"}), "");
  EXPECT_NE(why({"g++", "a.o", "-o", "app", "-Xlinker", "-plugin"}), "");
  EXPECT_NE(why({"g++", "a.o", "-o", "app", "-Wl,-Map,app.map"}), "");
  EXPECT_NE(why({"g++", "a.o", "-o", "app", "-Wl,-Map=app.map"}), "");
  EXPECT_NE(why({"g++", "a.o", "-o", "app", "-Wl,--plugin-opt=x"}), "");
  EXPECT_NE(why({"g++", "a.o", "-o", "app", "-Wl,-r"}), "");
  EXPECT_NE(why({"g++", "a.o", "-o", "app", "-Wl,--dependency-file=x"}), "");
  EXPECT_NE(why({"g++", "@no-such-file.rsp", "-o", "app"}), "");
  EXPECT_NE(why({"g++", "a.o"}), "");  // no -o
  EXPECT_NE(why({"g++", "a.o", "-o", "app", "-B/opt/tools"}), "");
  EXPECT_NE(why({"g++", "a.o", "-o", "app", "--sysroot=/x"}), "");
  // Another linker, GCC installation, target or emulation.
  for (const char* opt : {"--ld-path=/opt/ld", "--gcc-toolchain=/opt/gcc", "--target=aarch64",
                          "-m32", "-mx32", "-specs=my.specs", "--specs=my.specs", "-B", "-Bdir"}) {
    EXPECT_NE(why({"g++", "a.o", "-o", "app", opt}), "") << opt;
  }
  EXPECT_NE(why({"clang++", "a.o", "-o", "app", "-target", "aarch64-linux-gnu"}), "");
  EXPECT_NE(why({"g++", "main.cpp", "-o", "app"}), "");  // compiles on the way
  EXPECT_NE(why({"gcc", "start.S", "a.o", "-o", "app"}), "");
}

TEST(LinkStepTest, ResponseFilesSplitAsTheDriverDoes) {
  EXPECT_EQ(split_response_file("a.o  b.o\n-Wl,-rpath,'/x y'\t\"c d.o\" e\\ f.o ''\n"),
            (std::vector<std::string>{"a.o", "b.o", "-Wl,-rpath,/x y", "c d.o", "e f.o", ""}));
  EXPECT_EQ(split_response_file(""), std::vector<std::string>{});
  EXPECT_EQ(split_response_file("\"a\\\"b\""), std::vector<std::string>{"a\"b"});
}

// A link with response files (CMake writes them for long object lists) is
// read as the driver reads it: the files' words in their place, nested ones
// too, so they are keyed and what they name is checked like any argument.
TEST(LinkStepTest, ResponseFilesAreReadIntoTheLink) {
  testing::TestDir dir;
  dir.write("objects.rsp", "a.o b.o @" + dir.at("libs.rsp") + "\n");
  dir.write("libs.rsp", "libfoo.a -lbar\n");
  LinkStep step = parse_link_step({"g++", "@" + dir.at("objects.rsp"), "-o", "app"});
  EXPECT_EQ(step.kind, StepKind::kLink);
  EXPECT_EQ(step.uncacheable, "");
  EXPECT_EQ(step.args, (std::vector<std::string>{"a.o", "b.o", "libfoo.a", "-lbar", "-o", "app"}));
  EXPECT_EQ(step.inputs, (std::vector<std::string>{"a.o", "b.o", "libfoo.a"}));
  // What the file holds is judged like the command line.
  dir.write("lto.rsp", "a.o -flto=4\n");
  EXPECT_EQ(parse_link_step({"g++", "@" + dir.at("lto.rsp"), "-o", "app"}).lto, "-flto=4");
  dir.write("plugin.rsp", "a.o -Wl,-plugin,x.so\n");
  EXPECT_NE(parse_link_step({"g++", "@" + dir.at("plugin.rsp"), "-o", "app"}).uncacheable, "");
  // A file that names itself does not loop.
  dir.write("self.rsp", "a.o @" + dir.at("self.rsp") + "\n");
  EXPECT_NE(parse_link_step({"g++", "@" + dir.at("self.rsp"), "-o", "app"}).uncacheable, "");
}

TEST(LinkStepTest, CmakeRemoveExactlyAsCmakeWritesIt) {
  LinkStep s = parse_link_step({"/usr/bin/cmake", "-E", "rm", "-f", "libfoo.a", "x/y.a"});
  EXPECT_EQ(s.kind, StepKind::kRemove);
  EXPECT_EQ(s.uncacheable, "");
  EXPECT_EQ(s.inputs, (std::vector<std::string>{"libfoo.a", "x/y.a"}));
  EXPECT_EQ(s.output, "libfoo.a");
  // Recursive, without -f, without files, options among the files, other
  // commands: cmake runs them itself.
  for (std::vector<std::string> argv :
       std::vector<std::vector<std::string>>{{"cmake", "-E", "rm", "-rf", "d"},
                                             {"cmake", "-E", "rm", "x"},
                                             {"cmake", "-E", "rm", "-f"},
                                             {"cmake", "-E", "rm", "-f", "--", "x"},
                                             {"cmake", "-E", "remove", "-f", "x"},
                                             {"cmake", "--build", "."},
                                             {"ccmake", "-E", "rm", "-f", "x"}}) {
    EXPECT_EQ(parse_link_step(argv).kind, StepKind::kNone) << argv[3];
  }
}

TEST(LinkStepTest, CompilesAndOtherToolsAreNotSteps) {
  EXPECT_EQ(parse_link_step({"g++", "-c", "a.cpp", "-o", "a.o"}).kind, StepKind::kNone);
  EXPECT_EQ(parse_link_step({"g++", "-E", "a.cpp"}).kind, StepKind::kNone);
  // An LTO compile is a compile, whichever comes first (CMake writes the
  // -flto flags before -c).
  EXPECT_EQ(
      parse_link_step({"g++", "-flto=auto", "-fno-fat-lto-objects", "-c", "a.cpp", "-o", "a.o"})
          .kind,
      StepKind::kNone);
  // An LTO link is a link, its -flto option kept (the toolchain decides).
  LinkStep lto = parse_link_step({"g++", "-flto=auto", "a.o", "-o", "app"});
  EXPECT_EQ(lto.kind, StepKind::kLink);
  EXPECT_EQ(lto.uncacheable, "");
  EXPECT_EQ(lto.lto, "-flto=auto");
  EXPECT_EQ(parse_link_step({"g++", "-fno-lto", "a.o", "-o", "app"}).lto, "");
  EXPECT_EQ(parse_link_step({"g++", "--version"}).kind, StepKind::kLink);  // refused below
  EXPECT_NE(parse_link_step({"g++", "--version"}).uncacheable, "");
  EXPECT_EQ(parse_link_step({"star", "qc", "x"}).kind, StepKind::kNone);
  EXPECT_EQ(parse_link_step({"foo-ar", "qc", "x"}).kind, StepKind::kNone);  // no triple
  EXPECT_TRUE(is_driver_name("x86_64-linux-gnu-g++-12"));
  EXPECT_TRUE(is_driver_name("clang++-14"));
  EXPECT_FALSE(is_driver_name("ld"));
}

}  // namespace
}  // namespace lexpack::link
