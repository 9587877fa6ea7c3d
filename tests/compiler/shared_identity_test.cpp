// The compiler's answers through a real redis-server: a fresh cache with the
// same compiler takes machine A's identity and bare search lists without
// running the compiler once; an answer that does not hold here (another
// cc1plus, tampered bytes, unsigned where a secret is set) is refused, and
// the compiler is asked as before.
#include "compiler/shared_identity.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/process.h"
#include "cache/remote/backend.h"
#include "cache/remote/remote_entry.h"
#include "compiler/compile_command.h"
#include "compiler/derived_search_list.h"
#include "compiler/identify_compiler.h"
#include "tests/support/servers.h"
#include "tests/support/test_dir.h"

namespace lexpack::compiler {
namespace {

using lexpack::testing::RedisServer;
using lexpack::testing::TestDir;

class RemoteIdentity : public ::testing::Test {
 protected:
  void SetUp() override {
    if (base::find_program("g++").empty()) GTEST_SKIP() << "g++ not installed";
    ASSERT_TRUE(redis_.start());
    // Every run of the compiler appends a line to runs.log.
    dir_.write("bin/g++",
               "#!/bin/sh\necho \"$@\" >> '" + dir_.at("runs.log") + "'\nexec g++ \"$@\"\n");
    ASSERT_EQ(::chmod(dir_.at("bin/g++").c_str(), 0755), 0);
    program_ = dir_.at("bin/g++");
  }
  size_t runs() const {
    if (!dir_.exists("runs.log")) return 0;
    std::string log = dir_.read("runs.log");
    return size_t(std::count(log.begin(), log.end(), '\n'));
  }
  // A machine: its own cache dir and store, the shared server.
  struct Machine {
    TestDir dir;
    std::unique_ptr<cache::Store> store;
    std::unique_ptr<cache::remote::RemoteTier> tier;
    std::map<std::string, int64_t> counts;
    RemoteAnswers answers;
  };
  std::unique_ptr<Machine> machine(const std::string& secret = "") {
    auto m = std::make_unique<Machine>();
    cache::StoreOptions options;
    options.dir = m->dir.at("cache");
    auto store = cache::Store::open(options);
    EXPECT_TRUE(store.ok()) << store.message();
    if (store.ok()) m->store = std::move(store.value());
    cache::Config c;
    c.dir = options.dir;
    c.remote_storage = redis_.url();
    c.remote_secret = secret;
    std::string error;
    m->tier = cache::remote::RemoteTier::open(c, &error);
    EXPECT_TRUE(m->tier) << error;
    m->answers.tier = m->tier.get();
    Machine* raw = m.get();
    m->answers.count = [raw](std::string_view n, int64_t d) { raw->counts[std::string(n)] += d; };
    return m;
  }
  base::Result<CompilerIdentity> identity(Machine* m) {
    return compiler_identity(m->store.get(), program_, &m->answers);
  }
  cache::Hash128 key() const { return identity_answer_key(program_, file_digest(program_)); }
  std::unique_ptr<cache::remote::Backend> backend() const {
    return cache::remote::make_backend(*cache::remote::parse_remote_spec(redis_.url()));
  }
  // Machine A asks the compiler and fills the remote; its identity.
  CompilerIdentity fill() {
    auto a = machine();
    auto id = identity(a.get());
    EXPECT_TRUE(id.ok()) << id.message();
    EXPECT_GT(runs(), 0u);
    EXPECT_EQ(backend()->get(key().hex()).outcome, cache::remote::Outcome::kHit) << a->answers.note;
    return id.ok() ? id.value() : CompilerIdentity();
  }
  // A fresh machine takes the answer now on the server without a single run.
  void expect_taken(const CompilerIdentity& expected) {
    const size_t before = runs();
    auto b = machine();
    auto id = identity(b.get());
    ASSERT_TRUE(id.ok()) << id.message();
    EXPECT_EQ(runs(), before) << "a fresh cache ran the compiler: " << b->answers.note;
    EXPECT_EQ(b->counts["remote_answer_hits"], 1);
    EXPECT_EQ(id->hash, expected.hash);
    EXPECT_EQ(id->kind, expected.kind);
    EXPECT_EQ(id->version, expected.version);
    EXPECT_EQ(id->program, program_);
  }

  RedisServer redis_;
  TestDir dir_;
  std::string program_;
};

// A file's digest is taken once per signature in a process, also when
// threads ask at once; a rewritten file (another signature) is hashed again.
TEST(FileDigest, OncePerSignatureAndAgainWhenRewritten) {
  testing::TestDir d;
  d.write("cc1plus", std::string(300000, 'a'));
  std::vector<std::string> seen(4);
  std::vector<std::thread> threads;
  for (std::string& s : seen) threads.emplace_back([&] { s = file_digest(d.at("cc1plus")); });
  for (std::thread& t : threads) t.join();
  for (const std::string& s : seen) EXPECT_EQ(s, seen[0]);
  EXPECT_EQ(seen[0].size(), 32u) << seen[0];
  d.write("other", std::string(300000, 'a'));
  EXPECT_EQ(file_digest(d.at("other")), seen[0]);  // the bytes, not the name
  d.write("cc1plus", std::string(300001, 'a'));
  const std::string rewritten = file_digest(d.at("cc1plus"));
  EXPECT_NE(rewritten, seen[0]);
  EXPECT_EQ(rewritten.size(), 32u);
  EXPECT_EQ(file_digest(d.at("none")), "unreadable:" + d.at("none"));
}

TEST_F(RemoteIdentity, FreshCacheAsksTheCompilerNothing) {
  const CompilerIdentity a = fill();
  const size_t before = runs();
  auto b = machine();
  auto id = identity(b.get());
  ASSERT_TRUE(id.ok()) << id.message();
  EXPECT_EQ(runs(), before) << b->answers.note;
  EXPECT_EQ(id->hash, a.hash);
  // The bare search list came with it: a command with no search arguments
  // gets its list without a compiler run, the same list A's compiler gives.
  TestDir src;
  src.write("a.cpp", "int x;\n");
  compiler::CompileCommand cmd =
      compiler::parse_compile_command({program_, "-c", src.at("a.cpp"), "-o", src.at("a.o")});
  auto list = search_list_for(b->store.get(), *id, cmd, src.path());
  ASSERT_TRUE(list.ok()) << list.message();
  EXPECT_EQ(runs(), before);
  auto asked = asked_search_list(nullptr, *id, cmd.language, cmd.search_args, src.path());
  ASSERT_TRUE(asked.ok()) << asked.message();
  EXPECT_EQ(list->bracket_dirs, asked->bracket_dirs);
  EXPECT_EQ(list->quote_dirs, asked->quote_dirs);
}

TEST_F(RemoteIdentity, AnswerForAnotherCc1plusIsNotUsed) {
  const CompilerIdentity a = fill();
  const std::string honest =
      *cache::remote::decode_answer(backend()->get(key().hex()).bytes, key());
  // The same driver bytes, but the answer names a cc1plus of other content.
  CompilerIdentity forged_id = a;
  forged_id.hash = cache::Hash128{7, 7};
  IdentityFacts facts;
  base::ProcessResult cc1 = base::run_captured({"g++", "-print-prog-name=cc1"}, true);
  base::ProcessResult cc1plus = base::run_captured({"g++", "-print-prog-name=cc1plus"}, true);
  auto line = [](const std::string& s) { return s.substr(0, s.find('\n')); };
  const std::string specs = line(cc1plus.out).substr(0, line(cc1plus.out).rfind('/')) + "/specs";
  facts.programs = {{line(cc1.out), file_digest(line(cc1.out))},
                    {line(cc1plus.out), "another compiler's digest"},
                    {specs, file_digest(specs)}};
  backend()->put(key().hex(),
                 cache::remote::encode_answer(key(), encode_identity_answer(forged_id, facts)));
  const size_t before = runs();
  auto b = machine();
  auto id = identity(b.get());
  ASSERT_TRUE(id.ok()) << id.message();
  EXPECT_GT(runs(), before) << "the compiler must be asked";
  EXPECT_EQ(b->counts["remote_answers_refused"], 1) << b->answers.note;
  EXPECT_EQ(id->hash, a.hash);
  // The honest answer again: taken.
  backend()->put(key().hex(), cache::remote::encode_answer(key(), honest));
  expect_taken(a);
}

// The same driver and cc1plus, but this machine's PATH finds another `as`:
// the objects it makes may differ, so the answer is refused and the
// compiler asked, and the identity differs from A's.
TEST_F(RemoteIdentity, AnswerForAnotherAssemblerIsNotUsed) {
  const CompilerIdentity a = fill();
  dir_.write("asbin/as", "#!/bin/sh\nexec /usr/bin/as --defsym other_as=1 \"$@\"\n");
  ASSERT_EQ(::chmod(dir_.at("asbin/as").c_str(), 0755), 0);
  const std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", (dir_.at("asbin") + ":" + old_path).c_str(), 1);
  const size_t before = runs();
  auto b = machine();
  auto id = identity(b.get());
  ::setenv("PATH", old_path.c_str(), 1);
  ASSERT_TRUE(id.ok()) << id.message();
  EXPECT_GT(runs(), before) << "the compiler must be asked";
  EXPECT_EQ(b->counts["remote_answers_refused"], 1) << b->answers.note;
  EXPECT_NE(b->answers.note.find("the assembler (as) differs here"), std::string::npos)
      << b->answers.note;
  EXPECT_FALSE(id->hash == a.hash);
  EXPECT_EQ(id->assembler.path, dir_.at("asbin/as"));
  // B's answer replaced A's on the server; with PATH as A had it, a fresh
  // machine refuses B's in turn and gets A's identity.
  auto c = machine();
  auto again = identity(c.get());
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(c->counts["remote_answers_refused"], 1) << c->answers.note;
  EXPECT_EQ(again->hash, a.hash);
}

TEST_F(RemoteIdentity, AnotherDriverDoesNotFindTheAnswer) {
  const CompilerIdentity a = fill();
  expect_taken(a);
  // One byte more in the driver: another key, asked again.
  dir_.write("bin/g++", dir_.read("bin/g++") + "# edited\n");
  const size_t before = runs();
  auto b = machine();
  auto id = identity(b.get());
  ASSERT_TRUE(id.ok()) << id.message();
  EXPECT_GT(runs(), before);
  EXPECT_EQ(b->counts["remote_answer_hits"], 0);
}

TEST_F(RemoteIdentity, TamperedAnswerIsRefused) {
  const CompilerIdentity a = fill();
  const std::string good = backend()->get(key().hex()).bytes;
  std::string bad = good;
  bad[cache::remote::kEntryHeaderSize + 3] ^= 0x20;
  backend()->put(key().hex(), bad);
  const size_t before = runs();
  auto b = machine();
  auto id = identity(b.get());
  ASSERT_TRUE(id.ok()) << id.message();
  EXPECT_GT(runs(), before);
  EXPECT_EQ(b->counts["remote_bad_entries"], 1) << b->answers.note;
  EXPECT_EQ(id->hash, a.hash);
  backend()->put(key().hex(), good);
  expect_taken(a);
}

TEST_F(RemoteIdentity, WithASecretOnlySignedAnswersAreTaken) {
  // A writer without the secret fills the remote: the signed side refuses it.
  const CompilerIdentity a = fill();
  const size_t before = runs();
  auto b = machine("team secret");
  auto id = identity(b.get());
  ASSERT_TRUE(id.ok()) << id.message();
  EXPECT_GT(runs(), before);
  EXPECT_EQ(b->counts["remote_bad_entries"], 1) << b->answers.note;
  // b asked and signed its own answer: the next signed machine takes it.
  const size_t after_b = runs();
  auto c = machine("team secret");
  auto taken = identity(c.get());
  ASSERT_TRUE(taken.ok()) << taken.message();
  EXPECT_EQ(runs(), after_b) << c->answers.note;
  EXPECT_EQ(taken->hash, a.hash);
}

// clang reads configuration files no answer names (a default config beside
// the binary or in its config dirs): its answers never travel.
TEST_F(RemoteIdentity, ClangIsAskedOnEveryMachine) {
  if (base::find_program("clang++-14").empty()) GTEST_SKIP() << "clang++-14 not installed";
  dir_.write("bin/clang++",
             "#!/bin/sh\necho \"$@\" >> '" + dir_.at("runs.log") + "'\nexec clang++-14 \"$@\"\n");
  ASSERT_EQ(::chmod(dir_.at("bin/clang++").c_str(), 0755), 0);
  program_ = dir_.at("bin/clang++");
  auto a = machine();
  auto id = identity(a.get());
  ASSERT_TRUE(id.ok()) << id.message();
  ASSERT_EQ(id->kind, CompilerKind::kClang);
  EXPECT_EQ(backend()->get(key().hex()).outcome, cache::remote::Outcome::kMiss);
  // Even an answer someone stored is not taken.
  IdentityFacts facts;
  backend()->put(key().hex(),
                 cache::remote::encode_answer(key(), encode_identity_answer(*id, facts)));
  const size_t before = runs();
  auto b = machine();
  auto again = identity(b.get());
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_GT(runs(), before) << b->answers.note;
  EXPECT_EQ(b->counts["remote_answers_refused"], 1) << b->answers.note;
  EXPECT_EQ(again->hash, id->hash);
}

TEST(IdentityAnswer, MachineLocalFactsAreCheckedHere) {
  // Where clang looked for GCC installations: the same names, or refused.
  TestDir gcc;
  gcc.write("x86_64-linux-gnu/12/crtbegin.o", "");
  CompilerIdentity id;
  id.kind = CompilerKind::kClang;
  id.hash = cache::Hash128{1, 2};
  id.version = "clang version 14";
  id.watched_dirs.emplace_back(gcc.at("x86_64-linux-gnu"), base::StatSignature{});
  IdentityFacts facts;
  SearchList list;
  list.bracket_dirs = {gcc.at("x86_64-linux-gnu/12")};
  list.missing_dirs = {gcc.at("absent")};
  facts.bare_lists[1] = list;
  const std::string answer = encode_identity_answer(id, facts);
  CompilerIdentity got;
  IdentityFacts got_facts;
  std::string why;
  ASSERT_TRUE(accept_identity_answer(answer, "/usr/bin/clang", &got, &got_facts, &why)) << why;
  EXPECT_EQ(got.hash, id.hash);
  EXPECT_EQ(got.program, "/usr/bin/clang");
  ASSERT_EQ(got.watched_dirs.size(), 1u);
  EXPECT_FALSE(got.watched_dirs[0].second == base::StatSignature{});  // this machine's
  ASSERT_TRUE(got_facts.bare_lists[1]);
  EXPECT_EQ(got_facts.bare_lists[1]->bracket_dirs, list.bracket_dirs);

  // A newer GCC installed here: clang would pick it.
  gcc.write("x86_64-linux-gnu/13/crtbegin.o", "");
  EXPECT_FALSE(accept_identity_answer(answer, "/usr/bin/clang", &got, &got_facts, &why));
  gcc.remove("x86_64-linux-gnu/13/crtbegin.o");
  ASSERT_EQ(::rmdir(gcc.at("x86_64-linux-gnu/13").c_str()), 0);
  EXPECT_TRUE(accept_identity_answer(answer, "/usr/bin/clang", &got, &got_facts, &why)) << why;
  // A dir the list found missing exists here.
  gcc.write("absent/.keep", "");
  EXPECT_FALSE(accept_identity_answer(answer, "/usr/bin/clang", &got, &got_facts, &why));
  EXPECT_NE(why.find("exists here"), std::string::npos) << why;
  gcc.remove("absent/.keep");
  ASSERT_EQ(::rmdir(gcc.at("absent").c_str()), 0);
  // A search dir of the list is no directory here.
  gcc.remove("x86_64-linux-gnu/12/crtbegin.o");
  ASSERT_EQ(::rmdir(gcc.at("x86_64-linux-gnu/12").c_str()), 0);
  gcc.write("x86_64-linux-gnu/12", "a file now");
  EXPECT_FALSE(accept_identity_answer(answer, "/usr/bin/clang", &got, &got_facts, &why));
  // A gcc answer must name its cc1 programs.
  id.kind = CompilerKind::kGcc;
  id.watched_dirs.clear();
  EXPECT_FALSE(accept_identity_answer(encode_identity_answer(id, IdentityFacts{}), "/usr/bin/g++",
                                      &got, &got_facts, &why));
}

}  // namespace
}  // namespace lexpack::compiler
