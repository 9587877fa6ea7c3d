// What a file's summary says beyond its includes: gas directives that read
// files (in any file, so inline asm of C and C++ too) and #pragma once, and
// the twin groups of identical #pragma once files in a closure.
#include "closure/file_summary.h"

#include <gtest/gtest.h>

#include "closure/once_twins.h"
#include "lexer/scanner.h"
#include "preprocessor/macro_reads.h"
#include "preprocessor/macro_table.h"

namespace lexpack::closure {
namespace {

TEST(AssemblerFileRead, FindsTheDirectiveWhereverItIsWritten) {
  for (const char* text : {
           "asm(\".incbin \\\"data.bin\\\"\");",  // inline asm
           "#define INCBIN_MACRO \".incbin\"\n",  // incbin.h's macro
           ".data\n.include \"x.inc\"\n",         // assembly
           "\t.INCBIN \"a\"\n",                   // any case
           "__asm__(\".incbin\\t\\\"x\\\"\");",   // escaped tab
           "asm(\".include\");",                  // name ends the string
           "x.incbin",                            // end of the file
           "#define BLOB \"d\"\n.incbin BLOB\n",  // a macro in .S
           "#define M .incbin\nM \"d\"\n",        // the name alone
           "asm(STR(.incbin FILE));",             // stringized
           ".incbin /* c */ \"d\"\n",             // a comment cpp takes out
       }) {
    EXPECT_TRUE(names_assembler_file_read(text)) << text;
  }
  for (const char* text : {
           "#include <vector>\n",
           "int v = s.includes(x);\n",  // another name
           "x.included_dirs = 1;\n",
           "const char* p = \".incbinx\";\n",
           "a.inc$bin",
           "if (policy.include(op)) {}\n",  // calls and fields
           "g = group.include (first, last);\n",
           "opts.include = true;\n",
           "/// paths to search for `.include` directives\n",
           "",
           ".",
       }) {
    EXPECT_FALSE(names_assembler_file_read(text)) << text;
  }
}

TEST(FileSummary, KeepsAssemblerReadsAndPragmaOnce) {
  const std::string text = "#pragma once\nasm(\".incbin \\\"d\\\"\");\n#include \"a.h\"\n";
  const lexer::ScanResult scan = lexer::scan(text, lexer::scalar_kernel());
  FileSummary s = summarize(scan, cache::hash_bytes(text), text);
  EXPECT_TRUE(s.assembler_reads);
  EXPECT_TRUE(s.pragma_once);
  FileSummary back;
  ASSERT_TRUE(decode_summary(encode_summary(s), &back));
  EXPECT_EQ(back, s);
  const std::string plain = "#include \"a.h\"\n";
  s = summarize(lexer::scan(plain, lexer::scalar_kernel()), cache::hash_bytes(plain), plain);
  EXPECT_FALSE(s.assembler_reads);
  EXPECT_FALSE(s.pragma_once);
}

// Whether an include names an absolute path (a candidate for a relocated
// content): made when summarized and again when decoded, never stored.
TEST(FileSummary, KnowsAnAbsoluteIncludeAlsoWhenDecoded) {
  const std::string text = "#include <vector>\n#include \"/abs/a.h\"\n#include NAME\n";
  FileSummary s =
      summarize(lexer::scan(text, lexer::scalar_kernel()), cache::hash_bytes(text), text);
  EXPECT_TRUE(s.absolute_include);
  FileSummary back;
  ASSERT_TRUE(decode_summary(encode_summary(s), &back));
  EXPECT_TRUE(back.absolute_include);
  const std::string relative = "#include <vector>\n#include \"abs/a.h\"\n";
  s = summarize(lexer::scan(relative, lexer::scalar_kernel()), cache::hash_bytes(relative),
                relative);
  EXPECT_FALSE(s.absolute_include);
  ASSERT_TRUE(decode_summary(encode_summary(s), &back));
  EXPECT_FALSE(back.absolute_include);
}

cache::Hash128 fingerprint(const std::string& text) {
  const lexer::ScanResult scan = lexer::scan(text, lexer::scalar_kernel());
  return summarize(scan, cache::hash_bytes(text), text).preprocessing;
}

TEST(PreprocessingFingerprint, SameForEditsOfCodeAndComments) {
  const std::string base =
      "#include \"a.h\"\n#define N(x) ((x) + 1)\nint f() { return N(1); }\n// note\n";
  const cache::Hash128 h = fingerprint(base);
  EXPECT_EQ(fingerprint("#include \"a.h\"\n#define N(x) ((x) + 1)\nint f() { return N(2); }\n"
                        "// another note\n"),
            h);
  EXPECT_EQ(fingerprint("#include \"a.h\"\n#define N(x) ((x) + 1)\nint f() { return 7 * N(1); "
                        "}\nint g() { return 0; }\n"),
            h);
}

TEST(PreprocessingFingerprint, DiffersForWhatPreprocessingReads) {
  const std::string base =
      "#include \"a.h\"\n#define N 1\n#if N\n#include <b.h>\n#endif\nint f();\n";
  const cache::Hash128 h = fingerprint(base);
  for (const char* other : {
           "#include \"c.h\"\n#define N 1\n#if N\n#include <b.h>\n#endif\nint f();\n",  // a name
           "#include \"a.h\"\n#define N 0\n#if N\n#include <b.h>\n#endif\nint f();\n",  // a body
           "#include \"a.h\"\n#define N 1\n#if !N\n#include <b.h>\n#endif\nint f();\n",
           "#include \"a.h\"\n#include \"d.h\"\n#define N 1\n#if N\n#include <b.h>\n#endif\n",
           "\n#include \"a.h\"\n#define N 1\n#if N\n#include <b.h>\n#endif\nint f();\n",  // lines
           "#include \"a.h\"\n#define N 1\n#if N\n/*\n#include <b.h>\n*/\n#endif\nint f();\n",
           "#include \"a.h\"\n#define N 1\n#if N\n#include <b.h>\n#endif\nconst char* d = "
           "__DATE__;\n",
           "#include \"a.h\"\n#define N 1\n#if N\n#include <b.h>\n#endif\nint t = __TIME__[0];\n",
           "#include \"a.h\"\n#define N 1\n#if N\n#include <b.h>\n#endif\nasm(\".incbin "
           "\\\"x\\\"\");\n",
           "#include \"a.h\"\n#define N 1\n#if N\n#include <b.h>\n#endif\n_Pragma(\"once\")\n",
       }) {
    EXPECT_NE(fingerprint(other), h) << other;
  }
}

// The inert fingerprint by the names an evaluation read (`read`; none
// given: the evaluation read no macro).
cache::Hash128 inert(const std::string& text, std::vector<std::string_view> read,
                     bool evaluated = true) {
  const lexer::ScanResult scan = lexer::scan(text, lexer::scalar_kernel());
  preprocessor::MacroReads reads;
  for (std::string_view name : read) reads.add(preprocessor::macro_name_hash(name));
  std::optional<std::string_view> bits;
  if (evaluated) bits = reads.bits();
  return inert_fingerprint(scan, text, false, bits);
}

TEST(InertFingerprint, LeavesOutDefinesOfNamesNeverRead) {
  const std::string base = "#include \"a.h\"\n#if USED\n#include <b.h>\n#endif\nint f();\n";
  const cache::Hash128 h = inert(base, {"USED"});
  // Defines and undefines of unread names, anywhere, and the lines moving.
  for (const char* same : {
           "#define UNREAD 1\n#include \"a.h\"\n#if USED\n#include <b.h>\n#endif\nint f();\n",
           "#include \"a.h\"\n#define UNREAD(x) x\n#if USED\n#include <b.h>\n#endif\nint f();\n",
           "#include \"a.h\"\n#if USED\n#undef OTHER\n#include <b.h>\n#endif\nint f();\n",
           "\n\n#include \"a.h\"\n#if USED\n#include <b.h>\n#endif\nint f();\n",
       }) {
    EXPECT_EQ(inert(same, {"USED"}), h) << same;
  }
  for (const char* other : {
           // A name read, defined or undefined.
           "#define USED 1\n#include \"a.h\"\n#if USED\n#include <b.h>\n#endif\nint f();\n",
           "#undef USED\n#include \"a.h\"\n#if USED\n#include <b.h>\n#endif\nint f();\n",
           // Any other directive.
           "#include \"a.h\"\n#include \"c.h\"\n#if USED\n#include <b.h>\n#endif\nint f();\n",
           "#include \"a.h\"\n#if USED || 1\n#include <b.h>\n#endif\nint f();\n",
           // A define that asks __has_include, read or not.
           "#define Q __has_include(<c.h>)\n#include \"a.h\"\n#if USED\n#include <b.h>\n#endif\n",
           // __DATE__ in the source.
           "#include \"a.h\"\n#if USED\n#include <b.h>\n#endif\nconst char* d = __DATE__;\n",
       }) {
    EXPECT_NE(inert(other, {"USED"}), h) << other;
  }
  // A define moved across an include counts when its name is read.
  EXPECT_NE(inert("#define USED 1\n#include \"a.h\"\n#if USED\n#endif\n", {"USED"}),
            inert("#include \"a.h\"\n#define USED 1\n#if USED\n#endif\n", {"USED"}));
}

TEST(InertFingerprint, LinesCountWhenLineIsRead) {
  const std::string base = "#include \"a.h\"\n#define UNREAD 1\n";
  const std::string moved = "\n#include \"a.h\"\n#define UNREAD 1\n";
  EXPECT_EQ(inert(base, {}), inert(moved, {}));
  EXPECT_NE(inert(base, {"__LINE__"}), inert(moved, {"__LINE__"}));
  // An unread define taken out above a directive moves it too.
  const std::string defined = "#define UNREAD 1\n#include \"a.h\"\n";
  EXPECT_EQ(inert(defined, {}), inert("#include \"a.h\"\n", {}));
  EXPECT_NE(inert(defined, {"__LINE__"}), inert("#include \"a.h\"\n", {"__LINE__"}));
}

TEST(InertFingerprint, EveryDefineIsLeftOutWhenNoEvaluationRan) {
  const std::string base = "#include \"a.h\"\nint f();\n";
  EXPECT_EQ(inert("#define USED 1\n" + base, {}, false), inert(base, {}, false));
  EXPECT_NE(inert("#include <b.h>\n" + base, {}, false), inert(base, {}, false));
  // Not the fingerprint of an evaluation that read the name.
  EXPECT_NE(inert("#define USED 1\n" + base, {"USED"}), inert(base, {"USED"}));
}

ClosureFile file_of(std::string_view path, std::string_view bytes, uint64_t ino, int64_t sec) {
  ClosureFile f;
  f.path = path;
  f.content = cache::hash_bytes(bytes);
  f.stat.dev = 1;
  f.stat.ino = ino;
  f.stat.mtime_ns = sec * 1000000000 + 5;
  return f;
}

TEST(OnceTwins, PartitionFollowsMtimeSecondsAndInodes) {
  auto partition = [](std::vector<ClosureFile> files) {
    Closure c;
    c.files = std::move(files);
    std::vector<size_t> once;
    for (size_t i = 1; i < c.files.size(); ++i) once.push_back(i);
    return once_twin_partition(once, &c);
  };
  const ClosureFile src = file_of("m.cpp", "main", 1, 100);
  // No twins: nothing for the key.
  EXPECT_EQ(partition({src, file_of("a/x.h", "x", 2, 100), file_of("b/y.h", "y", 3, 100)}), "");
  const std::string same =
      partition({src, file_of("a/x.h", "x", 2, 100), file_of("b/x.h", "x", 3, 100)});
  EXPECT_NE(same, "");
  // Another second for one copy (gcc: two files now).
  EXPECT_NE(partition({src, file_of("a/x.h", "x", 2, 100), file_of("b/x.h", "x", 3, 101)}), same);
  // The same second with other nanoseconds: still one file to gcc.
  ClosureFile later = file_of("b/x.h", "x", 3, 100);
  later.stat.mtime_ns += 7000;
  EXPECT_EQ(partition({src, file_of("a/x.h", "x", 2, 100), later}), same);
  // One inode (a hard link) is another partition (clang: one file).
  EXPECT_NE(partition({src, file_of("a/x.h", "x", 2, 100), file_of("b/x.h", "x", 2, 100)}), same);
  // Marks the twins only.
  Closure c;
  c.files = {src, file_of("a/x.h", "x", 2, 100), file_of("b/x.h", "x", 3, 100),
             file_of("c/z.h", "z", 4, 100)};
  once_twin_partition({1, 2, 3}, &c);
  EXPECT_FALSE(c.files[0].once_twin);
  EXPECT_TRUE(c.files[1].once_twin);
  EXPECT_TRUE(c.files[2].once_twin);
  EXPECT_FALSE(c.files[3].once_twin);
  EXPECT_TRUE(once_twins_merged_by_time(c));
}

}  // namespace
}  // namespace lexpack::closure
