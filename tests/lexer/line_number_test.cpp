// Line numbers of directives and diagnostics, checked against a count of line
// ends before each one's offset. The scanner keeps a running line counter that
// it moves past plain directive lines, so every kind of line end, indentation
// and splice next to a directive is exercised here, on every kernel.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "lexer/kernel.h"
#include "lexer/scanner.h"
#include "scan_test_util.h"

namespace lexpack::lexer {
namespace {

using testing::scan_exact;

// 1 + the line ends before `offset`: each '\n', and each '\r' not followed by '\n'.
uint32_t reference_line(const std::string& src, uint64_t offset) {
  uint32_t line = 1;
  for (size_t i = 0; i < offset && i < src.size(); ++i) {
    if (src[i] == '\n' || (src[i] == '\r' && (i + 1 == src.size() || src[i + 1] != '\n'))) {
      ++line;
    }
  }
  return line;
}

void expect_lines_match_offsets(const std::string& src) {
  for (const Kernel* k : available_kernels()) {
    const ScanResult r = scan_exact(src, *k);
    for (const Directive& d : r.directives) {
      ASSERT_EQ(d.line, reference_line(src, d.offset))
          << "kernel " << k->name << ", " << kind_name(d.kind) << " at offset " << d.offset
          << " of:\n"
          << src;
    }
    for (const Diagnostic& d : r.diagnostics) {
      ASSERT_EQ(d.line, reference_line(src, d.offset))
          << "kernel " << k->name << ", diagnostic '" << d.message << "' of:\n"
          << src;
    }
  }
}

TEST(ScannerLineNumbers, EveryLineEndNextToDirectives) {
  for (const char* eol : {"\n", "\r\n", "\r"}) {
    const std::string e = eol;
    for (size_t indent = 0; indent <= 40; ++indent) {
      const std::string pad(indent, indent % 3 ? ' ' : '\t');
      expect_lines_match_offsets("#define A 1" + e + pad + "#define B 2" + e + pad + "#endif" + e +
                                 e + pad + "#include <x>" + e);
      expect_lines_match_offsets("#if X" + e + pad + e + pad + e + "#else" + e + pad + "#endif");
      expect_lines_match_offsets("#ifndef G" + e + "#define G" + e + std::string(indent, '\n') +
                                 "#include \"a\"" + e + "#endif" + e);
    }
  }
}

TEST(ScannerLineNumbers, DirectiveAtEndOfFileWithoutNewline) {
  expect_lines_match_offsets("#endif");
  expect_lines_match_offsets("#if A\n#endif");
  expect_lines_match_offsets("#if A\r\n#endif\r");
  expect_lines_match_offsets("#define X 1\r");
  expect_lines_match_offsets("#include <a>\n#include <b>");
}

TEST(ScannerLineNumbers, SlashAndBackslashThatStartNothing) {
  // A '/' that starts no comment and a '\\' that is no splice leave the line plain.
  expect_lines_match_offsets(
      "#if A / 2\n#define S '\\\\'\n#define T \"\\\"\"\n#endif\n#if B\n#endif\n");
  expect_lines_match_offsets("#define D(a) a/b\\x\r\n  #include <c/d.h>\r\n#undef D\r\n");
  // Next to a real comment or splice, the general path takes over.
  expect_lines_match_offsets(
      "#define A 1 /* x\n y */\n#define B \\\n 2\n#if __has_include(<a>)\n#endif\n");
}

TEST(ScannerLineNumbers, VeryLongLines) {
  const std::string body(100000, 'x');
  expect_lines_match_offsets("#define L " + body + "\n#define M 1\n" + body + "\n#include <a>\n");
  expect_lines_match_offsets("#if " + body + " /* c */\n#endif\r\n#define N " + body +
                             "\r\n#endif");
}

TEST(ScannerLineNumbers, GeneratedInputs) {
  static const std::vector<std::string> kPieces = {"#define A 1",
                                                   "#include <a.h>",
                                                   "#if X",
                                                   "#endif",
                                                   "#else",
                                                   "# ifdef Y",
                                                   "#pragma once",
                                                   "#if __has_include(<h>)",
                                                   "#define C __has_include(\"c\") && 1",
                                                   "#foo bar",
                                                   "#",
                                                   "int x;",
                                                   "/* c */",
                                                   "/* multi\nline */",
                                                   "// line",
                                                   "\\\n",
                                                   "\\ \r\n",
                                                   "\n",
                                                   "\r\n",
                                                   "\r",
                                                   "  ",
                                                   "\t",
                                                   "#define S \"/\" '\\\\'",
                                                   "#if A / 2",
                                                   "#error e",
                                                   "#include"};
  std::mt19937 rng(20261130);
  for (int round = 0; round < 4000; ++round) {
    std::string src;
    const int n = 1 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) src += kPieces[rng() % kPieces.size()];
    expect_lines_match_offsets(src);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace lexpack::lexer
