// No false hits: each change that alters what a fresh compile produces must
// make the next compile a miss, and the object must then match a fresh one.
#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/support/launcher_fixture.h"

namespace lexpack::testing {
namespace {

TEST_F(NoFalseHit, HeaderDeepInClosureEdited) {
  dir_.write("inc/a.h", "#include \"b.h\"\n");
  dir_.write("inc/b.h", "#include \"c.h\"\n");
  dir_.write("inc/c.h", "#define VALUE 1\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return VALUE; }\n");
  expect_miss("g++ -Iinc -c m.cpp");
  expect_hit("g++ -Iinc -c m.cpp");
  dir_.write("inc/c.h", "#define VALUE 2\n");  // same size
  expect_miss("g++ -Iinc -c m.cpp");
  expect_hit("g++ -Iinc -c m.cpp");
}

TEST_F(NoFalseHit, HeaderAddedEarlierInSearchPath) {
  dir_.write("first/.keep", "");
  dir_.write("second/s.h", "#define S 1\n");
  dir_.write("m.cpp", "#include <s.h>\nint v() { return S; }\n");
  expect_miss("g++ -Ifirst -Isecond -c m.cpp");
  expect_hit("g++ -Ifirst -Isecond -c m.cpp");
  dir_.write("first/s.h", "#define S 2\n");
  expect_miss("g++ -Ifirst -Isecond -c m.cpp");
}

// The failed candidate first/sub/s.h lies in a directory that does not exist
// yet: creating the directory with the header must still make a miss.
TEST_F(NoFalseHit, HeaderAddedInANewDirectoryEarlierInSearchPath) {
  dir_.write("first/.keep", "");
  dir_.write("second/sub/s.h", "#define S 1\n");
  dir_.write("m.cpp", "#include <sub/s.h>\nint v() { return S; }\n");
  expect_miss("g++ -Ifirst -Isecond -c m.cpp");
  expect_hit("g++ -Ifirst -Isecond -c m.cpp");
  dir_.write("first/sub/s.h", "#define S 2\n");
  expect_miss("g++ -Ifirst -Isecond -c m.cpp");
  expect_hit("g++ -Ifirst -Isecond -c m.cpp");
}

TEST_F(NoFalseHit, QuotedHeaderAddedBesideSource) {
  dir_.write("inc/q.h", "#define Q 1\n");
  dir_.write("src/m.cpp", "#include \"q.h\"\nint v() { return Q; }\n");
  expect_miss("clang++-14 -Iinc -c src/m.cpp");
  expect_hit("clang++-14 -Iinc -c src/m.cpp");
  dir_.write("src/q.h", "#define Q 2\n");
  expect_miss("clang++-14 -Iinc -c src/m.cpp");
}

TEST_F(NoFalseHit, FileAFailedHasIncludeLookedFor) {
  dir_.write("inc/.keep", "");
  dir_.write("m.cpp",
             "#if __has_include(<opt.h>)\n#define OPT 1\n#else\n#define OPT 0\n#endif\n"
             "int v() { return OPT; }\n");
  expect_miss("g++ -Iinc -c m.cpp");
  expect_hit("g++ -Iinc -c m.cpp");
  dir_.write("inc/opt.h", "");
  expect_miss("g++ -Iinc -c m.cpp");
}

// clang lists in its depfile a header it was only asked __has_include about:
// that is no scanner disagreement, yet an edit of it still makes a miss.
TEST_F(NoFalseHit, HeaderOnlyAskedAboutByHasInclude) {
  dir_.write("inc/opt.h", "#define UNUSED 1\n");
  dir_.write("m.cpp", "#if __has_include(\"opt.h\")\nint x = 1;\n#endif\nint v() { return 2; }\n");
  expect_miss("clang++-14 -Iinc -MD -MF m.d -c m.cpp");
  EXPECT_EQ(dir_.read("log.txt").find("scanner disagreement"), std::string::npos)
      << dir_.read("log.txt");
  expect_hit("clang++-14 -Iinc -MD -MF m.d -c m.cpp");
  dir_.write("inc/opt.h", "#define UNUSED 2\n");
  expect_miss("clang++-14 -Iinc -MD -MF m.d -c m.cpp");
}

TEST_F(NoFalseHit, IncludeNextChain) {
  dir_.write("a/n.h", "#include_next <n.h>\n#define A 1\n");
  dir_.write("b/n.h", "#define B 1\n");
  dir_.write("c/.keep", "");
  dir_.write("m.cpp", "#include <n.h>\nint v() { return A + B; }\n");
  expect_miss("g++ -Ia -Ic -Ib -c m.cpp");
  expect_hit("g++ -Ia -Ic -Ib -c m.cpp");
  dir_.write("c/n.h", "#define B 5\n");  // now found by the include_next first
  expect_miss("g++ -Ia -Ic -Ib -c m.cpp");
}

TEST_F(NoFalseHit, ArgumentsAndCompilerChange) {
  dir_.write("m.cpp",
             "int v() {\n#ifdef X\n return X;\n#else\n return __cplusplus > 201703L;\n#endif\n}\n");
  expect_miss("g++ -std=c++17 -c m.cpp");
  expect_hit("g++ -std=c++17 -c m.cpp");
  expect_miss("g++ -std=c++20 -c m.cpp");
  expect_miss("g++ -std=c++20 -DX=3 -c m.cpp");
  expect_miss("g++ -std=c++20 -DX=4 -c m.cpp");
  expect_miss("g++ -std=c++20 -DX=4 -O2 -c m.cpp");
  expect_miss("clang++-14 -std=c++20 -DX=4 -O2 -c m.cpp");
  expect_hit("g++ -std=c++20 -DX=4 -O2 -c m.cpp");
}

// gcc runs `as` (found through PATH) to make the object; binutils is
// updated apart from the compiler, and PATH may name another assembler. An
// assembler that adds a symbol stands for one that writes other bytes.
TEST_F(NoFalseHit, AssemblerUpdatedOrAnotherFoundInPath) {
  auto write_as = [&](const std::string& path, const std::string& extra) {
    dir_.write(path, "#!/bin/sh\nexec /usr/bin/as " + extra + " \"$@\"\n");
    ASSERT_EQ(sh("chmod +x " + path).exit_code, 0);
  };
  write_as("bin/as", "");
  dir_.write("m.cpp", "int v() { return 1; }\n");
  sleep(2);  // settled signatures: the compiler's identity is remembered
  const std::string command = "g++ -c m.cpp";
  const std::string env = "PATH=\"$PWD/bin:$PATH\"";
  expect_miss(command, env);
  expect_hit(command, env);
  write_as("bin/as", "--defsym lexpack_assembler_2=1");
  expect_miss(command, env);
  expect_hit(command, env);
  write_as("other/as", "--defsym lexpack_assembler_3=1");
  const std::string other = "PATH=\"$PWD/other:$PWD/bin:$PATH\"";
  expect_miss(command, other);
  expect_hit(command, other);
  expect_hit(command, env);
}

TEST_F(NoFalseHit, ForcedIncludeChange) {
  dir_.write("pre.h", "#define P 1\n");
  dir_.write("pre2.h", "#define P 2\n");
  dir_.write("m.cpp", "int v() { return P; }\n");
  expect_miss("g++ -include pre.h -c m.cpp");
  expect_hit("g++ -include pre.h -c m.cpp");
  dir_.write("pre.h", "#define P 3\n");
  expect_miss("g++ -include pre.h -c m.cpp");
  expect_miss("g++ -include pre2.h -c m.cpp");
}

TEST_F(NoFalseHit, FileReachedOnlyThroughComputedInclude) {
  dir_.write("inc/comp.h", "#define C 1\n");
  dir_.write("early/.keep", "");
  dir_.write("m.cpp", "#define HDR <comp.h>\n#include HDR\nint v() { return C; }\n");
  expect_miss("g++ -Iearly -Iinc -c m.cpp");
  expect_hit("g++ -Iearly -Iinc -c m.cpp");
  dir_.write("inc/comp.h", "#define C 2\n");
  expect_miss("g++ -Iearly -Iinc -c m.cpp");
  expect_hit("g++ -Iearly -Iinc -c m.cpp");
  dir_.write("early/comp.h", "#define C 3\n");
  expect_miss("g++ -Iearly -Iinc -c m.cpp");
}

// The computed include's candidate early/sub/comp.h lies in a directory
// that does not exist (held by early's signature): making it must miss.
TEST_F(NoFalseHit, ComputedIncludeFoundInANewDirectoryEarlierInSearchPath) {
  dir_.write("inc/sub/comp.h", "#define C 1\n");
  dir_.write("early/.keep", "");
  dir_.write("m.cpp", "#define HDR <sub/comp.h>\n#include HDR\nint v() { return C; }\n");
  sleep(2);
  expect_miss("g++ -Iearly -Iinc -c m.cpp");
  expect_hit("g++ -Iearly -Iinc -c m.cpp");
  dir_.write("early/unrelated.h", "");
  expect_hit("g++ -Iearly -Iinc -c m.cpp");
  dir_.write("early/sub/comp.h", "#define C 3\n");
  expect_miss("g++ -Iearly -Iinc -c m.cpp");
}

// first/sub is a dangling symlink: its target can be made without touching
// first, so first's signature cannot vouch for first/sub/s.h.
TEST_F(NoFalseHit, HeaderAppearsBehindADanglingSymlinkEarlierInSearchPath) {
  dir_.write("first/.keep", "");
  dir_.write("target/.keep", "");
  dir_.write("second/sub/s.h", "#define S 1\n");
  ASSERT_EQ(sh("ln -s ../target/sub first/sub").exit_code, 0);
  dir_.write("m.cpp", "#include <sub/s.h>\nint v() { return S; }\n");
  sleep(2);
  for (const char* compiler : {"g++", "clang++-14"}) {
    SCOPED_TRACE(compiler);
    ASSERT_EQ(sh("rm -rf target/sub").exit_code, 0);
    sleep(2);
    const std::string command = std::string(compiler) + " -Ifirst -Isecond -c m.cpp";
    compile_and_compare(command);
    expect_hit(command);
    dir_.write("target/sub/s.h", "#define S 2\n");
    expect_miss(command);
  }
}

// A fresh configure rewrites generated headers with the same bytes: hits go
// on (one re-hash of the header), and the next edit still misses.
TEST_F(NoFalseHit, RegeneratedHeaderWithTheSameBytesStillHits) {
  dir_.write("gen/config.h", "#define CONFIG 1\n");
  dir_.write("m.cpp", "#include \"config.h\"\nint v() { return CONFIG; }\n");
  sleep(2);
  expect_miss("g++ -Igen -c m.cpp");
  expect_hit("g++ -Igen -c m.cpp");
  ASSERT_EQ(sh("rm -rf gen").exit_code, 0);
  dir_.write("gen/config.h", "#define CONFIG 1\n");
  expect_hit("g++ -Igen -c m.cpp");
  sleep(2);
  expect_hit("g++ -Igen -c m.cpp");  // the memo took the new signatures
  base::ProcessResult why = lexpack("explain g++ -Igen -c m.cpp -o out.o");
  EXPECT_EQ(why.out.find("out of date"), std::string::npos) << why.out;
  dir_.write("gen/config.h", "#define CONFIG 2\n");
  expect_miss("g++ -Igen -c m.cpp");
}

// A header edited and put back (or a branch switched back and forth): the
// closure memo before the latest one still holds, and the hit uses it instead
// of computing the closure again. A third content still misses.
TEST_F(NoFalseHit, HeaderPutBackUsesThePreviousClosure) {
  const std::string command = "g++ -Iinc -c m.cpp";
  dir_.write("inc/a.h", "#define A 1\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return A; }\n");
  sleep(2);  // settled signatures: memos are written
  expect_miss(command);
  dir_.write("inc/a.h", "#define A 2\n");
  sleep(2);
  expect_miss(command);
  const std::string previous_holds = "the previous one holds";
  for (const char* content : {"#define A 1\n", "#define A 2\n", "#define A 1\n"}) {
    dir_.write("inc/a.h", content);
    dir_.write("log.txt", "");
    expect_hit(command);
    EXPECT_NE(dir_.read("log.txt").find(previous_holds), std::string::npos) << dir_.read("log.txt");
    base::ProcessResult why = lexpack("explain " + command + " -o out.o");
    EXPECT_NE(why.out.find("would hit"), std::string::npos) << why.out;
  }
  dir_.write("inc/a.h", "#define A 3\n");
  expect_miss(command);
}

TEST_F(NoFalseHit, TimeMacroIsNeverCached) {
  dir_.write("t.cpp", "const char* t() { return __TIME__; }\n");
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(lexpack("g++ -c t.cpp -o t.o").exit_code, 0);
    EXPECT_NE(last_decision().find("__TIME__"), std::string::npos) << last_decision();
  }
}

TEST_F(NoFalseHit, DateMacroIsCachedForTheDay) {
  dir_.write("d.cpp", "const char* d() { return __DATE__; }\n");
  expect_miss("g++ -c d.cpp");
  expect_hit("g++ -c d.cpp");
}

TEST_F(NoFalseHit, SettledFilesUseTheClosureMemo) {
  dir_.write("inc/a.h", "#define A 1\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return A; }\n");
  sleep(2);  // let signatures settle so the memo and file table are written
  expect_miss("g++ -Iinc -c m.cpp");
  expect_hit("g++ -Iinc -c m.cpp");
  base::ProcessResult why = lexpack("explain g++ -Iinc -c m.cpp -o out.o");
  EXPECT_NE(why.out.find("would hit"), std::string::npos) << why.out;
  dir_.write("inc/a.h", "#define A 2\n");
  why = lexpack("explain g++ -Iinc -c m.cpp -o out.o");
  EXPECT_NE(why.out.find("changed: inc/a.h"), std::string::npos) << why.out;
  EXPECT_NE(why.out.find("would miss"), std::string::npos) << why.out;
  expect_miss("g++ -Iinc -c m.cpp");
  why = lexpack("explain g++ -Iinc -DNEW -c m.cpp -o out.o");
  EXPECT_NE(why.out.find("+[-DNEW]"), std::string::npos) << why.out;
}

// -I b names the same directory as -I a (a symlink), so the compiler drops
// it. Once b is a directory of its own, its header comes before c's: no memo
// of the old search list or closure may make that a hit. The same when b
// comes from CPATH or an option lexpack does not read dirs from (clang names
// the dir it kept, a).
TEST_F(NoFalseHit, DroppedDuplicateSearchDirBecomesItsOwnDirectory) {
  struct Case {
    std::string command;
    std::string env;
  };
  const Case cases[] = {
      {"g++ -Ia -Ib -Ic -c m.cpp", ""},
      {"clang++-14 -Ia -Ib -Ic -c m.cpp", ""},
      {"g++ -Ia -idirafter c -c m.cpp", "CPATH=b"},
      {"clang++-14 -Ia -idirafter c -c m.cpp", "CPATH=b"},
      {"clang++-14 -Ia -stdlib++-isystemb -idirafter c -c m.cpp", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.env + " " + c.command);
    ASSERT_EQ(sh("rm -rf a b c cache && mkdir a c && ln -s a b").exit_code, 0);
    dir_.write("c/x.h", "#define X 1\n");
    dir_.write("m.cpp", "#include <x.h>\nint v() { return X; }\n");
    sleep(2);  // settled signatures: memos are written
    expect_miss(c.command, c.env);
    expect_hit(c.command, c.env);
    ASSERT_EQ(sh("rm b && mkdir b").exit_code, 0);
    dir_.write("b/x.h", "#define X 2\n");
    expect_miss(c.command, c.env);
    expect_hit(c.command, c.env);
  }
}

// A dir passed twice, once through "..": gcc drops the second as the same
// directory. The list and the closure are memoized with the pair, so a hit
// takes the memo (no search list asked, no walk); once "other" is a symlink
// elsewhere, other/../a is a directory of its own whose header comes before
// c's, and the memo must not answer.
TEST_F(NoFalseHit, DroppedSearchDirSpelledThroughDotDotBecomesItsOwnDirectory) {
  ASSERT_EQ(sh("mkdir -p a c other alt/sub alt/a").exit_code, 0);
  dir_.write("c/x.h", "#define X 1\n");
  dir_.write("alt/a/x.h", "#define X 2\n");
  dir_.write("m.cpp", "#include <x.h>\nint v() { return X; }\n");
  sleep(2);  // settled signatures: memos are written
  const std::string command = "g++ -Ia -Iother/../a -Ic -c m.cpp";
  expect_miss(command);
  expect_hit(command);
  base::ProcessResult why = lexpack("explain " + command + " -o out.o");
  EXPECT_EQ(why.out.find("no closure memo"), std::string::npos) << why.out;
  EXPECT_NE(why.out.find("would hit"), std::string::npos) << why.out;
  ASSERT_EQ(sh("rm -r other && ln -s alt/sub other").exit_code, 0);
  why = lexpack("explain " + command + " -o out.o");
  EXPECT_NE(why.out.find("search directory no longer the same as a: other/../a"), std::string::npos)
      << why.out;
  expect_miss(command);
  expect_hit(command);
}

// __has_include reached through a macro (an alias, an alias of an alias,
// pasted from pieces, or defined on the command line): the TU is cached once
// its conditionals are evaluated, and a header appearing later must change
// the object, so the compile after it must never hit.
TEST_F(NoFalseHit, HasIncludeThroughAMacro) {
  struct Case {
    std::string name;
    std::string source;
    std::string flags;
  };
  const std::string tail = "int x = 1;\n#else\nint x = 2;\n#endif\nint v() { return x; }\n";
  const Case cases[] = {
      {"alias", "#define HASINC __has_include\n#if HASINC(<gen.h>)\n" + tail, ""},
      {"quoted", "#define HASINC __has_include\n#if HASINC(\"gen.h\")\n" + tail, ""},
      {"alias_of_alias",
       "#define HAS1 __has_include\n#define HAS2 HAS1\n#if HAS2(<gen.h>)\n" + tail, ""},
      {"pasted", "#define CAT(a, b) a##b\n#if CAT(__has_, include)(<gen.h>)\n" + tail, ""},
      {"command_line", "#if HASINC(<gen.h>)\n" + tail, "-DHASINC=__has_include"},
      {"wrapper",
       "#include <vector>\n#ifdef __has_include\n#define X_HAS_INCLUDE(x) __has_include(x)\n"
       "#else\n#define X_HAS_INCLUDE(x) 0\n#endif\n#if X_HAS_INCLUDE(<gen.h>)\n" +
           tail,
       ""},
  };
  for (const Case& c : cases) dir_.write(c.name + ".cpp", c.source);
  for (const char* compiler : {"g++", "clang++-14"}) {
    for (const Case& c : cases) dir_.write(std::string(compiler) + "_" + c.name + "/.keep", "");
  }
  sleep(2);  // settled signatures: memos are written
  for (const char* compiler : {"g++", "clang++-14"}) {
    for (const Case& c : cases) {
      const std::string inc = std::string(compiler) + "_" + c.name;
      const std::string command =
          std::string(compiler) + " -O2 -I" + inc + " " + c.flags + " -c " + c.name + ".cpp";
      SCOPED_TRACE(command);
      expect_miss(command);
      expect_hit(command);  // the conditionals were evaluated: cacheable
      dir_.write(inc + "/gen.h", "");
      base::ProcessResult why = lexpack("explain " + command + " -o out.o");
      EXPECT_EQ(why.out.find("would hit"), std::string::npos) << why.out;
      compile_and_compare(command);
      EXPECT_FALSE(last_was_hit()) << last_decision();
    }
  }
}

}  // namespace
// With -g the compiler records the working directory as $PWD names it (a path
// through a symlink stays the shell's): the same compile reached through the
// symlink and through the real path gives two objects, so two keys.
TEST_F(NoFalseHit, DebugInfoRecordsTheWorkingDirectoryAsTheShellNamesIt) {
  dir_.write("real/a.cpp", "int f() { return 1; }\n");
  ASSERT_EQ(sh("ln -s real link").exit_code, 0);
  sleep(2);
  for (const char* compiler : {"g++", "clang++-14"}) {
    SCOPED_TRACE(compiler);
    const std::string command = std::string(compiler) + " -g -c a.cpp";
    auto compile = [&](const char* via, const char* object, bool through_lexpack) {
      std::string prefix = through_lexpack ? std::string(LEXPACK_BIN) + " " : "";
      base::ProcessResult r =
          sh(std::string("cd ") + via + " && " + prefix + command + " -o ../" + object);
      ASSERT_EQ(r.exit_code, 0) << r.err;
    };
    compile("link", "ref-link.o", false);
    compile("real", "ref-real.o", false);
    // Otherwise the test shows nothing: the objects must name their directory.
    ASSERT_NE(dir_.read("ref-link.o"), dir_.read("ref-real.o"));
    compile("link", "out.o", true);
    EXPECT_TRUE(last_was_miss()) << last_decision();
    EXPECT_TRUE(dir_.read("out.o") == dir_.read("ref-link.o"));
    compile("real", "out.o", true);
    EXPECT_TRUE(last_was_miss()) << last_decision();
    EXPECT_TRUE(dir_.read("out.o") == dir_.read("ref-real.o"));
    compile("link", "out.o", true);
    EXPECT_TRUE(last_was_hit()) << last_decision();
    EXPECT_TRUE(dir_.read("out.o") == dir_.read("ref-link.o"));
  }
}

// Assembly through the preprocessor (.S) is keyed like C: its headers are
// in the key, and editing one misses.
TEST_F(NoFalseHit, AssemblyHeaderEdited) {
  dir_.write("inc/defs.h", "#define VALUE 41\n");
  dir_.write("f.S",
             "#include <defs.h>\n"
             "# a comment in gas's own syntax, isn't it\n"
             ".text\n.globl f\nf:\n  mov $VALUE, %eax\n  ret\n");
  for (const char* compiler : {"gcc", "clang-14"}) {
    SCOPED_TRACE(compiler);
    const std::string command = std::string(compiler) + " -g -Iinc -Wa,--noexecstack -c f.S";
    dir_.write("inc/defs.h", "#define VALUE 41\n");
    compile_and_compare(command);
    expect_hit(command);
    dir_.write("inc/defs.h", "#define VALUE 42\n");  // same size
    expect_miss(command);
    expect_hit(command);
  }
}

// gas's .include and .incbin read files the preprocessor never sees (the
// compiler's depfile does not name them either): such assembly is never
// cached, wherever the directive is written.
TEST_F(NoFalseHit, AssemblerIncludeIsNeverCached) {
  dir_.write("data.bin", "AB");
  dir_.write("x.inc", ".byte 1\n");
  dir_.write("incbin.h", "#define DATA .INCBIN \"data.bin\"\n");
  dir_.write("a.S", ".data\n.include \"x.inc\"\n");
  dir_.write("b.S", "#include \"incbin.h\"\n.data\nDATA\n");
  for (const char* source : {"a.S", "b.S"}) {
    SCOPED_TRACE(source);
    const std::string command = std::string("gcc -c ") + source;
    for (const char* bytes : {"1", "2"}) {
      dir_.write("x.inc", std::string(".byte ") + bytes + "\n");
      dir_.write("data.bin", std::string("A") + bytes);
      compile_and_compare(command);
      EXPECT_NE(last_decision().find(".include or .incbin"), std::string::npos) << last_decision();
    }
  }
  base::ProcessResult stats = lexpack("stats");
  EXPECT_NE(stats.out.find("uncacheable_assembler_include"), std::string::npos) << stats.out;
}

// A compile with -flto is a compile: cached like any other (its object holds
// the compiler's IR; the compiler's identity is in the key). CMake writes the
// -flto flags before -c. clang's LTO objects are the same bytes each time,
// gcc's with -frandom-seed (without it gcc names sections at random: each
// compile's object differs, and a hit serves the one stored).
TEST_F(NoFalseHit, LtoCompilesAreCachedLikeAnyOther) {
  dir_.write("inc/a.h", "#define VALUE 1\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return VALUE; }\n");
  for (const std::string compile :
       {"clang++-14 -O2 -flto -Iinc -c m.cpp",
        "g++ -O2 -flto=auto -fno-fat-lto-objects -frandom-seed=m.o -Iinc -c m.cpp"}) {
    SCOPED_TRACE(compile);
    expect_miss(compile);
    expect_hit(compile);
    dir_.write("inc/a.h", "#define VALUE 2\n");
    expect_miss(compile);
    expect_hit(compile);
    dir_.write("inc/a.h", "#define VALUE 1\n");
  }
  base::ProcessResult r = lexpack("g++ -O2 -flto -Iinc -c m.cpp -o unseeded.o");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = lexpack("g++ -O2 -flto -Iinc -c m.cpp -o unseeded.o");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(last_was_hit()) << last_decision();
}

}  // namespace lexpack::testing
