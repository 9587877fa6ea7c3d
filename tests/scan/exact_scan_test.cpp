// Whole projects scanned with no build history, each TU's deps compared with
// what `g++ -M` reports for it: computed includes (Boost's, `#include CFG`),
// #include_next wrappers and branches not taken. No file the compiler reads
// may be missing, and an exact TU lists nothing more.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/file_util.h"
#include "base/process.h"
#include "cache/store.h"
#include "closure/scan_file_cache.h"
#include "lexer/kernel.h"
#include "scan/build_scan.h"
#include "scan/compdb.h"
#include "scan/compiler_deps.h"
#include "scan/module_deps.h"
#include "tests/support/open_store.h"
#include "tests/support/test_dir.h"

namespace lexpack::scan {
namespace {

// What g++ -M says `e` reads, absolute and normal.
std::set<std::string> gcc_deps(const CompdbEntry& e) {
  std::vector<std::string> argv;
  for (size_t i = 0; i < e.argv.size(); ++i) {
    if (e.argv[i] == "-o" || e.argv[i] == "-MF" || e.argv[i] == "-MT") {
      ++i;
      continue;
    }
    if (e.argv[i] == "-c" || e.argv[i] == "-MD" || e.argv[i] == "-MMD") continue;
    argv.push_back(e.argv[i]);
  }
  argv.insert(argv.end(), {"-M", "-MF", "/dev/stdout"});
  std::error_code ec;
  std::filesystem::path old = std::filesystem::current_path(ec);
  std::filesystem::current_path(e.directory, ec);
  base::ProcessResult r = base::run_captured(argv, true);
  std::filesystem::current_path(old, ec);
  EXPECT_TRUE(r.started && r.exit_code == 0) << e.file << ": " << r.err;
  std::set<std::string> out;
  for (const std::string& d : parse_make_deps(r.out)) out.insert(base::normal_path(d, e.directory));
  return out;
}

struct Comparison {
  size_t tus = 0;
  size_t exact = 0;
  size_t from_compiler = 0;
  std::vector<std::string> missed;  // "tu: file"
  std::vector<std::string> extra;   // in exact TUs
};

Comparison compare(const std::vector<CompdbEntry>& entries, cache::Store* store,
                   bool expect_memo = false) {
  ScanReport report = scan_build(entries, store, 2, nullptr);
  Comparison c;
  EXPECT_EQ(report.tus.size(), entries.size());
  for (size_t i = 0; i < entries.size() && i < report.tus.size(); ++i) {
    const TuScan& tu = report.tus[i];
    EXPECT_TRUE(tu.skipped.empty()) << entries[i].file << ": " << tu.skipped;
    EXPECT_EQ(tu.from_memo, expect_memo) << entries[i].file;
    ++c.tus;
    c.exact += tu.exact;
    c.from_compiler += tu.from_compiler;
    std::set<std::string> want = gcc_deps(entries[i]);
    std::set<std::string> got(tu.deps.begin(), tu.deps.end());
    for (const std::string& f : want) {
      if (!got.count(f)) c.missed.push_back(entries[i].file + ": " + f);
    }
    for (const std::string& f : got) {
      if (tu.exact && !want.count(f)) c.extra.push_back(entries[i].file + ": " + f);
    }
  }
  return c;
}

CompdbEntry entry(const testing::TestDir& d, const std::string& file,
                  std::vector<std::string> flags) {
  CompdbEntry e;
  e.directory = d.path();
  e.file = file;
  e.output = file + ".o";
  e.argv = {"g++"};
  e.argv.insert(e.argv.end(), flags.begin(), flags.end());
  e.argv.insert(e.argv.end(), {"-c", file, "-o", e.output});
  return e;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += s + "\n";
  return out;
}

// `#define CFG <cfg.h>` + `#include CFG`, a name built by # and macros, an
// #include_next wrapper, -DCFG=<...> from the command, and branches not taken.
TEST(ExactScan, ComputedIncludesAndIncludeNextMatchTheCompiler) {
  testing::TestDir d;
  d.write("src/cfgs/cfg_a.h", "int cfg_a;\n");
  d.write("src/cfgs/cfg_b.h", "int cfg_b;\n#include \"unused.h\"\n");
  d.write("src/inc/unused.h", "int unused;\n");
  d.write("src/inc/other.h", "int other;\n");
  d.write("src/inc/top.h",
          "#ifndef CFG\n#define CFG <cfg_a.h>\n#endif\n#include CFG\n"
          "#define STR(x) #x\n#define XSTR(x) STR(x)\n#define NAME other\n#include XSTR(NAME.h)\n"
          "#if 0\n#include \"unused.h\"\n#endif\n");
  d.write("src/wrap/stdio.h", "#pragma once\n#include_next <stdio.h>\n#define WRAPPED_STDIO 1\n");
  d.write("src/a.cc",
          "#include <stdio.h>\n#ifndef WRAPPED_STDIO\n#include \"unused.h\"\n#endif\n"
          "#include \"top.h\"\nint main() {}\n");
  d.write("src/b.cc", "#include \"top.h\"\n");
  d.write("src/c.cc",
          "#include <cstdio>\n#if __has_include(<cfg_b.h>)\n#include <cfg_b.h>\n#endif\n"
          "#if defined(__GNUC__) && __GNUC__ < 2\n#include <vector>\n#endif\n");
  std::vector<CompdbEntry> entries;
  CompdbEntry a = entry(d, "a.cc", {"-Iwrap", "-Iinc", "-Icfgs"});
  CompdbEntry b = entry(d, "b.cc", {"-Iinc", "-Icfgs", "-DCFG=<cfg_b.h>"});
  CompdbEntry c = entry(d, "c.cc", {"-Iwrap", "-Iinc", "-Icfgs"});
  for (CompdbEntry* e : {&a, &b, &c}) {
    e->directory = d.at("src");
    entries.push_back(*e);
  }
  Comparison cold = compare(entries, nullptr);
  EXPECT_EQ(cold.missed, std::vector<std::string>()) << join(cold.missed);
  EXPECT_EQ(cold.extra, std::vector<std::string>()) << join(cold.extra);
  EXPECT_EQ(cold.exact, entries.size());
  EXPECT_EQ(cold.from_compiler, 0u);
}

// src/own/stdc-predef.h (a project's own, defining OWN_PREDEF only) and
// src/fallback.h, which the TUs read when a predefined macro is missing.
void write_predef_project(const testing::TestDir& d) {
  d.write("src/own/stdc-predef.h", "#define OWN_PREDEF 1\n");
  d.write("src/fallback.h", "int fallback;\n");
}

// A cold scan of `entries`, run in src/, lists exactly what g++ -M does.
void expect_like_gcc(const testing::TestDir& d, std::vector<CompdbEntry> entries) {
  for (CompdbEntry& e : entries) e.directory = d.at("src");
  Comparison cold = compare(entries, nullptr);
  EXPECT_EQ(cold.missed, std::vector<std::string>()) << join(cold.missed);
  EXPECT_EQ(cold.extra, std::vector<std::string>()) << join(cold.extra);
}

// gcc reads stdc-predef.h through the include search before every file, so an
// -isystem dir holding its own changes the predefined macros: the question of
// them keeps the include directories.
TEST(ExactScan, AnIncludeDirWithItsOwnStdcPredefChangesThePredefinedMacros) {
  testing::TestDir d;
  write_predef_project(d);
  d.write("src/a.cc", "#ifndef __STDC_IEC_559__\n#include \"fallback.h\"\n#endif\n");
  d.write("src/b.cc", "#ifndef __STDC_IEC_559__\n#include \"fallback.h\"\n#endif\n");
  std::vector<CompdbEntry> entries = {entry(d, "a.cc", {"-O2"}),
                                      entry(d, "b.cc", {"-O2", "-isystem", "own"})};
  expect_like_gcc(d, entries);
}

// A header in a subdirectory that includes its parent's header back through
// ".." (libgit2's win32/posix.h and posix.h): the walk, which takes every
// branch, ends at the file it met before. Where the subdirectory is a
// symlink, ".." climbs out of its target, as the compiler's does.
TEST(ExactScan, AnIncludeCycleThroughDotDotEnds) {
  testing::TestDir d;
  d.write("src/inc/top.h",
          "#ifndef TOP_H\n#define TOP_H\n#ifdef _WIN32\n#include \"sub/plat.h\"\n"
          "#endif\n#include \"link/plat.h\"\n#endif\n");
  d.write("src/inc/sub/plat.h", "#include \"../top.h\"\n#include \"../up.h\"\n");
  d.write("src/inc/up.h", "");
  d.write("src/real/deep/sub/plat.h", "#include \"../only.h\"\n");
  d.write("src/real/deep/only.h", "#include \"deeper.h\"\n");
  d.write("src/real/deep/deeper.h", "");
  d.write("src/inc/only.h", "");
  std::filesystem::create_directory_symlink("../real/deep/sub", d.at("src/inc/link"));
  d.write("src/a.cc", "#include \"top.h\"\n");
  d.write("src/b.cc", "#define _WIN32\n#include \"top.h\"\n");
  std::vector<CompdbEntry> entries = {entry(d, "a.cc", {"-Iinc"}), entry(d, "b.cc", {"-Iinc"})};
  expect_like_gcc(d, entries);
  // Each file once per way of reaching it, not once per longer path.
  for (CompdbEntry& e : entries) e.directory = d.at("src");
  ScanReport report = scan_build(entries, nullptr, 2, nullptr);
  ASSERT_NE(report.graph, nullptr);
  // The report keeps the scan's graph as a closure::ScanFileCache.
  auto* graph = const_cast<closure::ScanFileCache*>(
      static_cast<const closure::ScanFileCache*>(report.graph.get()));
  size_t nodes = 0;
  graph->for_each_expanded([&](const closure::ScanFileCache::Node&) { ++nodes; });
  EXPECT_LE(nodes, 12u);
}

// A condition the evaluation cannot decide (__COUNTER__, which ordinary code
// counts up too) takes every branch of that condition only: the TU is not
// exact, but lists no file of a branch the evaluation could rule out.
TEST(ExactScan, AnUndecidedConditionTakesOnlyItsOwnBranches) {
  testing::TestDir d;
  for (const char* h : {"a.h", "b.h", "c.h", "e.h"}) d.write(std::string("src/") + h, "");
  d.write("src/t.cc",
          "#if 0\n#include \"a.h\"\n#endif\n"
          "#if __COUNTER__ == 0\n#include \"b.h\"\n#else\n#include \"e.h\"\n#endif\n"
          "#include \"c.h\"\n");
  std::vector<CompdbEntry> entries = {entry(d, "t.cc", {})};
  entries[0].directory = d.at("src");
  ScanReport report = scan_build(entries, nullptr, 1, nullptr);
  ASSERT_EQ(report.tus.size(), 1u);
  const TuScan& tu = report.tus[0];
  EXPECT_FALSE(tu.exact);
  EXPECT_NE(tu.inexact.find("__COUNTER__"), std::string::npos) << tu.inexact;
  std::set<std::string> got(tu.deps.begin(), tu.deps.end());
  for (const std::string& f : gcc_deps(entries[0])) EXPECT_TRUE(got.count(f)) << f;
  EXPECT_TRUE(got.count(d.at("src/e.h")));   // the other branch of the unknown
  EXPECT_FALSE(got.count(d.at("src/a.h")));  // under #if 0
}

// Compiles the cache leaves out (coverage, -save-temps, assembly output)
// read their files as any compile does: they are scanned like the others.
TEST(ExactScan, UncacheableCompilesAreScannedToo) {
  testing::TestDir d;
  d.write("src/a.h", "");
  d.write("src/b.h", "");
  d.write("src/a.cc", "#include \"a.h\"\n#ifdef NEVER\n#include \"b.h\"\n#endif\n");
  std::vector<CompdbEntry> entries = {entry(d, "a.cc", {"--coverage"}),
                                      entry(d, "a.cc", {"-fprofile-generate", "-save-temps"}),
                                      entry(d, "a.cc", {"-S"})};
  entries[1].output = entries[1].argv.back() = "b.o";
  entries[2].output = entries[2].argv.back() = "c.s";
  expect_like_gcc(d, entries);
}

// Assembly through the preprocessor: its conditionals are evaluated with the
// predefined macros of assembly (__ASSEMBLER__), as gcc -M reads it. One that
// reaches gas's .include lists what the preprocessor reads, and is not exact:
// the assembler reads more.
TEST(ExactScan, AssemblyIsScannedAsThePreprocessorReadsIt) {
  testing::TestDir d;
  d.write("src/asm.h", "");
  d.write("src/c.h", "");
  d.write("src/x.inc", "");
  d.write("src/attr.h", "");
  d.write("src/no_attr.h", "");
  d.write("src/defs.h",
          "#ifdef __ASSEMBLER__\n#include \"asm.h\"\n#else\n#include \"c.h\"\n#endif\n"
          // gcc has no __has_attribute in assembly (a C TU of the same scan
          // asks it, so it is among the questions asked ahead).
          "#if defined(__has_attribute)\n#include \"attr.h\"\n#else\n#include \"no_attr.h\"\n"
          "#endif\n");
  d.write("src/c.c", "#if __has_attribute(unused)\n#include \"defs.h\"\n#endif\n");
  d.write("src/f.S", "#include \"defs.h\"\n.text\nret\n");
  d.write("src/g.S", "#include \"defs.h\"\n.include \"x.inc\"\n");
  std::vector<CompdbEntry> entries = {entry(d, "f.S", {}), entry(d, "g.S", {}),
                                      entry(d, "c.c", {})};
  for (CompdbEntry& e : entries) e.argv[0] = "gcc";
  expect_like_gcc(d, entries);
  for (CompdbEntry& e : entries) e.directory = d.at("src");
  ScanReport report = scan_build(entries, nullptr, 2, nullptr);
  ASSERT_EQ(report.tus.size(), 3u);
  EXPECT_TRUE(report.tus[0].exact) << report.tus[0].inexact;
  EXPECT_TRUE(report.tus[2].exact) << report.tus[2].inexact;
  EXPECT_FALSE(report.tus[1].exact);
  EXPECT_NE(report.tus[1].inexact.find(".include or .incbin"), std::string::npos)
      << report.tus[1].inexact;
}

// A forced include that is not made yet (a generated header of a build
// never built): the TU is not evaluated, and the report says why.
TEST(ExactScan, AMissingForcedIncludeIsNamedAsTheReason) {
  testing::TestDir d;
  d.write("src/a.cc", "int a;\n");
  CompdbEntry e = entry(d, "a.cc", {"-include", "suite.h"});
  e.directory = d.at("src");
  ScanReport report = scan_build({e}, nullptr, 1, nullptr);
  ASSERT_EQ(report.tus.size(), 1u);
  EXPECT_FALSE(report.tus[0].exact);
  EXPECT_EQ(report.tus[0].inexact, "not evaluated: forced include not found: suite.h");
}

// A g++ in d/bin that logs each of its -dM runs to `log`, then runs g++.
std::string logging_gxx(const testing::TestDir& d, const std::string& log) {
  d.write("bin/g++", "#!/bin/sh\ncase \" $* \" in *\" -dM \"*) echo \"$*\" >> '" + log +
                         "';; esac\nexec g++ \"$@\"\n");
  std::filesystem::permissions(d.at("bin/g++"), std::filesystem::perms::owner_all);
  return d.at("bin/g++");
}

// The lines of a logging_gxx log that are builtin-question runs.
std::vector<std::string> question_runs(std::string_view log) {
  std::vector<std::string> runs;
  for (std::string_view rest = log; !rest.empty();) {
    const size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    if (line.find("lexpack-questions") != std::string_view::npos) runs.emplace_back(line);
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
  }
  return runs;
}

// Every TU of `report` exact, with the files g++ -M lists for its entry.
void expect_exact_like_gcc(const ScanReport& report, const std::vector<CompdbEntry>& entries) {
  ASSERT_EQ(report.tus.size(), entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::vector<std::string_view>& deps = report.tus[i].deps;
    EXPECT_TRUE(report.tus[i].exact) << entries[i].file << ": " << report.tus[i].inexact;
    EXPECT_EQ(std::set<std::string>(deps.begin(), deps.end()), gcc_deps(entries[i]))
        << entries[i].file;
  }
}

// Targets that differ only in -I ask the compiler for their macros once:
// what their include directories change is only the stdc-predef.h gcc finds
// with them. Where that file includes another, found through them, each
// asks its own (else the second target would take the first's macros).
TEST(ExactScan, IncludeDirsChangeTheCompilersAnswersOnlyThroughStdcPredef) {
  testing::TestDir d;
  const std::string log = d.at("dm.log");
  const std::string gxx = logging_gxx(d, log);
  d.write("src/a/x.h", "int a;\n");
  d.write("src/b/x.h", "int b;\n");
  d.write("src/own/stdc-predef.h", "#include \"cfg.h\"\n");
  d.write("src/a/cfg.h", "#define X 1\n");
  d.write("src/b/cfg.h", "#define Y 1\n");
  d.write("src/two.h", "int two;\n");
  const std::string source = "#include <x.h>\n#ifdef X\n#include \"two.h\"\n#endif\n";
  for (const char* name : {"src/a.cc", "src/b.cc", "src/c.cc", "src/e.cc"}) d.write(name, source);
  auto with = [&](CompdbEntry e) {
    e.argv[0] = gxx;
    e.directory = d.at("src");
    return e;
  };
  // One job: the second TU finds the first's answers instead of racing it.
  auto expect_exact = [](const std::vector<CompdbEntry>& entries) {
    expect_exact_like_gcc(scan_build(entries, nullptr, 1, nullptr), entries);
  };
  expect_exact({with(entry(d, "a.cc", {"-Ia"})), with(entry(d, "b.cc", {"-Ib"}))});
  base::Result<std::string> asked = base::read_file(log);
  ASSERT_TRUE(asked.ok());
  EXPECT_NE(asked.value().find("-Ia"), std::string::npos) << asked.value();
  EXPECT_EQ(asked.value().find("-Ib"), std::string::npos) << asked.value();
  // own/stdc-predef.h includes cfg.h: X is defined with -Ia, not with -Ib.
  expect_exact({with(entry(d, "c.cc", {"-isystem", "own", "-Ia"})),
                with(entry(d, "e.cc", {"-isystem", "own", "-Ib"}))});
}

// A freestanding compile, or one without the standard include dirs, reads no
// stdc-predef.h: its macros are not defined and the fallback is read.
TEST(ExactScan, FreestandingCompilesReadNoStdcPredef) {
  testing::TestDir d;
  write_predef_project(d);
  d.write("src/a.cc", "#ifndef __STDC_IEC_559__\n#include \"fallback.h\"\n#endif\n");
  d.write("src/b.cc", "#ifndef OWN_PREDEF\n#include \"fallback.h\"\n#endif\n");
  d.write("src/c.cc", "#ifndef __STDC_IEC_559__\n#include \"fallback.h\"\n#endif\n");
  std::vector<CompdbEntry> entries = {entry(d, "a.cc", {"-ffreestanding"}),
                                      entry(d, "b.cc", {"-nostdinc", "-Iown"}),
                                      entry(d, "c.cc", {"-fno-hosted", "-fhosted"})};
  expect_like_gcc(d, entries);
}

// Small packs and a small cap: these tests store little.
cache::StoreOptions small_store() {
  cache::StoreOptions o;
  o.pack_size = 1 << 20;
  o.max_size = 1ull << 30;
  return o;
}

// Builtin questions a library asks through macros of its own, the way
// libstdc++ and glibc do (`#define _GLIBCXX_HAS_BUILTIN(B) __has_builtin(B)`):
// the first round asks them ahead, and every branch still matches g++, with
// the answers known and unknown to this compiler.
TEST(ExactScan, BuiltinQuestionsThroughALibrarysMacros) {
  testing::TestDir d;
  d.write("src/lib.h",
          "#define LIB_HAS_BUILTIN(x) __has_builtin(x)\n"
          "#define Lib_Has_Attribute(x) __has_attribute(x)\n"
          "#if LIB_HAS_BUILTIN(__builtin_expect)\n#include \"expect.h\"\n#endif\n"
          "#if LIB_HAS_BUILTIN(__builtin_no_such_thing)\n#include \"never.h\"\n#endif\n"
          "#if Lib_Has_Attribute(__noinline__) && !Lib_Has_Attribute(__no_such_attr__)\n"
          "#include \"attr.h\"\n#endif\n");
  d.write("src/expect.h", "");
  d.write("src/attr.h", "");
  d.write("src/never.h", "");
  d.write("src/a.cc", "#include \"lib.h\"\n");
  d.write("src/b.cc", "#include \"lib.h\"\n#include \"expect.h\"\n");
  std::vector<CompdbEntry> entries = {entry(d, "a.cc", {"-O2"}), entry(d, "b.cc", {"-O2"})};
  for (CompdbEntry& e : entries) e.directory = d.at("src");
  auto store = testing::open_store(d.at("cache"), small_store());
  ASSERT_NE(store, nullptr);
  Comparison c = compare(entries, store.get());
  EXPECT_EQ(c.missed, std::vector<std::string>()) << join(c.missed);
  EXPECT_EQ(c.extra, std::vector<std::string>()) << join(c.extra);
  EXPECT_EQ(c.exact, 2u);
}

// Every builtin question written in any file a TU of the scan reaches is
// asked with the first compiler run of its set of arguments (all TUs are
// walked before any is evaluated), and TUs that need the same answers at
// the same moment wait for one run: one question run per set here.
TEST(ExactScan, OneQuestionRunPerArgumentSet) {
  testing::TestDir d;
  const std::string log = d.at("dm.log");
  const std::string gxx = logging_gxx(d, log);
  d.write("src/a.h", "#if __has_builtin(__builtin_expect)\n#include \"yes.h\"\n#endif\n");
  d.write("src/b.h",
          "#define LIB_HAS_CPP17_ATTRIBUTE(x) __has_cpp_attribute(x)\n"
          "#if LIB_HAS_CPP17_ATTRIBUTE(nodiscard)\n#include \"yes.h\"\n#endif\n");
  d.write("src/c.h", "#if __has_cpp_attribute(gnu::always_inline)\n#include \"yes.h\"\n#endif\n");
  d.write("src/e.h", "#if __has_builtin(__builtin_no_such_thing)\n#include \"no.h\"\n#endif\n");
  d.write("src/yes.h", "");
  d.write("src/no.h", "");
  std::vector<CompdbEntry> entries;
  for (const char* name : {"a", "b", "c", "e"}) {
    d.write(std::string("src/") + name + ".cc", std::string("#include \"") + name + ".h\"\n");
    CompdbEntry e = entry(d, std::string(name) + ".cc", {"-O2"});
    e.argv[0] = gxx;
    e.directory = d.at("src");
    entries.push_back(e);
  }
  expect_exact_like_gcc(scan_build(entries, nullptr, 2, nullptr), entries);
  base::Result<std::string> asked = base::read_file(log);
  ASSERT_TRUE(asked.ok());
  EXPECT_EQ(question_runs(asked.value()).size(), 1u) << asked.value();
}

// The -D values are applied by the evaluation after the compiler's answers,
// in the command's order, and warnings define nothing: targets that differ
// only in those share one question run. A -U, or a -D of a name that
// stdc-predef.h (read before every file, after the -D values) reads, goes to
// the compiler with the rest, in a run of its own.
TEST(ExactScan, DefinesAndWarningsShareTheCompilersAnswers) {
  testing::TestDir d;
  const std::string log = d.at("dm.log");
  const std::string gxx = logging_gxx(d, log);
  const std::string source =
      "#if defined(X) && X == 1\n#include \"x1.h\"\n"
      "#elif defined(X) && X == 2\n#include \"x2.h\"\n#endif\n"
      "#ifdef F\n#if F(1) == 2\n#include \"f.h\"\n#endif\n#endif\n"
      "#ifdef Y\n#include \"y.h\"\n#endif\n"
      "#if defined(FOO) && FOO == 3\n#include \"foo3.h\"\n#endif\n"
      "#if __OPTIMIZE__ == 7\n#include \"opt7.h\"\n"
      "#elif defined(__OPTIMIZE__)\n#include \"opt.h\"\n#else\n#include \"noopt.h\"\n#endif\n"
      "#ifndef __STDC_IEC_559__\n#include \"fallback.h\"\n#endif\n";
  for (const char* h : {"x1", "x2", "f", "y", "foo3", "opt7", "opt", "noopt", "fallback"}) {
    d.write(std::string("src/") + h + ".h", "");
  }
  const std::vector<std::vector<std::string>> flags = {
      {"-O2", "-DX=1", "-Wall"},          {"-O2", "-Wextra", "-DY", "-Wno-unused"},
      {"-O2", "-DF(a)=a+1", "-D", "X=2"}, {"-O2", "-DFOO", "-DFOO=3", "-D__OPTIMIZE__=7"},
      {"-O2", "-DY", "-U__OPTIMIZE__"},   {"-O2", "-D__GCC_IEC_559=0"},
  };
  std::vector<CompdbEntry> entries;
  for (size_t i = 0; i < flags.size(); ++i) {
    const std::string name = "t" + std::to_string(i) + ".cc";
    d.write("src/" + name, source);
    CompdbEntry e = entry(d, name, flags[i]);
    e.argv[0] = gxx;
    e.directory = d.at("src");
    entries.push_back(e);
  }
  expect_exact_like_gcc(scan_build(entries, nullptr, 2, nullptr), entries);
  base::Result<std::string> asked = base::read_file(log);
  ASSERT_TRUE(asked.ok());
  const std::vector<std::string> runs = question_runs(asked.value());
  ASSERT_EQ(runs.size(), 3u) << asked.value();
  size_t plain = 0;
  for (const std::string& r : runs) {
    // By " -W" and " -D": the question file's random name may hold "-W".
    EXPECT_EQ(r.find(" -W"), std::string::npos) << r;
    if (r.find(" -U__OPTIMIZE__") != std::string::npos) {
      EXPECT_NE(r.find(" -DY"), std::string::npos) << r;
    } else if (r.find(" -D__GCC_IEC_559=0") == std::string::npos) {
      EXPECT_EQ(r.find(" -D"), std::string::npos) << r;
      ++plain;
    }
  }
  EXPECT_EQ(plain, 1u) << asked.value();
}

// A computed include the evaluation cannot expand (__COUNTER__ in the name) is
// asked of the compiler; the answer is remembered and checked by stat.
TEST(ExactScan, UnexpandableComputedIncludeAsksTheCompiler) {
  testing::TestDir d;
  d.write("src/0.h", "int zero;\n");
  d.write("src/a.cc", "#define STR(x) #x\n#define XSTR(x) STR(x)\n#include XSTR(__COUNTER__.h)\n");
  CompdbEntry e = entry(d, "a.cc", {"-I."});
  e.directory = d.at("src");
  auto store = testing::open_store(d.at("cache"), small_store());
  ASSERT_NE(store, nullptr);
  for (int round = 0; round < 2; ++round) {
    Comparison c = compare({e}, store.get());
    EXPECT_EQ(c.missed, std::vector<std::string>()) << join(c.missed);
    EXPECT_EQ(c.extra, std::vector<std::string>()) << join(c.extra);
    EXPECT_EQ(c.from_compiler, 1u);
  }
}

// The remembered -M answer is not reused once a file appears that the
// compiler would now find first: one in a search directory before the old
// one's.
TEST(ExactScan, AShadowingFileForAnUnexpandableComputedIncludeIsSeen) {
  testing::TestDir d;
  d.write("src/later/0.h", "int zero;\n");
  d.write("src/first/keep.txt", "");
  d.write("src/a.cc", "#define STR(x) #x\n#define XSTR(x) STR(x)\n#include XSTR(__COUNTER__.h)\n");
  CompdbEntry e = entry(d, "a.cc", {"-Ifirst", "-Ilater"});
  e.directory = d.at("src");
  auto store = testing::open_store(d.at("cache"), small_store());
  ASSERT_NE(store, nullptr);
  Comparison before = compare({e}, store.get());
  EXPECT_EQ(before.missed, std::vector<std::string>()) << join(before.missed);
  EXPECT_EQ(before.from_compiler, 1u);
  d.write("src/first/0.h", "int shadow;\n");
  Comparison after = compare({e}, store.get());
  EXPECT_EQ(after.missed, std::vector<std::string>()) << join(after.missed);
  EXPECT_EQ(after.extra, std::vector<std::string>()) << join(after.extra);
}

// Boost's computed includes (BOOST_PP_ITERATE, the MPL's preprocessed
// headers): every file g++ reads is listed, cold and warm.
TEST(ExactScan, BoostTusMatchTheCompiler) {
  if (!std::filesystem::exists("/usr/include/boost/mpl/bind.hpp")) {
    GTEST_SKIP() << "libboost-dev is not installed";
  }
  testing::TestDir d;
  const char* headers[] = {"boost/mpl/vector.hpp", "boost/variant.hpp",  "boost/lexical_cast.hpp",
                           "boost/mpl/bind.hpp",   "boost/function.hpp", "boost/tuple/tuple.hpp"};
  std::vector<CompdbEntry> entries;
  int i = 0;
  for (const char* h : headers) {
    std::string name = "t" + std::to_string(i++) + ".cc";
    d.write(name, std::string("#include <") + h + ">\n#include <vector>\nint f() { return 0; }\n");
    entries.push_back(entry(d, name, {"-std=c++17", "-O2"}));
  }
  // Files younger than the clock's resolution are not remembered.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  auto store = testing::open_store(d.at("cache"), small_store());
  ASSERT_NE(store, nullptr);
  for (int round = 0; round < 2; ++round) {
    Comparison c = compare(entries, store.get(), round == 1);
    EXPECT_EQ(c.missed, std::vector<std::string>()) << join(c.missed);
    EXPECT_EQ(c.extra, std::vector<std::string>()) << join(c.extra);
    EXPECT_EQ(c.exact, entries.size());
  }
  // The computed include the issue names is among them.
  ScanReport r = scan_build({entries[3]}, nullptr, 1, nullptr);
  ASSERT_EQ(r.tus.size(), 1u);
  EXPECT_NE(std::find(r.tus[0].deps.begin(), r.tus[0].deps.end(),
                      "/usr/include/boost/mpl/aux_/preprocessed/gcc/bind.hpp"),
            r.tus[0].deps.end());
}

// examples/project, configured and never built.
TEST(ExactScan, ExampleProjectMatchesTheCompiler) {
  testing::TestDir d;
  base::ProcessResult r = base::run_captured(
      {"cmake", "-S", std::string(LEXPACK_SOURCE_DIR) + "/examples/project", "-B", d.at("build"),
       "-G", "Ninja", "-DCMAKE_CXX_COMPILER=g++", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"},
      true);
  ASSERT_TRUE(r.started && r.exit_code == 0) << r.err;
  auto entries = read_compdb(d.at("build/compile_commands.json"));
  ASSERT_TRUE(entries.ok()) << entries.message();
  ASSERT_FALSE(entries->empty());
  Comparison c = compare(*entries, nullptr);
  EXPECT_EQ(c.missed, std::vector<std::string>()) << join(c.missed);
  EXPECT_EQ(c.extra, std::vector<std::string>()) << join(c.extra);
  EXPECT_EQ(c.exact, entries->size());
}

// clang's -M names the files __has_include found, and the scan does too.
TEST(ExactScan, ClangTuMatchesClang) {
  if (base::run_captured({"clang++-14", "--version"}, true).exit_code != 0) {
    GTEST_SKIP() << "clang++-14 is not installed";
  }
  testing::TestDir d;
  d.write("inc/probe.h", "#error never read\n");
  d.write("inc/used.h", "int used;\n");
  d.write(
      "a.cc",
      "#if __has_include(<probe.h>)\n#include <used.h>\n#endif\n"
      "#define HAS(x) __has_include(x)\n#if HAS(<used.h>) && !HAS(<absent.h>)\nint y;\n#endif\n");
  CompdbEntry e = entry(d, "a.cc", {"-Iinc"});
  e.argv[0] = "clang++-14";
  Comparison c = compare({e}, nullptr);
  EXPECT_EQ(c.missed, std::vector<std::string>()) << join(c.missed);
  EXPECT_EQ(c.extra, std::vector<std::string>()) << join(c.extra);
  EXPECT_EQ(c.exact, 1u);
}

// P1689 of an exact TU names only the imports of taken branches.
TEST(ExactScan, P1689ListsOnlyImportsInTakenBranches) {
  testing::TestDir d;
  d.write("m.cc",
          "export module m;\n#if __cplusplus > 201703L\nimport kept;\n#else\nimport "
          "old_std;\n#endif\n#ifdef NOT_DEFINED\nimport skipped;\n#endif\n");
  std::vector<CompdbEntry> entries = {entry(d, "m.cc", {"-std=c++20", "-fmodules-ts"})};
  ScanReport report = scan_build(entries, nullptr, 1, nullptr);
  ASSERT_EQ(report.tus.size(), 1u);
  EXPECT_TRUE(report.tus[0].exact) << report.tus[0].inexact << report.tus[0].skipped;
  std::string err;
  const lexer::Kernel* kernel = lexer::default_kernel(&err);
  ASSERT_NE(kernel, nullptr) << err;
  auto p1689 = format_p1689(report, *kernel);
  ASSERT_TRUE(p1689.ok()) << p1689.message();
  EXPECT_NE(p1689->find("\"kept\""), std::string::npos) << *p1689;
  EXPECT_EQ(p1689->find("old_std"), std::string::npos) << *p1689;
  EXPECT_EQ(p1689->find("skipped"), std::string::npos) << *p1689;
  EXPECT_NE(p1689->find("\"provides\""), std::string::npos) << *p1689;
}

TEST(ExactScan, ParsesMakeRules) {
  EXPECT_EQ(parse_make_deps("a.o: a.cc /usr/include/x.h \\\n b\\ c.h d$$.h\n"),
            (std::vector<std::string>{"a.cc", "/usr/include/x.h", "b c.h", "d$.h"}));
}

}  // namespace
}  // namespace lexpack::scan
