// End to end with `lexpack server` running: every change a fresh compile
// would see must keep the server from serving the old object, whatever way
// it reaches the filesystem. Each compile is compared with the compiler's own.
// Every case runs with the compiles started as `lexpack` and as
// `lexpack-client` (the program `lexpack ninja` starts when the server is on).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <ostream>
#include <string>

#include "tests/support/launcher_fixture.h"
#include "tests/support/server_ways.h"

namespace lexpack::testing {
namespace {

class ServerTest : public LauncherTest, public ::testing::WithParamInterface<Way> {
 protected:
  void SetUp() override {
    if (GetParam().client && kClientBin[0] == '\0') GTEST_SKIP() << "no lexpack-client here";
    start();
  }
  void TearDown() override { lexpack("server --stop", kServerEnv); }

  void start() {
    ASSERT_EQ(lexpack("server --start", kServerEnv).exit_code, 0);
    for (int i = 0; i < 100; ++i) {
      if (lexpack("server --status", kServerEnv).exit_code == 0) return;
      ::usleep(50 * 1000);
    }
    base::ProcessResult s = lexpack("server --status", kServerEnv);
    FAIL() << "the server did not come up: " << s.out << s.err;
  }
  std::string status() { return lexpack("server --status", kServerEnv).out; }
  // The value of one `key value` line of the status.
  long status_value(const std::string& key) {
    std::string s = "\n" + status();
    size_t at = s.find("\n" + key + " ");
    if (at == std::string::npos) return -1;
    return std::stol(s.substr(at + key.size() + 2));
  }

  std::string cxx() const { return GetParam().cxx; }
  // The program each compile starts.
  std::string program() const { return GetParam().client ? kClientBin : LEXPACK_BIN; }
  // Compiles `args` with the compiler alone and through lexpack (server on);
  // the objects must be the same.
  void compile_and_compare(const std::string& args) {
    ASSERT_EQ(sh(cxx() + " " + args + " -o ref.o").exit_code, 0) << args;
    base::ProcessResult r = sh(program() + " " + cxx() + " " + args + " -o out.o", kServerEnv);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_TRUE(dir_.read("out.o") == dir_.read("ref.o")) << args << ": " << last_decision();
  }
  bool last_was_server_hit() { return last_decision() == "hit (server)"; }
  // Compiles until the server answers (the first compile stores, a memo may be
  // too fresh to keep on the next), comparing every object.
  void warm(const std::string& args) {
    // Signatures younger than a second are not remembered: on a fast machine
    // the first compiles all fall in that second, so later ones wait a bit.
    for (int i = 0; i < 12; ++i) {
      compile_and_compare(args);
      if (HasFatalFailure()) return;
      if (last_was_server_hit()) return;
      if (i >= 2) ::usleep(300 * 1000);
    }
    FAIL() << "the server never answered: " << last_decision() << "\n" << status();
  }
  // After a change: the object must be the fresh one, never the server's old one.
  void changed(const std::string& args) {
    compile_and_compare(args);
    if (HasFatalFailure()) return;  // the log's last line is not this compile's
    EXPECT_FALSE(last_was_server_hit()) << "served a stale object";
    EXPECT_TRUE(last_was_miss()) << last_decision();
  }
};

TEST_P(ServerTest, SameSizeEditWithMtimeRestored) {
  dir_.write("inc/a.h", "#define V 1\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return V; }\n");
  warm("-Iinc -c m.cpp");
  ASSERT_EQ(sh("t=$(stat -c %y inc/a.h) && printf '#define V 2\\n' > inc/a.h && touch -d \"$t\" "
               "inc/a.h")
                .exit_code,
            0);
  changed("-Iinc -c m.cpp");
  warm("-Iinc -c m.cpp");
}

TEST_P(ServerTest, HardLinkedHeaderWrittenThroughItsOtherName) {
  dir_.write("inc/a.h", "#define V 1\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return V; }\n");
  ASSERT_EQ(sh("mkdir other && ln inc/a.h other/alias.h").exit_code, 0);
  warm("-Iinc -c m.cpp");
  ASSERT_EQ(sh("printf '#define V 3\\n' > other/alias.h").exit_code, 0);  // same inode
  changed("-Iinc -c m.cpp");
}

TEST_P(ServerTest, HeaderSavedByRenameOver) {
  dir_.write("inc/a.h", "#define V 1\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return V; }\n");
  warm("-Iinc -c m.cpp");
  ASSERT_EQ(sh("printf '#define V 4\\n' > inc/.a.h.swp && mv inc/.a.h.swp inc/a.h").exit_code, 0);
  changed("-Iinc -c m.cpp");
  warm("-Iinc -c m.cpp");
}

TEST_P(ServerTest, NewHeaderShadowsAnOldOne) {
  dir_.write("first/.keep", "");
  dir_.write("second/s.h", "#define S 1\n");
  dir_.write("m.cpp", "#include <s.h>\nint v() { return S; }\n");
  warm("-Ifirst -Isecond -c m.cpp");
  dir_.write("first/s.h", "#define S 2\n");
  changed("-Ifirst -Isecond -c m.cpp");
  // And in a directory that did not exist.
  dir_.write("second/sub/t.h", "#define T 1\n");
  dir_.write("n.cpp", "#include <sub/t.h>\nint w() { return T; }\n");
  warm("-Ifirst -Isecond -c n.cpp");
  dir_.write("first/sub/t.h", "#define T 2\n");
  changed("-Ifirst -Isecond -c n.cpp");
}

TEST_P(ServerTest, IncludeDirectoryRenamedAndReplaced) {
  dir_.write("inc/a.h", "#define V 1\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return V; }\n");
  warm("-Iinc -c m.cpp");
  ASSERT_EQ(sh("mv inc old && mkdir inc && printf '#define V 5\\n' > inc/a.h").exit_code, 0);
  changed("-Iinc -c m.cpp");
  warm("-Iinc -c m.cpp");
  // A parent directory swapped for another holding the same names.
  dir_.write("p/inc/b.h", "#define B 1\n");
  dir_.write("q/inc/b.h", "#define B 2\n");
  dir_.write("n.cpp", "#include \"b.h\"\nint w() { return B; }\n");
  warm("-Ip/inc -c n.cpp");
  ASSERT_EQ(sh("mv p p_old && mv q p").exit_code, 0);
  changed("-Ip/inc -c n.cpp");
  // Trusted again under the swapped-in directories, then edited in place.
  warm("-Ip/inc -c n.cpp");
  dir_.write("p/inc/b.h", "#define B 3\n");
  changed("-Ip/inc -c n.cpp");
}

TEST_P(ServerTest, SymlinkedIncludeDirectoryRetargeted) {
  dir_.write("one/a.h", "#define V 1\n");
  dir_.write("two/a.h", "#define V 2\n");
  dir_.write("m.cpp", "#include <a.h>\nint v() { return V; }\n");
  ASSERT_EQ(sh("ln -s one inc").exit_code, 0);
  warm("-Iinc -c m.cpp");
  ASSERT_EQ(sh("ln -sfn two inc").exit_code, 0);
  changed("-Iinc -c m.cpp");
  warm("-Iinc -c m.cpp");
  // A symlink in the middle of the target's own path.
  dir_.write("three/a.h", "#define V 3\n");
  dir_.write("four/a.h", "#define V 4\n");
  ASSERT_EQ(sh("mkdir -p deep/x && ln -s ../../three deep/x/l && ln -sfn deep/x/l inc").exit_code,
            0);
  changed("-Iinc -c m.cpp");
  warm("-Iinc -c m.cpp");
  ASSERT_EQ(sh("ln -sfn ../../four deep/x/l").exit_code, 0);
  changed("-Iinc -c m.cpp");
}

// A mount changes what a path names without any inotify event: the server
// must notice the mount table changed. Needs the right to mount (root).
TEST_P(ServerTest, BindMountOverIncludeDirectory) {
  dir_.write("inc/a.h", "#define V 1\n");
  dir_.write("other/a.h", "#define V 9\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return V; }\n");
  warm("-Iinc -c m.cpp");
  if (sh("mount --bind other inc 2>/dev/null").exit_code != 0) {
    GTEST_SKIP() << "cannot bind-mount here (needs root)";
  }
  struct Unmount {
    std::string path;
    ~Unmount() { std::system(("umount " + shell_quote(path)).c_str()); }
  } unmount{dir_.at("inc")};
  compile_and_compare("-Iinc -c m.cpp");
  EXPECT_FALSE(last_was_server_hit()) << "served a stale object";
}

TEST_P(ServerTest, DroppedTrustIsValidatedAgain) {
  dir_.write("inc/a.h", "#define V 1\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return V; }\n");
  warm("-Iinc -c m.cpp");
  EXPECT_GE(status_value("trusted"), 1);
  long validations = status_value("validations");
  // What a queue overflow does: nothing stays trusted, the next request
  // validates by stat under fresh watches.
  ASSERT_EQ(lexpack("server --drop-trust", kServerEnv).exit_code, 0);
  EXPECT_EQ(status_value("trusted"), 0);
  warm("-Iinc -c m.cpp");
  EXPECT_EQ(status_value("validations"), validations + 1);
  dir_.write("inc/a.h", "#define V 6\n");
  changed("-Iinc -c m.cpp");
}

TEST_P(ServerTest, ServerKilledAndRestartedBetweenEditAndCompile) {
  dir_.write("inc/a.h", "#define V 1\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return V; }\n");
  warm("-Iinc -c m.cpp");
  long pid = status_value("pid");
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid_t(pid), SIGKILL), 0);
  // The signal is delivered on its own time: a start before then finds the
  // killed server still there.
  for (int i = 0; i < 100 && lexpack("server --status", kServerEnv).exit_code == 0; ++i) {
    ::usleep(20 * 1000);
  }
  dir_.write("inc/a.h", "#define V 7\n");
  start();
  changed("-Iinc -c m.cpp");
  warm("-Iinc -c m.cpp");
}

TEST_P(ServerTest, ChangeMadeWhileNoServerRan) {
  dir_.write("inc/a.h", "#define V 1\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return V; }\n");
  warm("-Iinc -c m.cpp");
  ASSERT_EQ(lexpack("server --stop", kServerEnv).exit_code, 0);
  for (int i = 0; i < 100 && lexpack("server --status", kServerEnv).exit_code == 0; ++i) {
    ::usleep(20 * 1000);
  }
  dir_.write("inc/a.h", "#define V 8\n");
  changed("-Iinc -c m.cpp");  // starts a server on the way
  warm("-Iinc -c m.cpp");
}

// A client of another binary (a rebuilt lexpack) makes the old server leave
// rather than be answered by it, and compiles on its own meanwhile.
TEST_P(ServerTest, ServerOfAnotherBinaryLeaves) {
  dir_.write("inc/a.h", "#define V 1\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return V; }\n");
  warm("-Iinc -c m.cpp");
  // A copy is another binary; lexpack-client speaks for the full program
  // beside it (lexpack-main, behind the front door `lexpack`).
  ASSERT_EQ(sh("mkdir other && cp " + shell_quote(LEXPACK_BIN) + " other/" +
               (kFrontBin[0] ? "lexpack-main && cp " + shell_quote(kFrontBin) + " other/lexpack"
                             : std::string("lexpack")) +
               " && cp " + shell_quote(kClientBin) + " other/lexpack-client")
                .exit_code,
            0);
  std::string other = GetParam().client ? "./other/lexpack-client" : "./other/lexpack";
  base::ProcessResult r = sh(other + " " + cxx() + " -Iinc -c m.cpp -o out.o", kServerEnv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(sh(cxx() + " -Iinc -c m.cpp -o ref.o").exit_code, 0);
  EXPECT_TRUE(dir_.read("out.o") == dir_.read("ref.o"));
  EXPECT_FALSE(last_was_server_hit());
  // The old server is gone; the new binary started its own.
  for (int i = 0; i < 100; ++i) {
    if (sh("./other/lexpack server --status", kServerEnv).exit_code == 0) break;
    ::usleep(50 * 1000);
  }
  EXPECT_EQ(sh("./other/lexpack server --status", kServerEnv).exit_code, 0);
  EXPECT_NE(lexpack("server --status", kServerEnv).exit_code, 0);
  sh("./other/lexpack server --stop", kServerEnv);
}

// Another user can neither reach the server's socket nor be answered by it.
TEST_P(ServerTest, AnotherUserIsNotServed) {
  if (::geteuid() != 0 || sh("command -v setpriv >/dev/null").exit_code != 0) {
    GTEST_SKIP() << "needs root and setpriv to act as another user";
  }
  dir_.write("inc/a.h", "#define V 1\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return V; }\n");
  warm("-Iinc -c m.cpp");
  ASSERT_EQ(sh("chmod 755 . && mkdir nobody && chown 65534 nobody").exit_code, 0);
  // Same cache directory named, other uid: no answer from this server.
  base::ProcessResult r = sh("setpriv --reuid=65534 --regid=65534 --clear-groups " +
                                 std::string(LEXPACK_BIN) + " server --status",
                             kServerEnv);
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.find("pid "), std::string::npos) << r.out;
  long hits = status_value("hits");
  r = sh("cd nobody && setpriv --reuid=65534 --regid=65534 --clear-groups " + program() + " " +
             cxx() + " -I../inc -c ../m.cpp -o m.o",
         kServerEnv);
  EXPECT_EQ(status_value("hits"), hits);  // the server wrote nothing for it
}

TEST_P(ServerTest, ManyConcurrentClients) {
  constexpr int kUnits = 16;
  dir_.write("inc/common.h", "#define C 1\n");
  std::string refs, through;
  for (int i = 0; i < kUnits; ++i) {
    std::string n = std::to_string(i);
    dir_.write("u" + n + ".cpp",
               "#include \"common.h\"\nint f" + n + "() { return C + " + n + "; }\n");
    refs += cxx() + " -Iinc -c u" + n + ".cpp -o u" + n + ".ref.o & ";
    through += program() + " " + cxx() + " -Iinc -c u" + n + ".cpp -o u" + n + ".o & ";
  }
  auto round = [&] {
    ASSERT_EQ(sh(refs + "wait").exit_code, 0);
    base::ProcessResult r = sh(through + "wait", kServerEnv);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (int i = 0; i < kUnits; ++i) {
      std::string n = std::to_string(i);
      ASSERT_TRUE(dir_.read("u" + n + ".o") == dir_.read("u" + n + ".ref.o")) << "unit " << n;
    }
  };
  // Signatures younger than a second are not remembered: settle first.
  sleep(2);
  for (int i = 0; i < 3; ++i) round();
  long hits = status_value("hits");
  EXPECT_GT(hits, 0) << status();
  dir_.write("inc/common.h", "#define C 2\n");
  round();
  sleep(2);
  round();
  round();
  EXPECT_GT(status_value("hits"), hits) << status();
}

// Each `lexpack ninja` build gives its compiles new bookkeeping variables (its
// record, counts, report and upload files): the server must keep answering
// from the entry it trusts, not validate every TU again per build, and the
// hit must count in that build's own summary.
TEST_P(ServerTest, EachNinjaBuildsOwnVariablesKeepTheEntries) {
  dir_.write("inc/h.h", "#define V 3\n");
  dir_.write("main.cpp", "#include \"h.h\"\nint main() { return V; }\n");
  warm("-Iinc -c main.cpp");
  if (HasFatalFailure()) return;
  const long entries = status_value("entries");
  const long validations = status_value("validations");
  for (int build = 0; build < 3; ++build) {
    std::string b = std::to_string(build);
    dir_.write("counts" + b, "");
    dir_.write("record" + b, "");
    dir_.write("queue" + b, "");
    std::string env = std::string(kServerEnv) + " LEXPACK_BUILD_COUNTS=" + dir_.at("counts" + b) +
                      " LEXPACK_BUILD_RECORD=" + dir_.at("record" + b) +
                      " LEXPACK_UPLOAD_QUEUE=" + dir_.at("queue" + b) +
                      " LEXPACK_NINJA_REPORT=" + dir_.at("report" + b) +
                      " LEXPACK_NINJA_PID=" + std::to_string(40000 + build);
    ASSERT_EQ(sh(cxx() + " -Iinc -c main.cpp -o ref.o").exit_code, 0);
    base::ProcessResult r = sh(program() + " " + cxx() + " -Iinc -c main.cpp -o out.o", env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_TRUE(dir_.read("out.o") == dir_.read("ref.o"));
    EXPECT_TRUE(last_was_server_hit()) << last_decision();
    EXPECT_NE(dir_.read("counts" + b).find("hits 1\n"), std::string::npos)
        << "build " << b << ": " << dir_.read("counts" + b);
    EXPECT_EQ(dir_.read("record" + b).size(), 33u) << "build " << b;  // one key and a newline
  }
  EXPECT_EQ(status_value("entries"), entries) << status();
  EXPECT_EQ(status_value("validations"), validations) << status();
}

// `lexpack ninja` with the server on starts lexpack-client for each compile
// (a hit then costs no start of lexpack itself); the build's summary counts
// the hits the client took.
// A compile the server declines is asked about once: lexpack-client tells
// the lexpack it becomes, and that mark reaches neither the compiler nor
// the key.
TEST_P(ServerTest, ADeclinedCompileAsksTheServerOnce) {
  dir_.write("m.cpp", "int v() { return 1; }\n");
  // The compile's environment (the server may run the script too, to learn
  // what compiler it is, after the compile returned).
  dir_.write("cc.sh", "#!/bin/sh\ncase \"$*\" in *m.cpp*) env > env.txt ;; esac\nexec " + cxx() +
                          " \"$@\"\n");
  ASSERT_EQ(sh("chmod +x cc.sh").exit_code, 0);
  ASSERT_EQ(sh(program() + " ./cc.sh -c m.cpp -o m.o", kServerEnv).exit_code, 0);
  std::string log = dir_.read("log.txt");
  size_t declined = 0;
  for (size_t at = log.find("server declined"); at != std::string::npos;
       at = log.find("server declined", at + 1)) {
    ++declined;
  }
  EXPECT_EQ(declined, 1u) << log;
  EXPECT_EQ(dir_.read("env.txt").find("LEXPACK_SERVER_DECLINED"), std::string::npos);
  EXPECT_NE(dir_.read("env.txt").find("LEXPACK_SERVER=1"), std::string::npos);
}

// A ninja project of three units u0..u2.cpp including inc/h.h (V = `value`),
// compiled by `cxx` with a depfile; `after_input` ends each compile edge
// (an order-only input), `more` adds rules and edges.
void write_three_unit_project(testing::TestDir* dir, const std::string& cxx, int value,
                              const std::string& after_input, const std::string& more) {
  dir->write("inc/h.h", "#define V " + std::to_string(value) + "\n");
  std::string edges;
  for (int i = 0; i < 3; ++i) {
    std::string n = std::to_string(i);
    dir->write("u" + n + ".cpp", "#include \"h.h\"\nint f" + n + "() { return V; }\n");
    edges += "build u" + n + ".o: cc u" + n + ".cpp" + after_input + "\n";
  }
  dir->write("build.ninja", "rule cc\n  command = " + cxx +
                                " -Iinc -MD -MF $out.d -c $in -o $out\n  depfile = $out.d\n"
                                "  deps = gcc\n" +
                                more + edges);
}

// Tests of one server case each, outside the compiler x way matrix.
class ServerCaseTest : public LauncherTest {
 protected:
  // Runs `command` (a compile through lexpack) until the server answers it,
  // up to 20 times: the first compile stores, and a memo of files younger
  // than a second is not kept. False if it never did or a compile failed.
  bool compile_until_served(const std::string& command, const std::string& env) {
    for (int i = 0; i < 20; ++i) {
      base::ProcessResult r = sh(command, env);
      if (r.exit_code != 0) {
        ADD_FAILURE() << command << ": " << r.err;
        return false;
      }
      if (last_decision() == "hit (server)") return true;
      ::usleep(300 * 1000);
    }
    return false;
  }
};

class ClientNinjaTest : public ServerTest {};

TEST_P(ClientNinjaTest, LexpackNinjaStartsTheClient) {
  write_three_unit_project(&dir_, cxx(), 3, "", "");
  sleep(2);  // sources older than the settle time
  auto build = [&] {
    base::ProcessResult r = lexpack("ninja", std::string(kServerEnv) + " LEXPACK_PLUGIN_DEBUG=1");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    for (int i = 0; i < 3; ++i) {
      std::string n = std::to_string(i);
      EXPECT_EQ(sh(cxx() + " -Iinc -c u" + n + ".cpp -o ref.o").exit_code, 0);
      EXPECT_TRUE(dir_.read("u" + n + ".o") == dir_.read("ref.o")) << "u" << n;
    }
    sh("ninja -t clean >/dev/null");
    return r;
  };
  for (int round = 0; round < 6; ++round) {
    base::ProcessResult r = build();
    if (HasFailure()) return;
    // The plugin started the client itself, not the shell or lexpack.
    EXPECT_NE(r.err.find("-c u1.cpp -o u1.o (" + std::string(kClientBin) + ")"), std::string::npos)
        << r.err;
    if ((r.out + r.err).find(", 3 hits") != std::string::npos && status_value("hits") >= 3) return;
    ::usleep(400 * 1000);
  }
  FAIL() << "the builds never hit through the server: " << status();
}

INSTANTIATE_TEST_SUITE_P(Client, ClientNinjaTest,
                         ::testing::Values(Way{"g++", true}, Way{"clang++-14", true}),
                         [](const auto& info) {
                           return std::string(info.param.cxx) == "g++" ? "gcc" : "clang";
                         });

INSTANTIATE_TEST_SUITE_P(Ways, ServerTest, kAllWays, WayName);

// The client finds the server of the cache directory lexpack would use, an
// empty variable counting as unset (as in lexpack's configuration), and takes
// the hit itself: lexpack is not started.
TEST_F(ServerCaseTest, ClientFindsTheServerOfLexpacksCacheDirectory) {
  if (kClientBin[0] == '\0') GTEST_SKIP() << "no lexpack-client here";
  if (sh("command -v strace >/dev/null").exit_code != 0) GTEST_SKIP() << "needs strace";
  const std::string env = "LEXPACK_SERVER=1 LEXPACK_DIR= XDG_CACHE_HOME= HOME=" + dir_.at("home");
  dir_.write("home/.keep", "");
  dir_.write("m.cpp", "int v() { return 5; }\n");
  ASSERT_EQ(sh(std::string(LEXPACK_BIN) + " server --start", env).exit_code, 0);
  std::shared_ptr<void> stop(nullptr,
                             [&](void*) { sh(std::string(LEXPACK_BIN) + " server --stop", env); });
  sleep(2);  // settled signatures: the memo is kept
  ASSERT_TRUE(compile_until_served(std::string(LEXPACK_BIN) + " g++ -c m.cpp -o m.o", env))
      << dir_.read("log.txt");
  base::ProcessResult r = sh("strace -f -qq -s 4096 -e trace=execve -o trace.txt " +
                                 std::string(kClientBin) + " g++ -c m.cpp -o m.o",
                             env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(last_decision(), "hit (server)");
  std::string trace = dir_.read("trace.txt");
  EXPECT_EQ(trace.find("/lexpack-main\""), std::string::npos) << trace;
}

// `lexpack` is the front door: a compile takes a hit from the server without
// starting the full program (lexpack-main), as lexpack-client does; a miss,
// a subcommand, an option and a link step become the full program, with the
// same arguments, output and exit status.
TEST_F(ServerCaseTest, TheFrontDoorTakesAHitItself) {
  if (kFrontBin[0] == '\0') GTEST_SKIP() << "no front door here";
  if (sh("command -v strace >/dev/null").exit_code != 0) GTEST_SKIP() << "needs strace";
  const std::string front = kFrontBin;
  const std::string env = "LEXPACK_SERVER=1 LEXPACK_SERVER_IDLE=120";
  dir_.write("m.cpp", "int v() { return 5; }\n");
  ASSERT_EQ(sh(front + " server --start", env).exit_code, 0);
  std::shared_ptr<void> stop(nullptr, [&](void*) { sh(front + " server --stop", env); });
  sleep(2);  // settled signatures: the memo is kept
  ASSERT_TRUE(compile_until_served(front + " g++ -c m.cpp -o m.o", env)) << dir_.read("log.txt");
  base::ProcessResult r = sh(
      "strace -f -qq -s 4096 -e trace=execve -o trace.txt " + front + " g++ -c m.cpp -o m.o", env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(last_decision(), "hit (server)");
  EXPECT_EQ(dir_.read("trace.txt").find("/lexpack-main\""), std::string::npos)
      << dir_.read("trace.txt");
  // Everything else is the full program's.
  for (const std::string& args :
       {std::string("--help"), std::string("stats"), std::string("explain g++ -c m.cpp -o m.o")}) {
    base::ProcessResult by_front = sh(front + " " + args, env);
    base::ProcessResult by_main = sh(std::string(LEXPACK_BIN) + " " + args, env);
    EXPECT_EQ(by_front.exit_code, by_main.exit_code) << args;
    EXPECT_EQ(by_front.out, by_main.out) << args;
  }
  EXPECT_NE(sh(front + " --help").out.find("lexpack"), std::string::npos);
  // A failing compile's messages and status pass through.
  dir_.write("bad.cpp", "int v( {\n");
  r = sh(front + " g++ -c bad.cpp -o bad.o", env);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("bad.cpp"), std::string::npos) << r.err;
  // A link step through the front door is the full program's (archive and
  // link caching).
  r = sh(front + " g++ m.o -shared -o libm.so", env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(dir_.read("log.txt").find("libm.so"), std::string::npos) << dir_.read("log.txt");
}

// With LEXPACK_SERVER unset (or empty) the server is on: the first compile
// that finds none starts it, and a later compile is served by it. It leaves
// by itself once its cache directory is gone.
TEST_F(ServerCaseTest, ServerStartsOnDemandByDefaultAndLeavesWithItsCache) {
  const std::string env = "LEXPACK_SERVER= LEXPACK_SERVER_IDLE=600";
  dir_.write("m.cpp", "int v() { return 6; }\n");
  ASSERT_EQ(sh("g++ -c m.cpp -o ref.o").exit_code, 0);
  ASSERT_NE(lexpack("server --status", env).exit_code, 0) << "a server before any compile";
  std::shared_ptr<void> stop(nullptr, [&](void*) { lexpack("server --stop", env); });
  sleep(2);  // settled signatures: the memo is kept
  bool served = false;
  for (int i = 0; i < 20 && !served; ++i) {
    base::ProcessResult r = lexpack("g++ -c m.cpp -o out.o", env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_TRUE(dir_.read("out.o") == dir_.read("ref.o"));
    served = last_decision() == "hit (server)";
    if (!served) ::usleep(300 * 1000);
  }
  ASSERT_TRUE(served) << dir_.read("log.txt");
  // The hit replaced out.o: nothing of the server's is left beside it.
  bool clean = false;
  for (int i = 0; i < 20 && !clean; ++i) {
    clean = sh("ls | grep -q lexpack-server").exit_code != 0;
    if (!clean) ::usleep(100 * 1000);
  }
  EXPECT_TRUE(clean) << sh("ls").out;
  std::string status = lexpack("server --status", env).out;
  size_t at = status.find("pid ");
  ASSERT_NE(at, std::string::npos) << status;
  pid_t pid = std::stoi(status.substr(at + 4));
  ASSERT_EQ(sh("rm -rf cache").exit_code, 0);
  bool gone = false;
  for (int i = 0; i < 150 && !gone; ++i) {
    gone = ::kill(pid, 0) != 0;
    if (!gone) ::usleep(100 * 1000);
  }
  EXPECT_TRUE(gone) << "the server of a removed cache directory stayed";
  // Nor did it leave its spare output file (hits after the first in this
  // directory were written into one).
  EXPECT_NE(sh("ls -A | grep -q lexpack-server").exit_code, 0) << sh("ls -A").out;
}

// `lexpack explain` says first what the running server would answer, and
// asking it writes no output and counts nothing.
TEST_F(ServerCaseTest, ExplainSaysWhatTheServerWouldAnswer) {
  dir_.write("inc/a.h", "#define V 1\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return V; }\n");
  std::shared_ptr<void> stop(nullptr, [&](void*) { lexpack("server --stop", kServerEnv); });
  EXPECT_NE(
      lexpack("explain g++ -Iinc -c m.cpp -o m.o", kServerEnv).out.find("server: none running"),
      std::string::npos);
  ASSERT_EQ(lexpack("server --start", kServerEnv).exit_code, 0);
  sleep(2);  // settled signatures: the memo is kept
  ASSERT_TRUE(
      compile_until_served(std::string(LEXPACK_BIN) + " g++ -Iinc -c m.cpp -o m.o", kServerEnv))
      << dir_.read("log.txt");
  ASSERT_EQ(sh("rm m.o").exit_code, 0);
  const std::string hits = lexpack("server --status", kServerEnv).out;
  base::ProcessResult r = lexpack("explain g++ -Iinc -c m.cpp -o m.o", kServerEnv);
  EXPECT_EQ(r.out.rfind("server: would hit", 0), 0u) << r.out;
  EXPECT_NE(sh("test -e m.o").exit_code, 0) << "explain wrote the object";
  std::string after = lexpack("server --status", kServerEnv).out;
  EXPECT_EQ(after.substr(after.find("\nhits ")), hits.substr(hits.find("\nhits ")))
      << "explain was counted";
  dir_.write("inc/a.h", "#define V 2\n");
  r = lexpack("explain g++ -Iinc -c m.cpp -o m.o", kServerEnv);
  EXPECT_EQ(r.out.rfind("server: would decline: closure memo out of date", 0), 0u) << r.out;
}

// The launcher of a compile the server declined (busy) that it answered
// from its own memo tells the server when done; the server then checks that
// compile's closure while idle, so the next request is answered from memory
// at once (a first build after a server starts runs its launchers in
// parallel instead of waiting on the server). A compile that ran the
// compiler leaves the server nothing to check while idle: ninja runs it
// again only after a change. Its next request is checked then.
TEST_F(ServerCaseTest, OnlyAHitOfTheLauncherIsCheckedByTheServerWhileIdle) {
  dir_.write("m.cpp", "int v() { return 9; }\n");
  std::shared_ptr<void> stop(nullptr, [&](void*) { lexpack("server --stop", kServerEnv); });
  ASSERT_EQ(lexpack("server --start", kServerEnv).exit_code, 0);
  sleep(2);  // settled signatures: the memo is kept
  ASSERT_EQ(lexpack("g++ -c m.cpp -o m.o", kServerEnv).exit_code, 0);
  EXPECT_TRUE(last_was_miss()) << last_decision();
  auto status = [&](const std::string& name) {
    std::string s = "\n" + lexpack("server --status", kServerEnv).out;
    size_t at = s.find("\n" + name + " ");
    return at == std::string::npos ? -1 : std::stol(s.substr(at + name.size() + 2));
  };
  ::usleep(500 * 1000);  // idle time, in which nothing is checked
  EXPECT_EQ(status("trusted"), 0);
  EXPECT_EQ(status("validations"), 0);
  ASSERT_EQ(sh("g++ -c m.cpp -o ref.o").exit_code, 0);
  ASSERT_EQ(lexpack("g++ -c m.cpp -o m.o", kServerEnv).exit_code, 0);
  EXPECT_EQ(last_decision(), "hit (server)");
  EXPECT_TRUE(dir_.read("m.o") == dir_.read("ref.o"));
  // Trust dropped; a launcher told the server was busy answers the next
  // compile from its memo, and the server checks that closure while idle.
  ASSERT_EQ(lexpack("server --drop-trust", kServerEnv).exit_code, 0);
  ASSERT_EQ(
      lexpack("g++ -c m.cpp -o m.o", std::string(kServerEnv) + " LEXPACK_SERVER_DECLINED=busy")
          .exit_code,
      0);
  EXPECT_TRUE(last_was_hit() && last_decision() != "hit (server)") << last_decision();
  long n = 0;
  for (int i = 0; i < 50 && (n = status("trusted")) < 1; ++i) ::usleep(100 * 1000);
  EXPECT_EQ(n, 1) << lexpack("server --status", kServerEnv).out;
  ASSERT_EQ(lexpack("g++ -c m.cpp -o m.o", kServerEnv).exit_code, 0);
  EXPECT_EQ(last_decision(), "hit (server)");
  EXPECT_TRUE(dir_.read("m.o") == dir_.read("ref.o"));
}

// A precompiled header that appears beside the first include is taken by
// the compiler in place of the header: the server's memo must not answer
// (the next compile is a miss, keyed by the .gch's bytes).
TEST_F(ServerCaseTest, APrecompiledHeaderThatAppearsIsNotServedOver) {
  dir_.write("p.h", "inline int f() { return 1; }\n");
  dir_.write("m.cpp", "#include \"p.h\"\nint g() { return f(); }\n");
  std::shared_ptr<void> stop(nullptr, [&](void*) { lexpack("server --stop", kServerEnv); });
  ASSERT_EQ(lexpack("server --start", kServerEnv).exit_code, 0);
  sleep(2);  // settled signatures: the memo is kept
  const std::string command = "g++ -O2 -c m.cpp -o m.o";
  ASSERT_TRUE(compile_until_served(std::string(LEXPACK_BIN) + " " + command, kServerEnv))
      << dir_.read("log.txt");
  // Made from other text: the compiler uses it all the same.
  dir_.write("other/p.h", "inline int f() { return 2; }\n");
  ASSERT_EQ(sh("g++ -O2 -x c++-header other/p.h -o p.h.gch").exit_code, 0);
  ASSERT_EQ(sh("g++ -O2 -c m.cpp -o ref.o").exit_code, 0);
  ASSERT_EQ(sh("objdump -d ref.o | grep -c 'mov *\\$0x2,'").out, "1\n");
  ASSERT_EQ(lexpack(command, kServerEnv).exit_code, 0);
  EXPECT_TRUE(last_was_miss()) << last_decision();
  EXPECT_TRUE(dir_.read("m.o") == dir_.read("ref.o"));
  // Then hits, with the .gch's object.
  ASSERT_EQ(sh("rm m.o").exit_code, 0);
  ASSERT_EQ(lexpack(command, kServerEnv).exit_code, 0);
  EXPECT_TRUE(last_was_hit()) << last_decision();
  EXPECT_TRUE(dir_.read("m.o") == dir_.read("ref.o"));
}

// A dir passed twice, once through "..": gcc drops the second, and the memo
// keeps the pair. The server answers from it, and once "other" is a symlink
// elsewhere (an event on no watched path), other/../a is a directory of its
// own whose header comes first: the server must not answer.
TEST_F(ServerCaseTest, ADroppedSearchDirThatBecomesItsOwnIsNotServedOver) {
  ASSERT_EQ(sh("mkdir -p a c other alt/sub alt/a").exit_code, 0);
  dir_.write("c/x.h", "#define X 1\n");
  dir_.write("alt/a/x.h", "#define X 2\n");
  dir_.write("m.cpp", "#include <x.h>\nint v() { return X; }\n");
  std::shared_ptr<void> stop(nullptr, [&](void*) { lexpack("server --stop", kServerEnv); });
  ASSERT_EQ(lexpack("server --start", kServerEnv).exit_code, 0);
  sleep(2);  // settled signatures: the memo is kept
  const std::string command = "g++ -Ia -Iother/../a -Ic -c m.cpp -o m.o";
  ASSERT_TRUE(compile_until_served(std::string(LEXPACK_BIN) + " " + command, kServerEnv))
      << dir_.read("log.txt");
  ASSERT_EQ(sh("rm -r other && ln -s alt/sub other").exit_code, 0);
  ASSERT_EQ(sh("g++ -Ia -Iother/../a -Ic -c m.cpp -o ref.o").exit_code, 0);
  ASSERT_EQ(lexpack(command, kServerEnv).exit_code, 0);
  EXPECT_TRUE(last_was_miss()) << last_decision();
  EXPECT_TRUE(dir_.read("m.o") == dir_.read("ref.o"));
  EXPECT_NE(dir_.read("log.txt").find("server declined: a search dir the compiler dropped"),
            std::string::npos)
      << dir_.read("log.txt");
  ASSERT_EQ(sh("rm m.o").exit_code, 0);
  ASSERT_EQ(lexpack(command, kServerEnv).exit_code, 0);
  EXPECT_TRUE(last_was_hit()) << last_decision();
  EXPECT_TRUE(dir_.read("m.o") == dir_.read("ref.o"));
}

// The compiles and the server they start name the cache directory alike: a
// relative LEXPACK_DIR (the server runs from /), and a path long enough for
// the socket to live elsewhere, given with a trailing '/' (that directory is
// named after a hash of the path).
TEST_F(ServerCaseTest, ServerIsFoundForARelativeOrSlashEndedCacheDirectory) {
  dir_.write("m.cpp", "int v() { return 10; }\n");
  const std::string long_dir = dir_.at(std::string(90, 'd')) + "/";
  for (const std::string& cache : {std::string("relative-cache"), long_dir}) {
    const std::string env = "LEXPACK_SERVER= LEXPACK_SERVER_IDLE=60 LEXPACK_DIR=" + cache;
    std::shared_ptr<void> stop(nullptr, [&](void*) { lexpack("server --stop", env); });
    EXPECT_TRUE(compile_until_served(std::string(LEXPACK_BIN) + " g++ -c m.cpp -o m.o", env))
        << cache << ": " << dir_.read("log.txt");
  }
}

// Under a base_dir the server finds the relocated entry the launcher stored
// (its memo is named with the base_dir) and writes the depfile and messages
// back naming this checkout, as the compiler would have.
TEST_F(ServerCaseTest, RelocatedEntriesAreServedWithThisCheckoutsPaths) {
  dir_.write("inc/a.h", "#define V 12\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return V; }\n");
  const std::string env = std::string(kServerEnv) + " LEXPACK_BASE_DIR=$PWD";
  std::shared_ptr<void> stop(nullptr, [&](void*) { lexpack("server --stop", kServerEnv); });
  ASSERT_EQ(lexpack("server --start", kServerEnv).exit_code, 0);
  const std::string args =
      "g++ -ffile-prefix-map=$PWD=. -I$PWD/inc -MD -MF m.d -c $PWD/m.cpp -o m.o";
  ASSERT_EQ(sh(args + " && mv m.o ref.o && mv m.d ref.d").exit_code, 0);
  ASSERT_NE(dir_.read("ref.d").find(dir_.path() + "/inc/a.h"), std::string::npos);
  sleep(2);  // settled signatures: the memo is kept
  ASSERT_TRUE(compile_until_served(std::string(LEXPACK_BIN) + " " + args, env))
      << dir_.read("log.txt");
  EXPECT_TRUE(dir_.read("m.o") == dir_.read("ref.o"));
  EXPECT_EQ(dir_.read("m.d"), dir_.read("ref.d"));
}

// The server reads a client's base_dir again when lexpack.conf changes (it
// keeps the last one between requests): with base_dir set there after a
// first compile without one, it names the compile's entry as the launcher
// now does and serves the relocated entry the launcher then stores.
TEST_F(ServerCaseTest, ABaseDirWrittenToTheConfigFileIsHonoured) {
  dir_.write("inc/a.h", "#define V 13\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return V; }\n");
  std::shared_ptr<void> stop(nullptr, [&](void*) { lexpack("server --stop", kServerEnv); });
  ASSERT_EQ(lexpack("server --start", kServerEnv).exit_code, 0);
  const std::string args =
      "g++ -ffile-prefix-map=$PWD=. -I$PWD/inc -MD -MF m.d -c $PWD/m.cpp -o m.o";
  ASSERT_EQ(sh(args + " && mv m.o ref.o && mv m.d ref.d").exit_code, 0);
  sleep(2);  // settled signatures: the memos are kept
  ASSERT_TRUE(compile_until_served(std::string(LEXPACK_BIN) + " " + args, kServerEnv))
      << dir_.read("log.txt");
  dir_.write("cache/lexpack.conf", "base_dir = " + dir_.path() + "\n");
  ASSERT_EQ(sh("rm m.o m.d").exit_code, 0);
  ASSERT_TRUE(compile_until_served(std::string(LEXPACK_BIN) + " " + args, kServerEnv))
      << dir_.read("log.txt");
  // A second entry, under the relocated key (one kept from before the change
  // would have been served at once, under the old one).
  const std::string log = dir_.read("log.txt");
  size_t stored = 0;
  for (size_t at = log.find(": stored "); at != std::string::npos;
       at = log.find(": stored ", at + 1)) {
    ++stored;
  }
  EXPECT_EQ(stored, 2u) << log;
  EXPECT_TRUE(dir_.read("m.o") == dir_.read("ref.o"));
  EXPECT_EQ(dir_.read("m.d"), dir_.read("ref.d"));
}

// A server that `lexpack ninja` starts checks the build's compiles before
// ninja runs them (one request for the build), so that each compile is
// answered from memory instead of each launcher checking its own closure. A
// first edge, which every compile waits for, reads the server's status.
TEST_F(ServerCaseTest, LexpackNinjaHasANewServerCheckItsCompilesFirst) {
  if (kClientBin[0] == '\0') GTEST_SKIP() << "no lexpack-client here";
  const std::string env = "LEXPACK_SERVER= LEXPACK_SERVER_IDLE=120";
  std::shared_ptr<void> stop(nullptr, [&](void*) { lexpack("server --stop", env); });
  write_three_unit_project(&dir_, "g++", 13, " || status.txt",
                           "rule status\n  command = " + std::string(LEXPACK_BIN) +
                               " server --status > $out || true\n"
                               "build status.txt: status\n");
  sleep(2);  // settled signatures: the memos are kept
  base::ProcessResult r = lexpack("ninja", "LEXPACK_SERVER=0");  // stores, no server
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(sh("ninja -t clean >/dev/null").exit_code, 0);
  ASSERT_NE(lexpack("server --status", env).exit_code, 0) << "a server already";
  r = lexpack("ninja", env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(dir_.read("status.txt").find("\ntrusted 3\n"), std::string::npos)
      << dir_.read("status.txt");
  EXPECT_NE((r.out + r.err).find(", 3 hits"), std::string::npos) << r.out << r.err;
  for (int i = 0; i < 3; ++i) {
    std::string n = std::to_string(i);
    ASSERT_EQ(sh("g++ -Iinc -c u" + n + ".cpp -o ref.o").exit_code, 0);
    EXPECT_TRUE(dir_.read("u" + n + ".o") == dir_.read("ref.o")) << "u" << n;
  }
  const std::string status = lexpack("server --status", env).out;
  EXPECT_NE(status.find("\nhits 3\n"), std::string::npos) << status;
}

// `lexpack scan` asks a running server first: a TU whose scan memo it
// checked is answered from memory, as the scan itself answers it; after a
// change the server heard of, that TU is scanned again, never answered stale.
TEST_F(ServerCaseTest, ScanIsAnsweredFromMemoryUntilAChange) {
  dir_.write("inc/a.h", "#define V 1\n");
  dir_.write("inc/b.h", "#define W 2\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return V; }\n");
  dir_.write("n.cpp", "#include <a.h>\nint n() { return 1; }\n");
  std::string db = "[";
  for (const char* tu : {"m", "n"}) {
    db += std::string(db.size() > 1 ? "," : "") + "\n{\"directory\": \"" + dir_.path() +
          "\", \"command\": \"g++ -Iinc -c " + tu + ".cpp -o " + tu + ".o\", \"file\": \"" + tu +
          ".cpp\", \"output\": \"" + tu + ".o\"}";
  }
  dir_.write("compile_commands.json", db + "]\n");
  std::shared_ptr<void> stop(nullptr, [&](void*) { lexpack("server --stop", kServerEnv); });
  sleep(2);  // settled signatures: the memos are kept
  auto scan = [&](const std::string& env, const std::string& out) {
    base::ProcessResult r = lexpack("scan --compdb compile_commands.json -o " + out, env);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return dir_.read(out);
  };
  const std::string alone = scan("LEXPACK_SERVER=0", "alone.d");  // stores the memos
  ASSERT_NE(alone.find(dir_.path() + "/inc/a.h"), std::string::npos) << alone;
  ASSERT_EQ(lexpack("server --start", kServerEnv).exit_code, 0);
  // The scans the server has answered from memory so far.
  auto answered = [&] {
    const std::string status = lexpack("server --status", kServerEnv).out;
    const size_t at = status.find("\nscan_answers ");
    return at == std::string::npos ? -1 : std::atoi(status.c_str() + at + 14);
  };
  // The server checks a memo before it answers from it, within a time
  // budget (the rest the scan checks itself): on a loaded machine the first
  // scans may be answered in part. Each answer equals the scan's own.
  bool both = false;
  for (int i = 0; i < 10 && !both; ++i) {
    const int before = answered();
    EXPECT_EQ(scan(kServerEnv, "served.d"), alone);
    both = answered() == before + 2;
  }
  EXPECT_TRUE(both) << "the server never answered both scans";
  dir_.write("inc/a.h", "#include \"b.h\"\n#define V 1\n");
  const int before_change = answered();
  const std::string changed = scan(kServerEnv, "changed.d");
  EXPECT_NE(changed.find(dir_.path() + "/inc/b.h"), std::string::npos) << changed;
  EXPECT_EQ(changed, scan("LEXPACK_SERVER=0", "alone2.d"));
  EXPECT_EQ(answered(), before_change);  // a changed header: neither answered from memory
}

// A build's other steps (packaging, custom commands) come with the compiles
// in `ninja -t compdb`: the server never runs their program to ask who it
// is (cpack, for one, ignores the compiler's questions and packages).
TEST_F(ServerCaseTest, AScanNeverRunsAStepThatIsNotACompile) {
  dir_.write("m.cpp", "int v() { return 1; }\n");
  dir_.write("tool.sh", "#!/bin/sh\necho \"$@\" >> ran.txt\n");
  ASSERT_EQ(sh("chmod +x tool.sh").exit_code, 0);
  const std::string d = dir_.path();
  dir_.write("compile_commands.json",
             "[{\"directory\": \"" + d + "\", \"command\": \"g++ -c m.cpp -o m.o\", " +
                 "\"file\": \"m.cpp\", \"output\": \"m.o\"},\n" + "{\"directory\": \"" + d +
                 "\", \"command\": \"" + d + "/tool.sh --config pack.cmake\", " +
                 "\"file\": \"pack.cmake\", \"output\": \"package\"}]\n");
  std::shared_ptr<void> stop(nullptr, [&](void*) { lexpack("server --stop", kServerEnv); });
  ASSERT_EQ(lexpack("server --start", kServerEnv).exit_code, 0);
  for (int i = 0; i < 2; ++i) {
    base::ProcessResult r = lexpack("scan --compdb compile_commands.json -o deps.d", kServerEnv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_FALSE(dir_.exists("ran.txt")) << dir_.read("ran.txt");
  EXPECT_NE(dir_.read("deps.d").find("m.cpp"), std::string::npos);
}

// A cache directory two users share has a server for each: the second user
// is answered from memory by their own server, not left without one because
// the first user's server holds the cache directory.
TEST_F(ServerCaseTest, EachUserOfASharedCacheHasTheirOwnServer) {
  if (::geteuid() != 0 || sh("command -v setpriv >/dev/null").exit_code != 0) {
    GTEST_SKIP() << "needs root and setpriv to act as another user";
  }
  ASSERT_EQ(
      sh("chmod 755 . && mkdir shared other && chmod 777 shared && chown 65534 other").exit_code,
      0);
  dir_.write("other/m.cpp", "int v() { return 14; }\n");
  ASSERT_EQ(sh("chown 65534 other/m.cpp && g++ -c other/m.cpp -o ref.o").exit_code, 0);
  const std::string env = std::string(kServerEnv) +
                          " LEXPACK_UMASK=000 LEXPACK_DIR=" + dir_.at("shared") +
                          " LEXPACK_LOGFILE=" + dir_.at("other/log.txt");
  const std::string as_other = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  std::shared_ptr<void> stop(nullptr, [&](void*) {
    lexpack("server --stop", env);
    sh(as_other + LEXPACK_BIN + " server --stop", env);
  });
  ASSERT_EQ(lexpack("server --start", env).exit_code, 0);  // the first user's
  sleep(2);                                                // settled signatures: memos kept
  bool served = false;
  for (int i = 0; i < 20 && !served; ++i) {
    base::ProcessResult r =
        sh("cd other && " + as_other + LEXPACK_BIN + " g++ -c m.cpp -o m.o", env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_TRUE(dir_.read("other/m.o") == dir_.read("ref.o"));
    std::string log = dir_.read("other/log.txt");
    served = log.ends_with(": hit (server)\n");
    if (!served) ::usleep(300 * 1000);
  }
  EXPECT_TRUE(served) << dir_.read("other/log.txt");
  std::string mine = lexpack("server --status", env).out;
  std::string theirs = sh(as_other + LEXPACK_BIN + " server --status", env).out;
  ASSERT_NE(mine.find("pid "), std::string::npos) << mine;
  ASSERT_NE(theirs.find("pid "), std::string::npos) << theirs;
  EXPECT_NE(mine.substr(0, mine.find('\n')), theirs.substr(0, theirs.find('\n')));
  EXPECT_EQ(sh("stat -c %u other/m.o").out, "65534\n");
}

// A hit in a directory the server wrote to before goes into the spare file
// it made there while idle: same bytes and mode as the compiler's own output
// (umask 027), and a spare replaced by a symlink or a hard link to another
// file is not written through.
TEST_F(ServerCaseTest, HitsWrittenIntoSpareFilesAreTheCompilersOutput) {
  dir_.write("m.cpp", "int v() { return 11; }\n");
  dir_.write("victim.txt", "keep\n");
  std::shared_ptr<void> stop(nullptr, [&](void*) { lexpack("server --stop", kServerEnv); });
  ASSERT_EQ(lexpack("server --start", kServerEnv).exit_code, 0);
  ASSERT_EQ(sh("umask 027 && g++ -c m.cpp -o ref.o").exit_code, 0);
  sleep(2);  // settled signatures: the memo is kept
  const std::string compile = "umask 027 && " + std::string(LEXPACK_BIN) + " g++ -c m.cpp -o m.o";
  ASSERT_TRUE(compile_until_served(compile, kServerEnv)) << dir_.read("log.txt");
  // The spare the server makes once no request waits.
  auto spare = [&] {
    for (int i = 0; i < 40; ++i) {
      std::string name = sh("ls -A | grep lexpack-server-spare").out;
      if (!name.empty()) return name.substr(0, name.find('\n'));
      ::usleep(50 * 1000);
    }
    return std::string();
  };
  for (const std::string tamper : {"", "ln -sf victim.txt ", "ln -f victim.txt "}) {
    std::string name = spare();
    ASSERT_FALSE(name.empty()) << "no spare made";
    if (!tamper.empty()) {
      ASSERT_EQ(sh(tamper + name).exit_code, 0);
    }
    ASSERT_EQ(sh(compile, kServerEnv).exit_code, 0);
    EXPECT_EQ(last_decision(), "hit (server)") << tamper;
    EXPECT_TRUE(dir_.read("m.o") == dir_.read("ref.o")) << tamper;
    EXPECT_EQ(sh("stat -c %a m.o").out, sh("stat -c %a ref.o").out) << tamper;
    EXPECT_EQ(dir_.read("victim.txt"), "keep\n") << tamper;
    if (tamper.empty()) {
      EXPECT_NE(sh("test -e " + name).exit_code, 0) << "the spare was not used";
    }
    if (!tamper.empty()) sh("rm -f " + name);
  }
}

// A server killed with SIGKILL leaves its spare files beside the outputs;
// the next server of the cache directory removes them when it starts.
TEST_F(ServerCaseTest, ANewServerRemovesTheSparesAKilledOneLeft) {
  dir_.write("m.cpp", "int v() { return 15; }\n");
  std::shared_ptr<void> stop(nullptr, [&](void*) { lexpack("server --stop", kServerEnv); });
  ASSERT_EQ(lexpack("server --start", kServerEnv).exit_code, 0);
  sleep(2);  // settled signatures: the memo is kept
  ASSERT_TRUE(compile_until_served(std::string(LEXPACK_BIN) + " g++ -c m.cpp -o m.o", kServerEnv))
      << dir_.read("log.txt");
  auto spares = [&] { return sh("ls -A | grep lexpack-server-spare || true").out; };
  for (int i = 0; i < 40 && spares().empty(); ++i) ::usleep(50 * 1000);
  const std::string left = spares();
  ASSERT_FALSE(left.empty()) << "no spare made";
  std::string status = lexpack("server --status", kServerEnv).out;
  ASSERT_EQ(status.rfind("pid ", 0), 0u) << status;
  pid_t pid = std::stoi(status.substr(4));
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = ::kill(pid, 0) != 0;
    if (!gone) ::usleep(20 * 1000);
  }
  ASSERT_TRUE(gone);
  ASSERT_EQ(spares(), left) << "the killed server's spare is expected to be left";
  ASSERT_EQ(lexpack("server --start", kServerEnv).exit_code, 0);
  bool up = false;
  for (int i = 0; i < 100 && !up; ++i) {
    up = lexpack("server --status", kServerEnv).exit_code == 0;
    if (!up) ::usleep(50 * 1000);
  }
  ASSERT_TRUE(up);
  EXPECT_EQ(spares(), "") << "a new server left the spare of the killed one";
}

// `lexpack clear` stops the server, which kept the index it opened: the
// next compile is a miss, not a hit served from what was cleared.
TEST_F(ServerCaseTest, ClearStopsTheServer) {
  dir_.write("m.cpp", "int v() { return 8; }\n");
  std::shared_ptr<void> stop(nullptr, [&](void*) { lexpack("server --stop", kServerEnv); });
  ASSERT_EQ(lexpack("server --start", kServerEnv).exit_code, 0);
  sleep(2);  // settled signatures: the memo is kept
  ASSERT_TRUE(compile_until_served(std::string(LEXPACK_BIN) + " g++ -c m.cpp -o m.o", kServerEnv))
      << dir_.read("log.txt");
  ASSERT_EQ(lexpack("clear", kServerEnv).exit_code, 0);
  EXPECT_NE(lexpack("server --status", kServerEnv).exit_code, 0) << "the server stayed";
  ASSERT_EQ(lexpack("g++ -c m.cpp -o m.o", kServerEnv).exit_code, 0);
  EXPECT_TRUE(last_was_miss()) << last_decision();
}

// A server that could not start leaves a mark; for a minute after it no
// compile starts another (each would fork one), then one does again.
TEST_F(ServerCaseTest, AFailedServerStartIsNotRetriedOnEveryCompile) {
  const std::string env = "LEXPACK_SERVER= LEXPACK_SERVER_IDLE=600";
  dir_.write("m.cpp", "int v() { return 7; }\n");
  ASSERT_EQ(sh("mkdir -p cache/server-$(id -u) && chmod 700 cache/server-$(id -u) && "
               "echo 'inotify: no instance left' > cache/server-$(id -u)/start-failed")
                .exit_code,
            0);
  std::shared_ptr<void> stop(nullptr, [&](void*) { lexpack("server --stop", env); });
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(lexpack("g++ -c m.cpp -o out.o", env).exit_code, 0);
  }
  ::usleep(500 * 1000);
  EXPECT_NE(lexpack("server --status", env).exit_code, 0) << "started despite the mark";
  ASSERT_EQ(sh("touch -d '2 minutes ago' cache/server-$(id -u)/start-failed").exit_code, 0);
  ASSERT_EQ(lexpack("g++ -c m.cpp -o out.o", env).exit_code, 0);
  bool up = false;
  for (int i = 0; i < 100 && !up; ++i) {
    up = lexpack("server --status", env).exit_code == 0;
    if (!up) ::usleep(50 * 1000);
  }
  EXPECT_TRUE(up) << "not started once the mark was old";
  // The server that started took the mark away.
  EXPECT_NE(sh("test -e cache/server-$(id -u)/start-failed").exit_code, 0);
}

// Without the server, or with nothing to talk to, lexpack-client is lexpack.
TEST_F(ServerCaseTest, ClientWithoutServerIsLexpack) {
  if (kClientBin[0] == '\0') GTEST_SKIP() << "no lexpack-client here";
  dir_.write("m.cpp", "int v() { return 4; }\n");
  ASSERT_EQ(sh("g++ -c m.cpp -o ref.o").exit_code, 0);
  for (const char* env : {"LEXPACK_SERVER=0", "LEXPACK_SERVER=1 LEXPACK_DISABLE=1"}) {
    base::ProcessResult r = sh(std::string(kClientBin) + " g++ -c m.cpp -o out.o", env);
    ASSERT_EQ(r.exit_code, 0) << env << ": " << r.err;
    EXPECT_TRUE(dir_.read("out.o") == dir_.read("ref.o")) << env;
  }
  EXPECT_FALSE(last_decision().empty());  // lexpack itself decided
  // Its arguments and exit status pass through: a failing compile fails.
  dir_.write("bad.cpp", "int v( {\n");
  base::ProcessResult r = sh(std::string(kClientBin) + " g++ -c bad.cpp -o bad.o");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("bad.cpp"), std::string::npos) << r.err;
  // Reached through a symlink, it runs the lexpack beside the program itself,
  // not whatever is beside the link.
  ASSERT_EQ(sh("mkdir links && ln -s " + shell_quote(kClientBin) +
               " links/lexpack-client && printf '#!/bin/sh\\nexit 42\\n' > links/lexpack-main && "
               "chmod +x links/lexpack-main")
                .exit_code,
            0);
  r = sh("./links/lexpack-client g++ -c m.cpp -o out.o", "LEXPACK_SERVER=1");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(dir_.read("out.o") == dir_.read("ref.o"));
  // Alone, with no lexpack beside it, it says so.
  ASSERT_EQ(sh("mkdir alone && cp " + shell_quote(kClientBin) + " alone/").exit_code, 0);
  r = sh("./alone/lexpack-client g++ -c m.cpp -o out.o", "LEXPACK_SERVER=1");
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(r.err.find("lexpack-client: cannot run"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace lexpack::testing
