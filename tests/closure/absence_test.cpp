// Proofs that paths stay missing, held by directory signatures: a missing
// path under a missing directory costs no stat of its own, yet every way a
// path can appear is noticed (the directory made, a dangling symlink's
// target made, a file in a fresh directory); and closure memos that take a
// rewritten header with the same bytes instead of missing.
#include "closure/absence.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "base/file_stat.h"
#include "base/file_util.h"
#include "closure/closure_memo.h"
#include "closure/dependency_closure.h"
#include "closure/file_state.h"
#include "closure/memo_stat_source.h"
#include "closure/scan_file_cache.h"
#include "lexer/kernel.h"
#include "tests/lexer/scan_test_util.h"
#include "tests/support/test_dir.h"

namespace lexpack::closure {
namespace {

void settle() {
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
}

std::string check(std::string_view proof) {
  std::string appeared;
  EXPECT_TRUE(AbsenceProof::check(proof, nullptr, &appeared));
  return appeared;
}

TEST(DirSignatures, UnderAMissingDirectoryNothingIsStatted) {
  lexpack::testing::TestDir d;
  d.write("a/.keep", "");
  std::vector<std::string> asked;
  DirSignatures sigs([&](const std::string& dir) -> std::optional<base::StatSignature> {
    asked.push_back(dir);
    base::StatSignature s;
    if (!base::stat_dir(dir, &s)) return std::nullopt;
    return s;
  });
  EXPECT_FALSE(sigs(d.at("a/x/y/z/w")));
  EXPECT_FALSE(sigs(d.at("a/x/y/other")));
  EXPECT_TRUE(sigs(d.at("a")));
  // Each existing prefix once, then a/x; nothing below the missing a/x.
  EXPECT_EQ(std::count(asked.begin(), asked.end(), d.at("a/x")), 1);
  EXPECT_EQ(std::count(asked.begin(), asked.end(), d.at("a/x/y")), 0);
  EXPECT_EQ(std::count(asked.begin(), asked.end(), d.at("a")), 1);
}

// A check's handles answer as stat(2) does: below a directory found
// missing (or a file where a directory would be) nothing is there, at any
// depth and whichever is asked first; a directory made later is seen by the
// next check's handles. Hundreds of missing directories take no descriptor.
TEST(DirHandles, AnswersAsStatDoesBelowMissingDirectories) {
  lexpack::testing::TestDir d;
  d.write("inc/a.h", "");
  d.write("file", "");
  const std::vector<std::string> paths = {
      d.at("inc/x/y/z/deep.h"), d.at("inc/x/y/mid.h"), d.at("inc/x/top.h"),
      d.at("inc/a.h"),          d.at("inc/b.h"),       d.at("file/sub/f.h"),
      d.at("inc/x/../a.h"),     d.at("inc/x/y/../z"),  d.at("inc/a.h/under"),
  };
  auto expect_as_stat = [&](DirHandles* handles, const std::string& p) {
    base::StatSignature plain, via;
    EXPECT_EQ(handles->stat_file(p, &via), base::stat_file(p, &plain)) << p;
    EXPECT_EQ(handles->stat_dir(p, &via), base::stat_dir(p, &plain)) << p;
  };
  for (bool reversed : {false, true}) {
    DirHandles handles;
    std::vector<std::string> order = paths;
    if (reversed) std::reverse(order.begin(), order.end());
    for (const std::string& p : order) expect_as_stat(&handles, p);
  }
  DirHandles before;
  base::StatSignature sig;
  EXPECT_FALSE(before.stat_file(d.at("inc/x/y/mid.h"), &sig));
  d.write("inc/x/y/mid.h", "");
  DirHandles after;
  EXPECT_TRUE(after.stat_file(d.at("inc/x/y/mid.h"), &sig));
  EXPECT_FALSE(after.stat_file(d.at("inc/x/y/z/deep.h"), &sig));
  // More missing directories than handles kept open: an existing file below
  // an existing directory is still found.
  DirHandles many;
  for (int i = 0; i < 600; ++i) {
    EXPECT_FALSE(many.stat_file(d.at("inc/m" + std::to_string(i) + "/n/h.h"), &sig));
  }
  EXPECT_TRUE(many.stat_file(d.at("inc/x/y/mid.h"), &sig));
  EXPECT_TRUE(many.stat_dir(d.at("inc/x"), &sig));
}

TEST(AbsenceProof, HoldsUntilAPathAppears) {
  lexpack::testing::TestDir d;
  d.write("inc/.keep", "");
  d.write("deep/.keep", "");
  settle();
  const std::vector<std::string> missing = {
      d.at("inc/a.h"),      d.at("inc/b.h"),          d.at("deep/x/y/z/a.h"),
      d.at("deep/x/w/b.h"), d.at("nowhere/at/all.h"),
  };
  std::string proof = AbsenceProof::encode(missing);
  EXPECT_EQ(check(proof), "");
  // Damaged bytes are no proof (no bytes at all: nothing was missing).
  std::string appeared;
  for (size_t cut = 1; cut < proof.size(); ++cut) {
    EXPECT_FALSE(AbsenceProof::check(proof.substr(0, cut), nullptr, &appeared)) << cut;
  }
  // Unrelated entries change the directories' signatures, nothing appears.
  d.write("inc/other.h", "");
  d.write("deep/other/.keep", "");
  EXPECT_EQ(check(proof), "");
  d.write("deep/x/y/z/a.h", "");
  EXPECT_EQ(check(proof), "appeared: " + d.at("deep/x/y/z"));
  d.remove("deep/x");
  d.write("inc/b.h", "");
  EXPECT_EQ(check(proof), "appeared: " + d.at("inc/b.h"));
  d.remove("inc/b.h");
  d.write("nowhere/at/all.h", "");
  EXPECT_NE(check(proof), "");
}

// A dangling symlink is missing to stat(2), and its target can be made
// without touching the symlink's directory: it is never vouched for.
TEST(AbsenceProof, DanglingSymlinkIsCheckedOnItsOwn) {
  lexpack::testing::TestDir d;
  d.write("inc/.keep", "");
  d.write("target/.keep", "");
  ASSERT_EQ(::symlink(d.at("target/a.h").c_str(), d.at("inc/a.h").c_str()), 0);
  ASSERT_EQ(::symlink(d.at("target/sub").c_str(), d.at("inc/sub").c_str()), 0);
  settle();
  std::string proof = AbsenceProof::encode({d.at("inc/a.h"), d.at("inc/sub/b.h")});
  EXPECT_EQ(check(proof), "");
  d.write("target/sub/b.h", "");
  EXPECT_NE(check(proof), "");
  d.remove("target/sub");
  EXPECT_EQ(check(proof), "");
  d.write("target/a.h", "");
  EXPECT_EQ(check(proof), "appeared: " + d.at("inc/a.h"));
}

// A directory changed less than a second before the proof may still be
// changing unseen: its paths are checked one by one.
TEST(AbsenceProof, FreshDirectoryIsNotTrusted) {
  lexpack::testing::TestDir d;
  d.write("inc/.keep", "");
  std::string proof = AbsenceProof::encode({d.at("inc/a.h"), d.at("inc/x/b.h")});
  EXPECT_EQ(check(proof), "");
  d.write("inc/a.h", "");
  EXPECT_EQ(check(proof), "appeared: " + d.at("inc/a.h"));
}

using lexer::testing::kernel;

// m.cpp includes <sub/deep/x.h>, missing under first (no sub there) and found
// in second; and "cfg.h" beside it.
struct Tu {
  compiler::SearchList list;
  compiler::CompileCommand cmd;
  std::string memo;
};
Tu settled_tu(lexpack::testing::TestDir& d) {
  d.write("first/.keep", "");
  d.write("second/sub/deep/x.h", "int x;\n");
  d.write("cfg.h", "#define CFG 1\n");
  d.write("m.cpp", "#include <sub/deep/x.h>\n#include \"cfg.h\"\n");
  settle();
  Tu t;
  t.list.bracket_dirs = {d.at("first"), d.at("second")};
  t.cmd.source = d.at("m.cpp");
  FileStates files(nullptr, kernel());
  auto closure = compute_closure(&files, t.cmd, t.list, compiler::CompilerKind::kGcc, d.path());
  EXPECT_TRUE(closure.ok()) << closure.message();
  std::optional<std::string> memo = encode_closure_memo(*closure, t.list, cache::Hash128{1, 2});
  EXPECT_TRUE(memo);
  if (memo) t.memo = *memo;
  return t;
}

std::string check_memo(const std::string& bytes, const ContentLookup* content = nullptr,
                       std::vector<MemoRefresh>* refresh = nullptr) {
  cache::Hash128 key;
  bool uses_date = false;
  std::string changed = "not checked";
  EXPECT_TRUE(check_encoded_closure_memo(bytes, nullptr, &key, &uses_date, &changed, nullptr,
                                         content, refresh));
  return changed;
}

TEST(ClosureMemoVouched, NewDirectoryUnderAMissingOneIsNoticed) {
  lexpack::testing::TestDir d;
  Tu t = settled_tu(d);
  ClosureMemo memo;
  ASSERT_TRUE(decode_closure_memo(t.memo, &memo));
  ASSERT_EQ(memo.vouched.size(), 1u);
  EXPECT_EQ(memo.vouched[0].ancestor, d.at("first"));
  EXPECT_EQ(check_memo(t.memo), "");
  d.write("first/unrelated.h", "");
  EXPECT_EQ(check_memo(t.memo), "");
  // The closure names first/sub/ for every candidate under it (its
  // shortest missing prefix): that directory is what appears.
  d.write("first/sub/deep/x.h", "int shadow;\n");
  EXPECT_EQ(check_memo(t.memo), "probed directory appeared: " + d.at("first/sub"));
}

// The closure's probe for first/sub/ (every candidate under it) was made
// while first/sub was missing: one made there before the memo is written
// leaves no memo, since nothing under it was looked at.
TEST(ClosureMemoVouched, AMissingDirectoryMadeBeforeTheMemoLeavesNone) {
  lexpack::testing::TestDir d;
  d.write("first/.keep", "");
  d.write("second/sub/deep/x.h", "int x;\n");
  d.write("m.cpp", "#include <sub/deep/x.h>\n");
  settle();
  compiler::SearchList list;
  list.bracket_dirs = {d.at("first"), d.at("second")};
  compiler::CompileCommand cmd;
  cmd.source = d.at("m.cpp");
  FileStates files(nullptr, kernel());
  auto closure = compute_closure(&files, cmd, list, compiler::CompilerKind::kGcc, d.path());
  ASSERT_TRUE(closure.ok()) << closure.message();
  const std::string root = d.at("first/sub") + "/";
  ASSERT_NE(std::find(closure->failed_probes.begin(), closure->failed_probes.end(), root),
            closure->failed_probes.end());
  EXPECT_TRUE(encode_closure_memo(*closure, list, cache::Hash128{1, 2}));
  d.write("first/sub/deep/x.h", "int shadow;\n");
  EXPECT_FALSE(encode_closure_memo(*closure, list, cache::Hash128{1, 2}));
}

// A fresh configure rewrites generated headers with the same bytes: the
// memo holds when the content is the same, and takes the new signature.
TEST(ClosureMemoVouched, RewrittenHeaderWithTheSameBytesKeepsTheMemo) {
  lexpack::testing::TestDir d;
  Tu t = settled_tu(d);
  d.remove("cfg.h");
  d.write("cfg.h", "#define CFG 1\n");  // a new inode, same bytes
  EXPECT_EQ(check_memo(t.memo), "changed: " + d.at("cfg.h"));
  int asked = 0;
  ContentLookup content = [&](std::string_view path,
                              const base::StatSignature& sig) -> std::optional<cache::Hash128> {
    ++asked;
    FileStates files(nullptr, kernel());
    auto h = files.content_hash(std::string(path), std::string(path), sig);
    if (!h.ok()) return std::nullopt;
    return h.value();
  };
  std::vector<MemoRefresh> refresh;
  EXPECT_EQ(check_memo(t.memo, &content, &refresh), "");
  EXPECT_EQ(asked, 1);
  // cfg.h, and the directory it is in: the source's, where the compiler
  // looks for precompiled headers (m.cpp.gch, cfg.h.gch): its signature
  // changed, and the probes still find nothing.
  ASSERT_EQ(refresh.size(), 2u);
  EXPECT_EQ(refresh[0].kind, MemoRefresh::Kind::kDependency);
  EXPECT_EQ(refresh[1].kind, MemoRefresh::Kind::kProbedDir);
  ClosureMemo memo;
  ASSERT_TRUE(decode_closure_memo(t.memo, &memo));
  // Too fresh to keep yet; a second later the new signatures are kept.
  EXPECT_FALSE(apply_memo_refresh(refresh, base::now_ns(), &memo));
  settle();
  ASSERT_TRUE(apply_memo_refresh(refresh, base::now_ns(), &memo));
  EXPECT_EQ(check_memo(encode_closure_memo(memo)), "");
  // Other bytes are a change, whatever the lookup says of them.
  d.write("cfg.h", "#define CFG 2\n");
  EXPECT_EQ(check_memo(encode_closure_memo(memo), &content), "changed: " + d.at("cfg.h"));
}

// A scan asks whether a probe is no entry at all once, not once per TU: the
// answer stays the one taken first (as every stat of a scan does), and a
// new scan asks again.
TEST(ScanFileCache, NoEntryIsAskedOncePerScan) {
  lexpack::testing::TestDir d;
  d.write("inc/.keep", "");
  const std::string probe = d.at("inc/a.h");
  ScanFileCache scan;
  EXPECT_TRUE(scan.no_entry_once(probe));
  ASSERT_EQ(::symlink(d.at("target/a.h").c_str(), probe.c_str()), 0);
  EXPECT_FALSE(no_entry(probe));
  EXPECT_TRUE(scan.no_entry_once(probe));
  ScanFileCache next;
  EXPECT_FALSE(next.no_entry_once(probe));
}

// Under a directory that is missing (or a file, or a dangling symlink) no
// entry is answered from the directory's own answer, asked once per scan:
// each answer is the one a syscall on the path gives, "dir/.." included.
TEST(ScanFileCache, UnderAMissingDirectoryNoEntryIsTheDirectorysAnswer) {
  lexpack::testing::TestDir d;
  d.write("inc/y.h", "");
  d.write("plain", "");
  ASSERT_EQ(::symlink(d.at("target").c_str(), d.at("dangling").c_str()), 0);
  ASSERT_EQ(::symlink(d.at("inc").c_str(), d.at("linked").c_str()), 0);
  ASSERT_EQ(::symlink(d.at("target/b.h").c_str(), d.at("inc/b.h").c_str()), 0);
  ScanFileCache scan;
  for (const char* name :
       {"inc/sub/a.h", "inc/sub/deeper/a.h", "plain/a.h", "dangling/a.h", "inc/sub/../y.h",
        "inc/../inc/y.h", "linked/b.h", "linked/c.h", "dangling/../inc/y.h"}) {
    EXPECT_EQ(scan.no_entry_once(d.at(name)), no_entry(d.at(name))) << name;
  }
  EXPECT_TRUE(scan.no_entry_once(d.at("inc/sub/../y.h")));
  EXPECT_FALSE(scan.no_entry_once(d.at("inc/../inc/y.h")));
  d.write("inc/sub/b.h", "");
  EXPECT_TRUE(scan.no_entry_once(d.at("inc/sub/b.h")));
  ScanFileCache next;
  EXPECT_FALSE(next.no_entry_once(d.at("inc/sub/b.h")));
  // Only the directory's own answer counts, not one about its parent: made
  // after the scan found it gone below, a directory answered afresh has
  // its entries seen.
  EXPECT_TRUE(next.no_entry_once(d.at("gen/out/x.h")));
  d.write("gen/y.h", "");
  ASSERT_TRUE(next.dir_stat_once(d.at("gen"), d.at("gen")).has_value());
  EXPECT_FALSE(next.no_entry_once(d.at("gen/y.h")));
}

// By candidate number the answer is the path's own: the same for an absent
// probe and a dangling symlink (some entry), asked once per scan whichever
// way it is asked first, and asked again by a new scan.
TEST(ScanFileCache, NoEntryByCandidateNumberIsThePathsAnswer) {
  lexpack::testing::TestDir d;
  d.write("inc/.keep", "");
  ASSERT_EQ(::symlink(d.at("target/b.h").c_str(), d.at("inc/b.h").c_str()), 0);
  const std::string inc = d.at("inc");
  ScanFileCache scan;
  const uint32_t a = scan.candidate_ids(d.at("inc/a.h")).candidate;
  const uint32_t b = scan.candidate_ids(d.at("inc/b.h")).candidate;
  const uint32_t c = scan.candidate_ids(d.at("inc/c.h")).candidate;
  ASSERT_NE(a, b);
  EXPECT_TRUE(scan.candidate_no_entry_once(a, inc, "a.h"));
  EXPECT_FALSE(scan.candidate_no_entry_once(b, inc, "b.h"));
  EXPECT_TRUE(scan.no_entry_once(d.at("inc/c.h")));
  d.write("inc/a.h", "");
  d.write("inc/c.h", "");
  EXPECT_TRUE(scan.candidate_no_entry_once(a, inc, "a.h"));
  EXPECT_TRUE(scan.no_entry_once(d.at("inc/a.h")));
  EXPECT_TRUE(scan.candidate_no_entry_once(c, inc, "c.h"));
  EXPECT_FALSE(scan.candidate_no_entry_once(b, inc, "b.h"));
  ScanFileCache next;
  EXPECT_FALSE(
      next.candidate_no_entry_once(next.candidate_ids(d.at("inc/a.h")).candidate, inc, "a.h"));
}

// A failed candidate's directory gone, its shortest gone prefix stands for
// every candidate under it: what the kernel says of each candidate (nothing
// there) it says of "prefix/" (no directory there), for missing
// directories, a file on the way and a dangling symlink; an existing
// directory and a relative one have none. Once the prefix is a directory
// "prefix/" is an entry: the probe no longer holds.
TEST(ScanFileCache, AMissingDirectorysShortestGonePrefixStandsForItsCandidates) {
  lexpack::testing::TestDir d;
  d.write("inc/y.h", "");
  d.write("plain", "");
  ASSERT_EQ(::symlink(d.at("target").c_str(), d.at("dangling").c_str()), 0);
  ScanFileCache scan;
  auto root = [&](const std::string& dir) -> std::string {
    const ScanFileCache::CandidateIds ids = scan.candidate_ids(dir + "/x.h");
    const ScanFileCache::AbsentRoot* r = scan.absent_root(ids.dir, dir);
    if (!r) return "none";
    // The root's own numbers: a candidate in the directory the root names.
    const ScanFileCache::CandidateIds own = scan.candidate_ids(r->path);
    EXPECT_EQ(r->ids.candidate, own.candidate) << dir;
    EXPECT_EQ(r->ids.dir, own.dir) << dir;
    EXPECT_EQ(r->ids.dir, scan.candidate_ids(std::string(base::dir_of(r->path)) + "/z").dir);
    return std::string(r->path);
  };
  EXPECT_EQ(root(d.at("inc/sub/deeper")), d.at("inc/sub") + "/");
  EXPECT_EQ(root(d.at("inc/sub")), d.at("inc/sub") + "/");
  EXPECT_EQ(root(d.at("plain/sub")), d.at("plain/sub") + "/");
  EXPECT_EQ(root(d.at("dangling/sub")), d.at("dangling") + "/");
  EXPECT_EQ(root(d.at("inc")), "none");
  EXPECT_EQ(root("rel/sub"), "none");
  for (const char* dir : {"inc/sub/deeper", "plain/sub", "dangling/sub"}) {
    const std::string r = root(d.at(dir));
    EXPECT_TRUE(no_entry(r)) << dir;
    EXPECT_TRUE(no_entry(d.at(dir) + "/x.h")) << dir;
  }
  // Asked once per directory number: the answer taken first stays.
  d.write("inc/sub/deeper/x.h", "");
  EXPECT_EQ(root(d.at("inc/sub/deeper")), d.at("inc/sub") + "/");
  EXPECT_FALSE(no_entry(d.at("inc/sub") + "/"));
  ScanFileCache next;
  EXPECT_EQ(
      next.absent_root(next.candidate_ids(d.at("inc/sub/deeper/x.h")).dir, d.at("inc/sub/deeper")),
      nullptr);
}

}  // namespace
}  // namespace lexpack::closure
