// `lexpack ninja` with a remote: the build's compiles queue their uploads and
// one uploader of the build sends them (no compile waits for a PUT); another
// machine (another cache directory) then builds from the remote alone.
#include <gtest/gtest.h>

#include <string>

#include "base/process.h"
#include "tests/support/servers.h"
#include "tests/support/test_dir.h"

namespace lexpack::testing {
namespace {

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = 0; (at = text.find(what, at)) != std::string::npos; at += what.size()) ++n;
  return n;
}

class RemoteNinja : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.write("src/CMakeLists.txt",
               "cmake_minimum_required(VERSION 3.22)\n"
               "project(rn CXX)\n"
               "add_library(parts STATIC t0.cpp t1.cpp t2.cpp)\n");
    for (int i = 0; i < 3; ++i) {
      dir_.write("src/t" + std::to_string(i) + ".cpp",
                 "#include <string>\nint t" + std::to_string(i) +
                     "() { return int(std::to_string(" + std::to_string(i * 17) + ").size()); }\n");
    }
  }
  base::ProcessResult sh(const std::string& cache, const std::string& remote,
                         const std::string& command) {
    return base::run_captured(
        {"/bin/sh", "-c",
         "cd " + shell_quote(dir_.path()) + " || exit 99; export LEXPACK_DIR=" +
             shell_quote(dir_.at(cache)) + " LEXPACK_PLUGIN=" + shell_quote(LEXPACK_PLUGIN_SO) +
             " LEXPACK_REMOTE_STORAGE=" + shell_quote(remote) + "; " + command},
        true);
  }
  // A fresh build directory, configured and built by `lexpack ninja` (with
  // `env`, "NAME=value ...", in its environment).
  base::ProcessResult build(const std::string& cache, const std::string& remote,
                            const std::string& ninja_args = "", const std::string& env = "") {
    base::ProcessResult c = sh(cache, remote,
                               "rm -rf b && cmake -S src -B b -G Ninja "
                               "-DCMAKE_CXX_COMPILER=g++ >/dev/null");
    EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
    return sh(cache, remote,
              (env.empty() ? "" : "export " + env + "; ") + std::string(LEXPACK_BIN) +
                  " ninja -C b " + ninja_args);
  }
  // A fresh build directory, configured, then `lexpack warm` on it.
  base::ProcessResult warm_fresh_build(const std::string& cache, const std::string& remote) {
    base::ProcessResult c = sh(cache, remote,
                               "rm -rf b && cmake -S src -B b -G Ninja "
                               "-DCMAKE_CXX_COMPILER=g++ >/dev/null");
    EXPECT_EQ(c.exit_code, 0) << c.err;
    return sh(cache, remote, std::string(LEXPACK_BIN) + " warm -C b");
  }
  void reset_redis_stats(const RedisServer& redis) {
    base::ProcessResult r =
        sh("cache-a", "", "redis-cli -p " + std::to_string(redis.port()) + " config resetstat");
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  TestDir dir_;
};

TEST_F(RemoteNinja, TheBuildUploadsWhatItStoredAndAnotherMachineHitsIt) {
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  base::ProcessResult a = build("cache-a", redis.url());
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  // Three compiles, the archive's `ar` and `ranlib` steps.
  EXPECT_NE(a.err.find("5 of 5 stored entries uploaded to the remote"), std::string::npos) << a.err;
  // The prefetch stored each compile's closure memo before ninja ran: the
  // misses are still new compiles, not misses "for other reasons".
  EXPECT_NE(a.err.find("lexpack: 3 misses: 3 new compiles (or arguments changed)\n"),
            std::string::npos)
      << a.err;
  ASSERT_EQ(sh("cache-a", "", "cp b/libparts.a a-libparts.a").exit_code, 0);
  base::ProcessResult b = build("cache-b", redis.url());
  ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  EXPECT_NE(b.err.find("3 compiles, 3 hits"), std::string::npos) << b.err;
  EXPECT_NE(b.err.find("2 archive/link steps, 2 hits"), std::string::npos) << b.err;
  EXPECT_EQ(dir_.read("b/libparts.a"), dir_.read("a-libparts.a"));
  base::ProcessResult stats = sh("cache-a", "", std::string(LEXPACK_BIN) + " stats");
  EXPECT_NE(stats.out.find("remote_uploads    5"), std::string::npos) << stats.out;
}

// A precompiled header the build makes: its users' keys name the compile
// that made it (closure/pch_maker.h), so before it is there the prefetch
// leaves them to the build instead of computing keys that cannot hit.
TEST_F(RemoteNinja, UsersOfAPrecompiledHeaderTheBuildMakesAreKeyedWhenBuilt) {
  dir_.write("src/CMakeLists.txt",
             "cmake_minimum_required(VERSION 3.22)\n"
             "project(rn CXX)\n"
             "add_library(parts STATIC t0.cpp t1.cpp t2.cpp)\n"
             "target_precompile_headers(parts PRIVATE <string>)\n");
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  base::ProcessResult a = build("cache-a", redis.url());
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  ASSERT_EQ(sh("cache-a", "", "cp b/libparts.a a-libparts.a").exit_code, 0);
  base::ProcessResult warm = warm_fresh_build("cache-c", redis.url());
  ASSERT_EQ(warm.exit_code, 0) << warm.err;
  // The header's own compile keyed and fetched; its three users left.
  EXPECT_NE(warm.err.find("4 compiles, 0 would hit, 1 would miss, 0 uncacheable; 1 of them "
                          "fetched from the remote; 3 keyed only when built"),
            std::string::npos)
      << warm.err;
  base::ProcessResult b = sh("cache-c", redis.url(), std::string(LEXPACK_BIN) + " ninja -C b");
  ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  EXPECT_NE(b.err.find("4 compiles, 4 hits"), std::string::npos) << b.err;
  EXPECT_EQ(dir_.read("b/libparts.a"), dir_.read("a-libparts.a"));
}

// A CI job on a fresh machine: `lexpack warm` takes every compile's closure
// memo from the remote in one batch (one MGET), computes the keys, fetches
// the missing entries in one batch (a second MGET) into the local store,
// and the build then hits them all without asking the remote again.
TEST_F(RemoteNinja, WarmFetchesTheBuildsEntriesInOneBatch) {
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  base::ProcessResult a = build("cache-a", redis.url());
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  reset_redis_stats(redis);  // machine A's build asked too (and missed)
  base::ProcessResult warm = warm_fresh_build("cache-c", redis.url());
  ASSERT_EQ(warm.exit_code, 0) << warm.err;
  EXPECT_NE(warm.err.find("3 would miss, 0 uncacheable; 3 of them fetched from the remote"),
            std::string::npos)
      << warm.err;
  base::ProcessResult mgets =
      sh("cache-c", "", "redis-cli -p " + std::to_string(redis.port()) + " info commandstats");
  EXPECT_NE(mgets.out.find("cmdstat_mget:calls=2,"), std::string::npos) << mgets.out;
  // The build needs no remote any more.
  base::ProcessResult b = sh("cache-c", "", std::string(LEXPACK_BIN) + " ninja -C b");
  ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  EXPECT_NE(b.err.find("3 compiles, 3 hits"), std::string::npos) << b.err;
}

// A fresh machine running `lexpack ninja` alone: before ninja starts, the
// closure memos of the compiles whose objects are missing are fetched in one
// batch, their keys computed in one process and their entries fetched in a
// second batch; every compile is then a local hit
// (its key is the one the launcher looks up) and asks the remote nothing.
TEST_F(RemoteNinja, NinjaPrefetchesTheBuildsEntriesAndTheCompilesHitLocally) {
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  base::ProcessResult a = build("cache-a", redis.url());
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  reset_redis_stats(redis);  // machine A's build asked too (and missed)
  base::ProcessResult b =
      build("cache-b", redis.url(), "", "LEXPACK_LOGFILE=" + shell_quote(dir_.at("b.log")));
  ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  EXPECT_NE(b.err.find("3 of 3 compiles prefetched from the remote"), std::string::npos) << b.err;
  EXPECT_NE(b.err.find("3 compiles, 3 hits"), std::string::npos) << b.err;
  base::ProcessResult mgets =
      sh("cache-b", "", "redis-cli -p " + std::to_string(redis.port()) + " info commandstats");
  EXPECT_NE(mgets.out.find("cmdstat_mget:calls=2,"), std::string::npos) << mgets.out;
  std::string decisions = dir_.read("b.log");
  EXPECT_EQ(count_of(decisions, ": hit ("), 3u) << decisions;
  EXPECT_EQ(count_of(decisions, ".cpp: remote redis"), 0u) << decisions;
  EXPECT_EQ(count_of(decisions, ".cpp: miss"), 0u) << decisions;
}

// Another checkout (a fresh machine, base_dir set): the prefetch takes the
// closure memos A uploaded in one batch, evaluates nothing, and no compiler
// runs on B; the objects are a plain build's. A flag among the search
// arguments (-ffast-math) makes a base question of its own: its answer
// travels in the memos, so B asks its compiler no -E -v either.
//
// t0 includes a header the configure writes right before the build: too
// young for a memo checked by stat, the prefetch's memo checks it by
// content, so the compile takes no remote memo again (3 taken, not 4).
TEST_F(RemoteNinja, AnotherCheckoutTakesTheClosureMemosAndRunsNoCompiler) {
  dir_.write("src/CMakeLists.txt",
             "cmake_minimum_required(VERSION 3.22)\n"
             "project(rn CXX)\n"
             "add_compile_options(-ffile-prefix-map=${CMAKE_SOURCE_DIR}=. "
             "-ffile-prefix-map=${CMAKE_BINARY_DIR}=build -ffast-math)\n"
             "configure_file(cfg.h.in ${CMAKE_BINARY_DIR}/gen/cfg.h)\n"
             "include_directories(${CMAKE_BINARY_DIR}/gen)\n"
             "add_library(parts STATIC t0.cpp t1.cpp t2.cpp)\n");
  dir_.write("src/cfg.h.in", "#define CFG 7\n");
  dir_.write("src/t0.cpp", "#include \"cfg.h\"\nint t0() { return CFG; }\n");
  dir_.write("bin/g++", "#!/bin/sh\necho \"$@\" >> " + shell_quote(dir_.at("runs.log")) +
                            "\nexec g++ \"$@\"\n");
  ASSERT_EQ(sh("cache-a", "", "chmod +x bin/g++ && mkdir -p m2 && cp -r src m2/src").exit_code, 0);
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  const std::string lexpack = "LEXPACK_BASE_DIR=" + shell_quote(dir_.real_path()) + " " +
                              std::string(LEXPACK_BIN) + " ninja -C ";
  auto configure = [&](const std::string& top) {
    return "rm -rf " + top + "/b && cmake -S " + top + "/src -B " + top +
           "/b -G Ninja -DCMAKE_CXX_COMPILER=" + shell_quote(dir_.at("bin/g++")) + " >/dev/null";
  };
  base::ProcessResult a = sh("cache-a", redis.url(), configure(".") + " && " + lexpack + "b");
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  ASSERT_EQ(sh("cache-b", "", configure("m2") + " && touch m2/b/gen/cfg.h").exit_code, 0);
  dir_.remove("runs.log");  // CMake's compiler checks ran it
  base::ProcessResult b =
      sh("cache-b", redis.url(),
         "export LEXPACK_LOGFILE=" + shell_quote(dir_.at("b.log")) + "; " + lexpack + "m2/b");
  ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  EXPECT_NE(b.err.find("3 of 3 compiles prefetched from the remote"), std::string::npos) << b.err;
  EXPECT_NE(b.err.find("3 compiles, 3 hits"), std::string::npos) << b.err;
  EXPECT_FALSE(dir_.exists("runs.log")) << "machine B ran its compiler:\n" << dir_.read("runs.log");
  base::ProcessResult stats = sh("cache-b", "", std::string(LEXPACK_BIN) + " stats");
  EXPECT_NE(stats.out.find("remote_memos_taken 3"), std::string::npos) << stats.out;
  base::ProcessResult plain =
      sh("cache-a", "",
         "rm -rf p && cmake -S m2/src -B p -G Ninja -DCMAKE_CXX_COMPILER=g++ "
         ">/dev/null && ninja -C p >/dev/null");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  for (int i = 0; i < 3; ++i) {
    const std::string o = "CMakeFiles/parts.dir/t" + std::to_string(i) + ".cpp.o";
    EXPECT_TRUE(dir_.read("m2/b/" + o) == dir_.read("p/" + o)) << o;
  }
  // The young header rewritten with other bytes of the same size: its
  // memo compares content, so t0 misses and gets the compiler's object.
  dir_.write("m2/b/gen/cfg.h", "#define CFG 8\n");
  dir_.write("p/gen/cfg.h", "#define CFG 8\n");
  const std::string t0 = "CMakeFiles/parts.dir/t0.cpp.o";
  b = sh("cache-b", redis.url(), "rm m2/b/" + t0 + " && " + lexpack + "m2/b");
  ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  EXPECT_NE(b.err.find("1 compile, 0 hits, 1 miss,"), std::string::npos) << b.err;
  ASSERT_EQ(sh("cache-a", "", "ninja -C p >/dev/null").exit_code, 0);
  EXPECT_TRUE(dir_.read("m2/b/" + t0) == dir_.read("p/" + t0));
}

// With the server (started by this build): it checks the closures the
// prefetch computed (while their entries are being fetched) and answers
// every compile from memory. A rebuild of the same compiles (after `ninja -t
// clean`) keys none of them again: the server answers them all.
TEST_F(RemoteNinja, ANewServerChecksThePrefetchedClosuresBeforeNinjaRuns) {
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  base::ProcessResult a = build("cache-a", redis.url());
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  const std::string env = "export LEXPACK_SERVER=1 LEXPACK_LOGFILE=";
  base::ProcessResult b =
      build("cache-b", redis.url(), "",
            "LEXPACK_SERVER=1 LEXPACK_LOGFILE=" + shell_quote(dir_.at("b.log")));
  base::ProcessResult again =
      sh("cache-b", redis.url(),
         env + shell_quote(dir_.at("again.log")) + "; ninja -C b -t clean >/dev/null && " +
             std::string(LEXPACK_BIN) + " ninja -C b");
  sh("cache-b", "", std::string(LEXPACK_BIN) + " server --stop");
  ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  EXPECT_NE(b.err.find("3 of 3 compiles prefetched from the remote"), std::string::npos) << b.err;
  EXPECT_NE(b.err.find("checked ahead by the server: 3 of 3 compiles answered from memory"),
            std::string::npos)
      << b.err;
  EXPECT_NE(b.err.find("3 compiles, 3 hits"), std::string::npos) << b.err;
  std::string log = dir_.read("b.log");
  EXPECT_EQ(count_of(log, ": hit (server)"), 3u) << log;
  EXPECT_EQ(count_of(log, "prefetch: 3 of 3 compiles to run keyed"), 1u) << log;
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_NE(again.err.find("3 compiles, 3 hits"), std::string::npos) << again.err;
  log = dir_.read("again.log");
  EXPECT_EQ(count_of(log, ": hit (server)"), 3u) << log;
  EXPECT_EQ(count_of(log, "prefetch: 0 of 3 compiles to run keyed"), 1u) << log;
}

// A compile whose key cannot be computed ahead (here: __TIME__, never
// cached) is left to the launcher, which compiles it; the others are still
// prefetched and the build succeeds.
TEST_F(RemoteNinja, ACompileWithoutAKeyIsLeftToTheLauncher) {
  dir_.write("src/CMakeLists.txt",
             "cmake_minimum_required(VERSION 3.22)\n"
             "project(rn CXX)\n"
             "add_library(parts STATIC t0.cpp t1.cpp t2.cpp now.cpp)\n");
  dir_.write("src/now.cpp", "const char* built_at() { return __TIME__; }\n");
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  base::ProcessResult a = build("cache-a", redis.url());
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  base::ProcessResult b = build("cache-b", redis.url());
  ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  EXPECT_NE(b.err.find("3 of 4 compiles prefetched from the remote"), std::string::npos) << b.err;
  EXPECT_NE(b.err.find("4 compiles, 3 hits, 0 misses, 1 uncacheable"), std::string::npos) << b.err;
  EXPECT_EQ(sh("cache-b", "", "test -s b/CMakeFiles/parts.dir/now.cpp.o").exit_code, 0);
}

// LEXPACK_PREFETCH=0: each compile asks the remote itself, and still hits.
TEST_F(RemoteNinja, WithoutPrefetchEachCompileAsksTheRemote) {
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  base::ProcessResult a = build("cache-a", redis.url());
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  base::ProcessResult b =
      build("cache-b", redis.url(), "",
            "LEXPACK_PREFETCH=0 LEXPACK_LOGFILE=" + shell_quote(dir_.at("b.log")));
  ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  EXPECT_NE(b.err.find("3 compiles, 3 hits"), std::string::npos) << b.err;
  EXPECT_EQ(b.err.find("prefetched"), std::string::npos) << b.err;
  EXPECT_EQ(count_of(dir_.read("b.log"), ".cpp: remote redis"), 3u) << dir_.read("b.log");
}

TEST_F(RemoteNinja, ADeadRemoteNeverBreaksTheBuildAndCostsOneTimeout) {
  BlackHole hole;
  const std::string remote =
      "redis://127.0.0.1:" + std::to_string(hole.port()) + "|operation-timeout=300";
  // One compile at a time, so that exactly one of them meets the dead remote
  // first; the others, and the build's uploader, see it marked down.
  base::ProcessResult a = build("cache-a", remote, "-j1");
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  EXPECT_NE(a.err.find("3 compiles, 0 hits"), std::string::npos) << a.err;
  EXPECT_NE(a.err.find("0 of 5 stored entries uploaded"), std::string::npos) << a.err;
  base::ProcessResult stats = sh("cache-a", "", std::string(LEXPACK_BIN) + " stats");
  EXPECT_NE(stats.out.find("remote_timeouts   1"), std::string::npos) << stats.out;
}

// What a build could not send (its remote was down) is not lost: it waits in
// the cache directory, and the next build's uploader sends it first.
TEST_F(RemoteNinja, WhatADeadRemoteDidNotTakeWaitsForTheNextBuild) {
  BlackHole hole;
  base::ProcessResult a =
      build("cache-a", "redis://127.0.0.1:" + std::to_string(hole.port()), "-j1");
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  EXPECT_NE(a.err.find("0 of 5 stored entries uploaded to the remote; 5 wait for the next build"),
            std::string::npos)
      << a.err;
  EXPECT_NE(a.err.find("marked down at"), std::string::npos) << a.err;  // said once, with why
  EXPECT_EQ(count_of(a.err, "marked down at"), 1u) << a.err;
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  base::ProcessResult again = sh("cache-a", redis.url(), std::string(LEXPACK_BIN) + " ninja -C b");
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_NE(again.err.find("5 of 5 stored entries uploaded"), std::string::npos) << again.err;
  base::ProcessResult b = build("cache-b", redis.url());
  ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  EXPECT_NE(b.err.find("3 compiles, 3 hits"), std::string::npos) << b.err;
}

// A remote_secret too short to be one is an error the build shows, and the
// remote tier stays off: the unsigned entries another machine left are not
// taken by a reader that believes it checks signatures.
TEST_F(RemoteNinja, AShortSecretStopsTheRemoteTierAndTheBuildSaysSo) {
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  base::ProcessResult a = build("cache-a", redis.url());
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  base::ProcessResult b = build("cache-b", redis.url(), "", "LEXPACK_REMOTE_SECRET=short");
  ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  EXPECT_NE(b.err.find("lexpack: error: remote_secret is shorter than 16 characters"),
            std::string::npos)
      << b.err;
  EXPECT_NE(b.err.find("3 compiles, 0 hits"), std::string::npos) << b.err;
}

// Two sick remotes at once, one that never answers and one that answers a
// byte at a time: the build completes, each is marked down once (said once,
// with why), and every object is the one a plain build makes.
TEST_F(RemoteNinja, SickRemotesLeaveTheBuildWholeAndAreReportedOnce) {
  BlackHole hole;
  FixedReplyServer trickle(
      "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + std::string(100000, 'x'), 20);
  const std::string remotes = "redis://127.0.0.1:" + std::to_string(hole.port()) +
                              " http://127.0.0.1:" + std::to_string(trickle.port()) + "/c";
  base::ProcessResult a = build("cache-a", remotes);
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  EXPECT_NE(a.err.find("3 compiles, 0 hits"), std::string::npos) << a.err;
  EXPECT_EQ(count_of(a.err, "marked down at"), 2u) << a.err;
  EXPECT_NE(a.err.find("(timed out: GET"), std::string::npos) << a.err;  // the Redis one
  EXPECT_NE(a.err.find("slower than"), std::string::npos) << a.err;
  base::ProcessResult plain = sh("cache-a", "",
                                 "rm -rf p && cmake -S src -B p -G Ninja -DCMAKE_CXX_COMPILER=g++ "
                                 ">/dev/null && ninja -C p >/dev/null");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  for (int i = 0; i < 3; ++i) {
    const std::string o = "CMakeFiles/parts.dir/t" + std::to_string(i) + ".cpp.o";
    EXPECT_EQ(dir_.read("b/" + o), dir_.read("p/" + o)) << o;
  }
}

}  // namespace
}  // namespace lexpack::testing
