// The include graph shared by the TUs of a scan: walks racing over the same
// questions keep valid answers, and a memo never pairs a directory signature
// with a missing-name answer older than it.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/file_stat.h"
#include "closure/closure_memo.h"
#include "closure/dependency_closure.h"
#include "closure/file_state.h"
#include "closure/scan_file_cache.h"
#include "lexer/kernel.h"
#include "scan/scan_memo.h"
#include "tests/lexer/scan_test_util.h"
#include "tests/support/test_dir.h"

namespace lexpack::scan {
namespace {

using lexer::testing::kernel;

// m.cpp includes <x.h>, searched in inc (empty) then sys; all settled.
struct TwoDirs {
  compiler::SearchList list;
  compiler::CompileCommand cmd;
};
TwoDirs settled_two_dirs(testing::TestDir& d) {
  d.write("inc/.keep", "");
  d.write("sys/x.h", "int x;\n");
  d.write("m.cpp", "#include <x.h>\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  TwoDirs t;
  t.list.bracket_dirs = {d.at("inc"), d.at("sys")};
  t.cmd.source = d.at("m.cpp");
  return t;
}

// gcc's implicit stdc-predef.h is asked by every walk before its source: two
// walks that ask at once must both end up with failed candidates that read
// what was probed, whichever of their answers the scan kept.
TEST(SharedWalk, RacingWalksKeepValidFailedCandidates) {
  testing::TestDir d;
  d.write("inc/x.h", "int x;\n");
  d.write("sys/stdc-predef.h", "\n");
  d.write("m.cpp", "#include <x.h>\n");
  compiler::SearchList list;
  list.bracket_dirs = {d.at("inc"), d.at("sys")};
  compiler::CompileCommand cmd;
  cmd.source = d.at("m.cpp");
  const std::string expected = d.at("inc/stdc-predef.h");
  for (int iter = 0; iter < 300; ++iter) {
    closure::ScanFileCache shared;
    std::atomic<int> ready{0};
    closure::Closure out[2];
    auto walk = [&](int i) {
      closure::FileStates files(nullptr, kernel());
      files.share(&shared);
      ready.fetch_add(1);
      while (ready.load() < 2) {
      }
      auto c = closure::compute_closure(&files, cmd, list, compiler::CompilerKind::kGcc, d.path());
      ASSERT_TRUE(c.ok()) << c.message();
      out[i] = std::move(c.value());
    };
    std::thread other(walk, 1);
    walk(0);
    other.join();
    // Churn the heap: a view into a freed answer would now read other bytes.
    std::vector<std::string> churn(64, std::string(expected.size(), 'Z'));
    for (const closure::Closure& c : out) {
      ASSERT_FALSE(c.failed_probes.empty());
      ASSERT_EQ(c.failed_probes[0], expected) << "iteration " << iter;
    }
  }
}

// A name found missing early in a scan, then created: the memo must carry
// the directory's signature from before that answer, so the next scan sees
// the directory changed and looks for the name again.
TEST(SharedWalk, MemoDirectorySignaturePredatesItsMissingNames) {
  testing::TestDir d;
  const auto [list, cmd] = settled_two_dirs(d);
  closure::ScanFileCache shared;
  // Another TU's memo check asks about inc/x.h first, as the warm check does.
  ASSERT_FALSE(shared.stat_once(d.at("inc/x.h"), d.at("inc/x.h")));
  d.write("inc/x.h", "int shadow;\n");
  closure::FileStates files(nullptr, kernel());
  files.share(&shared);
  auto closure =
      closure::compute_closure(&files, cmd, list, compiler::CompilerKind::kGcc, d.path());
  ASSERT_TRUE(closure.ok()) << closure.message();
  std::optional<std::string> memo =
      closure::encode_closure_memo(*closure, list, {}, &shared, d.path());
  ASSERT_TRUE(memo);
  closure::ScanFileCache next_scan;
  DirStatCache dirs;
  std::vector<std::string_view> deps;
  std::vector<uint64_t> sizes;
  EXPECT_FALSE(check_encoded_scan_memo(encode_scan_memo(*memo, {{d.at("m.cpp"), 15, 1}}), d.path(),
                                       &next_scan, &dirs, &deps, &sizes))
      << "the memo was accepted although inc/x.h now shadows sys/x.h";
}

// A warm scan checks the encoded memo where it lies: the same deps come back
// when nothing changed, and a change or a damaged memo is a rescan.
TEST(SharedWalk, EncodedScanMemoIsCheckedInPlace) {
  testing::TestDir d;
  const auto [list, cmd] = settled_two_dirs(d);
  closure::ScanFileCache shared;
  closure::FileStates files(nullptr, kernel());
  files.share(&shared);
  auto closure =
      closure::compute_closure(&files, cmd, list, compiler::CompilerKind::kGcc, d.path());
  ASSERT_TRUE(closure.ok()) << closure.message();
  std::optional<std::string> closure_memo =
      closure::encode_closure_memo(*closure, list, {}, &shared, d.path());
  ASSERT_TRUE(closure_memo);
  // The source and x.h by their place in the closure, one path in full.
  ASSERT_EQ(closure->files.size(), 2u);
  ASSERT_EQ(closure->files[1].path, d.at("sys/x.h"));
  const std::vector<std::string> want_deps = {d.at("m.cpp"), d.at("sys/x.h"),
                                              "/not/in/the/closure.h"};
  const std::vector<uint64_t> want_sizes = {15, 7, 3};
  const std::string bytes = encode_scan_memo(
      *closure_memo, {{want_deps[0], 15, 1}, {want_deps[1], 7, 2}, {want_deps[2], 3, 0}});

  auto check = [&](std::string_view b, std::vector<std::string>* deps,
                   std::vector<uint64_t>* sizes) {
    closure::ScanFileCache next_scan;  // holds the paths the views name
    DirStatCache dirs;
    std::vector<std::string_view> views;
    bool held = check_encoded_scan_memo(b, d.path(), &next_scan, &dirs, &views, sizes);
    deps->assign(views.begin(), views.end());
    return held;
  };
  std::vector<std::string> deps;
  std::vector<uint64_t> sizes;
  ASSERT_TRUE(check(bytes, &deps, &sizes));
  EXPECT_EQ(deps, want_deps);
  EXPECT_EQ(sizes, want_sizes);
  for (size_t cut : {size_t(0), size_t(10), bytes.size() / 2, bytes.size() - 1}) {
    EXPECT_FALSE(check(std::string_view(bytes).substr(0, cut), &deps, &sizes)) << cut;
  }
  d.write("sys/x.h", "int x, y;\n");
  EXPECT_FALSE(check(bytes, &deps, &sizes));
}

// The memo written straight from a closure holds what the closure holds: its
// files with their signatures, each failed candidate under its directory (the
// directories in name order, their candidates in walk order), the search
// dirs the compiler found missing; and it reads back to the same bytes.
TEST(SharedWalk, ClosureMemoHoldsTheClosure) {
  testing::TestDir d;
  d.write("a/.keep", "");
  d.write("b/.keep", "");
  d.write("sys/x.h", "#include <y.h>\n#include <sub/z.h>\n");
  d.write("sys/y.h", "int y;\n");
  d.write("sys/sub/z.h", "int z;\n");
  d.write("m.cpp", "#include <x.h>\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  compiler::SearchList list;
  list.bracket_dirs = {d.at("b"), d.at("a"), d.at("sys")};
  list.missing_dirs = {d.at("gone")};
  compiler::CompileCommand cmd;
  cmd.source = d.at("m.cpp");
  closure::ScanFileCache shared;
  closure::FileStates files(nullptr, kernel());
  files.share(&shared);
  auto closure =
      closure::compute_closure(&files, cmd, list, compiler::CompilerKind::kClang, d.path());
  ASSERT_TRUE(closure.ok()) << closure.message();
  const cache::Hash128 key{1, 2};
  std::optional<std::string> bytes =
      closure::encode_closure_memo(*closure, list, key, &shared, d.path());
  ASSERT_TRUE(bytes);
  closure::ClosureMemo memo;
  ASSERT_TRUE(closure::decode_closure_memo(*bytes, &memo));
  EXPECT_EQ(closure::encode_closure_memo(memo), *bytes);
  EXPECT_EQ(memo.action_key, key);
  ASSERT_EQ(memo.dependencies.size(), closure->files.size());
  for (size_t i = 0; i < memo.dependencies.size(); ++i) {
    EXPECT_EQ(memo.dependencies[i].path, closure->files[i].path);
    EXPECT_EQ(memo.dependencies[i].stat, closure->files[i].stat);
  }
  // The missing a/sub and b/sub are vouched for by a and b, which hold no
  // entry named sub: no stat of their own while a and b stay the same.
  ASSERT_EQ(memo.probed_dirs.size(), 2u);
  EXPECT_EQ(memo.probed_dirs[0].dir, d.at("a"));
  EXPECT_EQ(memo.probed_dirs[0].probes, (std::vector<std::string>{d.at("a/x.h"), d.at("a/y.h")}));
  EXPECT_EQ(memo.probed_dirs[1].dir, d.at("b"));
  EXPECT_EQ(memo.probed_dirs[1].probes, (std::vector<std::string>{d.at("b/x.h"), d.at("b/y.h")}));
  for (size_t i : {0, 1}) EXPECT_TRUE(memo.probed_dirs[i].exists) << i;
  ASSERT_EQ(memo.vouched.size(), 2u);
  EXPECT_EQ(memo.vouched[0].ancestor, d.at("a"));
  EXPECT_EQ(memo.vouched[0].dirs, (std::vector<std::string>{d.at("a/sub")}));
  EXPECT_EQ(memo.vouched[1].ancestor, d.at("b"));
  EXPECT_EQ(memo.vouched[1].dirs, (std::vector<std::string>{d.at("b/sub")}));
  for (size_t i = 0; i < memo.dependencies.size(); ++i) {
    EXPECT_EQ(memo.dependencies[i].content, closure->files[i].content) << i;
  }
  EXPECT_EQ(memo.absent_dirs, list.missing_dirs);
  EXPECT_EQ(closure::check_closure_memo(memo), "");
  d.write("b/sub/other.h", "int other;\n");
  EXPECT_EQ(closure::check_closure_memo(memo), "probed directory appeared: " + d.at("b/sub"));
  d.remove("b/sub");
  EXPECT_EQ(closure::check_closure_memo(memo), "");
  d.write("a/y.h", "int shadow;\n");
  EXPECT_EQ(closure::check_closure_memo(memo), "appeared: " + d.at("a/y.h"));
}

// One header found at two places of the search chain: its #include_next
// answers differ by place, so the walk follows both (the file is listed once).
TEST(SharedWalk, SamePathAtTwoChainPlacesKeepsBothIncludeNexts) {
  testing::TestDir d;
  d.write("m.cpp", "#include \"inc/x.h\"\n#include <x.h>\n");
  d.write("inc/x.h", "#include_next <y.h>\n");
  d.write("inc/y.h", "int iy;\n");
  d.write("other/y.h", "int oy;\n");
  compiler::SearchList list;
  list.bracket_dirs = {d.at("inc"), d.at("other")};
  compiler::CompileCommand cmd;
  cmd.source = d.at("m.cpp");
  for (bool scan : {false, true}) {
    closure::ScanFileCache shared;
    closure::FileStates files(nullptr, kernel());
    if (scan) files.share(&shared);
    auto closure =
        closure::compute_closure(&files, cmd, list, compiler::CompilerKind::kGcc, d.path());
    ASSERT_TRUE(closure.ok()) << closure.message();
    std::vector<std::string> paths;
    for (const closure::ClosureFile& f : closure->files) paths.emplace_back(f.path);
    EXPECT_EQ(std::count(paths.begin(), paths.end(), d.at("inc/x.h")), 1) << scan;
    EXPECT_EQ(std::count(paths.begin(), paths.end(), d.at("inc/y.h")), 1) << scan;
    EXPECT_EQ(std::count(paths.begin(), paths.end(), d.at("other/y.h")), 1) << scan;
  }
}

// A scan's walk keeps each file it read and lexed for the evaluation of the
// TUs (one read and one lex per file and scan) when the scan asks it to; the
// bytes are those of the stat they were read at, and another stat of the
// same file finds nothing.
TEST(SharedWalk, LexedFilesAreKeptForTheEvaluation) {
  testing::TestDir d;
  TwoDirs t = settled_two_dirs(d);
  closure::ScanFileCache graph;
  closure::FileStates files(nullptr, kernel());
  files.share(&graph);
  // Only when asked to: another user of a shared graph would only hold them.
  ASSERT_TRUE(
      closure::compute_closure(&files, t.cmd, t.list, compiler::CompilerKind::kGcc, d.path()).ok());
  base::StatSignature sig;
  ASSERT_TRUE(base::stat_file(d.at("sys/x.h"), &sig));
  EXPECT_EQ(graph.find_lexed(sig), nullptr);
  closure::ScanFileCache kept;
  kept.keep_lexed();
  files.share(&kept);
  auto closure =
      closure::compute_closure(&files, t.cmd, t.list, compiler::CompilerKind::kGcc, d.path());
  ASSERT_TRUE(closure.ok()) << closure.message();
  std::shared_ptr<const closure::LexedFile> x = kept.find_lexed(sig);
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->bytes, "int x;\n");
  EXPECT_TRUE(x->scan.directives.empty());
  ASSERT_TRUE(base::stat_file(d.at("m.cpp"), &sig));
  x = kept.find_lexed(sig);
  ASSERT_NE(x, nullptr);
  ASSERT_EQ(x->scan.directives.size(), 1u);
  EXPECT_EQ(x->scan.text(x->scan.directives[0]), "x.h");
  sig.mtime_ns += 1;
  EXPECT_EQ(kept.find_lexed(sig), nullptr);
}

// A group memo is the union of its TUs' memos: it holds while every one of
// them would, and fails as soon as one would, a name probed by a single TU
// included; each TU's answer comes back in order.
TEST(GroupMemo, HoldsExactlyWhileEveryTusMemoHolds) {
  testing::TestDir d;
  d.write("inc/.keep", "");
  d.write("sys/x.h", "int x;\n");
  d.write("sys/y.h", "int y;\n");
  d.write("a.cpp", "#include <x.h>\n");
  d.write("b.cpp", "#include <y.h>\n");
  auto dep = [&](const std::string& name) {
    closure::ClosureMemo::Dependency dep;
    dep.path = d.at(name);
    EXPECT_TRUE(base::stat_file(dep.path, &dep.stat)) << name;
    return dep;
  };
  auto probed = [&](std::vector<std::string> names) {
    closure::ClosureMemo::ProbedDir p;
    p.dir = d.at("inc");
    p.exists = base::stat_dir(p.dir, &p.stat);
    for (const std::string& n : names) p.probes.push_back(d.at("inc/" + n));
    return p;
  };
  // Each TU probed the shared directory inc/ for its own header.
  closure::ClosureMemo a, b;
  a.dependencies = {dep("a.cpp"), dep("sys/x.h")};
  a.probed_dirs = {probed({"x.h"})};
  b.dependencies = {dep("b.cpp"), dep("sys/y.h"), dep("sys/x.h")};
  b.probed_dirs = {probed({"y.h"})};
  const std::string memo_a = encode_scan_memo(closure::encode_closure_memo(a),
                                              {{d.at("a.cpp"), 15, 1}, {d.at("sys/x.h"), 7, 2}});
  const std::string memo_b = encode_scan_memo(closure::encode_closure_memo(b),
                                              {{d.at("b.cpp"), 15, 1}, {d.at("sys/y.h"), 7, 2}});
  auto group_of = [](std::vector<std::pair<std::string, std::string>> parts) {
    GroupMemoBuilder builder;
    for (const auto& [memo, exact] : parts) {
      if (!builder.add(memo, exact)) return std::optional<std::string>();
    }
    return std::optional<std::string>(builder.encode());
  };
  std::optional<std::string> group = group_of({{memo_a, "10\n"}, {memo_b, "00\nwhy"}});
  ASSERT_TRUE(group);

  auto check = [&](std::string_view bytes, KnownScans* known) {
    DirStatCache dirs;
    return check_encoded_group_memo(bytes, &dirs, known);
  };
  KnownScans known;
  ASSERT_TRUE(check(*group, &known));
  ASSERT_EQ(known.answers.size(), 2u);
  KnownScan tu_a, tu_b;
  ASSERT_TRUE(decode_known_scan(known.answers[0], known.paths, &tu_a));
  ASSERT_TRUE(decode_known_scan(known.answers[1], known.paths, &tu_b));
  EXPECT_EQ(tu_a.deps, (std::vector<std::string>{d.at("a.cpp"), d.at("sys/x.h")}));
  EXPECT_EQ(tu_a.exact, "10\n");
  EXPECT_EQ(tu_b.deps, (std::vector<std::string>{d.at("b.cpp"), d.at("sys/y.h")}));
  EXPECT_EQ(tu_b.sizes, (std::vector<uint64_t>{15, 7}));
  EXPECT_EQ(tu_b.exact, "00\nwhy");
  for (size_t cut : {size_t(0), size_t(12), group->size() / 2, group->size() - 1}) {
    EXPECT_FALSE(check(std::string_view(*group).substr(0, cut), &known)) << cut;
  }

  // A name nobody probed: inc/ changed, but every probe is still missing.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  d.write("inc/other.h", "\n");
  EXPECT_TRUE(check(*group, &known));
  // A name only b probed now shadows its header.
  d.write("inc/y.h", "int shadow;\n");
  EXPECT_FALSE(check(*group, &known)) << "inc/y.h shadows sys/y.h for b";
  std::filesystem::remove(d.at("inc/y.h"));
  EXPECT_TRUE(check(*group, &known));
  // A header only one TU read changes.
  d.write("sys/y.h", "int y, z;\n");
  EXPECT_FALSE(check(*group, &known));
  // Two memos that recorded one file at different signatures: the stale one
  // fails the union, as it fails its own check.
  closure::ClosureMemo stale = a;
  stale.dependencies[1].stat.mtime_ns -= 1;
  const std::string memo_stale =
      encode_scan_memo(closure::encode_closure_memo(stale), {{d.at("a.cpp"), 15, 1}});
  std::optional<std::string> with_stale = group_of({{memo_a, "10\n"}, {memo_stale, "10\n"}});
  ASSERT_TRUE(with_stale);
  EXPECT_FALSE(check(*with_stale, &known));
  // A memo that is not a scan memo makes no group memo.
  EXPECT_FALSE(group_of({{memo_a, "10\n"}, {"not a memo", "10\n"}}));
}

}  // namespace
}  // namespace lexpack::scan
