// The cases of shared/lexer-cases.md, each run on every kernel (scan_all
// checks each kernel against the scalar reference, also shifted across
// SIMD block boundaries). Numbers in test names refer to that list.
#include "lexer/scanner.h"

#include <gtest/gtest.h>

#include <string>

#include "scan_test_util.h"

namespace lexpack::lexer {
namespace {

using testing::render;
using testing::scan_all;
using testing::scan_render;

// 1. Structure
TEST(ScannerStructure, EmptyAndWhitespaceFiles) {
  EXPECT_EQ(scan_render(""), "");
  EXPECT_EQ(scan_render(" \t\n\r\n\f\v  \n"), "");
  EXPECT_TRUE(scan_all("").diagnostics.empty());
}

TEST(ScannerStructure, NoTrailingNewline) {
  EXPECT_EQ(scan_render("#include <a.h>"), "include<a.h>");
  EXPECT_EQ(scan_render("int x;\n#define X 1"), "define X");
}

// 2. BOM, line endings, form feed and vertical tab
TEST(ScannerStructure, ByteOrderMark) {
  const ScanResult r = scan_all("\xEF\xBB\xBF#include <a.h>\n", /*shift=*/false);
  EXPECT_EQ(render(r), "include<a.h>");
  EXPECT_EQ(r.directives[0].line, 1u);
  EXPECT_EQ(r.directives[0].offset, 3u);
}

TEST(ScannerStructure, CrlfAndLoneCrLineEndings) {
  const ScanResult crlf = scan_all("int a;\r\n#include <a.h>\r\n#include \"b.h\"\r\n");
  EXPECT_EQ(render(crlf), "include<a.h> | include\"b.h\"");
  EXPECT_EQ(crlf.directives[0].line, 2u);
  EXPECT_EQ(crlf.directives[1].line, 3u);
  const ScanResult cr = scan_all("int a;\r#include <a.h>\r\r#include <c.h>\r");
  EXPECT_EQ(render(cr), "include<a.h> | include<c.h>");
  EXPECT_EQ(cr.directives[0].line, 2u);
  EXPECT_EQ(cr.directives[1].line, 4u);
}

TEST(ScannerStructure, FormFeedAndVerticalTabInsideDirective) {
  EXPECT_EQ(scan_render("\f#\vinclude\f<a.h>\n"), "include<a.h>");
  EXPECT_EQ(scan_render("#\tdefine\vX\f1\n"), "define X");
}

// 3. Null directive, ## at line start, # after whitespace or a comment
TEST(ScannerStructure, NullDirectiveAndPasteOperator) {
  EXPECT_EQ(scan_render("#\n#include <a.h>\n"), "include<a.h>");
  EXPECT_EQ(scan_render("## include <a.h>\n"), "");
  EXPECT_EQ(scan_render("#define C(a,b) a ## b\n  ## x\n"), "define C");
  EXPECT_TRUE(scan_all("#\n").diagnostics.empty());
}

TEST(ScannerStructure, HashAfterSpacesTabsOrComment) {
  EXPECT_EQ(scan_render("   \t #include <a.h>\n"), "include<a.h>");
  EXPECT_EQ(scan_render("/* c */ # include <a>\n"), "include<a>");
  EXPECT_EQ(scan_render("/* a */ /* b */ #include <a>\n"), "include<a>");
  EXPECT_EQ(scan_render("/* multi\nline */ #include <a>\n"), "include<a>");
  EXPECT_EQ(scan_render("x; /* c */ #include <a>\n"), "");
  EXPECT_EQ(scan_render("int a # include <a>\n"), "");
}

// 4. Directive names and identifiers split by splices
TEST(ScannerStructure, SplitDirectiveName) {
  EXPECT_EQ(scan_render("#inc\\\nlude <a.h>\n"), "include<a.h>");
  EXPECT_EQ(scan_render("#ifndef GUA\\\nRD\n#endif\n"), "ifndef GUARD | endif");
}

// 5. Splice spellings
TEST(ScannerStructure, SpliceSpellings) {
  EXPECT_EQ(scan_render("#define A 1 \\\n + 2\n#include <a>\n"), "define A | include<a>");
  EXPECT_EQ(scan_render("#define A 1 \\\r\n + 2\r\n#include <a>\r\n"), "define A | include<a>");
  EXPECT_EQ(scan_render("#define A 1 \\  \t\n + 2\n#include <a>\n"), "define A | include<a>");
  // The line after a spliced directive line is part of it, not a directive.
  EXPECT_EQ(scan_render("#define A \\\n#include <a>\n"), "define A");
}

// 6. Multi-line #define bodies
TEST(ScannerStructure, MultiLineDefineBody) {
  const std::string src = "#define F(a, b) \\\n  a + \\\n  b\nint x;\n";
  const ScanResult r = scan_all(src);
  ASSERT_EQ(render(r), "define F");
  const Directive& d = r.directives[0];
  EXPECT_EQ(src.substr(d.body_offset, d.body_size), "a + \\\n  b");
}

// 7. Comments hiding directives
TEST(ScannerComments, BlockCommentHidesInclude) {
  EXPECT_EQ(scan_render("/*\n#include <a.h>\n*/\n#include <b.h>\n"), "include<b.h>");
}

TEST(ScannerComments, LineCommentEndingInBackslashSwallowsNextLine) {
  EXPECT_EQ(scan_render("// x \\\n#include <a.h>\n#include <b.h>\n"), "include<b.h>");
  EXPECT_EQ(scan_render("// x \\\nimport m;\n"), "");
  EXPECT_EQ(scan_render("// x \\  \r\n#include <a.h>\n"), "");
}

// 8. //*, /*/, unterminated block comment
TEST(ScannerComments, TrickyDelimiters) {
  EXPECT_EQ(scan_render("//* not a block\n#include <a>\n"), "include<a>");
  EXPECT_EQ(scan_render("/*/ #include <a> */\n#include <b>\n"), "include<b>");
  EXPECT_EQ(scan_render("/**/#include <a>\n"), "include<a>");
  EXPECT_EQ(scan_render("/* x *\\\n/\n#include <a>\n"), "include<a>");
}

TEST(ScannerComments, UnterminatedBlockComment) {
  const ScanResult r = scan_all("#include <a>\n/* never closed\n#include <b>\n");
  EXPECT_EQ(render(r), "include<a>");
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].line, 2u);
  EXPECT_EQ(r.diagnostics[0].message, "unterminated /* comment");
}

// 9. Comment inside a directive
TEST(ScannerComments, CommentInsideDirective) {
  EXPECT_EQ(scan_render("#include /* \"x.h\" */ <abc.h>\n"), "include<abc.h>");
  EXPECT_EQ(scan_render("#include <abc.h> // \"x.h\"\n"), "include<abc.h>");
  EXPECT_EQ(scan_render("#define X /* spans\nlines */ 1\n#include <a>\n"), "define X | include<a>");
  EXPECT_EQ(scan_render("# /**/ define /**/ X 1\n"), "define X");
}

// 10. Comment and directive spellings inside literals
TEST(ScannerLiterals, StringsAndCharsHideNothing) {
  EXPECT_EQ(scan_render("const char* a = \"/*\";\n#include <a>\n// */\n"), "include<a>");
  EXPECT_EQ(scan_render("s = \"//\"; \n#include <a>\n"), "include<a>");
  EXPECT_EQ(scan_render("s = \"\n#include <x>\";\n"), "include<x>");
  EXPECT_EQ(scan_render("s = \"#include <x>\";\n"), "");
  EXPECT_EQ(scan_render("c = '\"';\n#include <a>\n"), "include<a>");
  EXPECT_EQ(scan_render("c = '\\'';\n#include <a>\n"), "include<a>");
  EXPECT_EQ(scan_render("c = '#'; /* '\" */\n#include <a>\n"), "include<a>");
  EXPECT_EQ(scan_render("s = \"a\\\"/*\";\n#include <a>\n"), "include<a>");
}

// 11. Raw strings
TEST(ScannerLiterals, RawStrings) {
  EXPECT_EQ(scan_render("auto s = R\"(\n#include <x>\n)\";\n#include <a>\n"), "include<a>");
  EXPECT_EQ(scan_render("auto s = R\"abc(\n)\"\n#include <x>\n)abc\";\n#include <a>\n"),
            "include<a>");
  for (const char* prefix : {"u8R", "uR", "UR", "LR"}) {
    EXPECT_EQ(scan_render(std::string("auto s = ") + prefix + "\"(\n#include <x>\n)\";\n"), "")
        << prefix;
  }
  // FOOR"x" is an identifier then an ordinary string.
  EXPECT_EQ(scan_render("FOOR\"(\";\n#include <a>\n"), "include<a>");
  EXPECT_EQ(scan_render("auto s = R\"(/* x)\";\n#include <a>\n"), "include<a>");
}

TEST(ScannerLiterals, UnterminatedRawString) {
  const ScanResult r = scan_all("auto s = R\"(\n#include <x>\n");
  EXPECT_EQ(render(r), "");
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].message, "unterminated raw string literal");
}

// 12. Digit separators
TEST(ScannerLiterals, DigitSeparators) {
  EXPECT_EQ(scan_render("int a = 0'1;\n#include <a>\n"), "include<a>");
  EXPECT_EQ(scan_render("int a = 0xfa'af'fa;\n#include <a>\n"), "include<a>");
  EXPECT_EQ(scan_render("int a = 1'000'000;\n#include <a>\nchar c = 'x';\n"), "include<a>");
  EXPECT_EQ(scan_render("double d = 1.5e+1'0;\n#include <a>\n"), "include<a>");
  const ScanResult r = scan_all("#if 1'2 == 12\n#include <a>\n#endif\n");
  EXPECT_EQ(render(r), "if 1'2 == 12 | include<a> | endif");
  EXPECT_TRUE(r.diagnostics.empty());
}

// 13. Unmatched quotes end at the line end
TEST(ScannerLiterals, UnmatchedQuoteEndsAtNewline) {
  EXPECT_EQ(scan_render("#error don't do this\n#include <a>\n"), "include<a>");
  EXPECT_EQ(scan_render("#warning don't\n#include <a>\n"), "include<a>");
  EXPECT_EQ(scan_render("x = don't;\n#include <a>\n"), "include<a>");
  EXPECT_EQ(scan_render("s = \"open\n#include <a>\n"), "include<a>");
}

// 14. Character literal prefixes
TEST(ScannerLiterals, CharacterPrefixes) {
  EXPECT_EQ(scan_render("a = L'\"'; b = u'\"'; c = U'\"'; d = u8'\"';\n#include <a>\n"),
            "include<a>");
}

// 15. #error / #warning bodies are raw text
TEST(ScannerLiterals, ErrorBodiesAreRaw) {
  EXPECT_EQ(scan_render("#error a /* b\n#include <a>\n"), "include<a>");
  EXPECT_EQ(scan_render("#warning \" unterminated\n#include <a>\n"), "include<a>");
  EXPECT_EQ(scan_render("#error it's \\ fine\n#include <a>\n"), "include<a>");
}

// 16. Include spellings
TEST(ScannerIncludes, Spellings) {
  EXPECT_EQ(scan_render("#include <a/b.h>\n#include \"a/b.h\"\n#include_next <a.h>\n"
                        "#import \"a.h\"\n"),
            "include<a/b.h> | include\"a/b.h\" | include_next<a.h> | import\"a.h\"");
  EXPECT_EQ(scan_render("#include <a//b.h>\n#include \"a/*b.h\"\n#include <c/*d*/.h>\n"),
            "include<a//b.h> | include\"a/*b.h\" | include<c/*d*/.h>");
}

TEST(ScannerIncludes, LineAndOffset) {
  const std::string src = "int x;\n\n  #  include <a.h>\n";
  const ScanResult r = scan_all(src);
  ASSERT_EQ(r.directives.size(), 1u);
  EXPECT_EQ(r.directives[0].line, 3u);
  EXPECT_EQ(r.directives[0].offset, src.find('#'));
}

// 17. Computed includes
TEST(ScannerIncludes, ComputedIncludes) {
  EXPECT_EQ(scan_render("#include MACRO\n#include MACRO(a, b)\n#include_next HDR /* c */\n"),
            "include(MACRO) | include(MACRO(a, b)) | include_next(HDR)");
  const ScanResult r = scan_all("#include MACRO\n");
  EXPECT_TRUE(r.directives[0].computed);
  EXPECT_FALSE(r.directives[0].angled);
}

// 18. __has_include
TEST(ScannerIncludes, HasInclude) {
  EXPECT_EQ(scan_render("#if __has_include(<a.h>)\n#elif __has_include(\"b.h\")\n#endif\n"),
            "if __has_include(<a.h>) | has_include<a.h> | elif __has_include(\"b.h\") | "
            "has_include\"b.h\" | endif");
  EXPECT_EQ(scan_render("#if __has_include_next(<a.h>) && __has_include(<c//d.h>)\n#endif\n"),
            "if __has_include_next(<a.h>) && __has_include(<c//d.h>) | has_include_next<a.h> | "
            "has_include<c//d.h> | endif");
  EXPECT_EQ(scan_render("#define HAS __has_include(<x.h>)\n"), "define HAS | has_include<x.h>");
  EXPECT_EQ(scan_render("#if __has_include ( < a.h > )\n#endif\n"),
            "if __has_include ( < a.h > ) | has_include< a.h > | endif");
  EXPECT_EQ(scan_render("#if __has_include(HDR)\n#endif\n"),
            "if __has_include(HDR) | has_include(HDR) | endif");
  EXPECT_EQ(scan_render("#if defined(__has_include)\n#endif\n"),
            "if defined(__has_include) | endif");
  EXPECT_EQ(scan_render("#if __has_include(\\\n<a.h>)\n#endif\n"),
            "if __has_include(<a.h>) | has_include<a.h> | endif");
}

// 18. __has_include reached through a macro: an alias, or pieces that `##`
// pastes into the operator, are reported as computed (their question is
// asked where the macro is used), never dropped.
TEST(ScannerIncludes, HasIncludeThroughAMacro) {
  EXPECT_EQ(scan_render("#define HASINC __has_include\n"),
            "define HASINC | has_include(__has_include)");
  EXPECT_EQ(scan_render("#define HASNEXT __has_include_next\n"),
            "define HASNEXT | has_include_next(__has_include_next)");
  EXPECT_EQ(scan_render("#if X ? __has_include : 0\n#endif\n"),
            "if X ? __has_include : 0 | has_include(__has_include) | endif");
  EXPECT_EQ(scan_render("#define CAT(a, b) a##b\n#if CAT(__has_, include)(<g.h>)\n#endif\n"),
            "define CAT | if CAT(__has_, include)(<g.h>) | has_include(include) | endif");
  EXPECT_EQ(scan_render("#define P __has_inc##lu##de\n"), "define P | has_include(lu)");
  // `__has_##NAME` as libstdc++ writes it is no paste into the operator by itself.
  EXPECT_EQ(scan_render("#define T(N) struct __has_##N\n"), "define T");
  // Asking whether the operator exists is no use of it.
  for (const char* src :
       {"#if defined(__has_include)\n#endif\n", "#if defined __has_include\n#endif\n",
        "#if defined ( __has_include_next )\n#endif\n", "#ifdef __has_include\n#endif\n"}) {
    const ScanResult r = scan_all(src);
    for (const Directive& d : r.directives) {
      EXPECT_NE(d.kind, DirectiveKind::kHasInclude) << src;
      EXPECT_NE(d.kind, DirectiveKind::kHasIncludeNext) << src;
    }
  }
  // Not pieces: a header name, a string, upper-case names, short names.
  EXPECT_EQ(scan_render("#if __has_include(<include/x.h>)\n#endif\n"),
            "if __has_include(<include/x.h>) | has_include<include/x.h> | endif");
  EXPECT_EQ(scan_render("#define S \"include\" INCLUDE hash(a, n) #include\n"), "define S");
  EXPECT_EQ(scan_render("#define P(a) a##include\n"), "define P | has_include(include)");
  EXPECT_EQ(scan_render("#define MYdefined __has_include\n"),
            "define MYdefined | has_include(__has_include)");
}

// 19. Empty #include
TEST(ScannerIncludes, EmptyIncludeIsMalformed) {
  for (const char* src : {"#include\n", "#include /* c */\n", "#include // c\n", "#include",
                          "#include <>\n", "#include <a.h\n", "#include \"a.h\n"}) {
    const ScanResult r = scan_all(src);
    EXPECT_EQ(render(r), "") << src;
    EXPECT_EQ(r.diagnostics.size(), 1u) << src;
  }
}

// 20. #pragma once and _Pragma("once")
TEST(ScannerIncludes, PragmaOnce) {
  EXPECT_EQ(scan_render("#pragma once\n"), "pragma_once");
  EXPECT_EQ(scan_render("#pragma once trailing tokens\n"), "pragma_once");
  EXPECT_EQ(scan_render("#pragma GCC system_header\n"), "");
  EXPECT_EQ(scan_render("_Pragma(\"once\")\n"), "pragma_once");
  EXPECT_EQ(scan_render("_Pragma ( \"once\" ) int x;\n"), "pragma_once");
  EXPECT_EQ(scan_render("// _Pragma(\"once\")\nconst char* s = \"_Pragma(\\\"once\\\")\";\n"), "");
  EXPECT_EQ(scan_render("my_Pragma(\"once\")\n"), "");
}

// 21. Nested and unbalanced conditionals
TEST(ScannerConditionals, NestedKeepConditionText) {
  EXPECT_EQ(scan_render("#if A > 1 // c\n#ifdef B\n#elifdef C\n#elifndef D\n#else\n#endif\n"
                        "#elif defined(E) && /* x */ F\n#ifndef G\n#endif\n#endif\n"),
            "if A > 1 | ifdef B | elifdef C | elifndef D | else | endif | "
            "elif defined(E) &&   F | ifndef G | endif | endif");
}

TEST(ScannerConditionals, UnbalancedAreReported) {
  ScanResult r = scan_all("#if A\n#ifdef B\n#endif\n");
  EXPECT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].line, 1u);
  EXPECT_EQ(r.diagnostics[0].message, "unterminated #if at end of file");
  r = scan_all("#endif\n#else\n#elif X\n");
  EXPECT_EQ(r.diagnostics.size(), 3u);
  EXPECT_EQ(r.diagnostics[0].message, "#endif without #if");
}

// 22. Include guards
TEST(ScannerConditionals, IncludeGuards) {
  EXPECT_EQ(
      scan_all("/* license */\n#ifndef A_H\n#define A_H\nint x;\n#endif // A_H\n").include_guard,
      "A_H");
  EXPECT_EQ(scan_all("#if !defined(A_H)\n#define A_H\n#endif\n").include_guard, "A_H");
  EXPECT_EQ(scan_all("#if !defined A_H\n#define A_H\n#endif\n").include_guard, "A_H");
  EXPECT_EQ(scan_all("#if ! defined ( A_H )\n#define A_H\n#endif\n").include_guard, "A_H");
  // Any token outside means no guard.
  EXPECT_EQ(scan_all("int y;\n#ifndef A_H\n#define A_H\n#endif\n").include_guard, "");
  EXPECT_EQ(scan_all("#ifndef A_H\n#define A_H\n#endif\nint y;\n").include_guard, "");
  EXPECT_EQ(scan_all("#ifndef A_H\n#define A_H\n#endif\n#include <b>\n").include_guard, "");
  EXPECT_EQ(scan_all("#ifndef A_H\n#define A_H\n#else\n#endif\n").include_guard, "");
  EXPECT_EQ(scan_all("#ifndef A_H\n#define B_H\n#endif\n").include_guard, "");
  EXPECT_EQ(scan_all("#ifndef A_H\n#define A_H\n#endif\n#ifndef B\n#endif\n").include_guard, "");
  EXPECT_EQ(scan_all("#if !defined(A_H) && X\n#define A_H\n#endif\n").include_guard, "");
  EXPECT_EQ(scan_all("#ifndef A_H\n#define A_H\n#if X\n#endif\n#endif\n/* c */\n").include_guard,
            "A_H");
}

// 23. Malformed #define
TEST(ScannerConditionals, MalformedDefine) {
  for (const char* src :
       {"#define\n", "#define 0\n", "#define &\n", "#undef\n", "#ifdef\n#endif\n"}) {
    const ScanResult r = scan_all(src);
    EXPECT_EQ(r.diagnostics.size(), 1u) << src;
  }
  const std::string src = "#define EMPTY\n#define F(x) (x)\n";
  const ScanResult r = scan_all(src);
  EXPECT_EQ(render(r), "define EMPTY | define F");
  EXPECT_EQ(r.directives[0].body_size, 0u);
  EXPECT_EQ(src.substr(r.directives[1].body_offset, r.directives[1].body_size), "(x)");
}

// 24. Module declarations and imports
TEST(ScannerModules, Declarations) {
  EXPECT_EQ(scan_render("module;\n#include <a>\nexport module m;\n"),
            "module | include<a> | module! m");
  EXPECT_EQ(scan_render("export module m:part;\n"), "module! m:part");
  EXPECT_EQ(scan_render("module m;\nmodule m:part;\nmodule a.b.c : p.q;\n"),
            "module m | module m:part | module a.b.c:p.q");
  EXPECT_EQ(scan_render("module :private;\n"), "module :private");
  EXPECT_EQ(scan_render("import m;\nimport :part;\nimport <vector>;\nimport \"x.h\";\n"),
            "module_import m | module_import :part | module_import<vector> | "
            "module_import\"x.h\"");
  EXPECT_EQ(scan_render("export import m;\n  import m [[attr]];\nimport a.b [[x]] [[y(1)]];\n"),
            "module_import! m | module_import m | module_import a.b");
  EXPECT_EQ(scan_render("import m; int x = 1; // import n;\n"), "module_import m");
}

// 25. Not module declarations
TEST(ScannerModules, NotDeclarations) {
  for (const char* src :
       {"import::inner x;\n", "module::inner x;\n", "import = 3;\n", "import->a;\n", "import.a;\n",
        "module:(int)x;\n", "x = y; import m;\n", "int import;\n", "reimport m;\n",
        "\"import m;\"\n", "/* import m; */\n", "exported import m;\n", "import\n", "module\n"}) {
    EXPECT_EQ(scan_render(src), "") << src;
  }
}

// 26. Splices and missing ';'
TEST(ScannerModules, SplicesAndMissingSemicolon) {
  EXPECT_EQ(scan_render("export \\\nmodule m;\n"), "module! m");
  EXPECT_EQ(scan_render("import \\\n  m;\n"), "module_import m");
  const ScanResult r = scan_all("import m\nint x;\n");
  EXPECT_EQ(render(r), "module_import m");
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].message, "import declaration without ';'");
}

// 27. Clock macros
TEST(ScannerReproducibility, ClockMacros) {
  ScanResult r = scan_all("const char* d = __DATE__;\n");
  EXPECT_TRUE(r.uses_date);
  EXPECT_FALSE(r.uses_time);
  r = scan_all("auto t = __TIME__; auto s = __TIMESTAMP__;\n");
  EXPECT_TRUE(r.uses_time);
  EXPECT_TRUE(r.uses_timestamp);
  EXPECT_FALSE(r.uses_date);
  r = scan_all("#define BUILD __DATE__ \" \" __TIME__\n");
  EXPECT_TRUE(r.uses_date);
  EXPECT_TRUE(r.uses_time);
  r = scan_all(
      "const char* s = \"__DATE__\"; // __TIME__\n/* __TIMESTAMP__ */ int MY__TIME__X;\n"
      "#define S \"__DATE__\"\n#error __TIME__\nint __DATE__x; int x__DATE__;\n");
  EXPECT_FALSE(r.uses_date);
  EXPECT_FALSE(r.uses_time);
  EXPECT_FALSE(r.uses_timestamp);
  // Inside a directive the logical line counts: a splice or a comment next to
  // the name does not hide it.
  r = scan_all("#define D __DA\\\nTE__\n#if X /* c */ && __TIMESTAMP__\n#endif\n");
  EXPECT_TRUE(r.uses_date);
  EXPECT_TRUE(r.uses_timestamp);
  EXPECT_FALSE(r.uses_time);
  r = scan_all("#if defined(X) && \\\r\n  __TI\\\r\nME__ > 0\n#endif\n");
  EXPECT_TRUE(r.uses_time);
}

// Each word the prepass finds covers exactly its own bytes: a comment that
// starts right after it (at the start of the file, the middle, or the end)
// still hides what follows.
TEST(ScannerReproducibility, WordsFoundOutsideDirectivesEndWhereTheyEnd) {
  for (const char* word :
       {"__DATE__", "__TIME__", "__TIMESTAMP__", "_Pragma", "import", "module", "x"}) {
    for (const char* before : {"", "int a; ", "\n\n"}) {
      SCOPED_TRACE(std::string(before) + word);
      const std::string src = std::string(before) + word + "/*\n#include <a.h>\n*/\n";
      EXPECT_EQ(scan_render(src), "") << src;
    }
  }
}

// 28. Robustness
TEST(ScannerRobustness, BinaryAndNulBytes) {
  std::string src = "#include <a>\n";
  src += std::string("\0\xff\xfe#\0\"\0'\n", 9);
  src += "#include <b>\n\x80\x81\xC0\xAF\n#define X \xff\n";
  const ScanResult r = scan_all(src);
  EXPECT_EQ(render(r), "include<a> | include<b> | define X");
}

TEST(ScannerRobustness, LargeInputs) {
  std::string big;
  for (int i = 0; i < 200000; ++i) big += "int f" + std::to_string(i) + "(int x) { return x; }\n";
  big += "#include <end.h>\n";
  EXPECT_GT(big.size(), 5u << 20);
  EXPECT_EQ(render(scan_all(big, /*shift=*/false)), "include<end.h>");
  const std::string one_line(10u << 20, 'a');
  EXPECT_EQ(render(scan_all(one_line + "\n#include <x>\n", false)), "include<x>");
}

TEST(ScannerRobustness, DeepConditionalNesting) {
  std::string src;
  const int depth = 1000000;
  src.reserve(depth * 12);
  for (int i = 0; i < depth; ++i) src += "#if X\n";
  for (int i = 0; i < depth; ++i) src += "#endif\n";
  const ScanResult r = scan_all(src, /*shift=*/false);
  EXPECT_EQ(r.directives.size(), 2u * depth);
  EXPECT_TRUE(r.diagnostics.empty());
  EXPECT_EQ(r.directives.back().line, 2u * depth);
}

TEST(ScannerRobustness, TruncatedEverywhere) {
  const std::string src =
      "#define A \\\n  1\nauto s = R\"d(x)d\"; /* c */ // d\n#include <a.h>\n"
      "import m;\nchar c = '\\''; const char* t = \"\\\"\";\n#if __has_include(<b.h>)\n#endif\n";
  for (size_t n = 0; n <= src.size(); ++n) scan_all(src.substr(0, n), /*shift=*/n % 7 == 0);
}

// 30. Trigraphs are not replaced (removed from C++17 and C23; GCC ignores them
// by default in GNU modes).
TEST(ScannerRobustness, TrigraphsAreNotReplaced) {
  EXPECT_EQ(scan_render("?"
                        "?=include <a.h>\n"),
            "");
  EXPECT_EQ(scan_render("#define A 1 ?"
                        "?/\n#include <a.h>\n"),
            "define A | include<a.h>");
}

// A spliced or commented directive line is cleaned in runs between special
// bytes; runs of every length up to a few words must still stop at each one.
TEST(ScannerLogicalLine, RunsOfEveryLengthStopAtSpecialBytes) {
  for (size_t n = 0; n <= 40; ++n) {
    const std::string run(n, 'a');
    const std::string src = "#define X " + run + "\\\n" + run + " __DA\\\nTE__ " + run +
                            "/* c */ \"" + run + "\" " + run + "'x' " + run + "\n#include <z>\n";
    const ScanResult r = scan_all(src, false);
    ASSERT_EQ(render(r), "define X | include<z>") << n;
    EXPECT_TRUE(r.uses_date) << n;
    const Directive& d = r.directives[0];
    const size_t last = src.find("'x' ") + (n ? 4 + n : 3);
    EXPECT_EQ(d.body_offset + d.body_size, last) << n;
  }
}

}  // namespace
}  // namespace lexpack::lexer
