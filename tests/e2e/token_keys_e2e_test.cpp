// Token keys end to end, with gcc and clang, with and without -g: an edit
// to comments that end a line (or to trailing blanks) hits, its object
// byte-identical to a fresh compile of the edited tree; every edit a fresh
// compile can see (a moved line, a moved column, a token, a comment the
// compiler reads, a message) misses.
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "tests/support/launcher_fixture.h"

namespace lexpack::testing {
namespace {

struct Way {
  const char* compiler;
  const char* debug;
};

void PrintTo(const Way& way, std::ostream* os) {
  *os << way.compiler << " " << way.debug;
}

class TokenKeys : public NoFalseHit, public ::testing::WithParamInterface<Way> {
 protected:
  void SetUp() override {
    dir_.write("inc/common.h",
               "#pragma once\n"
               "/* Shared by every source. */\n"
               "#define SCALE 3 /* the scale */\n"
               "static inline int scaled(int x) { return x * SCALE; }  // scaled x\n"
               "static inline int line_here(void) { return __LINE__; }\n");
    dir_.write("a.c",
               "#include \"common.h\"\n"
               "#include <assert.h>\n"
               "int f(int y) {\n"
               "  assert(y > 0);  // positive\n"
               "  return scaled(y) + line_here();\n"
               "}\n");
  }
  std::string args(const std::string& extra = "") const {
    return std::string(GetParam().compiler) + " " + GetParam().debug + " -O1 -Iinc " + extra +
           " -c a.c";
  }
  // The first compile, through lexpack: a miss that stores.
  void first(const std::string& extra = "") {
    ASSERT_EQ(lexpack(args(extra) + " -o out.o").exit_code, 0);
    ASSERT_TRUE(last_was_miss()) << last_decision();
  }
  // Whether token keys apply to this way at all (clang's DWARF 5 debug info
  // holds each file's MD5: no).
  bool tokens_apply() const {
    const std::string debug = GetParam().debug;
    return debug.empty() || debug == "-gdwarf-4" || std::string(GetParam().compiler) == "gcc";
  }
  void append(const std::string& path, const std::string& text) {
    dir_.write(path, dir_.read(path) + text);
  }
  void replace(const std::string& path, const std::string& from, const std::string& to) {
    std::string s = dir_.read(path);
    const size_t at = s.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    dir_.write(path, s.replace(at, from.size(), to));
  }
  // After an edit: hit where token keys apply, else miss; the object is a
  // fresh compile's either way.
  void expect_comment_edit_hits(const std::string& extra = "") {
    if (tokens_apply()) {
      expect_hit(args(extra));
    } else {
      expect_miss(args(extra));
    }
  }
};

TEST_P(TokenKeys, CommentAppendedToAHeaderHits) {
  first();
  append("inc/common.h", "// appended\n/* and a block\n   over lines */\n");
  expect_comment_edit_hits();
}

TEST_P(TokenKeys, CommentsEndingLinesAndTrailingBlanksHit) {
  first();
  replace("inc/common.h", "// scaled x", "// x times the scale, rewritten");
  replace("a.c", "// positive", "   ");
  replace("inc/common.h", "/* the scale */", "/* how much */");
  replace("inc/common.h", "/* Shared by every source. */", "// Shared.");
  expect_comment_edit_hits();
  // And back: a hit either way (the token key, or the action key of the
  // edit before).
  replace("inc/common.h", "// x times the scale, rewritten", "// scaled x");
  expect_comment_edit_hits();
}

TEST_P(TokenKeys, LineMovesMiss) {
  first();
  // A new comment line moves __LINE__ and assert's line in the header and
  // the source.
  replace("inc/common.h", "#pragma once\n", "#pragma once\n// one more line\n");
  expect_miss(args());
  replace("a.c", "int f(int y) {\n", "int f(int y) {\n  /* checked: */\n");
  expect_miss(args());
}

TEST_P(TokenKeys, ColumnMovesMiss) {
  first();
  replace("a.c", "  return scaled(y)", "  return  scaled(y)");
  expect_miss(args());
  // A comment before a token keeps its width in the key.
  replace("a.c", "  return  scaled(y)", "  return/**/scaled(y)");
  expect_miss(args());
}

TEST_P(TokenKeys, CommentsInsideMacroDefinitions) {
  first();
  // Ending the definition: dropped (a -g3 macro table holds "SCALE 3").
  replace("inc/common.h", "/* the scale */", "/* the factor */");
  expect_comment_edit_hits();
  // Inside it, before a token: kept.
  replace("inc/common.h", "#define SCALE 3 /* the factor */", "#define SCALE 3 /* a */ + 0");
  expect_miss(args());
  replace("inc/common.h", "#define SCALE 3 /* a */ + 0", "#define SCALE 3 /* b */ + 0");
  expect_miss(args());
}

TEST_P(TokenKeys, ATokenEditMisses) {
  first();
  replace("inc/common.h", "#define SCALE 3", "#define SCALE 4");
  expect_miss(args());
  // Back to the first value, and a comment edited: the first entry again.
  replace("inc/common.h", "#define SCALE 4", "#define SCALE 3");
  replace("inc/common.h", "// scaled x", "// scaled");
  expect_comment_edit_hits();
}

TEST_P(TokenKeys, MessagesQuoteTheirLines) {
  // A warning quotes its source line, comment and all: a compile with one is
  // kept under its byte key only.
  replace("a.c", "  assert(y > 0);  // positive\n",
          "  int unused = 1;  // never read\n  assert(y > 0);\n");
  const std::string warn = "-Wall";
  first(warn);
  replace("a.c", "// never read", "// not read");
  base::ProcessResult plain = sh(args(warn) + " -o ref.o");
  base::ProcessResult cached = lexpack(args(warn) + " -o out.o");
  EXPECT_TRUE(last_was_miss()) << last_decision();
  EXPECT_NE(plain.err.find("not read"), std::string::npos) << plain.err;
  EXPECT_EQ(cached.err, plain.err);
  EXPECT_EQ(dir_.read("out.o"), dir_.read("ref.o"));
}

TEST_P(TokenKeys, AFallthroughCommentIsRead) {
  dir_.write("a.c",
             "int f(int y) {\n"
             "  switch (y) {\n"
             "    case 1: y += 2;  /* falls through */\n"
             "    case 2: return y;\n"
             "  }\n"
             "  return 0;\n"
             "}\n");
  const std::string warn = "-Wimplicit-fallthrough -Werror";
  if (std::string(GetParam().compiler) == "gcc") {
    first(warn);
    // Without the comment gcc warns, and -Werror fails the compile.
    replace("a.c", "/* falls through */", "/* next */");
    EXPECT_NE(sh(args(warn) + " -o ref.o").exit_code, 0);
    EXPECT_NE(lexpack(args(warn) + " -o out.o").exit_code, 0);
  }
}

TEST_P(TokenKeys, TrigraphModes) {
  // ISO C reads trigraphs: a file without "??" still has its token text.
  first("-std=c99");
  append("inc/common.h", "// appended\n");
  expect_comment_edit_hits("-std=c99");
  // "??/" ends a line comment in a splice there: the next line is comment
  // too. A file holding "??" counts by its bytes.
  append("inc/common.h", "// why??/\nint hidden;\n");
  expect_miss(args("-std=c99"));
  append("inc/common.h", "// one more\n");
  expect_miss(args("-std=c99"));
  // Without trigraphs (gnu99) a file holding "??" has its token text (one
  // that is not "??/" at a line end: gcc warns of that one).
  replace("inc/common.h", "// why??/\nint hidden;\n", "// why?? no\n");
  first("-std=gnu99");
  append("inc/common.h", "// and another\n");
  expect_comment_edit_hits("-std=gnu99");
}

TEST_P(TokenKeys, C90Modes) {
  // gnu90 -pedantic warns once per file of a // comment: a file without one
  // has its token text, a file with one counts by its bytes.
  const std::string c90 = "-std=gnu90 -pedantic";
  replace("a.c", "  assert(y > 0);  // positive\n", "  assert(y > 0);  /* positive */\n");
  replace("inc/common.h", "  // scaled x", "  /* scaled x */");
  // (no message at all: a compile with one keeps its byte key only)
  replace("inc/common.h", "static inline int scaled", "static __inline__ int scaled");
  replace("inc/common.h", "static inline int line_here", "static __inline__ int line_here");
  first(c90);
  append("inc/common.h", "/* appended */\n");
  expect_comment_edit_hits(c90);
  append("inc/common.h", "// a line comment\n");
  base::ProcessResult plain = sh(args(c90) + " -o ref.o");
  base::ProcessResult cached = lexpack(args(c90) + " -o out.o");
  EXPECT_TRUE(last_was_miss()) << last_decision();
  EXPECT_EQ(cached.err, plain.err);
  EXPECT_EQ(dir_.read("out.o"), dir_.read("ref.o"));
}

TEST_P(TokenKeys, KeepCommentsMisses) {
  if (std::string(GetParam().compiler) != "gcc") return;  // clang refuses -C without -E
  first("-C");
  append("inc/common.h", "// appended\n");
  expect_miss(args("-C"));
  EXPECT_NE(dir_.read("log.txt").find("no token key: -C"), std::string::npos);
}

TEST_P(TokenKeys, RawStringsCountByBytes) {
  dir_.write("inc/raw.hpp", "#pragma once\nconst char* text() { return R\"(// x\n)\"; }\n");
  dir_.write("b.cpp", "#include \"raw.hpp\"\nint g() { return text()[0]; }\n");
  const std::string cxx = std::string(GetParam().compiler) == "gcc" ? "g++" : "clang++-14";
  const std::string b = cxx + " " + GetParam().debug + " -Iinc -c b.cpp";
  ASSERT_EQ(lexpack(b + " -o out.o").exit_code, 0);
  append("inc/raw.hpp", "// appended\n");
  expect_miss(b);
  // The source, read by tokens, still counts: a comment there hits.
  append("b.cpp", "// appended\n");
  if (tokens_apply()) {
    expect_hit(b);
  } else {
    expect_miss(b);
  }
}

INSTANTIATE_TEST_SUITE_P(Ways, TokenKeys,
                         ::testing::Values(Way{"gcc", ""}, Way{"gcc", "-g"}, Way{"gcc", "-g3"},
                                           Way{"clang-14", ""}, Way{"clang-14", "-g"},
                                           Way{"clang-14", "-gdwarf-4"}),
                         [](const ::testing::TestParamInfo<Way>& info) {
                           std::string name = std::string(info.param.compiler) + "_" +
                                              (*info.param.debug ? info.param.debug + 1 : "nog");
                           for (char& c : name) {
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace lexpack::testing
