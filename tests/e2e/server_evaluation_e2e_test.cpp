// End to end, g++ and clang++, through lexpack and lexpack-client: a compile
// the server declines has the server evaluate its closure, which keeps every
// header evaluation it made (by the header's signature and the macro state
// it read). A header state must never be reused for a TU whose state
// differs in a macro the header reads, nor after the header changed. Each
// object is compared with a plain compile's.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "cache/store.h"
#include "tests/support/launcher_fixture.h"
#include "tests/support/server_ways.h"

namespace lexpack::testing {
namespace {

constexpr char kByServer[] = "closure evaluated by the server";
constexpr char kSelect[] =
    "#if USE_X\n#define SEL_HEADER <x.h>\n#else\n#define SEL_HEADER <y.h>\n#endif\n"
    "#include SEL_HEADER\n";

class ServerEvaluation : public LauncherTest, public ::testing::WithParamInterface<Way> {
 protected:
  void SetUp() override {
    if (GetParam().client && kClientBin[0] == '\0') GTEST_SKIP() << "no lexpack-client here";
    ASSERT_EQ(lexpack("server --start", kServerEnv).exit_code, 0);
    for (int i = 0; i < 100; ++i) {
      if (lexpack("server --status", kServerEnv).exit_code == 0) return;
      ::usleep(50 * 1000);
    }
    FAIL() << "the server did not come up";
  }
  void TearDown() override { lexpack("server --stop", kServerEnv); }
  // Signatures younger than a second leave no memo: wait them out.
  static void settle() { ::usleep(1100 * 1000); }
  std::string program() const { return GetParam().client ? kClientBin : LEXPACK_BIN; }
  // Compiles `source` through lexpack and plainly; the objects must be
  // equal. Returns this compile's decision log.
  std::string compile(const std::string& source, const std::string& includes = "-Iinc") {
    dir_.write("log.txt", "");
    const std::string args = std::string(GetParam().cxx) + " " + includes + " -c " + source;
    EXPECT_EQ(sh(args + " -o ref.o").exit_code, 0);
    base::ProcessResult r = sh(program() + " " + args + " -o out.o", kServerEnv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(dir_.read("out.o") == dir_.read("ref.o"))
        << source << ": a wrong object: " << dir_.read("log.txt");
    return dir_.read("log.txt");
  }
  // The number the server's status gives for `name`.
  long status_number(const std::string& name) {
    const std::string status = lexpack("server --status", kServerEnv).out;
    const size_t at = status.find("\n" + name + " ");
    EXPECT_NE(at, std::string::npos) << status;
    return at == std::string::npos ? -1 : std::stol(status.substr(at + name.size() + 2));
  }
  static bool says(const std::string& log, const char* what) {
    return log.find(what) != std::string::npos;
  }
  // The header both TUs include: which file it includes depends on USE_X,
  // through a computed include (so each TU's closure is evaluated exactly,
  // and holds only the file its USE_X selects).
  // o/c.cpp, which includes o/z.h (in no closure the server trusts),
  // compiled with its closure evaluated by the server; then z.h changed
  // (and includes y.h).
  void compile_c_then_change_z() {
    write_project();
    dir_.write("o/z.h", "#define Z 1\n");
    dir_.write("o/c.cpp", "#include \"z.h\"\nint c() { return Z; }\n");
    settle();
    const std::string log = compile("o/c.cpp");
    EXPECT_TRUE(says(log, kByServer)) << log;
    dir_.write("o/z.h", "#include <y.h>\n#define Z V\n");
  }
  // o/c.cpp (`c_text`) compiled with its closure evaluated by the server,
  // which then watches nothing; `header` (which c.cpp names) rewritten from
  // `before` to `after`, unheard; then o/d.cpp (`d_text`), never compiled
  // before: its decision log.
  std::string compile_then_change_unheard(const std::string& header, const std::string& before,
                                          const std::string& after, const std::string& c_text,
                                          const std::string& d_text) {
    write_project();
    dir_.write(header, before);
    dir_.write("o/c.cpp", c_text);
    dir_.write("o/d.cpp", d_text);
    settle();
    const std::string log = compile("o/c.cpp");
    EXPECT_TRUE(says(log, kByServer)) << log;
    EXPECT_EQ(status_number("watches"), 0) << "the test needs a server that watches nothing";
    dir_.write(header, after);
    settle();
    return compile("o/d.cpp");
  }
  void write_project() {
    dir_.write("inc/sel.h", kSelect);
    dir_.write("inc/x.h", "#define V 10\n");
    dir_.write("inc/y.h", "#define V 20\n");
    dir_.write("a.cpp", "#define USE_X 1\n#include \"sel.h\"\nint a() { return V; }\n");
    dir_.write("b.cpp", "#define USE_X 0\n#include \"sel.h\"\nint b() { return V; }\n");
  }
};

TEST_P(ServerEvaluation, HeaderStateIsNotReusedAcrossMacroStates) {
  write_project();
  settle();
  std::string log = compile("a.cpp");
  EXPECT_TRUE(says(log, kByServer)) << log;
  log = compile("b.cpp");
  EXPECT_TRUE(says(log, kByServer)) << log;
  settle();
  // b.cpp's closure holds y.h, a.cpp's x.h: a change of y.h is b.cpp's alone.
  dir_.write("inc/y.h", "#define V 21\n");
  log = compile("b.cpp");
  EXPECT_TRUE(last_was_miss()) << log;
  log = compile("a.cpp");
  EXPECT_TRUE(log.find("hit") != std::string::npos) << log;
}

// The records an evaluation learned (each file's content and lexed summary)
// are in the store once its launcher is done, the server still running:
// the share holds them only while it evaluates.
TEST_P(ServerEvaluation, WhatAnEvaluationReadIsStoredWhenItEnds) {
  write_project();
  settle();
  const std::string log = compile("a.cpp");
  EXPECT_TRUE(says(log, kByServer)) << log;
  cache::StoreOptions options;
  options.dir = dir_.at("cache");
  auto store = cache::Store::open(options);
  ASSERT_TRUE(store.ok()) << store.message();
  for (const char* header : {"inc/sel.h", "inc/x.h"}) {
    const std::optional<cache::FileRecord> record = (*store)->get_file(dir_.at(header));
    ASSERT_TRUE(record.has_value()) << header;
    EXPECT_FALSE(record->scan_result.is_zero()) << header << ": no summary stored";
  }
}

TEST_P(ServerEvaluation, HeaderEvaluationIsNotKeptPastAChange) {
  write_project();
  settle();
  std::string log = compile("a.cpp");
  EXPECT_TRUE(says(log, kByServer)) << log;
  // sel.h now reads another macro and includes another file.
  dir_.write("inc/z.h", "#undef V\n#define V 30\n");
  dir_.write("inc/sel.h", std::string(kSelect) + "#if USE_X\n#include <z.h>\n#endif\n");
  settle();
  compile("b.cpp");
  log = compile("a.cpp");
  EXPECT_TRUE(last_was_miss()) << log;
  settle();
  // z.h is in a.cpp's closure now.
  dir_.write("inc/z.h", "#undef V\n#define V 31\n");
  log = compile("a.cpp");
  EXPECT_TRUE(last_was_miss()) << log;
}

// What the server keeps outlives an edit of a source: the share goes on,
// the source walked from its new signature. After it, a header that now
// includes another file is evaluated again, and the closure holds the new
// file.
TEST_P(ServerEvaluation, HeaderEvaluationsOutliveAnEditOfASource) {
  write_project();
  settle();
  std::string log = compile("a.cpp");
  EXPECT_TRUE(says(log, kByServer)) << log;
  const long shares = status_number("walk_shares");
  // (A directive the evaluation reads: an unread define alone would have
  // the launcher take the closure again, the server asked nothing.)
  dir_.write("a.cpp",
             "#define USE_X 1\n#define MORE 1\n#if MORE\n#endif\n#include \"sel.h\"\n"
             "int a() { return V; }\n");
  settle();
  log = compile("a.cpp");
  EXPECT_TRUE(says(log, kByServer)) << log;
  EXPECT_EQ(status_number("walk_shares"), shares);
  EXPECT_EQ(status_number("stale_shares"), 0);
  // x.h now reads w.h, and then w.h changes: both are a.cpp's.
  dir_.write("inc/w.h", "#define W 50\n");
  dir_.write("inc/x.h", "#include <w.h>\n#define V W\n");
  dir_.write("a.cpp",
             "#define USE_X 1\n#define MORE 2\n#if MORE\n#endif\n#include \"sel.h\"\n"
             "int a() { return V; }\n");
  settle();
  log = compile("a.cpp");
  EXPECT_TRUE(last_was_miss()) << log;
  dir_.write("inc/w.h", "#define W 51\n");
  log = compile("a.cpp");
  EXPECT_TRUE(last_was_miss()) << log;
}

// A header evaluation is kept past a new share only when its files had
// settled before they were read: n.h, stamped an hour ahead, never has, so
// of the three evaluations the second share made (sel.h, x.h, n.h) the
// third takes two. (A trust drop makes each share anew.)
TEST_P(ServerEvaluation, AHeaderNotSettledWhenReadIsNotCarried) {
  write_project();
  settle();
  compile("a.cpp");
  dir_.write("inc/n.h", "#define N 1\n");
  const struct timespec ahead[2] = {{::time(nullptr) + 3600, 0}, {::time(nullptr) + 3600, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (dir_.path() + "/inc/n.h").c_str(), ahead, 0), 0);
  dir_.write("a.cpp",
             "#define USE_X 1\n#include \"sel.h\"\n#include <n.h>\nint a() { return V; }\n");
  ASSERT_EQ(lexpack("server --drop-trust", kServerEnv).exit_code, 0);
  std::string log = compile("a.cpp");
  EXPECT_TRUE(says(log, kByServer)) << log;
  const long first = status_number("traces_carried");
  EXPECT_EQ(first, 2);
  dir_.write(
      "a.cpp",
      "#define USE_X 1\n#define MORE 1\n#if MORE\n#endif\n#include \"sel.h\"\n#include <n.h>\n"
      "int a() { return V + N; }\n");
  ASSERT_EQ(lexpack("server --drop-trust", kServerEnv).exit_code, 0);
  log = compile("a.cpp");
  EXPECT_TRUE(says(log, kByServer)) << log;
  EXPECT_EQ(status_number("traces_carried") - first, 2);
}

// A file that appears where an earlier evaluation found none (x.h, searched
// in inc2 before inc): whatever the server kept of that search, the next TU
// that searches there finds it.
TEST_P(ServerEvaluation, NewHeaderOnTheSearchPathIsSeen) {
  write_project();
  dir_.write("inc2/keep.txt", "");
  dir_.write("c.cpp", "#define USE_X 1\n#include \"sel.h\"\nint c() { return V; }\n");
  settle();
  std::string log = compile("a.cpp", "-Iinc2 -Iinc");
  EXPECT_TRUE(says(log, kByServer)) << log;
  dir_.write("inc2/x.h", "#define V 40\n");
  settle();
  compile("c.cpp", "-Iinc2 -Iinc");
  log = compile("a.cpp", "-Iinc2 -Iinc");
  EXPECT_TRUE(last_was_miss()) << log;
}

// A source edited (its directives, reading the macro it defines): the
// server declines its compile as its memo's first dependency changed,
// before it watches what the memo names; with the source recorded by
// content (too young for its signature) as with one by signature.
TEST_P(ServerEvaluation, AnEditedSourceIsDeclinedByItsFirstDependency) {
  write_project();
  compile("a.cpp");  // a.cpp younger than a second: recorded by content
  dir_.write("a.cpp",
             "#define USE_X 1\n#define MORE 1\n#if MORE\n#endif\n#include \"sel.h\"\n"
             "int a() { return V; }\n");
  compile("a.cpp");
  EXPECT_TRUE(says(dir_.read("log.txt"), "server declined: closure memo out of date"))
      << dir_.read("log.txt");
  EXPECT_EQ(status_number("declined_by_first"), 1);
  settle();
  compile("a.cpp");
  dir_.write("a.cpp",
             "#define USE_X 1\n#define MORE 2\n#if MORE\n#endif\n#include \"sel.h\"\n"
             "int a() { return V; }\n");
  settle();
  compile("a.cpp");
  EXPECT_EQ(status_number("declined_by_first"), 2);
}

// An edit of the source that defines a macro no evaluation read: the
// closure the server evaluated is taken again by the launcher (the snapshot
// the server wrote holds the source's inert fingerprint and the names its
// evaluation read), and the server evaluates nothing. One that defines a
// name the evaluation read (USE_X) is evaluated by the server again.
TEST_P(ServerEvaluation, ADefineNoEvaluationReadIsNotEvaluatedAgain) {
  write_project();
  settle();
  std::string log = compile("a.cpp");
  EXPECT_TRUE(says(log, kByServer)) << log;
  const long evaluated = status_number("closures_evaluated");
  dir_.write("a.cpp",
             "#define UNREAD_K 4\n#define USE_X 1\n#include \"sel.h\"\n"
             "int a() { return V + UNREAD_K; }\n");
  log = compile("a.cpp");
  EXPECT_TRUE(says(log, "changed only in macros its evaluation never read")) << log;
  EXPECT_EQ(status_number("closures_evaluated"), evaluated);
  dir_.write("a.cpp",
             "#define UNREAD_K 4\n#define USE_X 0\n#include \"sel.h\"\n"
             "int a() { return V + UNREAD_K; }\n");
  log = compile("a.cpp");
  EXPECT_TRUE(says(log, kByServer)) << log;
  EXPECT_EQ(status_number("closures_evaluated"), evaluated + 1);
  settle();
  // y.h is in its closure now.
  dir_.write("inc/y.h", "#define V 22\n");
  log = compile("a.cpp");
  EXPECT_TRUE(last_was_miss()) << log;
}

// A header of a closure the server trusts (so watches) changes: the share
// is made anew, and the closure holds the header's new state.
TEST_P(ServerEvaluation, AWatchedHeaderChangedMakesANewShare) {
  write_project();
  settle();
  compile("a.cpp");
  settle();
  compile("a.cpp");
  ASSERT_EQ(last_decision(), "hit (server)") << dir_.read("log.txt");
  const long shares = status_number("walk_shares");
  dir_.write("inc/x.h", "#include <w.h>\n#define V W\n");
  dir_.write("inc/w.h", "#define W 12\n");
  settle();
  compile("a.cpp");  // evaluated again in the server's answer to the compile
  EXPECT_TRUE(last_was_miss()) << dir_.read("log.txt");
  EXPECT_EQ(status_number("walk_shares"), shares + 1);
  EXPECT_EQ(status_number("stale_shares"), 0);  // made anew for the change, not found stale
}

// A change no watch hears (o/z.h: no closure the server trusts names it)
// leaves what the server kept of that file stale. c.cpp is edited too, so
// its compile starts at once and the server checks only the directories of
// the memo it gives (the launcher checks each file after the compile): the
// launcher finds z.h not as the server read it and asks again, the server
// walks anew, and the result is stored under the key of z.h's new state
// (the next compile hits, with the compiler's object).
TEST_P(ServerEvaluation, AChangeNoWatchHeardIsCaughtAfterAnEarlyCompile) {
  compile_c_then_change_z();
  dir_.write("o/c.cpp", "#define MORE 1\n#include \"z.h\"\nint c() { return Z; }\n");
  settle();
  std::string log = compile("o/c.cpp");
  EXPECT_TRUE(says(log, "compiling at once")) << log;
  EXPECT_TRUE(says(log, "closure file changed since the server read it")) << log;
  EXPECT_TRUE(says(log, "stored ")) << log;
  EXPECT_EQ(status_number("closures_changed"), 1);
  log = compile("o/c.cpp");
  EXPECT_TRUE(last_was_hit()) << log;
}

// The same with the header alone changed between two builds: all the
// server hears of is the build's own writes in the working directory (one
// of the directories on the way to o/z.h), so it checks what it answers,
// finds the closure it evaluated again for the compile's request stale,
// and evaluates it in a new share.
TEST_P(ServerEvaluation, AHeaderChangedUnheardBetweenBuildsIsCaught) {
  compile_c_then_change_z();
  settle();
  const std::string log = compile("o/c.cpp");
  EXPECT_TRUE(last_was_miss()) << log;
  EXPECT_EQ(status_number("stale_shares"), 1);
}

// The pause rule alone: o/z.h changes unheard (no closure the server
// trusts names it, so nothing is watched) while nothing else changes, and
// o/d.cpp, compiled before, includes it (its source unchanged, so its
// compile waits for the key). The server, unused for over a second, checks
// its answer before giving it: the one it kept of z.h does not hold, so the
// share is made anew and d.cpp stored under the key of z.h's new state.
TEST_P(ServerEvaluation, AfterAPauseTheServerChecksWhatItKept) {
  write_project();
  dir_.write("o/z.h", "#define Z 1\n");
  dir_.write("o/c.cpp", "#include \"z.h\"\nint c() { return Z; }\n");
  dir_.write("o/d.cpp", "#include \"z.h\"\nint d() { return Z + 1; }\n");
  settle();
  EXPECT_TRUE(says(compile("o/c.cpp"), kByServer));
  EXPECT_TRUE(says(compile("o/d.cpp"), kByServer));
  EXPECT_EQ(status_number("watches"), 0) << "the test needs a server that watches nothing";
  dir_.write("o/z.h", "#include <y.h>\n#define Z V\n");
  settle();
  const std::string log = compile("o/d.cpp");
  EXPECT_FALSE(says(log, "compiling at once")) << log;
  EXPECT_TRUE(says(log, kByServer)) << log;
  EXPECT_EQ(status_number("stale_shares"), 1);
  EXPECT_TRUE(says(log, "stored ")) << log;
}

// The same for a TU never compiled before (o/d.cpp): its compile starts at
// once, the server checks only the memo's directories, and the launcher,
// finding z.h not as the server read it after the compile, asks again; the
// result is stored under the key of z.h's new state.
TEST_P(ServerEvaluation, AfterAPauseAnEarlyCompileChecksWhatTheServerKept) {
  std::string log = compile_then_change_unheard(
      "o/z.h", "#define Z 1\n", "#include <y.h>\n#define Z V\n",
      "#include \"z.h\"\nint c() { return Z; }\n", "#include \"z.h\"\nint d() { return Z + 1; }\n");
  EXPECT_TRUE(says(log, "compiling at once")) << log;
  EXPECT_TRUE(says(log, "asked again")) << log;
  EXPECT_EQ(status_number("closures_changed"), 1);
  EXPECT_TRUE(says(log, "stored ")) << log;
  ::unlink((dir_.path() + "/out.o").c_str());
  log = compile("o/d.cpp");
  EXPECT_TRUE(last_was_hit()) << log;
}

// A file the server saw only as a search answer (q.h, found by a
// __has_include of o/c.cpp, never read) changes unheard; a TU never
// compiled before (o/d.cpp) then includes it. Read by the signature the share kept,
// it "changed while it was read": the server makes its share anew and
// evaluates the closure again, instead of leaving it to the launcher.
TEST_P(ServerEvaluation, AFileChangedSinceTheShareSawItIsEvaluatedAgain) {
  const std::string log = compile_then_change_unheard(
      "o/q.h", "#define Q 1\n", "#define Q 22\n#define MORE 1\n",
      "#if __has_include(\"q.h\")\n#define HAS_Q 1\n#endif\nint c() { return 0; }\n",
      "#include \"q.h\"\nint d() { return Q; }\n");
  EXPECT_TRUE(says(log, kByServer)) << log;
  EXPECT_FALSE(says(log, "changed while it was read")) << log;
  EXPECT_EQ(status_number("stale_shares"), 1);
}

// A comment edited in a header (and compiled at once, the header still too
// young for a memo by signature): the server evaluates the closure again in
// the hit request itself and answers with the entry of the compile before
// the edit (its token key). A token edit right after is a miss, and the
// object the compiler's.
TEST_P(ServerEvaluation, ACommentEditInAHeaderIsAnsweredByTheServer) {
  write_project();
  settle();
  compile("a.cpp");
  compile("b.cpp");
  settle();
  compile("a.cpp");
  ASSERT_EQ(last_decision(), "hit (server)") << dir_.read("log.txt");
  dir_.write("inc/x.h", "#define V 10 /* ten */\n// more words\n");
  std::string log = compile("a.cpp");
  EXPECT_EQ(last_decision(), "hit (server)") << log;
  // b.cpp does not include x.h: still its own entry.
  compile("b.cpp");
  EXPECT_TRUE(last_was_hit()) << dir_.read("log.txt");
  dir_.write("inc/x.h", "#define V 11 /* ten */\n// more words\n");
  log = compile("a.cpp");
  EXPECT_TRUE(last_was_miss()) << log;
}

// gcc takes p.h.gch in place of the source's first include: one made after
// the server's share found none there, from other text, is in the next
// closure the server evaluates (the object is the .gch's), and once it is
// gone again, the object is p.h's (each compared with a plain compile's).
TEST_P(ServerEvaluation, APrecompiledHeaderMadeAfterTheShareAskedIsSeen) {
  dir_.write("p.h", "inline int f() { return 1; }\n");
  dir_.write("other/p.h", "inline int f() { return 2; }\n");
  dir_.write("m.cpp", "#include \"p.h\"\nint g() { return f(); }\n");
  settle();
  std::string log = compile("m.cpp");
  EXPECT_TRUE(says(log, kByServer)) << log;
  ASSERT_EQ(sh("g++ -Iinc -x c++-header other/p.h -o p.h.gch").exit_code, 0);
  dir_.write("m.cpp", "#include \"p.h\"\n#include <stddef.h>\nint g() { return f(); }\n");
  settle();
  log = compile("m.cpp");
  EXPECT_TRUE(says(log, kByServer)) << log;
  if (std::string(GetParam().cxx) == "g++") {  // clang++ takes no .gch for an #include
    EXPECT_EQ(sh("objdump -d ref.o | grep -c 'mov *\\$0x2,'").out, "1\n");
  }
  ASSERT_EQ(sh("rm p.h.gch").exit_code, 0);
  settle();
  compile("m.cpp");
}

INSTANTIATE_TEST_SUITE_P(Ways, ServerEvaluation, kAllWays, WayName);

}  // namespace
}  // namespace lexpack::testing
