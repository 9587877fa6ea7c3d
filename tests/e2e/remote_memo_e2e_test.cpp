// End to end, g++ and clang++, on a real Redis: machine B (another checkout,
// an empty cache) takes the closure memo machine A uploaded with its entry
// only when everything it names holds on B. A header that differs, a
// candidate that exists, a search directory that appeared, an unsigned,
// truncated or swapped memo: each is evaluated on B instead, and every
// object is the one B's own compiler makes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "cache/hash/hash.h"
#include "cache/remote/backend.h"
#include "cache/remote/remote_entry.h"
#include "tests/support/launcher_fixture.h"
#include "tests/support/servers.h"

namespace lexpack::testing {
namespace {

constexpr char kTaken[] = "closure taken from the remote's memo";
constexpr char kRefused[] = "closure memo from the remote refused";
constexpr char kSecret[] = "a-team-secret-of-some-length";

class RemoteMemo : public LauncherTest, public ::testing::WithParamInterface<const char*> {
 protected:
  void SetUp() override {
    root_ = dir_.real_path();
    for (const std::string& c : {a_, b_}) {
      dir_.write(c + "/inc/util.h", "#pragma once\n#include \"detail.h\"\n#include <string>\n");
      dir_.write(c + "/inc/detail.h", "inline int twice(int x) { return 2 * x; }\n");
      dir_.write(c + "/over/README", "searched first, holds no header\n");
      for (const std::string tu : {"x", "y"}) {
        dir_.write(c + "/src/" + tu + ".cpp",
                   "#include \"util.h\"\nint " + tu +
                       "(int v) { return twice(v) + int(std::to_string(v).size()); }\n");
      }
      ASSERT_EQ(sh("mkdir -p " + c + "/build").exit_code, 0);
    }
    EXPECT_TRUE(redis_.start());
  }
  // -I over (searched first), -I maybe (missing on A), -I inc.
  std::string command(const std::string& c, const std::string& tu) const {
    const std::string top = root_ + "/" + c;
    return std::string(GetParam()) + " -O2 -ffile-prefix-map=" + top + "=. -I" + top + "/over -I" +
           top + "/maybe -I" + top + "/inc -c " + top + "/src/" + tu + ".cpp -o " + tu + ".o";
  }
  base::ProcessResult compile(const std::string& machine, const std::string& c,
                              const std::string& tu, const std::string& extra_env = "") {
    dir_.write("log.txt", "");
    const std::string env = "LEXPACK_SERVER=0 LEXPACK_DIR=" + shell_quote(dir_.at(machine)) +
                            " LEXPACK_BASE_DIR=" + shell_quote(root_) +
                            " LEXPACK_REMOTE_STORAGE=" + shell_quote(redis_.url()) + " " +
                            extra_env;
    return sh("cd " + c + "/build && " + std::string(LEXPACK_BIN) + " " + command(c, tu), env);
  }
  // B's object for `tu` equals what B's compiler alone makes of it.
  void expect_b_object_is_fresh(const std::string& tu) {
    const std::string obj = dir_.read(b_ + "/build/" + tu + ".o");
    ASSERT_EQ(sh("cd " + b_ + "/build && " + command(b_, tu) + " -o plain.o").exit_code, 0);
    EXPECT_TRUE(obj == dir_.read(b_ + "/build/plain.o")) << "a wrong object for " << tu;
  }
  // Machine A compiles both TUs and uploads them.
  void machine_a(const std::string& extra_env = "") {
    for (const std::string tu : {"x", "y"}) {
      base::ProcessResult a = compile("cache-a", a_, tu, extra_env);
      ASSERT_EQ(a.exit_code, 0) << a.err;
      EXPECT_TRUE(last_was_miss()) << last_decision();
    }
  }
  // B compiles `tu`: the decision log of that compile.
  std::string machine_b(const std::string& tu, const std::string& extra_env = "") {
    base::ProcessResult b = compile("cache-b", b_, tu, extra_env);
    EXPECT_EQ(b.exit_code, 0) << b.err;
    expect_b_object_is_fresh(tu);
    return dir_.read("log.txt");
  }
  // The remote names of the closure memos A left (answers that open with
  // the memo's format tag), by the TU their source names.
  std::vector<std::string> memo_names() {
    std::vector<std::string> out;
    base::ProcessResult keys =
        sh("redis-cli -p " + std::to_string(redis_.port()) + " --raw keys 'lexpack:*'");
    auto backend = cache::remote::make_backend(*cache::remote::parse_remote_spec(redis_.url()));
    size_t pos = 0;
    while (pos < keys.out.size()) {
      size_t nl = keys.out.find('\n', pos);
      if (nl == std::string::npos) nl = keys.out.size();
      const std::string name = keys.out.substr(pos + 8, nl - pos - 8);
      pos = nl + 1;
      cache::Hash128 key;
      if (!cache::Hash128::from_hex(name, &key)) continue;
      auto answer = cache::remote::decode_answer(backend->get(name).bytes, key);
      if (answer.ok() && answer->find("lexpack-remote-memo-2") != std::string::npos) {
        out.push_back(name);
      }
    }
    return out;
  }
  std::string stats(const std::string& machine) {
    return sh("LEXPACK_DIR=" + shell_quote(dir_.at(machine)) + " " + LEXPACK_BIN + " stats").out;
  }

  RedisServer redis_;
  std::string root_;
  std::string a_ = "machine-a/src-tree/proj";
  std::string b_ = "b/proj";
};

TEST_P(RemoteMemo, TakenWhereEverythingItNamesHolds) {
  machine_a();
  for (const std::string tu : {"x", "y"}) {
    const std::string log = machine_b(tu);
    EXPECT_NE(log.find(kTaken), std::string::npos) << log;
    EXPECT_TRUE(last_was_hit()) << log;
  }
  EXPECT_NE(stats("cache-b").find("remote_memos_taken 2"), std::string::npos) << stats("cache-b");
}

// B's header includes one A's does not have: the memo does not name it, so
// it must not be taken, and what B stores must hold the new header (an edit
// of it on B is a miss, never the old object).
TEST_P(RemoteMemo, AHeaderThatDiffersIsEvaluated) {
  machine_a();
  dir_.write(b_ + "/inc/detail.h", "#include \"extra.h\"\ninline int twice(int x) { return K; }\n");
  dir_.write(b_ + "/inc/extra.h", "#define K 7\n");
  ::usleep(1100 * 1000);  // settled: B keeps a closure memo of its own
  std::string log = machine_b("x");
  EXPECT_NE(log.find(kRefused), std::string::npos) << log;
  EXPECT_NE(log.find("a file it names differs here"), std::string::npos) << log;
  EXPECT_TRUE(last_was_miss()) << log;
  dir_.write(b_ + "/inc/extra.h", "#define K 8\n");
  log = machine_b("x");
  EXPECT_TRUE(last_was_miss()) << log;
}

// A header B has in a directory searched before the one A found it in.
TEST_P(RemoteMemo, ACandidatePresentOnBIsEvaluated) {
  machine_a();
  dir_.write(b_ + "/over/util.h",
             "#pragma once\n#include <string>\ninline int twice(int x) { return 3 * x; }\n");
  const std::string log = machine_b("x");
  EXPECT_NE(log.find("present here"), std::string::npos) << log;
  EXPECT_TRUE(last_was_miss()) << log;
}

// A search directory missing on A exists on B: the compiler searches it.
TEST_P(RemoteMemo, ASearchDirectoryPresentOnBIsEvaluated) {
  machine_a();
  dir_.write(b_ + "/maybe/unrelated.h", "\n");
  const std::string log = machine_b("x");
  EXPECT_NE(log.find("the search list differs here"), std::string::npos) << log;
  EXPECT_TRUE(last_was_miss()) << log;
}

TEST_P(RemoteMemo, AnUnsignedMemoIsNotTakenWhereASecretIsSet) {
  machine_a();
  const std::string log = machine_b("x", std::string("LEXPACK_REMOTE_SECRET=") + kSecret);
  EXPECT_EQ(log.find(kTaken), std::string::npos) << log;
  EXPECT_TRUE(last_was_miss()) << log;
  const std::string b = stats("cache-b");
  EXPECT_EQ(b.find("remote_memos_taken"), std::string::npos) << b;
  EXPECT_NE(b.find("remote_bad_entries"), std::string::npos) << b;  // refused, not missing
}

TEST_P(RemoteMemo, ASignedMemoIsTakenWithTheSameSecret) {
  const std::string secret = std::string("LEXPACK_REMOTE_SECRET=") + kSecret;
  machine_a(secret);
  const std::string log = machine_b("x", secret);
  EXPECT_NE(log.find(kTaken), std::string::npos) << log;
  EXPECT_TRUE(last_was_hit()) << log;
}

TEST_P(RemoteMemo, ATruncatedMemoIsRefused) {
  machine_a();
  auto backend = cache::remote::make_backend(*cache::remote::parse_remote_spec(redis_.url()));
  const std::vector<std::string> names = memo_names();
  ASSERT_EQ(names.size(), 2u);
  for (const std::string& name : names) {
    std::string bytes = backend->get(name).bytes;
    ASSERT_EQ(backend->put(name, bytes.substr(0, bytes.size() / 2)).outcome,
              cache::remote::Outcome::kStored);
  }
  const std::string log = machine_b("x");
  EXPECT_EQ(log.find(kTaken), std::string::npos) << log;
  EXPECT_NE(stats("cache-b").find("remote_bad_entries"), std::string::npos) << stats("cache-b");
}

// x's memo under y's name: as sent (it names x's key: refused by its seal),
// and sealed again under y's key, as anyone with write access can do without
// a secret (it names x's source: refused when taken).
TEST_P(RemoteMemo, ASwappedMemoIsRefused) {
  machine_a();
  auto backend = cache::remote::make_backend(*cache::remote::parse_remote_spec(redis_.url()));
  const std::vector<std::string> names = memo_names();
  ASSERT_EQ(names.size(), 2u);
  cache::Hash128 first, second;
  ASSERT_TRUE(cache::Hash128::from_hex(names[0], &first));
  ASSERT_TRUE(cache::Hash128::from_hex(names[1], &second));
  const std::string first_bytes = backend->get(names[0]).bytes;
  const std::string second_bytes = backend->get(names[1]).bytes;
  ASSERT_EQ(backend->put(names[0], second_bytes).outcome, cache::remote::Outcome::kStored);
  ASSERT_EQ(backend->put(names[1], first_bytes).outcome, cache::remote::Outcome::kStored);
  // Evaluated on B instead: then A's entry is a hit, and the object right.
  std::string log = machine_b("x");
  EXPECT_EQ(log.find(kTaken), std::string::npos) << log;
  EXPECT_NE(log.find("answer refused (entry of another key)"), std::string::npos) << log;
  auto first_memo = cache::remote::decode_answer(first_bytes, first);
  auto second_memo = cache::remote::decode_answer(second_bytes, second);
  ASSERT_TRUE(first_memo.ok() && second_memo.ok());
  ASSERT_EQ(backend->put(names[0], cache::remote::encode_answer(first, *second_memo)).outcome,
            cache::remote::Outcome::kStored);
  ASSERT_EQ(backend->put(names[1], cache::remote::encode_answer(second, *first_memo)).outcome,
            cache::remote::Outcome::kStored);
  log = machine_b("y");
  EXPECT_NE(log.find(kRefused), std::string::npos) << log;
  EXPECT_EQ(log.find(kTaken), std::string::npos) << log;
}

INSTANTIATE_TEST_SUITE_P(Compilers, RemoteMemo, ::testing::Values("g++", "clang++-14"),
                         [](const auto& info) {
                           return std::string(info.param[0] == 'g' ? "gcc" : "clang");
                         });

}  // namespace
}  // namespace lexpack::testing
