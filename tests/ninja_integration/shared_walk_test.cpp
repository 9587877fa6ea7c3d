// The include graph shared by the TUs of a scan: walks racing over the same
// questions keep valid answers, and a memo never pairs a directory signature
// with a missing-name answer older than it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "lexer/kernel.h"
#include "ninja_integration/closure_memo.h"
#include "ninja_integration/dependency_closure.h"
#include "ninja_integration/file_state.h"
#include "ninja_integration/scan_file_cache.h"
#include "ninja_integration/scan_memo.h"
#include "tests/ninja_integration/test_dir.h"

namespace lexpack::ninja {
namespace {

const lexer::Kernel* kernel() {
  std::string err;
  const lexer::Kernel* k = lexer::default_kernel(&err);
  EXPECT_NE(k, nullptr) << err;
  return k;
}

// m.cpp includes <x.h>, searched in inc (empty) then sys; all settled.
struct TwoDirs {
  SearchList list;
  CompileCommand cmd;
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
  SearchList list;
  list.bracket_dirs = {d.at("inc"), d.at("sys")};
  CompileCommand cmd;
  cmd.source = d.at("m.cpp");
  const std::string expected = d.at("inc/stdc-predef.h");
  for (int iter = 0; iter < 300; ++iter) {
    ScanFileCache shared;
    std::atomic<int> ready{0};
    Closure out[2];
    auto walk = [&](int i) {
      FileStates files(nullptr, kernel());
      files.share(&shared);
      ready.fetch_add(1);
      while (ready.load() < 2) {
      }
      auto c = compute_closure(&files, cmd, list, CompilerKind::kGcc, d.path());
      ASSERT_TRUE(c.ok()) << c.message();
      out[i] = std::move(c.value());
    };
    std::thread other(walk, 1);
    walk(0);
    other.join();
    // Churn the heap: a view into a freed answer would now read other bytes.
    std::vector<std::string> churn(64, std::string(expected.size(), 'Z'));
    for (const Closure& c : out) {
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
  ScanFileCache shared;
  // Another TU's memo check asks about inc/x.h first, as the warm check does.
  ASSERT_FALSE(shared.stat_once(d.at("inc/x.h"), d.at("inc/x.h")));
  d.write("inc/x.h", "int shadow;\n");
  FileStates files(nullptr, kernel());
  files.share(&shared);
  auto closure = compute_closure(&files, cmd, list, CompilerKind::kGcc, d.path());
  ASSERT_TRUE(closure.ok()) << closure.message();
  ScanMemo memo;
  ASSERT_TRUE(build_closure_memo(*closure, list, {}, &memo.closure, &shared, d.path()));
  ScanFileCache next_scan;
  DirStatCache dirs;
  std::vector<std::string> deps;
  std::vector<uint64_t> sizes;
  EXPECT_FALSE(
      check_encoded_scan_memo(encode_scan_memo(memo), d.path(), &next_scan, &dirs, &deps, &sizes))
      << "the memo was accepted although inc/x.h now shadows sys/x.h";
}

// A warm scan checks the encoded memo where it lies: the same deps come back
// when nothing changed, and a change or a damaged memo is a rescan.
TEST(SharedWalk, EncodedScanMemoIsCheckedInPlace) {
  testing::TestDir d;
  const auto [list, cmd] = settled_two_dirs(d);
  ScanFileCache shared;
  FileStates files(nullptr, kernel());
  files.share(&shared);
  auto closure = compute_closure(&files, cmd, list, CompilerKind::kGcc, d.path());
  ASSERT_TRUE(closure.ok()) << closure.message();
  ScanMemo memo;
  ASSERT_TRUE(build_closure_memo(*closure, list, {}, &memo.closure, &shared, d.path()));
  memo.deps = {d.at("m.cpp"), d.at("sys/x.h"), "/not/in/the/closure.h"};
  memo.sizes = {15, 7, 3};
  const std::string bytes = encode_scan_memo(memo);

  auto check = [&](std::string_view b, std::vector<std::string>* deps,
                   std::vector<uint64_t>* sizes) {
    ScanFileCache next_scan;
    DirStatCache dirs;
    return check_encoded_scan_memo(b, d.path(), &next_scan, &dirs, deps, sizes);
  };
  std::vector<std::string> deps;
  std::vector<uint64_t> sizes;
  ASSERT_TRUE(check(bytes, &deps, &sizes));
  EXPECT_EQ(deps, memo.deps);
  EXPECT_EQ(sizes, memo.sizes);
  for (size_t cut : {size_t(0), size_t(10), bytes.size() / 2, bytes.size() - 1}) {
    EXPECT_FALSE(check(std::string_view(bytes).substr(0, cut), &deps, &sizes)) << cut;
  }
  d.write("sys/x.h", "int x, y;\n");
  EXPECT_FALSE(check(bytes, &deps, &sizes));
}

}  // namespace
}  // namespace lexpack::ninja
