// Tests of the whole-build scan pieces: compile database parsing, the
// .ninja_deps reader on logs the real ninja wrote, and `lexpack scan --check`
// on a real build.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <set>
#include <string>

#include "cache/store.h"

#include "base/file_stat.h"
#include "base/file_util.h"
#include "base/process.h"
#include "ninja_integration/ninja_deps_reader.h"
#include "scan/build_scan.h"
#include "scan/compdb.h"
#include "tests/support/test_dir.h"

namespace lexpack::testing {
namespace {

TEST(SplitCommand, QuotesAndEscapes) {
  std::vector<std::string> w;
  ASSERT_TRUE(scan::split_command(R"(g++  -DA=\"x\" 'a b' "c \"d\" $e" -c\ f.cpp)", &w));
  EXPECT_EQ(w, (std::vector<std::string>{"g++", "-DA=\"x\"", "a b", "c \"d\" $e", "-c f.cpp"}));
  w.clear();
  EXPECT_FALSE(scan::split_command("g++ 'open", &w));
}

TEST(ParseCompdb, CommandsArgumentsPrefixesAndLaunchers) {
  auto r = scan::parse_compdb(R"([
    {"directory": "/b", "command": "", "file": "x", "output": "phony"},
    {"directory": "/b", "command": "cd sub && ccache /usr/bin/c++ -c ../a.cpp -o a.o",
     "file": "../a.cpp", "output": "a.o"},
    {"directory": "/b", "arguments": ["gcc", "-c", "b\u0020c.c"], "file": "b c.c"}
  ])",
                              "db.json");
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].directory, "/b/sub");
  EXPECT_EQ((*r)[0].argv,
            (std::vector<std::string>{"/usr/bin/c++", "-c", "../a.cpp", "-o", "a.o"}));
  EXPECT_EQ((*r)[0].output, "a.o");
  EXPECT_EQ((*r)[1].argv, (std::vector<std::string>{"gcc", "-c", "b c.c"}));
  EXPECT_EQ((*r)[1].output, "");
}

TEST(ParseCompdb, ErrorsNameTheOffset) {
  auto r = scan::parse_compdb("[{\"directory\": \"/b\" \"file\": 1}]", "db.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "db.json: offset 20: expected ',' or '}'");
  EXPECT_FALSE(scan::parse_compdb("{}", "db.json").ok());
  EXPECT_FALSE(scan::parse_compdb("[{\"command\": \"g++ -c a.c\"}]", "db.json").ok());
}

// A ninja project with deps = gcc: two objects, one header each plus a shared one.
void write_ninja_project(const TestDir& dir) {
  dir.write("build.ninja",
            "rule cc\n  command = g++ -MD -MF $out.d -c $in -o $out\n"
            "  deps = gcc\n  depfile = $out.d\n"
            "build a.o: cc a.cpp\nbuild b.o: cc b.cpp\n");
  dir.write("common.h", "#pragma once\n");
  dir.write("a.h", "#include \"common.h\"\n");
  dir.write("b.h", "#include \"common.h\"\n");
  dir.write("a.cpp", "#include \"a.h\"\nint a() { return 1; }\n");
  dir.write("b.cpp", "#include \"b.h\"\nint b() { return 2; }\n");
}

base::ProcessResult sh(const TestDir& dir, const std::string& command) {
  return base::run_captured({"/bin/sh", "-c",
                             "cd " + shell_quote(dir.path()) + " && export LEXPACK_DIR=" +
                                 shell_quote(dir.at("cache")) + " && " + command},
                            true);
}

TEST(NinjaDepsReader, ReadsWhatNinjaRecorded) {
  TestDir dir;
  write_ninja_project(dir);
  ASSERT_EQ(sh(dir, "ninja").exit_code, 0);
  auto deps = ninja_integration::read_ninja_deps(dir.at(".ninja_deps"));
  ASSERT_TRUE(deps.ok()) << deps.message();
  ASSERT_EQ(deps->size(), 2u);
  EXPECT_EQ((*deps)["a.o"],
            (std::vector<std::string>{"a.cpp", "/usr/include/stdc-predef.h", "a.h", "common.h"}));
  EXPECT_EQ((*deps)["b.o"],
            (std::vector<std::string>{"b.cpp", "/usr/include/stdc-predef.h", "b.h", "common.h"}));

  // A rebuild after an edit appends a new record; the last one wins.
  dir.write("a.h", "#pragma once\n");
  ASSERT_EQ(sh(dir, "sleep 0.01; touch a.h; ninja").exit_code, 0);
  deps = ninja_integration::read_ninja_deps(dir.at(".ninja_deps"));
  ASSERT_TRUE(deps.ok()) << deps.message();
  EXPECT_EQ((*deps)["a.o"],
            (std::vector<std::string>{"a.cpp", "/usr/include/stdc-predef.h", "a.h"}));

  // A torn last record is ignored, as ninja itself does.
  std::string bytes = dir.read(".ninja_deps");
  dir.write("torn", bytes + std::string("\x10\x00\x00\x80\x01", 5));
  EXPECT_TRUE(ninja_integration::read_ninja_deps(dir.at("torn")).ok());
}

TEST(NinjaDepsReader, RejectsOtherFiles) {
  TestDir dir;
  dir.write("text", "# not ninja deps\n");
  auto r = ninja_integration::read_ninja_deps(dir.at("text"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("not a ninja deps log"), std::string::npos) << r.message();
  dir.write("v3", std::string("# ninjadeps\n\x03\x00\x00\x00", 16));
  r = ninja_integration::read_ninja_deps(dir.at("v3"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("version 3"), std::string::npos) << r.message();
  EXPECT_FALSE(ninja_integration::read_ninja_deps(dir.at("missing")).ok());
}

// A header the scan lists and ninja's log does not (included since the last
// build) is an "extra" file: told on stderr, so that stdout holds the
// dependencies alone.
TEST(ScanCheck, DifferencesGoToStderr) {
  TestDir dir;
  write_ninja_project(dir);
  dir.write("skipped.h", "int skipped;\n");
  ASSERT_EQ(sh(dir, "ninja").exit_code, 0);
  dir.write("b.cpp", "#include \"b.h\"\n#include \"skipped.h\"\nint b() { return 2; }\n");
  base::ProcessResult r = sh(dir, std::string(LEXPACK_BIN) + " scan -C . --check");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("extra b.o: " + dir.at("skipped.h") + "\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("check: 0 TUs miss a file the compiler read, 1 have extra files"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out.find("extra "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("b.o: \\\n"), std::string::npos) << r.out;
}

// gcc lists none of the files a precompiled header holds: a TU that took
// one the build makes is not charged with them (the files the header's own
// compile read), while a file it includes since the build still shows.
TEST(ScanCheck, ATuThatTookAPrecompiledHeaderHasNoExtraFiles) {
  TestDir dir;
  dir.write("build.ninja",
            "rule cc\n  command = g++ $flags -MD -MF $out.d -c $in -o $out\n"
            "  deps = gcc\n  depfile = $out.d\n"
            "build pch.h.gch: cc pch.h\n  flags = -x c++-header\n"
            "build a.o: cc a.cpp | pch.h.gch\n  flags = -Winvalid-pch -include pch.h\n"
            "build b.o: cc b.cpp | pch.h.gch\n  flags = -Winvalid-pch -include pch.h\n");
  dir.write("pch.h", "#include <vector>\n#include \"held.h\"\n");
  dir.write("held.h", "inline int held() { return 3; }\n");
  dir.write("later.h", "int later;\n");
  dir.write("a.cpp", "#include <vector>\nint a() { return held(); }\n");
  dir.write("b.cpp", "int b() { return held() + 1; }\n");
  ASSERT_EQ(sh(dir, "ninja").exit_code, 0);
  auto recorded = ninja_integration::read_ninja_deps(dir.at(".ninja_deps"));
  ASSERT_TRUE(recorded.ok()) << recorded.message();
  const std::vector<std::string>& a_deps = (*recorded)["a.o"];
  ASSERT_EQ(std::count(a_deps.begin(), a_deps.end(), "held.h"), 0) << "the .gch was not taken";

  base::ProcessResult r = sh(dir, std::string(LEXPACK_BIN) + " scan -C . --check");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("check: 0 TUs miss a file the compiler read, 0 have extra files, 0 not "
                       "recorded by ninja; 2 took a precompiled header"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("\nextra "), std::string::npos) << r.err;

  dir.write("b.cpp", "#include \"later.h\"\nint b() { return held() + 1; }\n");
  r = sh(dir, std::string(LEXPACK_BIN) + " scan -C . --check");
  EXPECT_NE(r.err.find("extra b.o: " + dir.at("later.h") + "\n"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("extra b.o: " + dir.at("held.h")), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1 have extra files, 0 not recorded by ninja; 2 took"), std::string::npos)
      << r.err;
}

// A compile whose forced include is not made yet, with a computed include
// the walk cannot follow: its files cannot be told, and the compiler, which
// would fail on it as well, is not asked. The scan says so on stderr, by
// reason (with a compile whose flags it cannot follow), and leaves link
// steps out of that count.
TEST(ScanCli, CompilesNotScannedAreCountedByReason) {
  TestDir dir;
  dir.write("bin/g++", "#!/bin/sh\ncase \" $* \" in *\" -M \"*) echo \"$*\" >> " +
                           shell_quote(dir.at("m.log")) + ";; esac\nexec g++ \"$@\"\n");
  std::filesystem::permissions(dir.at("bin/g++"), std::filesystem::perms::owner_all);
  dir.write("build.ninja",
            "rule cc\n  command = ./bin/g++ -include gen.h -c $in -o $out\n"
            "rule ok\n  command = ./bin/g++ -c $in -o $out\n"
            "rule link\n  command = ./bin/g++ $in -o $out\n"
            "rule opaque\n  command = ./bin/g++ -Xclang -foo -c $in -o $out\n"
            "build c.o: cc c.cpp\nbuild d.o: cc d.cpp\nbuild e.o: ok e.cpp\n"
            "build f.o: opaque e.cpp\nbuild app: link c.o d.o e.o\n");
  dir.write("a.h", "");
  for (const char* tu : {"c.cpp", "d.cpp", "e.cpp"}) {
    dir.write(tu, "#define H \"a.h\"\n#include H\n");
  }
  base::ProcessResult r = sh(dir, std::string(LEXPACK_BIN) + " scan -C .");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("lexpack: 3 compiles not scanned: 2 cannot tell its dependencies: "
                       "forced include not found: gen.h; 1 cannot scan: opaque_flag (-Xclang)\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("e.o: "), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir.at("m.log")));
}

TEST(ScanCheck, ScanCoversWhatTheCompilerRead) {
  TestDir dir;
  write_ninja_project(dir);
  ASSERT_EQ(sh(dir, "ninja").exit_code, 0);
  base::ProcessResult r = sh(dir, std::string(LEXPACK_BIN) + " scan -C . --check");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("scanned 2 TUs"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("check: 0 TUs miss a file"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("a.o: \\\n  " + dir.at("a.cpp") + " \\\n  " + dir.at("a.h")),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.err.find("extra a.o"), std::string::npos) << r.err;

  // The same scan in-process, checked against a record with one file more:
  // the check must report it as missed.
  auto entries = scan::compdb_from_ninja(dir.path());
  ASSERT_TRUE(entries.ok()) << entries.message();
  scan::ScanReport report = scan::scan_build(*entries, nullptr, 2, nullptr);
  ASSERT_EQ(report.scanned, 2u) << report.tus[0].skipped;
  auto deps = ninja_integration::read_ninja_deps(dir.at(".ninja_deps"));
  ASSERT_TRUE(deps.ok());
  uint64_t unrecorded = 0, took_precompiled = 0;
  EXPECT_TRUE(
      scan::check_against_ninja(report, *deps, dir.path(), &unrecorded, &took_precompiled).empty());
  (*deps)["b.o"].push_back("unseen.h");
  auto findings =
      scan::check_against_ninja(report, *deps, dir.path(), &unrecorded, &took_precompiled);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].output, "b.o");
  EXPECT_EQ(findings[0].missed, (std::vector<std::string>{dir.at("unseen.h")}));
}

TEST(NormalPath, MatchesLexicallyNormal) {
  const char* paths[] = {"a.cpp",
                         "./a.cpp",
                         "../a.cpp",
                         "../../../../x/y.h",
                         "/usr/include/c++/12/../../x.h",
                         "/a//b/./c.h",
                         "/a/b/..",
                         "/a/b/.",
                         "/a/b/",
                         "//a/b.h",
                         "sub/../../up.h",
                         "/..",
                         "/../a.h",
                         "x/./y/../z.h",
                         ""};
  for (const char* dir : {"/b/build", "/", "/b/build/"}) {
    for (const char* p : paths) {
      std::string abs = p[0] == '/' ? std::string(p) : std::string(dir) + "/" + p;
      if (!*p) abs = dir;
      EXPECT_EQ(base::normal_path(p, dir), std::filesystem::path(abs).lexically_normal().string())
          << dir << " + " << p;
    }
  }
}

TEST(FormatMake, EscapesSpacesHashesBackslashesAndDollars) {
  scan::ScanReport report;
  scan::TuScan tu;
  tu.directory = "/b";
  tu.source = "a b.cpp";
  tu.output = "o$ 1.o";
  scan::own_deps(&tu, {"/b/a b.cpp", "/b/x#y.h", "/b/c\\d.h", "/b/e.h"});
  report.tus.push_back(tu);
  scan::TuScan skipped;
  skipped.directory = "/b";
  skipped.source = "skipped.cpp";
  skipped.output = "s.o";
  skipped.skipped = "not a compile";
  report.tus.push_back(skipped);
  EXPECT_EQ(scan::format_make(report),
            "o$$\\ 1.o: \\\n  /b/a\\ b.cpp \\\n  /b/x\\#y.h \\\n  /b/c\\\\d.h \\\n  /b/e.h\n");
}

// A large build's rules reach the sink in pieces that add up to the same
// text, and a sink that fails stops the writing.
TEST(FormatMake, LargeRulesArriveInPiecesThatAddUp) {
  scan::ScanReport report;
  for (int t = 0; t < 30; ++t) {
    scan::TuScan tu;
    tu.directory = "/b";
    tu.source = "t" + std::to_string(t) + ".cpp";
    tu.output = "t" + std::to_string(t) + ".o";
    std::vector<std::string> deps;
    for (int d = 0; d < 400; ++d) deps.push_back("/usr/include/dir " + std::to_string(d) + ".h");
    scan::own_deps(&tu, std::move(deps));
    report.tus.push_back(std::move(tu));
  }
  const std::string whole = scan::format_make(report);
  ASSERT_GT(whole.size(), 4u * 64 * 1024);
  std::string joined;
  size_t pieces = 0;
  EXPECT_TRUE(scan::write_make(report, [&](std::string_view piece) {
    EXPECT_FALSE(piece.empty());
    joined.append(piece);
    ++pieces;
    return true;
  }));
  EXPECT_EQ(joined, whole);
  EXPECT_GE(pieces, 4u);
  size_t calls = 0;
  EXPECT_FALSE(scan::write_make(report, [&](std::string_view) {
    ++calls;
    return false;
  }));
  EXPECT_EQ(calls, 1u);
}

bool has_dep(const scan::TuScan& tu, const std::string& path) {
  return std::find(tu.deps.begin(), tu.deps.end(), path) != tu.deps.end();
}

// g++ compiles of each named TU in `dir` with -Iinc1 -Iinc2.
std::vector<scan::CompdbEntry> two_dir_entries(const TestDir& dir,
                                               std::initializer_list<std::string> tus) {
  std::vector<scan::CompdbEntry> entries;
  for (const std::string& tu : tus) {
    entries.push_back({dir.path(),
                       tu + ".cpp",
                       tu + ".o",
                       {"g++", "-Iinc1", "-Iinc2", "-c", tu + ".cpp", "-o", tu + ".o"}});
  }
  return entries;
}

// One whole-build scan with the cache in dir/cache, on `jobs` threads.
scan::ScanReport scan_with_cache(const TestDir& dir, const std::vector<scan::CompdbEntry>& entries,
                                 int jobs) {
  cache::StoreOptions options;
  options.dir = dir.at("cache");
  auto store = cache::Store::open(options);
  EXPECT_TRUE(store.ok()) << store.message();
  return scan::scan_build(entries, store.ok() ? store->get() : nullptr, jobs, nullptr);
}

// One TU of each set of macro-deciding arguments is scanned first (its
// compiler question then overlaps the others'); include directories, the
// source and the output do not make a set; the report keeps the entries'
// order.
TEST(ScanOrder, FirstOneTuOfEachArgumentSet) {
  auto entry = [](std::vector<std::string> argv) {
    return scan::CompdbEntry{"/b", argv[argv.size() - 3], argv.back(), argv};
  };
  const std::vector<scan::CompdbEntry> entries = {
      entry({"g++", "-Ia", "-Wall", "-c", "a.cpp", "-o", "a.o"}),
      entry({"g++", "-Ib", "-Wall", "-c", "b.cpp", "-o", "b.o"}),
      entry({"g++", "-Ic", "-Wall", "-c", "c.cpp", "-o", "c.o"}),
      entry({"g++", "-Ia", "-O2", "-c", "d.cpp", "-o", "d.o"}),
      entry({"gcc", "-Ia", "-Wall", "-c", "e.c", "-o", "e.o"}),
      entry({"g++", "-Ic", "-O2", "-c", "f.cpp", "-o", "f.o"}),
      // -D values and warnings are not asked of the compiler: one set with a.
      entry({"g++", "-Ib", "-DX=1", "-Wextra", "-c", "g.cpp", "-o", "g.o"}),
  };
  EXPECT_EQ(scan::scan_order(entries, {0, 1, 2, 3, 4, 5, 6}),
            (std::vector<size_t>{0, 3, 4, 1, 2, 5, 6}));
  EXPECT_EQ(scan::scan_order(entries, {1, 2, 5}), (std::vector<size_t>{1, 5, 2}));
  EXPECT_EQ(scan::scan_order(entries, {0, 1, 2}), (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(scan::scan_order(entries, {6, 3}), (std::vector<size_t>{6, 3}));
}

TEST(ScanOrder, TheReportKeepsTheEntriesOrder) {
  TestDir dir;
  dir.write("x.h", "int x;\n");
  std::vector<scan::CompdbEntry> entries;
  for (const char* tu : {"a", "b", "c"}) {
    dir.write(std::string(tu) + ".cpp", "#ifdef X\n#include \"x.h\"\n#endif\n");
    std::vector<std::string> argv = {"g++", "-c", std::string(tu) + ".cpp", "-o",
                                     std::string(tu) + ".o"};
    if (std::string(tu) == "c") argv.insert(argv.begin() + 1, "-DX");
    entries.push_back({dir.path(), std::string(tu) + ".cpp", std::string(tu) + ".o", argv});
  }
  scan::ScanReport r = scan::scan_build(entries, nullptr, 1, nullptr);
  ASSERT_EQ(r.tus.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(r.tus[i].skipped.empty()) << r.tus[i].skipped;
    EXPECT_EQ(r.tus[i].output, entries[i].output);
    EXPECT_EQ(r.tus[i].deps.front(), dir.at(entries[i].file));
    EXPECT_EQ(has_dep(r.tus[i], dir.at("x.h")), i == 2) << i;
  }
}

// A TU whose walk fails (a header that cannot be read) is skipped, and the
// files its walk reached before failing are not counted as the scan's.
TEST(ScanMemo, SkippedTuFilesAreNotCounted) {
  TestDir dir;
  dir.write("a.h", "int a;\n");
  dir.write("bad.cpp", "#include \"a.h\"\n#include \"/proc/self/mem\"\n");
  dir.write("ok.cpp", "int ok;\n");
  const std::vector<scan::CompdbEntry> entries = two_dir_entries(dir, {"bad", "ok"});
  scan::ScanReport r = scan::scan_build(entries, nullptr, 1, nullptr);
  ASSERT_FALSE(r.tus[0].skipped.empty());
  ASSERT_TRUE(r.tus[1].skipped.empty()) << r.tus[1].skipped;
  std::set<std::string> all_deps;
  for (const scan::TuScan& tu : r.tus) all_deps.insert(tu.deps.begin(), tu.deps.end());
  EXPECT_EQ(r.unique_files, all_deps.size());
}

// A warm scan answers unchanged TUs from their scan memo, with the same deps as
// a full scan, and rescans exactly the TUs whose files or search dirs changed.
TEST(ScanMemo, WarmScanRescansOnlyWhatChanged) {
  TestDir dir;
  dir.write("inc1/.keep", "");
  dir.write("inc2/x.h", "#pragma once\n");
  dir.write("y.h", "#pragma once\n");
  dir.write("a.cpp", "#include \"x.h\"\nint a() { return 1; }\n");
  dir.write("b.cpp", "#include \"y.h\"\nint b() { return 2; }\n");
  dir.write("c.cpp", "int c() { return 3; }\n");
  sleep(2);  // memos are kept only for signatures at least a second old
  const std::vector<scan::CompdbEntry> entries = two_dir_entries(dir, {"a", "b", "c"});
  auto scan = [&] { return scan_with_cache(dir, entries, 2); };
  scan::ScanReport cold = scan();
  ASSERT_EQ(cold.scanned, 3u) << cold.tus[0].skipped;
  EXPECT_EQ(cold.from_memo, 0u);
  EXPECT_TRUE(has_dep(cold.tus[0], dir.at("inc2/x.h")));
  scan::ScanReport warm = scan();
  EXPECT_EQ(warm.from_memo, 3u);
  EXPECT_EQ(warm.from_group, 3u);  // the directory's TUs checked together
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(warm.tus[i].deps, cold.tus[i].deps) << i;
  EXPECT_EQ(warm.unique_files, cold.unique_files);
  EXPECT_EQ(warm.unique_bytes, cold.unique_bytes);
  // Unique files: every dep of every TU once (gcc's stdc-predef.h included).
  std::set<std::string> all_deps;
  for (const scan::TuScan& tu : cold.tus) all_deps.insert(tu.deps.begin(), tu.deps.end());
  EXPECT_EQ(cold.unique_files, all_deps.size());
  uint64_t bytes = 0;
  for (const std::string& d : all_deps) bytes += std::filesystem::file_size(d);
  EXPECT_EQ(cold.unique_bytes, bytes);

  // A header now shadows x.h from an earlier -I dir, and y.h gains an include.
  dir.write("inc1/x.h", "#pragma once\n");
  dir.write("z.h", "#pragma once\n");
  dir.write("y.h", "#pragma once\n#include \"z.h\"\n");
  scan::ScanReport after = scan();
  ASSERT_EQ(after.scanned, 3u);
  EXPECT_EQ(after.from_memo, 1u);
  EXPECT_FALSE(after.tus[0].from_memo);
  EXPECT_TRUE(has_dep(after.tus[0], dir.at("inc1/x.h")));
  EXPECT_FALSE(has_dep(after.tus[0], dir.at("inc2/x.h")));
  EXPECT_FALSE(after.tus[1].from_memo);
  EXPECT_TRUE(has_dep(after.tus[1], dir.at("z.h")));
  EXPECT_TRUE(after.tus[2].from_memo);
  EXPECT_EQ(after.tus[2].deps, cold.tus[2].deps);
  EXPECT_EQ(after.from_group, 0u);

  // Once the new files are settled, their TUs' memos and then the group's
  // are made again, with the new answers.
  sleep(2);
  scan::ScanReport settled = scan();
  EXPECT_EQ(settled.from_memo, 1u);
  EXPECT_EQ(settled.from_group, 0u);
  scan::ScanReport again = scan();
  EXPECT_EQ(again.from_group, 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(again.tus[i].deps, settled.tus[i].deps) << i;
  EXPECT_TRUE(has_dep(again.tus[0], dir.at("inc1/x.h")));
  EXPECT_TRUE(has_dep(again.tus[1], dir.at("z.h")));
}

// The report says where the scan's time went: a cold scan walks and
// evaluates, a warm one of an unchanged build only checks its group memos.
// Right after a configure wrote its headers, a second scan takes every TU
// from its memo: a file written within the last second is recorded by its
// content. Changed within that second, even to the same size, it is
// scanned again.
TEST(ScanMemo, FilesJustWrittenAreCheckedByContent) {
  TestDir dir;
  dir.write("inc2/x.h", "#pragma once\n#include \"y.h\"\n");
  dir.write("inc1/y.h", "#pragma once\n");
  dir.write("inc1/w.h", "#pragma once\n");
  dir.write("a.cpp", "#include \"x.h\"\nint a() { return 1; }\n");
  dir.write("b.cpp", "#include \"y.h\"\nint b() { return 2; }\n");
  const std::vector<scan::CompdbEntry> entries = two_dir_entries(dir, {"a", "b"});
  auto scan = [&] { return scan_with_cache(dir, entries, 2); };
  scan::ScanReport cold = scan();
  ASSERT_EQ(cold.scanned, 2u) << cold.tus[0].skipped;
  ASSERT_TRUE(has_dep(cold.tus[0], dir.at("inc1/y.h")));
  scan::ScanReport warm = scan();
  EXPECT_EQ(warm.from_memo, 2u);
  for (size_t i = 0; i < 2; ++i) EXPECT_EQ(warm.tus[i].deps, cold.tus[i].deps) << i;

  dir.write("inc2/x.h", "#pragma once\n#include \"w.h\"\n");  // the same size
  scan::ScanReport edited = scan();
  EXPECT_FALSE(edited.tus[0].from_memo);
  EXPECT_TRUE(has_dep(edited.tus[0], dir.at("inc1/w.h")));
  EXPECT_FALSE(has_dep(edited.tus[0], dir.at("inc1/y.h")));
  EXPECT_TRUE(edited.tus[1].from_memo);
}

TEST(ScanReport, PhasesTellWhereTheTimeWent) {
  TestDir dir;
  dir.write("x.h", "#pragma once\n#if __has_include(<y.h>)\n#endif\n");
  dir.write("a.cpp", "#include \"x.h\"\nint a() { return 1; }\n");
  dir.write("b.cpp", "#include \"x.h\"\nint b() { return 2; }\n");
  sleep(2);  // memos are kept only for signatures at least a second old
  const std::vector<scan::CompdbEntry> entries = two_dir_entries(dir, {"a", "b"});
  auto sum = [](const scan::ScanReport::Phases& p) {
    return p.group_memo_us + p.questions_us + p.walk_us + p.evaluate_us + p.remember_us +
           p.write_us;
  };
  scan::ScanReport cold = scan_with_cache(dir, entries, 2);
  ASSERT_EQ(cold.scanned, 2u) << cold.tus[0].skipped;
  EXPECT_GT(cold.phases.walk_us, 0u);
  EXPECT_GT(cold.phases.evaluate_us, 0u);
  EXPECT_LE(sum(cold.phases), cold.elapsed_us);
  scan::ScanReport warm = scan_with_cache(dir, entries, 2);
  ASSERT_EQ(warm.from_group, 2u);
  EXPECT_EQ(warm.phases.questions_us, 0u);
  EXPECT_EQ(warm.phases.walk_us, 0u);
  EXPECT_EQ(warm.phases.evaluate_us, 0u);
  EXPECT_EQ(warm.phases.remember_us, 0u);
  EXPECT_GT(warm.phases.group_memo_us, 0u);
  EXPECT_LE(sum(warm.phases), warm.elapsed_us);
}

// Headers' include answers are shared by the TUs of one scan: a TU that reaches
// a header only after another TU resolved the same include elsewhere must
// still record that include's failed candidates, or a header added in an
// earlier -I dir would leave it served from its memo.
TEST(ScanMemo, SharedHeaderAnswersKeepTheirFailedProbesInEveryTu) {
  TestDir dir;
  dir.write("inc1/.keep", "");
  dir.write("inc2/x.h", "#pragma once\n");
  dir.write("first.h", "#pragma once\n#include <x.h>\n");
  dir.write("shared.h", "#pragma once\n#include <x.h>\n");
  dir.write("a.cpp", "#include \"first.h\"\n#include \"shared.h\"\nint a() { return 1; }\n");
  dir.write("b.cpp", "#include \"shared.h\"\nint b() { return 2; }\n");
  sleep(2);  // memos are kept only for signatures at least a second old
  const std::vector<scan::CompdbEntry> entries = two_dir_entries(dir, {"a", "b"});
  // One thread: a is walked first, so b meets shared.h's answers second-hand.
  auto scan = [&] { return scan_with_cache(dir, entries, 1); };
  scan::ScanReport cold = scan();
  ASSERT_EQ(cold.scanned, 2u) << cold.tus[0].skipped << cold.tus[1].skipped;
  EXPECT_TRUE(has_dep(cold.tus[1], dir.at("inc2/x.h")));

  dir.write("inc1/x.h", "#pragma once\n");
  scan::ScanReport after = scan();
  ASSERT_EQ(after.scanned, 2u);
  EXPECT_EQ(after.from_memo, 0u);
  for (const scan::TuScan& tu : after.tus) {
    EXPECT_TRUE(has_dep(tu, dir.at("inc1/x.h"))) << tu.source;
    EXPECT_FALSE(has_dep(tu, dir.at("inc2/x.h"))) << tu.source;
  }
}

}  // namespace
}  // namespace lexpack::testing
