// End to end, g++ and clang++: an edit of a source's code outside its
// directives, or of #define and #undef lines of macros the TU's evaluation
// never read, takes the closure kept with its memo again (nothing walked or
// evaluated); any edit that may change what the walk or the evaluation
// makes of the TU evaluates it again. Each object is compared with a plain
// compile's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "tests/support/launcher_fixture.h"

namespace lexpack::testing {
namespace {

constexpr char kTaken[] = "closure taken again";
constexpr char kEvaluated[] = "closure evaluated again";

class SourceEdit : public LauncherTest, public ::testing::WithParamInterface<const char*> {
 protected:
  // Signatures younger than a second leave no memo: wait them out.
  static void settle() { ::usleep(1100 * 1000); }
  std::string args() const { return std::string(GetParam()) + " -Iinc -c m.cpp"; }
  // Compiles through lexpack (server off) and plainly; the objects must be
  // equal. The decision log of this compile alone is returned.
  std::string compile() {
    dir_.write("log.txt", "");
    EXPECT_EQ(sh(args() + " -o ref.o").exit_code, 0);
    base::ProcessResult r = lexpack(args() + " -o out.o", "LEXPACK_SERVER=0");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(dir_.read("out.o") == dir_.read("ref.o")) << "a stale object: " << last_decision();
    return dir_.read("log.txt");
  }
  static bool says(const std::string& log, const char* what) {
    return log.find(what) != std::string::npos;
  }
};

TEST_P(SourceEdit, CodeEditTakesTheClosureAgain) {
  dir_.write("inc/a.h", "#define V 1\n");
  dir_.write("m.cpp", "#include \"a.h\"\n#include <vector>\nint v() { return V; }\n");
  settle();
  compile();
  dir_.write("m.cpp", "#include \"a.h\"\n#include <vector>\nint v() { return V + 1; }\n");
  std::string log = compile();
  EXPECT_TRUE(says(log, kTaken)) << log;
  EXPECT_TRUE(last_was_miss()) << log;
  settle();
  log = compile();
  EXPECT_TRUE(last_was_hit()) << log;
  // The closure taken again is the one the next change is checked against.
  dir_.write("inc/a.h", "#define V 2\n");
  log = compile();
  EXPECT_TRUE(last_was_miss()) << log;
  EXPECT_FALSE(says(log, kTaken)) << log;
}

TEST_P(SourceEdit, SourceAndHeaderEditedTogether) {
  dir_.write("inc/a.h", "#define V 1\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return V; }\n");
  settle();
  compile();
  settle();
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return V * 3; }\n");
  dir_.write("inc/a.h", "#define V 5\n");
  std::string log = compile();
  EXPECT_TRUE(says(log, kEvaluated)) << log;
  EXPECT_TRUE(last_was_miss()) << log;
}

TEST_P(SourceEdit, NewIncludeIsEvaluated) {
  dir_.write("inc/a.h", "#define V 1\n");
  dir_.write("inc/b.h", "#define W 4\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return V; }\n");
  settle();
  compile();
  dir_.write("m.cpp", "#include \"a.h\"\n#include \"b.h\"\nint v() { return V + W; }\n");
  std::string log = compile();
  EXPECT_TRUE(says(log, kEvaluated)) << log;
  settle();
  // b.h is in the closure now.
  dir_.write("inc/b.h", "#define W 9\n");
  log = compile();
  EXPECT_TRUE(last_was_miss()) << log;
}

// Without a macro-reached __has_include or a computed include nothing is
// evaluated: the walk follows every #include whatever the macros, so a
// define that steers a header changes the key (the source's content) and
// not the closure, which holds both branches' files.
TEST_P(SourceEdit, DefineThatSteersAHeaderKeepsTheWalksClosure) {
  dir_.write("inc/sel.h", "#if USE_B\n#include \"b.h\"\n#else\n#include \"c.h\"\n#endif\n");
  dir_.write("inc/b.h", "#define W 2\n");
  dir_.write("inc/c.h", "#define W 3\n");
  dir_.write("m.cpp", "#define USE_B 0\n#include \"sel.h\"\nint v() { return W; }\n");
  settle();
  compile();
  dir_.write("m.cpp", "#define USE_B 1\n#include \"sel.h\"\nint v() { return W; }\n");
  std::string log = compile();
  EXPECT_TRUE(says(log, kTaken)) << log;
  EXPECT_TRUE(last_was_miss()) << log;
  settle();
  for (const char* header : {"inc/b.h", "inc/c.h"}) {
    dir_.write(header, "#define W 7\n");
    log = compile();
    EXPECT_TRUE(last_was_miss()) << header << "\n" << log;
    settle();
  }
}

// A header whose __has_include is reached through a macro: the TU is
// evaluated, and the names that evaluation read decide which source edits
// may keep its closure.
constexpr char kProbingHeader[] =
    "#define HAS(x) __has_include(x)\n"
    "#if HAS(<absent.h>)\n#define ABSENT 1\n#else\n#define ABSENT 0\n#endif\n"
    "#ifdef WANT_Q\n#if HAS(<q.h>)\n#define GOT 1\n#endif\n#endif\n"
    "#ifndef GOT\n#define GOT 0\n#endif\n";

TEST_P(SourceEdit, DefineOfANameNoDirectiveReadsTakesTheClosureAgain) {
  dir_.write("inc/p.h", kProbingHeader);
  dir_.write("m.cpp", "#include \"p.h\"\nint v() { return ABSENT + GOT; }\n");
  settle();
  compile();
  dir_.write("m.cpp",
             "#define UNREAD_K 5\n#include \"p.h\"\nint v() { return ABSENT + GOT + UNREAD_K; }\n");
  std::string log = compile();
  EXPECT_TRUE(says(log, "changed only in macros its evaluation never read")) << log;
  EXPECT_TRUE(last_was_miss()) << log;
  settle();
  log = compile();
  EXPECT_TRUE(last_was_hit()) << log;
  // The closure taken again still holds the evaluation's probes.
  dir_.write("inc/absent.h", "");
  log = compile();
  EXPECT_TRUE(last_was_miss()) << log;
}

TEST_P(SourceEdit, DefineOfANameTheEvaluationReadIsEvaluated) {
  dir_.write("inc/p.h", kProbingHeader);
  dir_.write("m.cpp", "#include \"p.h\"\nint v() { return ABSENT + GOT; }\n");
  settle();
  compile();
  dir_.write("m.cpp", "#define WANT_Q 1\n#include \"p.h\"\nint v() { return ABSENT + GOT; }\n");
  std::string log = compile();
  EXPECT_TRUE(says(log, kEvaluated)) << log;
  settle();
  // q.h was asked for this time: its coming is a change.
  dir_.write("inc/q.h", "");
  log = compile();
  EXPECT_TRUE(last_was_miss()) << log;
}

TEST_P(SourceEdit, CommentThatSwallowsADirectiveIsEvaluated) {
  dir_.write("inc/a.h", "#define V 1\n");
  dir_.write("inc/b.h", "#undef V\n#define V 6\n");
  dir_.write("m.cpp",
             "#include \"a.h\"\nint x;\n#include \"b.h\"\nint y;\nint v() { return V; }\n");
  settle();
  compile();
  // Only code lines change; the directive between them is now a comment.
  dir_.write("m.cpp",
             "#include \"a.h\"\nint x; /*\n#include \"b.h\"\n*/ int y;\n"
             "int v() { return V; }\n");
  std::string log = compile();
  EXPECT_TRUE(says(log, kEvaluated)) << log;
}

TEST_P(SourceEdit, LineThatMovesADirectiveKeepsTheWalksClosure) {
  dir_.write("inc/b.h", "#define W 8\n");
  dir_.write("m.cpp",
             "int a;\n#if __LINE__ > 3\n#include \"b.h\"\n#else\n#define W 1\n#endif\n"
             "int v() { return W; }\n");
  settle();
  compile();
  dir_.write("m.cpp",
             "int a;\nint b;\nint c;\n#if __LINE__ > 3\n#include \"b.h\"\n#else\n"
             "#define W 1\n#endif\nint v() { return W; }\n");
  std::string log = compile();
  // Nothing read __LINE__ in an evaluation (none ran): the walk's closure
  // holds b.h either way.
  EXPECT_TRUE(says(log, kTaken)) << log;
  settle();
  dir_.write("inc/b.h", "#define W 9\n");
  log = compile();
  EXPECT_TRUE(last_was_miss()) << log;
}

TEST_P(SourceEdit, LineReadByTheEvaluationKeepsLinesInTheFingerprint) {
  dir_.write("inc/p.h", kProbingHeader);
  dir_.write("m.cpp",
             "#include \"p.h\"\n#if __LINE__ > 2\n#define L 1\n#else\n#define L 0\n#endif\n"
             "int v() { return L + GOT; }\n");
  settle();
  compile();
  dir_.write("m.cpp",
             "#define UNREAD_K 1\n#include \"p.h\"\n#if __LINE__ > 2\n#define L 1\n#else\n"
             "#define L 0\n#endif\nint v() { return L + GOT; }\n");
  std::string log = compile();
  EXPECT_TRUE(says(log, kEvaluated)) << log;
}

INSTANTIATE_TEST_SUITE_P(Compilers, SourceEdit, ::testing::Values("g++", "clang++-14"),
                         [](const ::testing::TestParamInfo<const char*>& p) {
                           return std::string(p.param) == "g++" ? "gcc" : "clang";
                         });

}  // namespace
}  // namespace lexpack::testing
