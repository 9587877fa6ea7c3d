// Computed includes (`#include MACRO`) expanded by evaluating the TU: the
// files they name are in the closure, so a hit checks them through the memo
// instead of one by one, and every change to what they name must still miss.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "tests/support/launcher_fixture.h"
#include "tests/support/server_ways.h"

namespace lexpack::testing {
namespace {

const char* const kCompilers[] = {"g++", "clang++-14"};

// How many files outside the closure the last hit checked, from its log line
// ("hit (123 us, 4 files outside the scan checked)"); -1 when not a hit.
int outside_files_of_last_hit(const std::string& decision) {
  if (decision.rfind("hit (", 0) != 0) return -1;
  size_t comma = decision.find(", ");
  size_t files = decision.find(" files outside the scan checked");
  if (comma == std::string::npos || files == std::string::npos || files < comma) return -1;
  return std::stoi(decision.substr(comma + 2, files - comma - 2));
}

// Changes the first digit of `file` (its size stays the same).
void edit_digit(TestDir& d, const std::string& file) {
  std::string text = d.read(file);
  size_t digit = text.find_first_of("0123456789");
  ASSERT_NE(digit, std::string::npos) << file;
  text[digit] = text[digit] == '1' ? '5' : '1';
  d.write(file, text);
}

// A selector header names the implementation through a macro, and the
// implementation reaches a nested header by a direct quoted include and
// another by a computed one.
void write_selected_project(TestDir& d, const std::string& inc) {
  d.write(inc + "/sel.h", "#define PICK <impl/a.h>\n");
  d.write(inc + "/impl/a.h",
          "#include \"nested.h\"\n#define DEEP <impl/deep.h>\n#include DEEP\n"
          "#define V (A_VALUE + DEEP_VALUE + 0)\n");
  d.write(inc + "/impl/nested.h", "#define A_VALUE 1\n");
  d.write(inc + "/impl/deep.h", "#define DEEP_VALUE 10\n");
  d.write(inc + "/impl/b.h", "#define V 2\n");
  d.write("m.cpp", "#include <sel.h>\n#include PICK\nint v() { return V; }\n");
}

TEST_F(NoFalseHit, ComputedIncludesAreInTheClosure) {
  write_selected_project(dir_, "inc");
  sleep(2);  // settled signatures: the closure memo is written
  for (const char* compiler : kCompilers) {
    const std::string command = std::string(compiler) + " -Iinc -c m.cpp";
    SCOPED_TRACE(command);
    expect_miss(command);
    expect_hit(command);
    EXPECT_EQ(outside_files_of_last_hit(last_decision()), 0) << last_decision();
    base::ProcessResult why = lexpack("explain " + command + " -o out.o");
    EXPECT_NE(why.out.find("cached entry: 0 files outside the scan checked\nwould hit\n"),
              std::string::npos)
        << why.out;
    EXPECT_EQ(why.out.find("out of date"), std::string::npos) << why.out;
  }
}

TEST_F(NoFalseHit, ComputedIncludeWhoseMacroNamesAnotherFile) {
  write_selected_project(dir_, "inc");
  for (const char* compiler : kCompilers) {
    const std::string command = std::string(compiler) + " -Iinc -c m.cpp";
    SCOPED_TRACE(command);
    dir_.write("inc/sel.h", "#define PICK <impl/a.h>\n");
    compile_and_compare(command);
    expect_hit(command);
    dir_.write("inc/sel.h", "#define PICK <impl/b.h>\n");  // same size
    expect_miss(command);
    expect_hit(command);
    EXPECT_EQ(outside_files_of_last_hit(last_decision()), 0) << last_decision();
  }
}

TEST_F(NoFalseHit, ComputedIncludeShadowedEarlierInTheSearchPath) {
  write_selected_project(dir_, "inc");
  dir_.write("first/.keep", "");
  for (const char* compiler : kCompilers) {
    const std::string command = std::string(compiler) + " -Ifirst -Iinc -c m.cpp";
    SCOPED_TRACE(command);
    ASSERT_EQ(sh("rm -rf first/impl").exit_code, 0);
    compile_and_compare(command);
    expect_hit(command);
    // In a directory that did not exist (held by first's signature).
    dir_.write("first/impl/a.h", "#define V 3\n");
    expect_miss(command);
    expect_hit(command);
    // The computed include inside a.h, shadowed in turn.
    ASSERT_EQ(sh("rm first/impl/a.h").exit_code, 0);
    compile_and_compare(command);
    expect_hit(command);
    dir_.write("first/impl/deep.h", "#define DEEP_VALUE 30\n");
    expect_miss(command);
  }
}

// A quoted computed include is searched beside its includer first.
TEST_F(NoFalseHit, QuotedComputedIncludeShadowedBesideItsIncluder) {
  dir_.write("inc/lib.h", "#define Q \"q.h\"\n#include Q\n");
  dir_.write("inc2/q.h", "#define QV 1\n");
  dir_.write("m.cpp", "#include <lib.h>\nint v() { return QV; }\n");
  for (const char* compiler : kCompilers) {
    const std::string command = std::string(compiler) + " -Iinc -Iinc2 -c m.cpp";
    SCOPED_TRACE(command);
    ASSERT_EQ(sh("rm -f inc/q.h").exit_code, 0);
    compile_and_compare(command);
    expect_hit(command);
    EXPECT_EQ(outside_files_of_last_hit(last_decision()), 0) << last_decision();
    dir_.write("inc/q.h", "#define QV 2\n");
    expect_miss(command);
  }
}

TEST_F(NoFalseHit, FileReachedThroughAComputedIncludeEdited) {
  write_selected_project(dir_, "inc");
  sleep(2);  // settled signatures: the first edit is found by the closure memo
  for (const char* compiler : kCompilers) {
    const std::string command = std::string(compiler) + " -Iinc -c m.cpp";
    SCOPED_TRACE(command);
    compile_and_compare(command);
    expect_hit(command);
    // Named by the computed include; reached from it by a direct include;
    // named by a computed include inside it. Each edit keeps the size.
    for (const char* file : {"inc/impl/a.h", "inc/impl/nested.h", "inc/impl/deep.h"}) {
      SCOPED_TRACE(file);
      edit_digit(dir_, file);
      expect_miss(command);
      expect_hit(command);
    }
  }
}

// -MMD leaves system headers out of the depfile: a computed include of one
// is cached only because the evaluation put it in the closure.
TEST_F(NoFalseHit, ComputedIncludeOfASystemHeaderWithMmd) {
  write_selected_project(dir_, "sys");
  for (const char* compiler : kCompilers) {
    const std::string command = std::string(compiler) + " -isystem sys -MMD -MF m.d -c m.cpp";
    SCOPED_TRACE(command);
    compile_and_compare(command);
    expect_hit(command);
    edit_digit(dir_, "sys/impl/deep.h");
    expect_miss(command);
  }
}

// An evaluation that is not exact (here: a builtin question whose argument
// is a macro, which the compilers expand differently) keeps the files of
// computed includes out of the closure: the hit checks them one by one.
TEST_F(NoFalseHit, InexactEvaluationChecksComputedIncludesOneByOne) {
  dir_.write("inc/comp.h", "#define C 1\n");
  dir_.write("m.cpp",
             "#define X __builtin_expect\n#if __has_builtin(X)\n#define B 1\n#else\n#define B 2\n"
             "#endif\n#define HDR <comp.h>\n#include HDR\nint v() { return B + C; }\n");
  const std::string command = "g++ -Iinc -c m.cpp";
  expect_miss(command);
  expect_hit(command);
  EXPECT_EQ(outside_files_of_last_hit(last_decision()), 1) << last_decision();
  dir_.write("inc/comp.h", "#define C 2\n");
  expect_miss(command);
}

// Boost reaches hundreds of headers through computed includes (its
// preprocessed MPL headers): none is left to the payload.
TEST_F(NoFalseHit, BoostComputedIncludesAreInTheClosure) {
  if (access("/usr/include/boost/mpl/vector.hpp", R_OK) != 0) {
    GTEST_SKIP() << "libboost-dev is not installed";
  }
  dir_.write("m.cpp",
             "#include <boost/mpl/vector.hpp>\n#include <boost/mpl/size.hpp>\n"
             "int v() { return boost::mpl::size<boost::mpl::vector<int, char>>::value; }\n");
  const std::string command = "g++ -O2 -c m.cpp";
  expect_miss(command);
  expect_hit(command);
  EXPECT_EQ(outside_files_of_last_hit(last_decision()), 0) << last_decision();
}

// A TU evaluated exactly (it has a computed include) reads one branch of
// its #if: the file only the other branch names, and the search for it, are
// no input of the compile (the walk met them, the closure does not keep
// them). Editing that file, or making one where its search looks first,
// still hits; a file made where the taken branch's search looks first, or
// the condition flipped, misses, with the compiler's object each time. In
// the launcher and in the server.
TEST_F(NoFalseHit, AnUntakenBranchOfAnEvaluatedTuIsNoInput) {
  int n = 0;
  for (const char* compiler : kCompilers) {
    for (const char* env : {"LEXPACK_SERVER=0", kServerEnv}) {
      const std::string at = "p" + std::to_string(++n) + "/";
      dir_.write(at + "inc0/.keep", "");
      dir_.write(at + "inc/cfg.h", "#define USE_A 0\n");
      dir_.write(at + "inc/a.h", "#define V 1\n");
      dir_.write(at + "inc/b.h", "#define V 2\n");
      dir_.write(at + "m.cpp",
                 "#define CFG <cfg.h>\n#include CFG\n#if USE_A\n#include <a.h>\n#else\n"
                 "#include <b.h>\n#endif\nint v() { return V; }\n");
      const std::string command =
          std::string(compiler) + " -I" + at + "inc0 -I" + at + "inc -c " + at + "m.cpp";
      SCOPED_TRACE(command + " " + env);
      sleep(2);  // settled signatures: the closure memo is written
      expect_miss(command, env);
      expect_hit(command, env);
      dir_.write(at + "inc/a.h", "#define V 3\n");
      dir_.write(at + "inc0/a.h", "#define V 4\n");
      sleep(2);
      expect_hit(command, env);
      if (last_decision() != "hit (server)") {
        EXPECT_EQ(outside_files_of_last_hit(last_decision()), 0) << last_decision();
      }
      dir_.write(at + "inc0/b.h", "#define V 5\n");
      expect_miss(command, env);
      dir_.write(at + "inc/cfg.h", "#define USE_A 1\n");
      expect_miss(command, env);  // inc0/a.h's V
      sleep(2);
      expect_hit(command, env);
      dir_.write(at + "inc0/a.h", "#define V 6\n");
      expect_miss(command, env);
      lexpack("server --stop", env);
    }
  }
}

}  // namespace
}  // namespace lexpack::testing
