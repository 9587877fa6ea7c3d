// End to end with `lexpack server` at the edges of what it can see: a server
// that is stopped, one in another mount namespace, a client in another time
// zone, and a header written through a shared mapping (no inotify event).
// Each compile is compared with the compiler's own.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <ostream>
#include <string>
#include <vector>

#include "tests/support/launcher_fixture.h"
#include "tests/support/server_ways.h"

namespace lexpack::testing {
namespace {

// The state letter of /proc/<pid>/stat ('T' stopped), or '\0'.
char process_state(pid_t pid) {
  std::string stat;
  FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (!f) return '\0';
  char buf[512];
  size_t n = std::fread(buf, 1, sizeof buf, f);
  std::fclose(f);
  stat.assign(buf, n);
  size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() ? '\0' : stat[paren + 2];
}

class ServerEdgeTest : public LauncherTest, public ::testing::WithParamInterface<Way> {
 protected:
  void SetUp() override {
    if (GetParam().client && kClientBin[0] == '\0') GTEST_SKIP() << "no lexpack-client here";
  }
  void TearDown() override {
    if (stopped_ > 0) ::kill(stopped_, SIGCONT);
    if (silent_ > 0) {
      ::kill(silent_, SIGKILL);
      ::waitpid(silent_, nullptr, 0);
    }
    lexpack("server --stop", kServerEnv);
  }

  void start(const std::string& env = "") {
    ASSERT_EQ(lexpack("server --start", std::string(kServerEnv) + " " + env).exit_code, 0);
    wait_up();
  }
  void wait_up() {
    for (int i = 0; i < 100; ++i) {
      if (server_pid() > 0) return;
      ::usleep(50 * 1000);
    }
    FAIL() << "the server did not come up";
  }
  pid_t server_pid() {
    std::string s = "\n" + lexpack("server --status", kServerEnv).out;
    size_t at = s.find("\npid ");
    return at == std::string::npos ? -1 : pid_t(std::stol(s.substr(at + 5)));
  }

  std::string cxx() const { return GetParam().cxx; }
  std::string program() const { return GetParam().client ? kClientBin : LEXPACK_BIN; }
  // Compiles with the compiler alone and through lexpack (`env` for both);
  // the objects must be the same. Returns the time lexpack's compile took.
  double compile_and_compare(const std::string& args, const std::string& env = "",
                             const std::string& wrap = "") {
    EXPECT_EQ(sh(cxx() + " " + args + " -o ref.o", env).exit_code, 0) << args;
    auto t0 = std::chrono::steady_clock::now();
    base::ProcessResult r = sh(wrap + program() + " " + cxx() + " " + args + " -o out.o",
                               std::string(kServerEnv) + " " + env);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(dir_.read("out.o") == dir_.read("ref.o")) << args << ": " << last_decision();
    return s;
  }
  bool last_was_server_hit() { return last_decision() == "hit (server)"; }
  // Compiles until the server answers (the first compile stores; a memo of
  // files younger than a second is not kept).
  bool warm(const std::string& args, const std::string& env = "", const std::string& wrap = "") {
    const ::testing::TestResult* result =
        ::testing::UnitTest::GetInstance()->current_test_info()->result();
    const int failures_before = result->total_part_count();
    for (int i = 0; i < 15; ++i) {
      compile_and_compare(args, env, wrap);
      if (result->total_part_count() != failures_before) return false;
      if (last_was_server_hit()) return true;
      if (i >= 2) ::usleep(300 * 1000);
    }
    ADD_FAILURE() << "the server never answered: " << last_decision();
    return false;
  }

  pid_t stopped_ = -1;  // continued by TearDown whatever happens
  // Listens on the server's socket as this process's child (so that the
  // clients see its pid) holding the server's lock, as a server does (no
  // other is started), accepts, counts in `accepted`, never answers. With
  // `working`, each connection starts a child that lives on, as a compiler
  // the server runs would.
  void listen_without_answering(bool working) {
    const std::string server = dir_.at("cache") + "/server-" + std::to_string(::geteuid());
    const std::string sock = server + "/sock";
    if (sock.size() >= 100) GTEST_SKIP() << "the socket path is too long here: " << sock;
    ::mkdir(dir_.at("cache").c_str(), 0755);
    ASSERT_EQ(::mkdir(server.c_str(), 0700), 0) << server;
    const std::string count_file = dir_.at("accepted");
    silent_ = ::fork();
    ASSERT_GE(silent_, 0);
    if (silent_ == 0) {
      int lock = ::open((server + "/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
      if (lock < 0 || ::flock(lock, LOCK_EX) != 0) ::_exit(1);
      int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      struct sockaddr_un sa {};
      sa.sun_family = AF_UNIX;
      std::memcpy(sa.sun_path, sock.c_str(), sock.size() + 1);
      if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 ||
          ::listen(listener, 64) != 0) {
        ::_exit(1);
      }
      std::vector<int> held;
      for (;;) {
        int c = ::accept(listener, nullptr, nullptr);
        if (c < 0) continue;
        held.push_back(c);
        // Written aside and renamed over: a reader never sees it half done.
        std::string n = std::to_string(held.size());
        const std::string aside = count_file + ".new";
        int f = ::open(aside.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (f >= 0 && ::write(f, n.data(), n.size()) < 0) ::_exit(1);
        if (f >= 0) ::close(f);
        if (::rename(aside.c_str(), count_file.c_str()) != 0) ::_exit(1);
        if (working && ::fork() == 0) {
          ::prctl(PR_SET_PDEATHSIG, SIGKILL);
          ::sleep(30);
          ::_exit(0);
        }
      }
    }
    struct stat st {};
    for (int i = 0; i < 200 && ::stat(sock.c_str(), &st) != 0; ++i) ::usleep(10 * 1000);
    ASSERT_EQ(::stat(sock.c_str(), &st), 0) << "the silent server did not listen";
  }

  pid_t silent_ = -1;  // killed by TearDown
};

// A stopped server is found out once, in moments, and every later compile
// takes its own path at once; continued, it answers again; killed, a new
// one is started.
TEST_P(ServerEdgeTest, StoppedServerCostsTheBuildMoments) {
  start();
  dir_.write("inc/a.h", "#define V 1\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return V; }\n");
  ASSERT_TRUE(warm("-Iinc -c m.cpp"));
  pid_t pid = server_pid();
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, SIGSTOP), 0);
  stopped_ = pid;
  for (int i = 0; i < 100 && process_state(pid) != 'T'; ++i) ::usleep(10 * 1000);
  ASSERT_EQ(process_state(pid), 'T');
  double total = 0;
  for (int i = 0; i < 10; ++i) {
    total += compile_and_compare("-Iinc -c m.cpp");
    ASSERT_FALSE(HasFailure());
    EXPECT_FALSE(last_was_server_hit());
  }
  // The same compiles without a server: what a loaded machine costs them.
  double alone = 0;
  for (int i = 0; i < 10; ++i) alone += compile_and_compare("-Iinc -c m.cpp", "LEXPACK_SERVER=0");
  std::printf("10 compiles with a stopped server: %.3f s, without a server: %.3f s\n", total,
              alone);
  // Each of these is a local hit (a few milliseconds); waiting for the
  // stopped server even once per compile would take seconds.
  EXPECT_LT(total, std::max(1.5, 2 * alone + 0.5))
      << "10 compiles with a stopped server took " << total << " s";
  EXPECT_NE(dir_.read("log.txt").find(" is stopped; not asked until it runs again"),
            std::string::npos)
      << dir_.read("log.txt");
  // Continued: it answers again.
  ASSERT_EQ(::kill(pid, SIGCONT), 0);
  stopped_ = -1;
  ASSERT_TRUE(warm("-Iinc -c m.cpp"));
  // Stopped again, then killed: a new server takes its place.
  ASSERT_EQ(::kill(pid, SIGSTOP), 0);
  stopped_ = pid;
  for (int i = 0; i < 100 && process_state(pid) != 'T'; ++i) ::usleep(10 * 1000);
  compile_and_compare("-Iinc -c m.cpp");
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  stopped_ = -1;
  for (int i = 0; i < 100 && process_state(pid) != '\0' && process_state(pid) != 'Z'; ++i) {
    ::usleep(10 * 1000);
  }
  ASSERT_TRUE(warm("-Iinc -c m.cpp"));
  EXPECT_NE(server_pid(), pid);
}

// A server that runs but never answers (deadlocked, or starved of CPU) is
// waited for once: that compile marks it, and the ones that follow take
// their own path without connecting, until the mark's time is up.
TEST_P(ServerEdgeTest, UnansweringServerIsWaitedForOnce) {
  dir_.write("inc/a.h", "#define V 1\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return V; }\n");
  listen_without_answering(false);
  if (HasFatalFailure() || IsSkipped()) return;
  for (int i = 0; i < 6; ++i) {
    compile_and_compare("-Iinc -c m.cpp");
    ASSERT_FALSE(HasFailure());
  }
  // Six compiles asked it once (each would otherwise wait for it).
  EXPECT_EQ(dir_.read("accepted"), "1");
  std::string mark = dir_.read("cache/server-" + std::to_string(::geteuid()) + "/stopped");
  EXPECT_NE(mark.find(std::to_string(silent_) + " "), std::string::npos) << mark;
  EXPECT_NE(mark.find(" unanswered"), std::string::npos) << mark;
  if (!GetParam().client) {
    EXPECT_NE(dir_.read("log.txt").find("did not answer in time; not asked for a while"),
              std::string::npos)
        << dir_.read("log.txt");
    // The user who asks is told why the compiles skip it.
    EXPECT_NE(lexpack("server --status", kServerEnv).out.find("did not answer in time"),
              std::string::npos);
  }
}

// A server that is working while a compile waits (it runs a compiler, on a
// loaded machine) is only busy: that compile takes its own path, and the
// next one asks it again.
TEST_P(ServerEdgeTest, BusyServerIsNotMarked) {
  dir_.write("inc/a.h", "#define V 1\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return V; }\n");
  listen_without_answering(true);
  if (HasFatalFailure() || IsSkipped()) return;
  for (int i = 0; i < 2; ++i) {
    compile_and_compare("-Iinc -c m.cpp");
    ASSERT_FALSE(HasFailure());
  }
  // The second compile asked it again (through lexpack-client, the lexpack
  // it becomes then tells the server what it compiled, unanswered).
  EXPECT_GE(std::atoi(dir_.read("accepted").c_str()), 2);
  EXPECT_FALSE(dir_.exists("cache/server-" + std::to_string(::geteuid()) + "/stopped"));
}

// A server started in another mount namespace sees other files under the
// same paths: it must not answer the compiles of this one.
TEST_P(ServerEdgeTest, ServerInAnotherMountNamespaceDeclines) {
  if (sh("unshare -m true 2>/dev/null && command -v nsenter >/dev/null").exit_code != 0) {
    GTEST_SKIP() << "unshare -m is not permitted here (needs root), or no nsenter";
  }
  dir_.write("inc/a.h", "#define V 1\n");
  dir_.write("other/a.h", "#define V 9\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return V; }\n");
  // The server starts in a namespace where inc/ is other/.
  base::ProcessResult r = sh("unshare -m --propagation private sh -c 'mount --bind other inc && " +
                                 std::string(LEXPACK_BIN) + " server --start'",
                             kServerEnv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  wait_up();
  pid_t pid = server_pid();
  ASSERT_GT(pid, 0);
  // Compiles in its namespace are answered by it...
  const std::string inside =
      "nsenter -t " + std::to_string(pid) + " -m sh -c 'cd " + shell_quote(dir_.path()) + " && ";
  auto in_ns = [&](const std::string& command) { return sh(inside + command + "'", kServerEnv); };
  bool served = false;
  for (int i = 0; i < 15 && !served; ++i) {
    ASSERT_EQ(in_ns(program() + " " + cxx() + " -Iinc -c m.cpp -o out.o").exit_code, 0);
    served = last_was_server_hit();
    if (!served && i >= 2) ::usleep(300 * 1000);
  }
  ASSERT_TRUE(served) << dir_.read("log.txt");
  ASSERT_EQ(in_ns(cxx() + " -Iinc -c m.cpp -o nsref.o").exit_code, 0);
  ASSERT_EQ(sh("mv out.o ns.o").exit_code, 0);
  ASSERT_TRUE(dir_.read("ns.o") == dir_.read("nsref.o"));
  // ... and those of this one are not: the object is this namespace's.
  compile_and_compare("-Iinc -c m.cpp");
  EXPECT_FALSE(last_was_server_hit());
  EXPECT_NE(dir_.read("log.txt").find("server declined: the client is in another mount namespace"),
            std::string::npos)
      << dir_.read("log.txt");
}

// __DATE__ is the date in the compile's time zone, not the server's.
TEST_P(ServerEdgeTest, DateUsersFollowTheClientsTimeZone) {
  start("TZ=UTC");
  std::time_t now = std::time(nullptr);
  struct tm utc {};
  gmtime_r(&now, &utc);
  // A zone whose date differs from UTC's now: 14 hours ahead late in the
  // UTC day, 12 hours behind early in it.
  const std::string tz = utc.tm_hour >= 12 ? "TZ=Etc/GMT-14" : "TZ=Etc/GMT+12";
  if (sh(tz + " date +%d > a.txt; TZ=UTC date +%d > b.txt; cmp -s a.txt b.txt").exit_code == 0) {
    GTEST_SKIP() << "no zone with another date found (no time zone data?)";
  }
  dir_.write("m.cpp", "const char* built() { return __DATE__; }\n");
  ASSERT_TRUE(warm("-c m.cpp", "TZ=UTC"));
  compile_and_compare("-c m.cpp", tz);
  EXPECT_FALSE(last_was_server_hit());
  // Answered from memory in that zone too, with its own date.
  ASSERT_TRUE(warm("-c m.cpp", tz));
  compile_and_compare("-c m.cpp", "TZ=UTC");
}

// A header written through a shared mapping changes its mtime but raises no
// inotify event: trust without a stat lasts a bounded time.
TEST_P(ServerEdgeTest, HeaderWrittenThroughASharedMapping) {
  start();
  dir_.write("inc/a.h", "#define V 1\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return V; }\n");
  ASSERT_TRUE(warm("-Iinc -c m.cpp"));
  // Mapped and its descriptor closed, then answered from memory again before
  // the write. The mapping stays (as a program that keeps one does): its
  // unmapping is the file's last close, an event.
  int fd = ::open(dir_.at("inc/a.h").c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  struct stat before {};
  ASSERT_EQ(::fstat(fd, &before), 0);
  void* map = ::mmap(nullptr, size_t(before.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  ASSERT_NE(map, MAP_FAILED);
  ASSERT_TRUE(warm("-Iinc -c m.cpp"));
  ::usleep(20 * 1000);  // a later mtime, whatever the clock's granularity
  std::memcpy(map, "#define V 7\n", 12);
  ASSERT_EQ(::msync(map, size_t(before.st_size), MS_SYNC), 0);
  struct Unmap {
    void* p;
    size_t n;
    ~Unmap() { ::munmap(p, n); }
  } unmap{map, size_t(before.st_size)};
  struct stat after {};
  ASSERT_EQ(::stat(dir_.at("inc/a.h").c_str(), &after), 0);
  if (after.st_mtim.tv_sec == before.st_mtim.tv_sec &&
      after.st_mtim.tv_nsec == before.st_mtim.tv_nsec) {
    GTEST_SKIP() << "this filesystem does not update mtime on a write through a mapping";
  }
  ::usleep(2500 * 1000);  // past the time trust lasts without a stat
  compile_and_compare("-Iinc -c m.cpp");
  EXPECT_FALSE(last_was_server_hit()) << "served a stale object";
}

// A header rewritten with the bytes it had (a configure regenerating it):
// its signature moved, so the server compares its content when it builds
// its trust again, and keeps answering from memory. Other bytes of the same
// size are a miss with the compiler's object.
TEST_P(ServerEdgeTest, HeaderRewrittenWithItsOwnBytesIsStillServed) {
  start();
  dir_.write("inc/a.h", "#define V 1\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return V; }\n");
  ASSERT_TRUE(warm("-Iinc -c m.cpp"));
  ::usleep(20 * 1000);  // a later mtime, whatever the clock's granularity
  dir_.write("inc/a.h", "#define V 1\n");
  bool served = false;
  for (int i = 0; i < 10 && !served; ++i) {
    compile_and_compare("-Iinc -c m.cpp");
    ASSERT_FALSE(HasFailure());
    served = last_was_server_hit();
    if (!served) ::usleep(200 * 1000);
  }
  EXPECT_TRUE(served) << dir_.read("log.txt");
  // Trusted by its content, not only once the memo took its new signature.
  const std::string status = lexpack("server --status", kServerEnv).out;
  EXPECT_EQ(status.find("\ncontent_trusts 0\n"), std::string::npos) << status;
  EXPECT_NE(status.find("\ncontent_trusts "), std::string::npos) << status;
  dir_.write("inc/a.h", "#define V 2\n");
  compile_and_compare("-Iinc -c m.cpp");
  EXPECT_FALSE(last_was_hit()) << last_decision();
}

INSTANTIATE_TEST_SUITE_P(Ways, ServerEdgeTest, kAllWays, WayName);

}  // namespace
}  // namespace lexpack::testing
