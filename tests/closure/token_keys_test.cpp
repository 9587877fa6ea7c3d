// A token key made with a process's memory of fingerprints (the server's)
// is the key made from the store alone (the launcher's), for every file
// kind the fingerprint marks (comments, "??" under trigraphs, a line
// comment in C90, text the lexer is unsure of), on its first use and on
// each use after; and a file whose bytes changed since the closure was
// taken gives no key.
#include "closure/token_keys.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "cache/hash/hash.h"
#include "tests/support/open_store.h"
#include "tests/support/test_dir.h"

namespace lexpack::closure {
namespace {

class TokenKeyMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    identity_.kind = compiler::CompilerKind::kGcc;
    identity_.program = "/usr/bin/gcc";
    identity_.version = "gcc 12";
    identity_.hash = cache::Hash128{5, 6};
    // What each file holds: plain code, a comment, "??", a line comment,
    // and an unterminated comment (the token text is unsure).
    files_ = {{"a.c", "#include \"h.h\"\nint f(void) { return H; }\n"},
              {"h.h", "#define H 1 /* one */\n"},
              {"q.h", "const char* q = \"??=\";\n"},
              {"l.h", "int l; // line\n"},
              {"u.h", "int u; /* never closed\n"}};
    for (const auto& [name, bytes] : files_) dir_.write(name, bytes);
    store_ = testing::open_store(dir_.at("cache"));
  }
  Closure closure() const {
    Closure c;
    for (const auto& [name, bytes] : files_) {
      ClosureFile f;
      f.path = name;
      f.content = cache::hash_bytes(bytes);
      c.files.push_back(f);
    }
    c.failed_probes = {"inc/h.h", "/usr/include/h.h"};
    c.failed_probe_dirs = {0, 1};
    return c;
  }
  std::optional<cache::Hash128> key(const std::vector<std::string>& argv, cache::Store* store,
                                    TokenMemory* memory) {
    const compiler::CompileCommand cmd = compiler::parse_compile_command(argv);
    return token_key(identity_, cmd, dir_.path(), closure(), KeyRelocation(), store, true, memory);
  }

  testing::TestDir dir_;
  compiler::CompilerIdentity identity_;
  std::vector<std::pair<std::string, std::string>> files_;
  std::unique_ptr<cache::Store> store_;
};

TEST_F(TokenKeyMemory, TheSameKeyWithAndWithoutMemory) {
  ASSERT_TRUE(store_);
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{"gcc", "-c", "a.c"},
        std::vector<std::string>{"gcc", "-std=c90", "-c", "a.c"},
        std::vector<std::string>{"gcc", "-trigraphs", "-c", "a.c"}}) {
    SCOPED_TRACE(argv[1]);
    // Each way with a fresh store: the first key reads and lexes every file.
    testing::TestDir other;
    std::unique_ptr<cache::Store> fresh = testing::open_store(other.at("cache"));
    ASSERT_TRUE(fresh);
    TokenMemory memory;
    const std::optional<cache::Hash128> learned = key(argv, fresh.get(), &memory);
    ASSERT_TRUE(learned);
    EXPECT_EQ(memory.values.size(), files_.size());
    // From memory alone, from the store alone, and made again elsewhere.
    EXPECT_EQ(key(argv, fresh.get(), &memory), learned);
    EXPECT_EQ(key(argv, fresh.get(), nullptr), learned);
    EXPECT_EQ(key(argv, store_.get(), nullptr), learned);
    TokenMemory from_store;
    EXPECT_EQ(key(argv, fresh.get(), &from_store), learned);
  }
}

TEST_F(TokenKeyMemory, ModesThatReadMarkedFilesGiveOtherKeys) {
  ASSERT_TRUE(store_);
  TokenMemory memory;
  const auto plain = key({"gcc", "-c", "a.c"}, store_.get(), &memory);
  const auto c90 = key({"gcc", "-std=c90", "-c", "a.c"}, store_.get(), &memory);
  const auto trigraphs = key({"gcc", "-trigraphs", "-c", "a.c"}, store_.get(), &memory);
  ASSERT_TRUE(plain && c90 && trigraphs);
  EXPECT_NE(*plain, *c90);
  EXPECT_NE(*plain, *trigraphs);
}

// The failed probes' digests the action key made stand in the token key
// for its own.
TEST_F(TokenKeyMemory, TheActionKeysProbeDigestsMakeTheSameTokenKey) {
  ASSERT_TRUE(store_);
  const std::vector<std::string> argv = {"gcc", "-c", "a.c"};
  const compiler::CompileCommand cmd = compiler::parse_compile_command(argv);
  ProbeDigests probes;
  const cache::Hash128 action =
      action_key(identity_, cmd, dir_.path(), closure(), KeyRelocation(), nullptr, &probes);
  EXPECT_TRUE(probes.made);
  EXPECT_EQ(probes.sorted.size(), 2u);
  EXPECT_EQ(action, action_key(identity_, cmd, dir_.path(), closure(), KeyRelocation()));
  EXPECT_EQ(token_key(identity_, cmd, dir_.path(), closure(), KeyRelocation(), store_.get(), true,
                      nullptr, &probes),
            key(argv, store_.get(), nullptr));
  // Other probes, another key.
  Closure fewer = closure();
  fewer.failed_probes.pop_back();
  fewer.failed_probe_dirs.pop_back();
  EXPECT_NE(token_key(identity_, cmd, dir_.path(), fewer, KeyRelocation(), store_.get(), true),
            key(argv, store_.get(), nullptr));
}

TEST_F(TokenKeyMemory, AFileChangedSinceTheClosureGivesNoKey) {
  ASSERT_TRUE(store_);
  dir_.write("l.h", "int l2; // line\n");
  TokenMemory memory;
  EXPECT_FALSE(key({"gcc", "-c", "a.c"}, store_.get(), &memory));
}

}  // namespace
}  // namespace lexpack::closure
