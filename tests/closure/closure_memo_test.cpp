// The closure memo: encoding round trip and detection of changed
// dependencies and of files appearing where a candidate was missing.
#include "closure/closure_memo.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "base/file_stat.h"
#include "closure/file_state.h"
#include "tests/support/test_dir.h"

namespace lexpack::closure {
namespace {

// Moves a file's and its directory's times into the past so that the memo
// trusts their signatures (ctime cannot be set: the memo is built by hand).
ClosureMemo memo_for(const testing::TestDir& dir) {
  ClosureMemo memo;
  memo.action_key = cache::hash_bytes("k");
  ClosureMemo::Dependency dep;
  dep.path = dir.at("a.h");
  EXPECT_TRUE(base::stat_file(dep.path, &dep.stat));
  memo.dependencies.push_back(dep);
  ClosureMemo::ProbedDir probed;
  probed.dir = dir.at("inc");
  probed.exists = base::stat_dir(probed.dir, &probed.stat);
  probed.probes = {dir.at("inc/a.h")};
  memo.probed_dirs.push_back(probed);
  ClosureMemo::ProbedDir absent;
  absent.dir = dir.at("nodir");
  absent.probes = {dir.at("nodir/a.h")};
  memo.probed_dirs.push_back(absent);
  memo.absent_dirs = {dir.at("gone")};
  return memo;
}

// check_closure_memo() on the memo, after checking that the hit path's check
// of the encoded memo says the same.
std::string check_memo(const ClosureMemo& memo) {
  std::string answer = check_closure_memo(memo);
  cache::Hash128 key;
  bool uses_date = !memo.uses_date;
  std::string encoded_answer = "not decoded";
  EXPECT_TRUE(
      check_encoded_closure_memo(encode_closure_memo(memo), &key, &uses_date, &encoded_answer));
  EXPECT_EQ(encoded_answer, answer);
  EXPECT_EQ(key, memo.action_key);
  EXPECT_EQ(uses_date, memo.uses_date);
  return answer;
}

TEST(ClosureMemo, RoundTrip) {
  testing::TestDir dir;
  dir.write("a.h", "x");
  dir.write("inc/other.h", "");
  ClosureMemo memo = memo_for(dir);
  ClosureMemo back;
  ASSERT_TRUE(decode_closure_memo(encode_closure_memo(memo), &back));
  EXPECT_EQ(back.action_key, memo.action_key);
  EXPECT_EQ(back.dependencies.size(), 1u);
  EXPECT_EQ(back.probed_dirs.size(), 2u);
  EXPECT_EQ(check_closure_memo(back), "");
  std::string bytes = encode_closure_memo(memo);
  EXPECT_FALSE(decode_closure_memo(bytes.substr(0, bytes.size() - 1), &back));
  cache::Hash128 key;
  bool uses_date = false;
  std::string changed;
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    EXPECT_FALSE(check_encoded_closure_memo(bytes.substr(0, cut), &key, &uses_date, &changed));
  }
  EXPECT_FALSE(check_encoded_closure_memo(bytes + "x", &key, &uses_date, &changed));
  memo.uses_date = true;
  EXPECT_EQ(check_memo(memo), "");
}

// The first dependency is read from the bytes before the others: a memo
// cut short after it still gives it, one cut within it does not, nor one
// that names no dependency.
TEST(ClosureMemo, FirstDependencyIsReadAlone) {
  testing::TestDir dir;
  dir.write("a.h", "x");
  dir.write("b.h", "y");
  ClosureMemo memo = memo_for(dir);
  memo.dependencies[0].content = cache::hash_bytes("x");
  ClosureMemo::Dependency second;
  second.path = dir.at("b.h");
  ASSERT_TRUE(base::stat_file(second.path, &second.stat));
  memo.dependencies.push_back(second);
  const std::string bytes = encode_closure_memo(memo);
  const size_t second_at = bytes.find(second.path);
  ASSERT_NE(second_at, std::string::npos);
  std::string_view path;
  base::StatSignature stat;
  cache::Hash128 content;
  ASSERT_TRUE(closure_memo_first_dependency(std::string_view(bytes).substr(0, second_at), &path,
                                            &stat, &content));
  EXPECT_EQ(path, dir.at("a.h"));
  EXPECT_TRUE(stat == memo.dependencies[0].stat);
  EXPECT_EQ(content, cache::hash_bytes("x"));
  const size_t first_at = bytes.find(dir.at("a.h"));
  ASSERT_NE(first_at, std::string::npos);
  EXPECT_FALSE(closure_memo_first_dependency(std::string_view(bytes).substr(0, first_at + 2), &path,
                                             &stat, &content));
  memo.dependencies.clear();
  EXPECT_FALSE(closure_memo_first_dependency(encode_closure_memo(memo), &path, &stat, &content));
  EXPECT_FALSE(closure_memo_first_dependency("not a memo", &path, &stat, &content));
}

TEST(ClosureMemo, DetectsChangedDependency) {
  testing::TestDir dir;
  dir.write("a.h", "x");
  dir.write("inc/other.h", "");
  ClosureMemo memo = memo_for(dir);
  dir.write("a.h", "xy");
  EXPECT_EQ(check_memo(memo), "changed: " + dir.at("a.h"));
}

TEST(ClosureMemo, DetectsShadowingFile) {
  testing::TestDir dir;
  dir.write("a.h", "x");
  dir.write("inc/other.h", "");
  ClosureMemo memo = memo_for(dir);
  dir.write("inc/a.h", "");
  EXPECT_EQ(check_memo(memo), "appeared: " + dir.at("inc/a.h"));
}

TEST(ClosureMemo, UnrelatedFileInProbedDirIsNoChange) {
  testing::TestDir dir;
  dir.write("a.h", "x");
  dir.write("inc/other.h", "");
  ClosureMemo memo = memo_for(dir);
  dir.write("inc/unrelated.h", "");
  EXPECT_EQ(check_memo(memo), "");
}

TEST(ClosureMemo, DetectsFileInNewDirAndNewSearchDir) {
  testing::TestDir dir;
  dir.write("a.h", "x");
  dir.write("inc/other.h", "");
  ClosureMemo memo = memo_for(dir);
  dir.write("nodir/a.h", "");
  EXPECT_EQ(check_memo(memo), "probed directory appeared: " + dir.at("nodir"));
  dir.remove("nodir");
  // Whatever it holds: its names were not kept.
  dir.write("nodir/unrelated.h", "");
  EXPECT_EQ(check_memo(memo), "probed directory appeared: " + dir.at("nodir"));
  dir.remove("nodir");
  ::mkdir(dir.at("gone").c_str(), 0755);
  EXPECT_EQ(check_memo(memo), "search directory appeared: " + dir.at("gone"));
}

// The check of all but the dependencies (an early compile's launcher checks
// each file after the compile): a changed dependency is not its to see; a
// file where a probe found none, a probed or search directory that
// appeared, are.
TEST(ClosureMemo, DirectoriesCheckLeavesOutTheDependencies) {
  testing::TestDir dir;
  dir.write("a.h", "x");
  dir.write("inc/other.h", "");
  const ClosureMemo memo = memo_for(dir);
  const std::string bytes = encode_closure_memo(memo);
  std::string changed = "not checked";
  ASSERT_TRUE(check_encoded_memo_directories(bytes, &changed));
  EXPECT_EQ(changed, "");
  dir.write("a.h", "xy");
  EXPECT_EQ(check_memo(memo), "changed: " + dir.at("a.h"));
  ASSERT_TRUE(check_encoded_memo_directories(bytes, &changed));
  EXPECT_EQ(changed, "");
  dir.remove("a.h");
  ASSERT_TRUE(check_encoded_memo_directories(bytes, &changed));
  EXPECT_EQ(changed, "");
  dir.write("inc/a.h", "");
  ASSERT_TRUE(check_encoded_memo_directories(bytes, &changed));
  EXPECT_EQ(changed, "appeared: " + dir.at("inc/a.h"));
  dir.remove("inc/a.h");
  dir.write("nodir/a.h", "");
  ASSERT_TRUE(check_encoded_memo_directories(bytes, &changed));
  EXPECT_EQ(changed, "probed directory appeared: " + dir.at("nodir"));
  dir.remove("nodir");
  ::mkdir(dir.at("gone").c_str(), 0755);
  ASSERT_TRUE(check_encoded_memo_directories(bytes, &changed));
  EXPECT_EQ(changed, "search directory appeared: " + dir.at("gone"));
  EXPECT_FALSE(check_encoded_memo_directories("not a memo", &changed));
}

TEST(FileSummary, RoundTripAndRejectsForeignBytes) {
  FileSummary s;
  s.content = cache::hash_bytes("abc");
  s.uses_date = true;
  s.includes.push_back({lexer::DirectiveKind::kInclude, true, false, "vector"});
  s.includes.push_back({lexer::DirectiveKind::kHasIncludeNext, false, false, "x.h"});
  FileSummary back;
  ASSERT_TRUE(decode_summary(encode_summary(s), &back));
  EXPECT_EQ(back, s);
  EXPECT_FALSE(decode_summary("{\"directives\":[]}", &back));
}

}  // namespace
}  // namespace lexpack::closure
