// The command model: what is cacheable, which outputs and depfile a command
// names, and response-file expansion.
#include "compiler/compile_command.h"

#include <gtest/gtest.h>

#include "compiler/response_file.h"
#include "tests/support/test_dir.h"

namespace lexpack::compiler {
namespace {

CompileCommand parse(std::vector<std::string> argv) {
  return parse_compile_command(argv);
}

TEST(CompileCommand, PlainCompile) {
  CompileCommand c = parse({"g++", "-O2", "-Iinc", "-c", "src/a.cpp", "-o", "obj/a.o"});
  EXPECT_EQ(c.uncacheable, "");
  EXPECT_EQ(c.source, "src/a.cpp");
  EXPECT_EQ(c.output, "obj/a.o");
  EXPECT_EQ(c.language, Language::kCxx);
  EXPECT_FALSE(c.wants_depfile);
  EXPECT_FALSE(c.debug_info);
  EXPECT_EQ(c.search_args, (std::vector<std::string>{"-Iinc"}));
}

TEST(CompileCommand, DerivedOutputAndDepfile) {
  CompileCommand c = parse({"gcc", "-MD", "-c", "dir/x.c"});
  EXPECT_EQ(c.uncacheable, "");
  EXPECT_EQ(c.language, Language::kC);
  EXPECT_EQ(c.output, "x.o");
  EXPECT_EQ(c.depfile, "x.d");
  c = parse({"gcc", "-MMD", "-c", "x.c", "-o", "obj/x.c.o"});
  EXPECT_EQ(c.depfile, "obj/x.c.d");
  c = parse({"gcc", "-MD", "-MFdeps/x.d", "-MT", "t", "-c", "x.c", "-o", "obj/x.o"});
  EXPECT_EQ(c.depfile, "deps/x.d");
  c = parse({"gcc", "-MF", "deps/x.d", "-c", "x.c"});
  EXPECT_FALSE(c.wants_depfile);
  EXPECT_EQ(c.depfile, "");
}

// g++ and clang++ compile a .c file as C++ (so they search the C++ dirs),
// unless -x says otherwise; gcc and clang compile it as C.
TEST(CompileCommand, CxxDriversCompileDotCAsCxx) {
  for (const char* cxx : {"g++", "/usr/bin/c++", "clang++-14", "x86_64-linux-gnu-g++-12"}) {
    EXPECT_EQ(parse({cxx, "-c", "t.c"}).language, Language::kCxx) << cxx;
    EXPECT_EQ(parse({cxx, "-x", "c", "-c", "t.c"}).language, Language::kC) << cxx;
    EXPECT_EQ(parse({cxx, "-x", "none", "-c", "t.c"}).language, Language::kCxx) << cxx;
  }
  for (const char* c : {"gcc", "/usr/bin/cc", "clang-14"}) {
    EXPECT_EQ(parse({c, "-c", "t.c"}).language, Language::kC) << c;
  }
}

TEST(CompileCommand, LanguageFromX) {
  CompileCommand c = parse({"clang", "-x", "c++", "-c", "a.inc", "-o", "a.o"});
  EXPECT_EQ(c.uncacheable, "");
  EXPECT_EQ(c.language, Language::kCxx);
  c = parse({"clang", "-xassembler", "-c", "a.s"});
  EXPECT_EQ(c.uncacheable, "unknown_language");
  c = parse({"clang", "-c", "a.s"});
  EXPECT_EQ(c.uncacheable, "unknown_language");
}

// Assembly through the preprocessor is compiled (and cached) like C; plain
// assembly is not.
TEST(CompileCommand, AssemblyWithThePreprocessor) {
  for (const char* driver : {"gcc", "g++", "clang++-14"}) {
    CompileCommand c = parse({driver, "-c", "src/f.S", "-o", "f.o"});
    EXPECT_EQ(c.uncacheable, "") << driver;
    EXPECT_EQ(c.language, Language::kAsm) << driver;
  }
  EXPECT_EQ(parse({"gcc", "-c", "f.sx"}).language, Language::kAsm);
  CompileCommand c = parse({"gcc", "-x", "assembler-with-cpp", "-c", "f.asm"});
  EXPECT_EQ(c.uncacheable, "");
  EXPECT_EQ(c.language, Language::kAsm);
  EXPECT_EQ(language_name(c.language), "assembler-with-cpp");
  EXPECT_EQ(parse({"gcc", "-c", "f.s"}).uncacheable, "unknown_language");
}

// Options for the assembler are part of the key, except those that write a
// file or read one.
TEST(CompileCommand, AssemblerOptions) {
  EXPECT_EQ(parse({"gcc", "-Wa,--noexecstack", "-c", "f.S"}).uncacheable, "");
  EXPECT_EQ(parse({"gcc", "-Wa,-mx86-used-note=yes,--gdwarf-5", "-c", "f.c"}).uncacheable, "");
  EXPECT_EQ(parse({"gcc", "-Xassembler", "--noexecstack", "-c", "f.S"}).uncacheable, "");
  CompileCommand c = parse({"gcc", "-Wa,--noexecstack,-adhln=f.lst", "-c", "f.c"});
  EXPECT_EQ(c.uncacheable, "side_outputs");
  EXPECT_EQ(c.uncacheable_detail, "-Wa,--noexecstack,-adhln=f.lst");
  EXPECT_EQ(parse({"gcc", "-Wa,--MD,f.d", "-c", "f.S"}).uncacheable, "side_outputs");
  EXPECT_EQ(parse({"gcc", "-Xassembler", "-al=f.lst", "-c", "f.S"}).uncacheable, "side_outputs");
  EXPECT_EQ(parse({"gcc", "-Wa,@opts", "-c", "f.S"}).uncacheable, "reads_unhashed_file");
  // A listing to stdout writes no file.
  EXPECT_EQ(parse({"gcc", "-Wa,-adhln", "-c", "f.S"}).uncacheable, "");
}

// CMake's precompiled header: its own compile, whose output is the .gch.
TEST(CompileCommand, PrecompiledHeaderCompile) {
  CompileCommand c = parse({"g++", "-x", "c++-header", "-include", "/b/cmake_pch.hxx", "-c",
                            "/b/cmake_pch.hxx.cxx", "-o", "/b/cmake_pch.hxx.gch"});
  EXPECT_EQ(c.uncacheable, "");
  EXPECT_EQ(c.language, Language::kCxx);
  EXPECT_TRUE(c.makes_pch);
  EXPECT_EQ(c.output, "/b/cmake_pch.hxx.gch");
  c = parse({"gcc", "-xc-header", "-c", "inc/p.h"});
  EXPECT_EQ(c.language, Language::kC);
  EXPECT_TRUE(c.makes_pch);
  EXPECT_EQ(c.output, "inc/p.h.gch");  // beside the header, as gcc puts it
  c = parse({"g++", "-x", "c++-header", "-x", "none", "-c", "a.cpp"});
  EXPECT_FALSE(c.makes_pch);
  EXPECT_EQ(c.output, "a.o");
  EXPECT_FALSE(parse({"g++", "-x", "c++", "-c", "a.cpp"}).makes_pch);
}

TEST(CompileCommand, Uncacheable) {
  EXPECT_EQ(parse({"g++", "-E", "a.cpp"}).uncacheable, "preprocess_only");
  EXPECT_EQ(parse({"g++", "-M", "a.cpp"}).uncacheable, "dependencies_only");
  EXPECT_EQ(parse({"g++", "a.cpp", "-o", "a"}).uncacheable, "linking");
  EXPECT_EQ(parse({"g++", "-c", "a.cpp", "b.cpp"}).uncacheable, "several_sources");
  EXPECT_EQ(parse({"g++", "-c", "a.cpp", "b.o"}).uncacheable, "linking");
  EXPECT_EQ(parse({"g++", "-c", "-x", "c++", "-"}).uncacheable, "stdin_input");
  EXPECT_EQ(parse({"g++", "-save-temps", "-c", "a.cpp"}).uncacheable, "save_temps");
  EXPECT_EQ(parse({"g++", "--coverage", "-c", "a.cpp"}).uncacheable, "profile_or_coverage");
  EXPECT_EQ(parse({"g++", "-fprofile-generate", "-c", "a.cpp"}).uncacheable, "profile_or_coverage");
  EXPECT_EQ(parse({"g++", "-c", "a.cpp", "-o"}).uncacheable, "missing_argument");
  EXPECT_EQ(parse({"g++", "-c"}).uncacheable, "no_source");
  EXPECT_EQ(parse({"g++"}).uncacheable, "linking");
  EXPECT_EQ(parse({"g++", "-Xclang", "-foo", "-c", "a.cpp"}).uncacheable, "opaque_flag");
  EXPECT_EQ(parse({"g++", "-c", "a.cpp", "-o", "-"}).uncacheable, "output_to_stdout");
  EXPECT_EQ(parse({"g++", "-c", "", "a.cpp"}).uncacheable, "garbage_argument");
}

TEST(CompileCommand, DebugAndPrefixMaps) {
  CompileCommand c = parse({"g++", "-g", "-fdebug-prefix-map=/home/me/src=.", "-c", "a.cpp"});
  EXPECT_TRUE(c.debug_info);
  EXPECT_TRUE(cwd_is_mapped(c, "/home/me/src"));
  EXPECT_TRUE(cwd_is_mapped(c, "/home/me/src/build"));
  EXPECT_FALSE(cwd_is_mapped(c, "/home/me/srcx"));
  EXPECT_FALSE(cwd_is_mapped(c, "/home/other"));
  c = parse({"g++", "-g", "-g0", "-c", "a.cpp"});
  EXPECT_FALSE(c.debug_info);
  c = parse({"g++", "-gsplit-dwarf", "-g", "-c", "a.cpp", "-o", "o/a.cpp.o"});
  EXPECT_TRUE(c.split_dwarf);
  EXPECT_EQ(c.dwo_output, "o/a.cpp.dwo");
}

TEST(CompileCommand, ForcedIncludesAndSearchArgs) {
  CompileCommand c = parse({"g++", "-include", "pre.h", "-imacrosm.h", "-isystem", "sys", "-DX=1",
                            "-Wall", "-std=c++20", "-iquote", "q", "-c", "a.cpp"});
  EXPECT_EQ(c.forced_includes, (std::vector<std::string>{"pre.h", "m.h"}));
  EXPECT_EQ(c.search_args, (std::vector<std::string>{"-isystem", "sys", "-iquote", "q"}));
}

TEST(CompileCommand, PrefixMapsDoNotChangeTheSearchQuestion) {
  // Two checkouts of one project differ in their prefix maps only: they ask
  // the compiler one search-list question (the bare one, already answered
  // with the compiler's identity).
  CompileCommand c = parse({"g++", "-ffile-prefix-map=/src/a=.", "-fdebug-prefix-map=/b=build",
                            "-fmacro-prefix-map=/src/a=.", "-c", "a.cpp"});
  EXPECT_EQ(c.uncacheable, "");
  EXPECT_TRUE(c.search_args.empty());
}

TEST(ResponseFile, SplitsLikeGcc) {
  EXPECT_EQ(split_response_text("-c  a.cpp\n-DX=\"a b\" 'c d' e\\ f"),
            (std::vector<std::string>{"-c", "a.cpp", "-DX=a b", "c d", "e f"}));
  EXPECT_EQ(split_response_text(""), std::vector<std::string>{});
  EXPECT_EQ(split_response_text("''"), std::vector<std::string>{""});
}

TEST(ResponseFile, ExpandsNestedFiles) {
  testing::TestDir dir;
  dir.write("inner.rsp", "-DINNER -c");
  dir.write("outer.rsp", "-O2 @" + dir.at("inner.rsp") + " a.cpp");
  CompileCommand c = parse({"g++", "@" + dir.at("outer.rsp"), "-o", "a.o"});
  EXPECT_EQ(c.uncacheable, "");
  EXPECT_EQ(c.args, (std::vector<std::string>{"-O2", "-DINNER", "-c", "a.cpp", "-o", "a.o"}));
  c = parse({"g++", "@" + dir.at("missing.rsp")});
  EXPECT_EQ(c.uncacheable, "bad_response_file");
  dir.write("loop.rsp", "@" + dir.at("loop.rsp"));
  c = parse({"g++", "@" + dir.at("loop.rsp")});
  EXPECT_EQ(c.uncacheable, "bad_response_file");
}

}  // namespace
}  // namespace lexpack::compiler
