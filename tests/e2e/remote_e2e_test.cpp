// Two machines (two cache directories, two checkouts at different paths)
// sharing a real Redis or nginx: B, with an empty cache, gets every compile
// as a hit from what A uploaded, byte-identical to its own compiler's
// output. A dead, hung or lying remote leaves every build correct.
#include <stdlib.h>

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "cache/hash/hash.h"
#include "cache/remote/backend.h"
#include "tests/support/launcher_fixture.h"
#include "tests/support/servers.h"

namespace lexpack::testing {
namespace {

class RemoteBuild : public LauncherTest {
 protected:
  void SetUp() override {
    root_ = dir_.real_path();
    for (const std::string& c : {a_, b_}) {
      dir_.write(c + "/inc/util.h", "#pragma once\ninline int twice(int x) { return 2 * x; }\n");
      for (const std::string tu : {"x", "y"}) {
        dir_.write(c + "/src/" + tu + ".cpp",
                   "#include \"util.h\"\n#include <string>\nint " + tu +
                       "(int v) { return twice(v) + int(std::to_string(v).size()); }\n");
      }
      ASSERT_EQ(sh("mkdir -p " + c + "/build").exit_code, 0);
    }
  }
  std::string command(const std::string& c, const std::string& tu) const {
    std::string top = root_ + "/" + c;
    return "g++ -O2 -ffile-prefix-map=" + top + "=. -I" + top + "/inc -MD -MT " + tu + ".o -MF " +
           tu + ".o.d -o " + tu + ".o -c " + top + "/src/" + tu + ".cpp";
  }
  // Compiles `tu` in checkout `c` as machine `machine` (its own cache dir).
  base::ProcessResult compile(const std::string& machine, const std::string& c,
                              const std::string& tu, const std::string& remote) {
    std::string env = "LEXPACK_DIR=" + shell_quote(dir_.at(machine)) +
                      " LEXPACK_BASE_DIR=" + shell_quote(root_) +
                      " LEXPACK_REMOTE_STORAGE=" + shell_quote(remote);
    return sh("cd " + c + "/build && " + std::string(LEXPACK_BIN) + " " + command(c, tu), env);
  }
  std::string plain(const std::string& c, const std::string& tu, std::string* depfile) {
    EXPECT_EQ(sh("cd " + c + "/build && " + command(c, tu)).exit_code, 0);
    std::string obj = dir_.read(c + "/build/" + tu + ".o");
    *depfile = dir_.read(c + "/build/" + tu + ".o.d");
    sh("rm -f " + c + "/build/" + tu + ".o " + c + "/build/" + tu + ".o.d");
    return obj;
  }
  std::string stats(const std::string& machine) {
    return sh("LEXPACK_DIR=" + shell_quote(dir_.at(machine)) + " " + LEXPACK_BIN + " stats").out;
  }
  void two_machines(const std::string& remote) {
    std::string dep_x, dep_y;
    std::string obj_x = plain(b_, "x", &dep_x), obj_y = plain(b_, "y", &dep_y);
    for (const std::string tu : {"x", "y"}) {
      ASSERT_EQ(compile("cache-a", a_, tu, remote).exit_code, 0);
      EXPECT_TRUE(last_was_miss()) << last_decision();
    }
    for (const std::string tu : {"x", "y"}) {
      base::ProcessResult p = compile("cache-b", b_, tu, remote);
      ASSERT_EQ(p.exit_code, 0) << p.err;
      EXPECT_TRUE(last_was_hit()) << last_decision() << "\n" << dir_.read("log.txt");
    }
    EXPECT_TRUE(dir_.read(b_ + "/build/x.o") == obj_x);
    EXPECT_TRUE(dir_.read(b_ + "/build/y.o") == obj_y);
    EXPECT_EQ(dir_.read(b_ + "/build/x.o.d"), dep_x);
    EXPECT_EQ(dir_.read(b_ + "/build/y.o.d"), dep_y);
    EXPECT_EQ(dir_.read(b_ + "/build/x.o.d").find(root_ + "/" + a_), std::string::npos);
    std::string s = stats("cache-b");
    EXPECT_NE(s.find("remote_hits       2"), std::string::npos) << s;
    // The remote hit went into B's local store: no remote needed any more.
    ASSERT_EQ(sh("rm -f " + b_ + "/build/x.o").exit_code, 0);
    ASSERT_EQ(compile("cache-b", b_, "x", "").exit_code, 0);
    EXPECT_TRUE(last_was_hit()) << last_decision();
  }

  void fresh_machine_runs_no_compiler(const std::string& extra_env);

  std::string root_;
  std::string a_ = "machine-a/src-tree/proj";
  std::string b_ = "b/proj";
};

TEST_F(RemoteBuild, TwoMachinesThroughRedis) {
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  two_machines(redis.url());
}

TEST_F(RemoteBuild, TwoMachinesThroughNginx) {
  NginxServer nginx;
  ASSERT_TRUE(nginx.start());
  two_machines(nginx.url());
}

TEST_F(RemoteBuild, TwoMachinesThroughHttps) {
  NginxServer nginx;
  ASSERT_TRUE(nginx.start(true));
  two_machines(nginx.url() + "|ca-file=" + nginx.ca_file());
}

int64_t ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t)
      .count();
}

TEST_F(RemoteBuild, DeadOrHungRemotesNeverBreakTheBuild) {
  std::string dep;
  std::string ref = plain(b_, "x", &dep);
  BlackHole hole;
  int refused = free_port();
  RedisServer stopped;
  ASSERT_TRUE(stopped.start());
  std::string stopped_url = stopped.url();
  stopped.stop();
  int machine = 0;
  for (const std::string& remote :
       {"redis://127.0.0.1:" + std::to_string(refused),
        "http://127.0.0.1:" + std::to_string(refused) + "/c", stopped_url,
        "redis://127.0.0.1:" + std::to_string(hole.port()) + "|operation-timeout=300",
        "http://127.0.0.1:" + std::to_string(hole.port()) + "/c|operation-timeout=300"}) {
    std::string cache = "cache-" + std::to_string(machine++);
    auto t = std::chrono::steady_clock::now();
    base::ProcessResult p = compile(cache, b_, "x", remote);
    ASSERT_EQ(p.exit_code, 0) << remote << p.err;
    EXPECT_TRUE(last_was_miss()) << remote << last_decision();
    EXPECT_TRUE(dir_.read(b_ + "/build/x.o") == ref) << remote;
    EXPECT_EQ(dir_.read(b_ + "/build/x.o.d"), dep) << remote;
    EXPECT_LT(ms_since(t), 20'000) << remote;
    // The next compile of the same cache does not wait for the remote again.
    sh("rm -f " + b_ + "/build/x.o " + b_ + "/build/x.o.d");
    ASSERT_EQ(compile(cache, b_, "y", remote).exit_code, 0);
    std::string log = dir_.read("log.txt");
    EXPECT_NE(log.rfind("marked down"), std::string::npos) << remote;
    std::string s = stats(cache);
    EXPECT_TRUE(s.find("remote_errors") != std::string::npos ||
                s.find("remote_timeouts") != std::string::npos)
        << s;
  }
}

TEST_F(RemoteBuild, CorruptedEntryIsAMissWithTheRightObject) {
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  std::string dep;
  std::string ref = plain(b_, "x", &dep);
  ASSERT_EQ(compile("cache-a", a_, "x", redis.url()).exit_code, 0);
  // Flip one byte in every stored entry.
  auto spec = cache::remote::parse_remote_spec(redis.url());
  auto backend = cache::remote::make_backend(*spec);
  base::ProcessResult keys = sh("redis-cli -p " + std::to_string(redis.port()) + " --raw keys '*'");
  ASSERT_EQ(keys.exit_code, 0) << keys.err;
  int flipped = 0;
  size_t pos = 0;
  while (pos < keys.out.size()) {
    size_t nl = keys.out.find('\n', pos);
    if (nl == std::string::npos) nl = keys.out.size();
    std::string k = keys.out.substr(pos, nl - pos);
    pos = nl + 1;
    if (k.rfind("lexpack:", 0) != 0) continue;
    std::string name = k.substr(8);
    cache::remote::Reply got = backend->get(name);
    ASSERT_EQ(got.outcome, cache::remote::Outcome::kHit);
    got.bytes[got.bytes.size() - 5] ^= 0x40;
    ASSERT_EQ(backend->put(name, got.bytes).outcome, cache::remote::Outcome::kStored);
    ++flipped;
  }
  ASSERT_EQ(flipped, 3);  // the entry, the compiler's answer and the closure memo
  base::ProcessResult p = compile("cache-b", b_, "x", redis.url() + "|read-only");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_TRUE(last_was_miss()) << last_decision();
  EXPECT_TRUE(dir_.read(b_ + "/build/x.o") == ref);
  EXPECT_NE(stats("cache-b").find("remote_bad_entries 3"), std::string::npos) << stats("cache-b");
}

// Machine B asks its compiler nothing: the identity is another machine's
// answer, the closures come from the remote's memos; with `extra_env`
// (a server on: it finds identities the same way).
void RemoteBuild::fresh_machine_runs_no_compiler(const std::string& extra_env) {
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  // The team's compiler, at one path on both machines; it logs every run.
  dir_.write("bin/g++", "#!/bin/sh\necho \"$@\" >> " + shell_quote(dir_.at("runs.log")) +
                            "\nexec g++ \"$@\"\n");
  ASSERT_EQ(sh("chmod +x bin/g++").exit_code, 0);
  auto with_wrapper = [&](const std::string& machine, const std::string& c, const std::string& tu) {
    std::string env = "LEXPACK_DIR=" + shell_quote(dir_.at(machine)) +
                      " LEXPACK_BASE_DIR=" + shell_quote(root_) +
                      " LEXPACK_REMOTE_STORAGE=" + shell_quote(redis.url()) + " " + extra_env;
    return sh("cd " + c + "/build && " + std::string(LEXPACK_BIN) + " " + dir_.at("bin/") +
                  command(c, tu),
              env);
  };
  for (const std::string tu : {"x", "y"}) {
    ASSERT_EQ(with_wrapper("cache-a", a_, tu).exit_code, 0);
    EXPECT_TRUE(last_was_miss()) << last_decision();
  }
  ASSERT_TRUE(dir_.exists("runs.log"));
  dir_.remove("runs.log");
  if (extra_env == "LEXPACK_SERVER=1") {
    // B's server up before its first compile, which it is asked about.
    const std::string b_env = "LEXPACK_DIR=" + shell_quote(dir_.at("cache-b")) +
                              " LEXPACK_REMOTE_STORAGE=" + shell_quote(redis.url()) + " ";
    ASSERT_EQ(sh(b_env + LEXPACK_BIN + " server --start").exit_code, 0);
    ASSERT_EQ(sh(b_env + LEXPACK_BIN + " server --status").exit_code, 0);
  }
  for (const std::string tu : {"x", "y"}) {
    base::ProcessResult p = with_wrapper("cache-b", b_, tu);
    ASSERT_EQ(p.exit_code, 0) << p.err;
    EXPECT_TRUE(last_was_hit()) << last_decision() << "\n" << dir_.read("log.txt");
  }
  for (const char* machine : {"cache-a", "cache-b"}) {
    sh("LEXPACK_DIR=" + shell_quote(dir_.at(machine)) + " " + LEXPACK_BIN + " server --stop");
  }
  EXPECT_FALSE(dir_.exists("runs.log")) << "machine B ran its compiler:\n" << dir_.read("runs.log");
  const std::string b_stats = stats("cache-b");
  EXPECT_NE(b_stats.find("remote_memos_taken 2"), std::string::npos) << b_stats;
}

TEST_F(RemoteBuild, FreshMachineRunsNoCompilerForItsQuestions) {
  fresh_machine_runs_no_compiler("LEXPACK_SERVER=0");
  // One identity answer per process until the identity is remembered
  // locally, which waits for the just-written wrapper to settle (one or
  // two), and each compile's closure memo (two).
  const std::string b_stats = stats("cache-b");
  EXPECT_TRUE(b_stats.find("remote_answer_hits 3") != std::string::npos ||
              b_stats.find("remote_answer_hits 4") != std::string::npos)
      << b_stats;
}

TEST_F(RemoteBuild, FreshMachineWithAServerRunsNoCompiler) {
  fresh_machine_runs_no_compiler("LEXPACK_SERVER=1");
}

}  // namespace
}  // namespace lexpack::testing
