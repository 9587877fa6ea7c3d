// End to end, with the server off and on: inputs the preprocessor's view of a
// closure misses. gas's .incbin/.include in inline asm read files no depfile
// names; identical #pragma once headers are one file to gcc while their
// mtimes agree, and to clang while they are one inode. Each object is
// compared with a plain compile's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <ostream>
#include <string>

#include "tests/support/launcher_fixture.h"

namespace lexpack::testing {
namespace {

struct Mode {
  const char* cxx;
  bool server;
};
void PrintTo(const Mode& m, std::ostream* os) {
  *os << m.cxx << (m.server ? " with the server" : " without the server");
}

class ClosureEdge : public LauncherTest, public ::testing::WithParamInterface<Mode> {
 protected:
  void SetUp() override {
    if (!GetParam().server) return;
    ASSERT_EQ(lexpack("server --start", env()).exit_code, 0);
    for (int i = 0; i < 100; ++i) {
      if (lexpack("server --status", env()).exit_code == 0) return;
      ::usleep(50 * 1000);
    }
    FAIL() << "the server did not come up";
  }
  void TearDown() override {
    if (GetParam().server) lexpack("server --stop", env());
  }
  std::string env() const {
    return GetParam().server ? "LEXPACK_SERVER=1 LEXPACK_SERVER_IDLE=120" : "LEXPACK_SERVER=0";
  }
  std::string cxx() const { return GetParam().cxx; }

  // Compiles through lexpack and plainly; the objects must be equal.
  void compile_and_compare(const std::string& args) {
    ASSERT_EQ(sh(cxx() + " " + args + " -o ref.o").exit_code, 0) << args;
    base::ProcessResult r = lexpack(cxx() + " " + args + " -o out.o", env());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_TRUE(dir_.read("out.o") == dir_.read("ref.o"))
        << args << ": served a stale object: " << last_decision();
  }
  // Compiles until lexpack hits (by the server when it is on); the first
  // compiles store, and signatures younger than a second are not remembered.
  void warm(const std::string& args) {
    for (int i = 0; i < 12; ++i) {
      compile_and_compare(args);
      if (HasFatalFailure()) return;
      const std::string d = last_decision();
      if (GetParam().server ? d == "hit (server)" : d.rfind("hit", 0) == 0) return;
      if (i >= 1) ::usleep(300 * 1000);
    }
    FAIL() << "never hit: " << last_decision();
  }
  void run(const std::string& command) {
    base::ProcessResult r = sh(command);
    ASSERT_EQ(r.exit_code, 0) << command << ": " << r.err;
  }
};

// The popular incbin.h pattern: the directive's name in a macro of a header,
// the file named by the source.
TEST_P(ClosureEdge, InlineAsmIncbinIsNeverCached) {
  dir_.write("incbin.h",
             "#define INCBIN_MACRO \".incbin\"\n"
             "#define INCBIN(name, file) __asm__(\".section .rodata\\n.global \" #name \"\\n\" "
             "#name \":\\n\" INCBIN_MACRO \" \\\"\" file \"\\\"\\n.previous\\n\")\n");
  dir_.write("a.cpp",
             "#include \"incbin.h\"\nINCBIN(blob, \"data.bin\");\n"
             "extern \"C\" const char blob[];\nconst char* get() { return blob; }\n");
  dir_.write("b.cpp",
             "__asm__(\".section .rodata\\n.global blob2\\nblob2:\\n.incbin \\\"data.bin\\\"\\n"
             ".previous\\n\");\nextern \"C\" const char blob2[];\n"
             "const char* get2() { return blob2; }\n");
  run("touch -d '2020-01-01' incbin.h a.cpp b.cpp");
  for (const char* source : {"a.cpp", "b.cpp"}) {
    SCOPED_TRACE(source);
    for (const char* bytes : {"AB", "CD", "EF"}) {
      dir_.write("data.bin", bytes);
      compile_and_compare(std::string("-c ") + source);
      if (HasFatalFailure()) return;
      EXPECT_NE(last_decision().find(".include or .incbin"), std::string::npos) << last_decision();
    }
  }
  base::ProcessResult stats = lexpack("stats", env());
  EXPECT_NE(stats.out.find("uncacheable_assembler_include"), std::string::npos) << stats.out;
}

// Assembly through the preprocessor, given as such by -x with any name.
TEST_P(ClosureEdge, AssemblerWithCppIncbinIsNeverCached) {
  const std::string cc = cxx() == "g++" ? "gcc" : "clang-14";
  dir_.write("blob.asm", ".data\n.incbin \"data.bin\"\n");
  run("touch -d '2020-01-01' blob.asm");
  for (const char* bytes : {"AB", "CD", "EF"}) {
    dir_.write("data.bin", bytes);
    ASSERT_EQ(sh(cc + " -x assembler-with-cpp -c blob.asm -o ref.o").exit_code, 0);
    base::ProcessResult r = lexpack(cc + " -x assembler-with-cpp -c blob.asm -o out.o", env());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_TRUE(dir_.read("out.o") == dir_.read("ref.o")) << last_decision();
  }
}

// The header counts its inclusions: twice is another object.
constexpr char kCountingHeader[] =
    "#pragma once\n#ifdef X_SEEN\n#define X_TWICE 1\n#endif\n#define X_SEEN 1\n";
constexpr char kIncludesBoth[] =
    "#include \"a/x.h\"\n#include \"b/x.h\"\n"
    "#ifdef X_TWICE\nint twice = 2;\n#else\nint twice = 1;\n#endif\n";

// gcc: two copies with one mtime are one file; touched apart, two.
TEST_P(ClosureEdge, PragmaOnceCopiesTouchedApart) {
  dir_.write("a/x.h", kCountingHeader);
  dir_.write("b/x.h", kCountingHeader);
  dir_.write("m.cpp", kIncludesBoth);
  run("touch -d '2020-01-01 00:00:00' a/x.h b/x.h m.cpp");
  warm("-c m.cpp");
  if (HasFatalFailure()) return;
  run("touch -d '2021-01-01 00:00:00' b/x.h");
  compile_and_compare("-c m.cpp");
  if (HasFatalFailure()) return;
  run("touch -d '2020-01-01 00:00:00' b/x.h");
  compile_and_compare("-c m.cpp");
}

// clang: a hard link is one file; replaced by a copy keeping its mtime, two.
TEST_P(ClosureEdge, PragmaOnceHardLinkReplacedByCopy) {
  dir_.write("a/x.h", kCountingHeader);
  dir_.write("m.cpp", kIncludesBoth);
  run("mkdir -p b && ln a/x.h b/x.h && touch -d '2020-01-01 00:00:00' a/x.h m.cpp");
  warm("-c m.cpp");
  if (HasFatalFailure()) return;
  run("rm b/x.h && cp -p a/x.h b/x.h");
  compile_and_compare("-c m.cpp");
  if (HasFatalFailure()) return;
  run("rm b/x.h && ln a/x.h b/x.h");
  compile_and_compare("-c m.cpp");
}

// A symlink and its target are one file to both compilers, whatever their
// signatures do: still hits.
TEST_P(ClosureEdge, PragmaOnceThroughSymlinkKeepsHitting) {
  dir_.write("a/x.h", kCountingHeader);
  dir_.write("m.cpp", kIncludesBoth);
  run("mkdir -p b && ln -s ../a/x.h b/x.h && touch -d '2020-01-01 00:00:00' a/x.h m.cpp");
  warm("-c m.cpp");
  if (HasFatalFailure()) return;
  run("touch -d '2020-02-01 00:00:00' a/x.h");
  compile_and_compare("-c m.cpp");
  if (HasFatalFailure()) return;
  EXPECT_EQ(last_decision().rfind("hit", 0), 0u) << last_decision();
}

// The evaluation of computed includes takes #pragma once by inode, as
// clang does: for gcc, two equal copies of one mtime are one file, and the
// branch the count decides is another. gcc's compile is then not cached;
// clang's is, and follows the header its branch names.
TEST_P(ClosureEdge, PragmaOnceCopiesDecideAComputedInclude) {
  dir_.write("a/x.h", kCountingHeader);
  dir_.write("b/x.h", kCountingHeader);
  dir_.write("p.h", "#define V 1\n");
  dir_.write("q.h", "#define V 2\n");
  dir_.write("m.cpp", std::string(kIncludesBoth) +
                          "#ifdef X_TWICE\n#define HDR \"p.h\"\n#else\n#define HDR \"q.h\"\n"
                          "#endif\n#include HDR\nint v() { return V; }\n");
  run("touch -d '2020-01-01 00:00:00' a/x.h b/x.h p.h q.h m.cpp");
  const bool gcc = cxx() == "g++";
  if (gcc) {
    compile_and_compare("-c m.cpp");
    if (HasFatalFailure()) return;
    EXPECT_NE(last_decision().find("gcc takes as one"), std::string::npos) << last_decision();
  } else {
    warm("-c m.cpp");
    if (HasFatalFailure()) return;
  }
  dir_.write(gcc ? "q.h" : "p.h", "#define V 3\n");
  run("touch -d '2020-01-01 00:00:00' p.h q.h");
  compile_and_compare("-c m.cpp");
}

// DEPENDENCIES_OUTPUT and SUNPRO_DEPENDENCIES make gcc, CC_PRINT_HEADERS
// clang, write a list of the headers beside the object: a hit would not
// write it. Each compile must leave what the compiler alone leaves.
TEST_P(ClosureEdge, SideOutputVariablesAreNeverServed) {
  dir_.write("a.h", "#define V 1\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return V; }\n");
  run("touch -d '2020-01-01 00:00:00' a.h m.cpp");
  warm("-c m.cpp");
  if (HasFatalFailure()) return;
  for (const char* vars : {"DEPENDENCIES_OUTPUT=deps.txt", "SUNPRO_DEPENDENCIES=deps.txt",
                           "CC_PRINT_HEADERS=1 CC_PRINT_HEADERS_FILE=deps.txt"}) {
    SCOPED_TRACE(vars);
    for (int i = 0; i < 2; ++i) {
      ASSERT_EQ(sh(cxx() + " -c m.cpp -o ref.o", vars).exit_code, 0);
      const bool written = dir_.exists("deps.txt");
      const std::string plain = written ? dir_.read("deps.txt") : "";
      if (written) dir_.remove("deps.txt");
      base::ProcessResult r = lexpack(cxx() + " -c m.cpp -o out.o", env() + " " + vars);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      ASSERT_EQ(dir_.exists("deps.txt"), written) << last_decision();
      if (written) {
        EXPECT_EQ(dir_.read("deps.txt"), plain);
      }
      EXPECT_TRUE(dir_.read("out.o") == dir_.read("ref.o"));
      EXPECT_NE(last_decision().find("uncacheable"), std::string::npos) << last_decision();
      if (written) dir_.remove("deps.txt");
    }
  }
  base::ProcessResult stats = lexpack("stats", env());
  EXPECT_NE(stats.out.find("uncacheable_side_output_environment"), std::string::npos) << stats.out;
}

// A search directory where a regular file stands in the path of a candidate
// (a built program named like an include directory): the candidate is
// absent, as one that does not exist, and the compile is cached. The file
// turned into a directory holding the header is a change: a miss.
TEST_P(ClosureEdge, AFileInTheWayOfACandidateIsAnAbsence) {
  dir_.write("inc/lib/api.h", "#define V 1\n");
  dir_.write("b/lib", "not a directory\n");
  dir_.write("m.cpp", "#include \"lib/api.h\"\nint v() { return V; }\n");
  run("touch -d '2020-01-01 00:00:00' inc/lib/api.h b/lib m.cpp inc/lib inc b");
  warm("-Ib -Iinc -c m.cpp");
  if (HasFatalFailure()) return;
  run("rm b/lib && mkdir -p b/lib && echo '#define V 2' > b/lib/api.h");
  compile_and_compare("-Ib -Iinc -c m.cpp");
  if (HasFatalFailure()) return;
  EXPECT_EQ(last_decision().rfind("hit", 0), std::string::npos) << last_decision();
}

INSTANTIATE_TEST_SUITE_P(Compilers, ClosureEdge,
                         ::testing::Values(Mode{"g++", false}, Mode{"clang++-14", false},
                                           Mode{"g++", true}, Mode{"clang++-14", true}));

}  // namespace
}  // namespace lexpack::testing
