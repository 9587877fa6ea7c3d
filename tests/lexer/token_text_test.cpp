// The token text: which edits keep it (comments that end a line, trailing
// blanks) and which change it (anything a compiler may read), and where the
// pass gives up.
#include "lexer/token_text.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

namespace lexpack::lexer {
namespace {

std::string text(std::string_view bytes) {
  std::string out;
  EXPECT_TRUE(token_text(bytes, &out)) << bytes;
  return out;
}

bool unsure(std::string_view bytes) {
  std::string out;
  return !token_text(bytes, &out);
}

TEST(TokenText, CommentsThatEndALineAreDropped) {
  EXPECT_EQ(text("int a;\n"), text("int a; // the a\n"));
  EXPECT_EQ(text("int a;\n"), text("int a;   /* the a */  \n"));
  EXPECT_EQ(text("int a;\n\n"), text("int a;\n// appended\n"));
  EXPECT_EQ(text("#define X 1\n"), text("#define X 1 /* one */\n"));
  EXPECT_EQ(text("int a;"), text("int a; // no newline at the end"));
  EXPECT_EQ(text("int a; // one\n"), text("int a; // two, longer\n"));
  EXPECT_EQ(text("x();\n"), text("x();\t \n"));
}

TEST(TokenText, EveryLineKeepsItsNumber) {
  // A block comment over lines leaves its line ends.
  EXPECT_EQ(text("int a;\n\n\nint b;\n"), text("int a; /* one\n two\n three */\nint b;\n"));
  // Adding a comment line moves what follows it.
  EXPECT_NE(text("int a;\nint b;\n"), text("int a;\n// new\nint b;\n"));
  EXPECT_NE(text("int a;\nint b;\n"), text("int a;\n\nint b;\n"));
}

TEST(TokenText, EmptyLinesAtTheEndGo) {
  EXPECT_EQ(text("int a;\n"), text("int a;\n\n\n"));
  EXPECT_EQ(text("int a;\n"), text("int a;\n// appended\n/* and more */\n"));
  EXPECT_EQ(text("int a;\r\n"), text("int a;\r\n// appended\r\n"));
  // Whether the file ends in a line end stays (clang's -Wnewline-eof).
  EXPECT_NE(text("int a;"), text("int a;\n"));
  EXPECT_NE(text("int a;\n// c"), text("int a;\n"));
  // A splice at the end stays as it is (gcc warns of it).
  EXPECT_NE(text("#define X \\\n"), text("#define X \\\n\n"));
}

TEST(TokenText, ACommentBeforeATokenStays) {
  EXPECT_NE(text("/* a */ int x;\n"), text("/* b */ int x;\n"));
  EXPECT_NE(text("int /* a */ x;\n"), text("int x;\n"));
  EXPECT_NE(text("/* a\n */ int x;\n"), text("/* b\n */ int x;\n"));
  // The columns of what follows are kept with it.
  EXPECT_NE(text("f(a /**/, b);\n"), text("f(a      , b);\n"));
}

TEST(TokenText, LiteralsAreNotComments) {
  EXPECT_NE(text("s = \"a // b\";\n"), text("s = \"a // c\";\n"));
  EXPECT_NE(text("s = \"a /* b */\";\n"), text("s = \"a /* c */\";\n"));
  EXPECT_NE(text("c = '/'; // x\nd = '/'; y\n"), text("c = '/'; // x\nd = '/'; z\n"));
  EXPECT_NE(text("s = \"q\\\" // b\";\n"), text("s = \"q\\\" // c\";\n"));
  EXPECT_NE(text("#include <a//b.h>\n"), text("#include <a//c.h>\n"));
  // No escapes in a header name: the comment after "a\" is one.
  EXPECT_EQ(text("#include \"a\\\"\n"), text("#include \"a\\\" // y\n"));
  EXPECT_EQ(text("#include <a.h>\n"), text("#include <a.h> // for a\n"));
  EXPECT_EQ(text("#include \"a.h\"\n"), text("#include \"a.h\" /* for a */\n"));
}

TEST(TokenText, AmbiguousQuotesKeepTheirLinesComments) {
  // C++14 reads 1'0 as a number, C as 1 and a character literal.
  EXPECT_NE(text("x = 1'0 \"it' // s\";\n"), text("x = 1'0 \"it' // t\";\n"));
  EXPECT_NE(text("x = 1'000; // a\n"), text("x = 1'000; // b\n"));
  EXPECT_TRUE(unsure("x = 1'0 + \"'/*\";\n*/\n"));
  EXPECT_EQ(text("c = u8'a';\n"), text("c = u8'a'; // a\n"));
  // After a less-than in a directive, a quote may open what the compiler reads.
  EXPECT_NE(text("#define L a < \">\" // x\n"), text("#define L a < \">\" // y\n"));
  EXPECT_TRUE(unsure("#define L a < \">/*\"\n*/\n"));
  EXPECT_EQ(text("#if A < 3\n"), text("#if A < 3\n"));
  EXPECT_EQ(text("#if A > 3\n"), text("#if A > 3 // three\n"));
}

TEST(TokenText, CommentsADiagnosticReadsStay) {
  const char* keep[] = {
      "/* falls through */", "// FALLTHRU",        "/* a /* b */",  "// a */ b", "// why??",
      "// caf\xc3\xa9",      "/* \xe2\x80\xae */", "// form\ffeed",
  };
  for (const char* c : keep) {
    EXPECT_NE(text(std::string("x;") + c + "\n"), text("x;\n")) << c;
  }
  // A line comment continued by a splice: kept, and so is its next line.
  EXPECT_NE(text("// a \\\nint x;\n"), text("// b \\\nint x;\n"));
  EXPECT_NE(text("// a \\\n   more\nint x;\n"), text("// a \\\n   other\nint x;\n"));
}

TEST(TokenText, SplicesAndBackslashes) {
  // Dropping the comment would make a splice of "\ ".
  EXPECT_NE(text("a \\ // c\nb\n"), text("a \\ // d\nb\n"));
  EXPECT_NE(text("a \\ // c\nb\n"), text("a \\\nb\n"));
  // The blanks of a splice are kept; a comment on the joined line is dropped.
  EXPECT_NE(text("#define X a \\ \n b\n"), text("#define X a \\\n b\n"));
  EXPECT_EQ(text("#define X a \\\n b\n"), text("#define X a \\\n b // bee\n"));
  EXPECT_TRUE(unsure("/* a *\\\n/ b */\n"));  // "*\<newline>/" ends it
  // A splice inside a block comment (a comment in a macro's definition):
  // the comment still ends at its first "*/".
  EXPECT_EQ(text("#define S \\\n  12 /* a \\\n b */\nint x;\n"),
            text("#define S \\\n  12\n\nint x;\n"));
  EXPECT_NE(text("#define S \\\n  12 /* a \\\n b */ 3\n"),
            text("#define S \\\n  12 /* c \\\n b */ 3\n"));
  // "\ " and a line end in a comment draws a warning: kept.
  EXPECT_NE(text("x; /* a \\ \n b */\n"), text("x;\n\n"));
  EXPECT_TRUE(unsure("x /\\\n/ c\n"));
  EXPECT_TRUE(unsure("x /\\\n* c */\n"));
}

TEST(TokenText, WhereThePassGivesUp) {
  EXPECT_TRUE(unsure("auto s = R\"(// not a comment)\";\n"));
  EXPECT_TRUE(unsure("auto s = u8R\"x(a)x\";\n"));
  EXPECT_TRUE(unsure("auto s = R\\\n\"(// x\n)\";\n"));  // its prefix spliced off
  EXPECT_TRUE(unsure("int a;\rint b;\n"));
  EXPECT_TRUE(unsure("int a; /* never closed\n"));
  EXPECT_FALSE(unsure("auto s = FOR\"(a)\";\n"));  // FOR"..." is not a raw string
}

TEST(TokenText, SaysWhetherALineCommentIsThere) {
  std::string out;
  bool line_comment = true;
  ASSERT_TRUE(token_text("/* see http://x */\ns = \"a//b\";\n", &out, &line_comment));
  EXPECT_FALSE(line_comment);
  ASSERT_TRUE(token_text("int a; // a\n", &out, &line_comment));
  EXPECT_TRUE(line_comment);
}

TEST(TokenText, CarriageReturnLineFeed) {
  EXPECT_EQ(text("int a;\r\n"), text("int a; // a\r\n"));
  EXPECT_EQ(text("int a;\r\n\r\nint b;\r\n"), text("int a; /* a\r\n */\r\nint b;\r\n"));
}

// Random text from the bytes that matter: the token text has no more lines
// and is its own token text.
TEST(TokenText, RandomTextKeepsLinesAndIsStable) {
  std::mt19937 rng(7);
  const std::string_view alphabet = "ab1 \t\n/*'\"<>#?f\\R";
  for (int round = 0; round < 20000; ++round) {
    std::string s;
    const size_t n = rng() % 40;
    for (size_t k = 0; k < n; ++k) s += alphabet[rng() % alphabet.size()];
    std::string out;
    if (!token_text(s, &out)) continue;
    EXPECT_LE(std::count(out.begin(), out.end(), '\n'), std::count(s.begin(), s.end(), '\n')) << s;
    std::string again;
    ASSERT_TRUE(token_text(out, &again)) << s;
    EXPECT_EQ(out, again) << s;
  }
}

}  // namespace
}  // namespace lexpack::lexer
