// The remote closure memo on real files in two checkouts: taken in another
// checkout with the same contents (the same key, this checkout's paths),
// refused where a file, a candidate or the search list differs, never made
// for a closure that cannot travel, and never a crash on cut bytes.
#include "closure/remote_memo.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <deque>
#include <memory>
#include <string>

#include "closure/action_key.h"
#include "closure/closure_memo.h"
#include "closure/scan_file_cache.h"
#include "tests/support/test_dir.h"

namespace lexpack::closure {
namespace {

class RemoteMemoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = dir_.real_path();
    for (const char* c : {"a", "b"}) {
      dir_.write(std::string(c) + "/src/m.cpp", "#include \"h.h\"\nint m() { return H; }\n");
      dir_.write(std::string(c) + "/inc/h.h", "#define H 1\n");
      dir_.write(std::string(c) + "/build/.keep", "");
    }
    identity_.kind = compiler::CompilerKind::kGcc;
    identity_.hash = cache::hash_bytes("a compiler");
  }
  std::string top(const char* c) const { return root_ + "/" + c; }
  compiler::CompileCommand command(const char* c) const {
    return compiler::parse_compile_command({"g++", "-ffile-prefix-map=" + top(c) + "=.",
                                            "-I" + top(c) + "/inc", "-c", top(c) + "/src/m.cpp",
                                            "-o", "m.o"});
  }
  compiler::SearchList list(const char* c) const {
    compiler::SearchList l;
    l.bracket_dirs = {top(c) + "/inc", "/usr/include"};
    return l;
  }
  // The closure A's walk makes: the source, its header, and the header's
  // candidate in the source's directory found missing.
  Closure closure_of(const char* c) {
    auto paths = std::make_shared<std::deque<std::string>>();
    Closure out;
    for (const char* f : {"/src/m.cpp", "/inc/h.h"}) {
      ClosureFile file;
      file.path = paths->emplace_back(top(c) + f);
      file.content = cache::hash_bytes(dir_.read(std::string(c) + f));
      out.files.push_back(file);
    }
    out.failed_probes.push_back(paths->emplace_back(top(c) + "/src/h.h"));
    out.failed_probe_dirs.push_back(0);
    // As gcc spells a candidate beside an includer found through "..".
    out.failed_probes.push_back(paths->emplace_back(top(c) + "/inc/../predef.h"));
    out.failed_probe_dirs.push_back(1);
    out.storage = paths;
    return out;
  }
  KeyRelocation relocation(const char* c, const Closure& closure) const {
    return decide_relocation(command(c), top(c) + "/build", closure, root_);
  }
  // A's memo and the key it was made with.
  std::string memo_of_a(cache::Hash128* key) {
    const Closure c = closure_of("a");
    const KeyRelocation r = relocation("a", c);
    EXPECT_TRUE(r.relocated) << r.not_relocatable;
    *key = action_key(identity_, command("a"), top("a") + "/build", c, r);
    std::optional<std::string> memo = encode_remote_memo(c, list("a"), r, *key);
    EXPECT_TRUE(memo.has_value());
    return memo.value_or("");
  }
  base::Result<TakenClosure> take_in_b(const std::string& memo) {
    LocalFacts contents(nullptr);
    return take_remote_memo(memo, identity_, command("b"), top("b") + "/build", root_, list("b"),
                            &contents);
  }

  testing::TestDir dir_;
  std::string root_;
  compiler::CompilerIdentity identity_;
};

TEST_F(RemoteMemoTest, TakenInAnotherCheckoutWithTheSameKey) {
  cache::Hash128 key;
  const std::string memo = memo_of_a(&key);
  base::Result<TakenClosure> taken = take_in_b(memo);
  ASSERT_TRUE(taken.ok()) << taken.message();
  EXPECT_EQ(taken->key, key);
  ASSERT_EQ(taken->closure.files.size(), 2u);
  EXPECT_EQ(taken->closure.files[1].path, top("b") + "/inc/h.h");
  ASSERT_EQ(taken->closure.failed_probes.size(), 2u);
  EXPECT_EQ(taken->closure.failed_probes[0], top("b") + "/src/h.h");
  EXPECT_EQ(taken->closure.failed_probes[1], top("b") + "/inc/../predef.h");
  // Both checkouts ask the remote under one name.
  EXPECT_EQ(remote_memo_key(identity_, command("a"), top("a") + "/build", root_),
            remote_memo_key(identity_, command("b"), top("b") + "/build", root_));
}

TEST_F(RemoteMemoTest, RefusedWhereAFileACandidateOrTheListDiffers) {
  cache::Hash128 key;
  const std::string memo = memo_of_a(&key);
  dir_.write("b/inc/h.h", "#define H 2\n");
  EXPECT_NE(take_in_b(memo).message().find("a file it names differs here"), std::string::npos);
  dir_.write("b/inc/h.h", "#define H 1\n");
  ASSERT_TRUE(take_in_b(memo).ok());
  dir_.write("b/src/h.h", "#define H 3\n");
  EXPECT_NE(take_in_b(memo).message().find("present here"), std::string::npos);
  dir_.remove("b/src/h.h");
  ASSERT_TRUE(take_in_b(memo).ok());
  compiler::SearchList other = list("b");
  other.missing_dirs.push_back(top("b") + "/gen");
  LocalFacts contents(nullptr);
  EXPECT_FALSE(
      take_remote_memo(memo, identity_, command("b"), top("b") + "/build", root_, other, &contents)
          .ok());
}

// A walk names the candidates under a missing directory by its shortest
// missing prefix, "prefix/": taken where nothing is there, or where a file
// stands in its place (nothing under it either), refused where it is a
// directory, whatever it holds.
TEST_F(RemoteMemoTest, AMissingDirectoryProbedAsOneIsRefusedWhereItIsADirectory) {
  auto with_root = [&](const char* c) {
    Closure closure = closure_of(c);
    auto paths = std::static_pointer_cast<std::deque<std::string>>(
        std::const_pointer_cast<void>(closure.storage));
    closure.failed_probes.push_back(paths->emplace_back(top(c) + "/inc/boost/"));
    closure.failed_probe_dirs.push_back(2);
    return closure;
  };
  const Closure a = with_root("a");
  const KeyRelocation r = relocation("a", a);
  const cache::Hash128 key = action_key(identity_, command("a"), top("a") + "/build", a, r);
  EXPECT_NE(key, action_key(identity_, command("a"), top("a") + "/build", closure_of("a"), r));
  const std::optional<std::string> memo = encode_remote_memo(a, list("a"), r, key);
  ASSERT_TRUE(memo);
  base::Result<TakenClosure> taken = take_in_b(*memo);
  ASSERT_TRUE(taken.ok()) << taken.message();
  EXPECT_EQ(taken->key, key);
  ASSERT_EQ(taken->closure.failed_probes.size(), 3u);
  EXPECT_EQ(taken->closure.failed_probes[2], top("b") + "/inc/boost/");
  dir_.write("b/inc/boost", "not a directory\n");
  ASSERT_TRUE(take_in_b(*memo).ok());
  dir_.remove("b/inc/boost");
  dir_.write("b/inc/boost/unrelated.txt", "");
  EXPECT_NE(take_in_b(*memo).message().find("present here"), std::string::npos);
}

// Taken through shared answers, every missing candidate was asked as the
// local memo's encoding asks it: the encoding takes those answers (the same
// memo as asking each again). Asked of the file system alone, it asks.
TEST_F(RemoteMemoTest, TheLocalMemoTakesTheProbesAnswersItWasTakenWith) {
  cache::Hash128 key;
  const std::string memo = memo_of_a(&key);
  ScanFileCache shared;
  LocalFacts contents(nullptr);
  const std::string cwd = top("b") + "/build";
  base::Result<TakenClosure> taken =
      take_remote_memo(memo, identity_, command("b"), cwd, root_, list("b"), &contents, &shared);
  ASSERT_TRUE(taken.ok()) << taken.message();
  EXPECT_EQ(taken->closure.failed_probes_answered_by, &shared);
  auto encode = [&](const Closure& c) {
    return encode_closure_memo(c, list("b"), taken->key, &shared, cwd,
                               YoungFiles::kCheckedByContent);
  };
  std::optional<std::string> kept = encode(taken->closure);
  Closure asking = taken->closure;
  asking.failed_probes_answered_by = nullptr;
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept, encode(asking));
  LocalFacts alone(nullptr);
  base::Result<TakenClosure> unshared =
      take_remote_memo(memo, identity_, command("b"), cwd, root_, list("b"), &alone);
  ASSERT_TRUE(unshared.ok()) << unshared.message();
  EXPECT_EQ(unshared->closure.failed_probes_answered_by, nullptr);
}

// A memo learned with the build's other memos keeps its names' facts:
// taken with them it looks no name up, and comes to what a memo taken
// without learning comes to. Learned in another working directory, it is
// taken by looking its names up.
TEST_F(RemoteMemoTest, ALearnedMemoIsTakenByItsNamesFacts) {
  cache::Hash128 key;
  const std::string memo = memo_of_a(&key);
  RemoteMemoView d;
  ASSERT_TRUE(decode_remote_memo(memo, &d));
  const std::string cwd = top("b") + "/build";
  LocalFacts learned(nullptr);
  learned.learn({&d}, cwd, root_, nullptr, 2);
  ASSERT_NE(d.learned_by, 0u);
  ASSERT_EQ(d.learned_files.size(), d.files.size());
  ASSERT_EQ(d.learned_probes.size(), d.probes.size());
  for (size_t i = 1; i < d.learned_files.size(); ++i) EXPECT_NE(d.learned_files[i], nullptr);
  for (void* p : d.learned_probes) EXPECT_NE(p, nullptr);
  base::Result<TakenClosure> by_facts =
      take_remote_memo(d, identity_, command("b"), cwd, root_, list("b"), &learned);
  ASSERT_TRUE(by_facts.ok()) << by_facts.message();
  base::Result<TakenClosure> looked_up = take_in_b(memo);
  ASSERT_TRUE(looked_up.ok()) << looked_up.message();
  EXPECT_EQ(by_facts->key, key);
  EXPECT_EQ(by_facts->key, looked_up->key);
  ASSERT_EQ(by_facts->closure.files.size(), looked_up->closure.files.size());
  for (size_t i = 0; i < by_facts->closure.files.size(); ++i) {
    EXPECT_EQ(by_facts->closure.files[i].path, looked_up->closure.files[i].path);
    EXPECT_EQ(by_facts->closure.files[i].content, looked_up->closure.files[i].content);
  }
  EXPECT_EQ(by_facts->closure.failed_probes, looked_up->closure.failed_probes);
  // Its facts say what B has: a header changed before learning is refused.
  dir_.write("b/inc/h.h", "#define H 2\n");
  RemoteMemoView again;
  ASSERT_TRUE(decode_remote_memo(memo, &again));
  LocalFacts fresh(nullptr);
  fresh.learn({&again}, cwd, root_, nullptr, 1);
  EXPECT_NE(take_remote_memo(again, identity_, command("b"), cwd, root_, list("b"), &fresh)
                .message()
                .find("a file it names differs here"),
            std::string::npos);
  // Taken in another working directory than it was learned in: its names
  // are looked up there.
  dir_.write("b/inc/h.h", "#define H 1\n");
  dir_.write("b/other/.keep", "");
  LocalFacts elsewhere(nullptr);
  RemoteMemoView third;
  ASSERT_TRUE(decode_remote_memo(memo, &third));
  elsewhere.learn({&third}, top("b") + "/other", root_, nullptr, 1);
  base::Result<TakenClosure> other =
      take_remote_memo(third, identity_, command("b"), cwd, root_, list("b"), &elsewhere);
  ASSERT_TRUE(other.ok()) << other.message();
  EXPECT_EQ(other->key, key);
}

// "inc/../x.h" with inc a symlink: the compiler reads the x.h beside inc's
// target, not the lexically normal one. B's lexically normal x.h has A's
// content, the one its compiler reads does not: refused.
TEST_F(RemoteMemoTest, ContentIsReadWhereTheCompilerReadsIt) {
  for (const char* c : {"a", "b"}) {
    dir_.remove(std::string(c) + "/inc/h.h");
    ASSERT_EQ(::rmdir((top(c) + "/inc").c_str()), 0);
    dir_.write(std::string(c) + "/real/inc/h.h", "#define H 1\n");
    ASSERT_EQ(::symlink((top(c) + "/real/inc").c_str(), (top(c) + "/inc").c_str()), 0);
  }
  dir_.write("a/real/x.h", "int x = 1;\n");
  dir_.write("a/x.h", "int x = 2;\n");
  dir_.write("b/real/x.h", "int x = 3;\n");
  dir_.write("b/x.h", "int x = 1;\n");
  auto with_x = [&](const char* c) {
    Closure closure = closure_of(c);
    auto paths = std::make_shared<std::deque<std::string>>();
    ClosureFile x;
    x.path = paths->emplace_back(top(c) + "/inc/../x.h");
    x.content = cache::hash_bytes(dir_.read(std::string(c) + "/real/x.h"));
    closure.files.push_back(x);
    closure.storage = std::make_shared<std::pair<std::shared_ptr<const void>, decltype(paths)>>(
        closure.storage, paths);
    return closure;
  };
  const Closure a = with_x("a");
  const KeyRelocation r = relocation("a", a);
  ASSERT_TRUE(r.relocated) << r.not_relocatable;
  const cache::Hash128 key = action_key(identity_, command("a"), top("a") + "/build", a, r);
  std::optional<std::string> memo = encode_remote_memo(a, list("a"), r, key);
  ASSERT_TRUE(memo.has_value());
  base::Result<TakenClosure> taken = take_in_b(*memo);
  EXPECT_FALSE(taken.ok()) << "took a memo whose x.h differs where the compiler reads it";
  dir_.write("b/real/x.h", "int x = 1;\n");
  EXPECT_TRUE(take_in_b(*memo).ok());
}

TEST_F(RemoteMemoTest, NotMadeForAClosureThatCannotTravel) {
  const Closure plain = closure_of("a");
  const KeyRelocation r = relocation("a", plain);
  const compiler::SearchList l = list("a");
  const cache::Hash128 key = cache::hash_bytes("k");
  ASSERT_TRUE(encode_remote_memo(plain, l, r, key).has_value());
  auto refused = [&](auto change) {
    Closure c = closure_of("a");
    KeyRelocation rel = r;
    compiler::SearchList sl = l;
    change(&c, &rel, &sl);
    return !encode_remote_memo(c, sl, rel, key).has_value();
  };
  EXPECT_TRUE(refused([](Closure* c, KeyRelocation*, compiler::SearchList*) { c->unsure = "?"; }));
  EXPECT_TRUE(
      refused([](Closure* c, KeyRelocation*, compiler::SearchList*) { c->uses_time = true; }));
  EXPECT_TRUE(
      refused([](Closure* c, KeyRelocation*, compiler::SearchList*) { c->once_twins = "x"; }));
  EXPECT_TRUE(refused(
      [](Closure* c, KeyRelocation*, compiler::SearchList*) { c->files[1].opaque = true; }));
  EXPECT_TRUE(refused(
      [](Closure* c, KeyRelocation*, compiler::SearchList*) { c->has_computed_include = true; }));
  EXPECT_TRUE(refused([](Closure*, KeyRelocation* rel, compiler::SearchList*) {
    rel->relocated = false;  // base_dir set, paths absolute
  }));
  EXPECT_TRUE(
      refused([](Closure*, KeyRelocation*, compiler::SearchList* sl) { sl->memoizable = false; }));
}

// The base answer travels as given when it names nothing under base_dir,
// not at all otherwise; a flag byte other than 0 or 1, or a cut list, makes
// the memo unreadable.
TEST_F(RemoteMemoTest, ABaseAnswerTravelsOnlyWhenNothingInItIsRelocated) {
  const Closure c = closure_of("a");
  const KeyRelocation r = relocation("a", c);
  const cache::Hash128 key = action_key(identity_, command("a"), top("a") + "/build", c, r);
  compiler::SearchList base;
  base.bracket_dirs = {"/dev", "/usr/include"};
  base.missing_dirs = {"/usr/local/include/none"};
  std::optional<std::string> memo = encode_remote_memo(c, list("a"), r, key, base);
  ASSERT_TRUE(memo);
  RemoteMemoView view;
  ASSERT_TRUE(decode_remote_memo(*memo, &view));
  ASSERT_TRUE(view.base_answer);
  EXPECT_EQ(*view.base_answer, base);
  // Without one, and with one naming the checkout: none decoded.
  compiler::SearchList inside = base;
  inside.bracket_dirs.push_back(top("a") + "/inc");
  for (const std::optional<compiler::SearchList>& b :
       {std::optional<compiler::SearchList>(), std::optional<compiler::SearchList>(inside)}) {
    std::optional<std::string> other = encode_remote_memo(c, list("a"), r, key, b);
    ASSERT_TRUE(other);
    ASSERT_TRUE(decode_remote_memo(*other, &view));
    EXPECT_FALSE(view.base_answer);
    // The flag byte is the last: 2 is no flag.
    std::string two = *other;
    two.back() = 2;
    EXPECT_FALSE(decode_remote_memo(two, &view));
  }
  for (size_t n = memo->size() - 12; n < memo->size(); ++n) {
    EXPECT_FALSE(decode_remote_memo(memo->substr(0, n), &view)) << n;
  }
}

TEST_F(RemoteMemoTest, CutOrChangedBytesAreRefusedWithoutACrash) {
  cache::Hash128 key;
  const std::string memo = memo_of_a(&key);
  for (size_t n = 0; n < memo.size(); ++n) {
    EXPECT_FALSE(take_in_b(memo.substr(0, n)).ok()) << n;
  }
  for (size_t i = 0; i < memo.size(); i += 7) {
    std::string changed = memo;
    changed[i] = char(changed[i] ^ 0x5a);
    base::Result<TakenClosure> taken = take_in_b(changed);
    if (taken.ok()) EXPECT_EQ(taken->key, key) << i;  // a change that made no difference
  }
}

}  // namespace
}  // namespace lexpack::closure
