// The whole-build prefetch in process: its keys are the launcher's own (a
// fresh cache computes, through the shared file graph, the key `lexpack
// explain` prints), and on a remote that has none of a chunk's entries it
// stops and leaves the rest to the launcher.
#include "launcher/prefetch.h"

#include <stdlib.h>

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "tests/support/launcher_fixture.h"
#include "tests/support/servers.h"

namespace lexpack::testing {
namespace {

// Sets environment variables for one test and puts back what was there.
class ScopedEnv {
 public:
  void set(const std::string& name, const std::string& value) {
    const char* old = std::getenv(name.c_str());
    saved_.push_back({name, old ? std::optional<std::string>(old) : std::nullopt});
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) {
        ::setenv(it->first.c_str(), it->second->c_str(), 1);
      } else {
        ::unsetenv(it->first.c_str());
      }
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

class Prefetch : public LauncherTest {
 protected:
  void SetUp() override {
    root_ = dir_.real_path();
    dir_.write("inc/util.h",
               "#pragma once\n#include <vector>\ninline int twice(int x) { return 2 * x; }\n");
    // A TU whose __has_include is reached through a macro: its closure needs
    // the evaluation of its conditionals.
    dir_.write("inc/probe.h",
               "#pragma once\n#define HAS(x) __has_include(x)\n#if HAS(<optional>)\n"
               "#include <optional>\n#endif\n");
    for (const std::string tu : {"x", "y", "z"}) {
      dir_.write("src/" + tu + ".cpp",
                 "#include \"util.h\"\n#include \"probe.h\"\n#include <string>\nint " + tu +
                     "(int v) { return twice(v) + int(std::to_string(v).size()); }\n");
    }
    ASSERT_EQ(sh("mkdir -p build").exit_code, 0);
  }
  std::vector<std::string> argv(const std::string& tu) const {
    return {"g++",
            "-O2",
            "-g",
            "-I" + root_ + "/inc",
            "-MD",
            "-MT",
            tu + ".o",
            "-MF",
            tu + ".o.d",
            "-o",
            tu + ".o",
            "-c",
            root_ + "/src/" + tu + ".cpp"};
  }
  std::vector<launcher::PrefetchCompile> compiles() const {
    std::vector<launcher::PrefetchCompile> out;
    for (const std::string tu : {"x", "y", "z"}) out.push_back({root_ + "/build", argv(tu)});
    return out;
  }
  // The key `lexpack explain` (the launcher) gives `tu`, in the cache `cache`.
  std::string explained_key(const std::string& cache, const std::string& tu) {
    std::string cmd = "cd build && " + std::string(LEXPACK_BIN) + " explain";
    for (const std::string& a : argv(tu)) cmd += " " + shell_quote(a);
    base::ProcessResult p = sh(cmd, "LEXPACK_DIR=" + shell_quote(dir_.at(cache)));
    size_t at = p.out.find("action key: ");
    return at == std::string::npos ? p.out + p.err : p.out.substr(at + 12, 32);
  }
  std::string root_;
};

TEST_F(Prefetch, KeysAreTheLaunchersKeys) {
  ScopedEnv env;
  env.set("LEXPACK_DIR", dir_.at("cache-p"));
  env.set("LEXPACK_REMOTE_STORAGE", "");
  launcher::PrefetchOptions options;
  options.fetch = false;
  launcher::PrefetchResult r = launcher::prefetch_compiles(compiles(), options);
  ASSERT_EQ(r.keys.size(), 3u);
  const char* tus[] = {"x", "y", "z"};
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(r.keys[i].has_value()) << r.why_not[i];
    EXPECT_FALSE(r.local[i]);
    // A cache that never saw the prefetch computes the same key.
    EXPECT_EQ(r.keys[i]->hex(), explained_key("cache-e", tus[i])) << tus[i];
  }
  // The launcher, in the prefetch's cache, finds its key in the memo the
  // prefetch left, and stores its result under it.
  for (const std::string tu : {"x", "y", "z"}) {
    std::string cmd = "cd build && " + std::string(LEXPACK_BIN);
    for (const std::string& a : argv(tu)) cmd += " " + shell_quote(a);
    ASSERT_EQ(sh(cmd, "LEXPACK_DIR=" + shell_quote(dir_.at("cache-p"))).exit_code, 0);
  }
  r = launcher::prefetch_compiles(compiles(), options);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(r.local[i]) << tus[i];
}

TEST_F(Prefetch, StopsAfterAChunkTheRemoteHasNoneOf) {
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  ScopedEnv env;
  env.set("LEXPACK_DIR", dir_.at("cache-p"));
  env.set("LEXPACK_REMOTE_STORAGE", redis.url());
  launcher::PrefetchOptions options;
  options.chunk = 1;
  options.cold_chunk = 1;
  options.stop_when_remote_lacks = true;
  launcher::PrefetchResult r = launcher::prefetch_compiles(compiles(), options);
  ASSERT_EQ(r.keys.size(), 3u);
  EXPECT_TRUE(r.keys[0].has_value()) << r.why_not[0];
  for (size_t i = 1; i < 3; ++i) {
    EXPECT_FALSE(r.keys[i].has_value());
    EXPECT_NE(r.why_not[i].find("not prefetched"), std::string::npos) << r.why_not[i];
  }
  EXPECT_EQ(r.fetched, 0u);
  // Without the stop, every compile is keyed (and asked for).
  options.stop_when_remote_lacks = false;
  r = launcher::prefetch_compiles(compiles(), options);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(r.keys[i].has_value()) << r.why_not[i];
}

// Past its deadline the prefetch begins no other chunk: the build is not
// held, and the compiles left are keyed by the launcher.
TEST_F(Prefetch, BeginsNoChunkPastItsDeadline) {
  ScopedEnv env;
  env.set("LEXPACK_DIR", dir_.at("cache-p"));
  launcher::PrefetchOptions options;
  options.chunk = 1;
  options.deadline_ms = 1;  // a chunk computes a closure: longer than this
  launcher::PrefetchResult r = launcher::prefetch_compiles(compiles(), options);
  ASSERT_EQ(r.keys.size(), 3u);
  EXPECT_TRUE(r.keys[0].has_value()) << r.why_not[0];
  for (size_t i = 1; i < 3; ++i) {
    EXPECT_FALSE(r.keys[i].has_value());
    EXPECT_NE(r.why_not[i].find("past the prefetch's deadline of 1 ms"), std::string::npos)
        << r.why_not[i];
  }
  // Unbounded, all three are keyed.
  options.deadline_ms = 0;
  r = launcher::prefetch_compiles(compiles(), options);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(r.keys[i].has_value()) << r.why_not[i];
}

// The memos are told of a slice at a time, each slice's once they are in
// the local store and before the next slice is keyed: a server checks them
// while the prefetch keys the rest.
TEST_F(Prefetch, TellsOfEachSlicesMemosOnceStored) {
  ScopedEnv env;
  env.set("LEXPACK_DIR", dir_.at("cache-p"));
  env.set("LEXPACK_REMOTE_STORAGE", "");
  const char* tus[] = {"x", "y", "z"};
  auto has_memo = [&](size_t i) {
    std::string cmd = "cd build && " + std::string(LEXPACK_BIN) + " explain";
    for (const std::string& a : argv(tus[i])) cmd += " " + shell_quote(a);
    base::ProcessResult p =
        sh(cmd, "LEXPACK_SERVER=0 LEXPACK_DIR=" + shell_quote(dir_.at("cache-p")));
    return p.out.find("no closure memo") == std::string::npos;
  };
  std::vector<std::vector<size_t>> told;
  std::vector<std::vector<bool>> stored;  // per call: which compiles had a memo
  launcher::PrefetchOptions options;
  options.fetch = false;
  options.jobs = 1;  // a slice holds at least as many compiles as threads
  options.memo_slice = 2;
  options.memos_stored = [&](std::vector<size_t> keyed) {
    told.push_back(keyed);
    stored.push_back({has_memo(0), has_memo(1), has_memo(2)});
  };
  launcher::PrefetchResult r = launcher::prefetch_compiles(compiles(), options);
  for (size_t i = 0; i < 3; ++i) ASSERT_TRUE(r.keys[i].has_value()) << r.why_not[i];
  ASSERT_EQ(told.size(), 2u);
  EXPECT_EQ(told[0], (std::vector<size_t>{0, 1}));
  EXPECT_EQ(told[1], (std::vector<size_t>{2}));
  EXPECT_EQ(stored[0], (std::vector<bool>{true, true, false}));
  EXPECT_EQ(stored[1], (std::vector<bool>{true, true, true}));
}

TEST_F(Prefetch, ARefusedRemoteLeavesTheKeysAndFetchesNothing) {
  ScopedEnv env;
  env.set("LEXPACK_DIR", dir_.at("cache-p"));
  env.set("LEXPACK_REMOTE_STORAGE", "redis://127.0.0.1:" + std::to_string(free_port()));
  launcher::PrefetchResult r = launcher::prefetch_compiles(compiles(), {});
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(r.keys[i].has_value()) << r.why_not[i];
  EXPECT_EQ(r.fetched, 0u);
}

}  // namespace
}  // namespace lexpack::testing
