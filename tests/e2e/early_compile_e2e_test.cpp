// End to end, g++ and clang++: a compile whose answer is known to be a miss
// (never compiled with its arguments, or its source's directives changed)
// starts the compiler before its key. Its result is stored only when nothing
// the key rests on changed after the compiler started; an edit undone stops
// the compiler and takes the entry; an interrupted launcher takes the
// compiler with it. Each object is compared with a plain compile's.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <string>

#include "tests/support/launcher_fixture.h"
#include "tests/support/server_ways.h"

namespace lexpack::testing {
namespace {

constexpr char kEarly[] = "compiling at once";

class EarlyCompile : public LauncherTest, public ::testing::WithParamInterface<const char*> {
 protected:
  // Signatures younger than a second leave no memo: wait them out.
  static void settle() { ::usleep(1100 * 1000); }
  std::string args() const { return std::string(GetParam()) + " -O1 -Iinc -c m.cpp"; }
  // Compiles through lexpack (server off, `env` added) and plainly after
  // it, with the files as they are then; the objects must be equal. The
  // decision log of this compile alone is returned.
  std::string compile(const std::string& env = "") {
    dir_.write("log.txt", "");
    base::ProcessResult r = lexpack(args() + " -o out.o", "LEXPACK_SERVER=0 " + env);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(sh(args() + " -o ref.o").exit_code, 0);
    EXPECT_TRUE(dir_.read("out.o") == dir_.read("ref.o")) << "a stale object: " << last_decision();
    return dir_.read("log.txt");
  }
  static bool says(const std::string& log, const char* what) {
    return log.find(what) != std::string::npos;
  }
  // The compile's result was refused by a check, or the scan failed and the
  // compile that ran from the start was a passthrough.
  static bool not_stored(const std::string& log) {
    return says(log, "not stored: ") || says(log, "(the compiler ran from the start)");
  }
  // A compiler of the same name in wrap/ (first on PATH with wrapped()):
  // the compiler's questions (no -c) go to the real one ("$REAL"), a
  // compile runs the script `compile`. False when the compiler is not here.
  bool write_wrapper(const std::string& compile) {
    const std::string real = base::find_program(GetParam());
    const std::string name = "wrap/" + std::string(GetParam());
    if (real.empty()) return false;
    dir_.write(name, "#!/bin/sh\nREAL=" + shell_quote(real) +
                         "\ncase \" $* \" in *\" -c \"*) ;; *) exec \"$REAL\" \"$@\";; esac\n" +
                         compile);
    return ::chmod(dir_.at(name).c_str(), 0755) == 0;
  }
  // The wrapper's compile: the real one, with `action` just before or just
  // after it.
  static std::string real_with(const std::string& when, const std::string& action) {
    return (when == "before" ? action : "") + "\"$REAL\" \"$@\" || exit $?\n" +
           (when == "after" ? action : "") + "exit 0\n";
  }
  // Three versions of the source's directives, each settled and compiled
  // (`env` added); returns the first.
  std::string compile_three_versions(const std::string& env = "") {
    dir_.write("inc/a.h", "#define V 1\n");
    dir_.write("inc/b.h", "#define W 4\n");
    dir_.write("inc/c.h", "#define X 5\n");
    const std::string first = "#include \"a.h\"\nint v() { return V; }\n";
    for (const std::string& version :
         {first, std::string("#include \"a.h\"\n#include \"b.h\"\nint v() { return V + W; }\n"),
          std::string("#include \"a.h\"\n#include \"c.h\"\nint v() { return V + X; }\n")}) {
      dir_.write("m.cpp", version);
      settle();
      compile(env);
    }
    return first;
  }
  std::string wrapped() const { return "PATH=" + shell_quote(dir_.at("wrap")) + ":$PATH"; }
  // A compile through the wrapper with the script's action on (`env`, as
  // "SWAP=1"), without the server: it started at once and its result was
  // not stored. Its decision log in *log.
  void compile_disturbed(const std::string& env, std::string* log) {
    dir_.write("log.txt", "");
    base::ProcessResult r =
        lexpack(args() + " -o out.o", "LEXPACK_SERVER=0 " + env + " " + wrapped());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    *log = dir_.read("log.txt");
    EXPECT_TRUE(says(*log, kEarly)) << *log;
    EXPECT_TRUE(not_stored(*log)) << *log;
    EXPECT_FALSE(says(*log, ": stored ")) << *log;
  }
  // A server for this cache directory, answering.
  bool start_server() {
    if (lexpack("server --start", kServerEnv).exit_code != 0) return false;
    for (int i = 0; i < 100; ++i) {
      if (lexpack("server --status", kServerEnv).exit_code == 0) return true;
      ::usleep(50 * 1000);
    }
    return false;
  }
  // The body of HeaderChangedWhileTheCompilerRunsIsNeverStored, with the
  // server off or on (`server`: the variables that say which).
  void header_changed_while_compiling(const std::string& server);
};

TEST_P(EarlyCompile, FirstCompileAndNewIncludeStartTheCompilerAtOnce) {
  dir_.write("inc/a.h", "#define V 1\n");
  dir_.write("inc/b.h", "#define W 4\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return V; }\n");
  settle();
  std::string log = compile();
  EXPECT_TRUE(says(log, "compiling at once (never compiled with these arguments)")) << log;
  EXPECT_TRUE(says(log, "stored ")) << log;
  log = compile();
  EXPECT_TRUE(last_was_hit()) << log;

  dir_.write("m.cpp", "#include \"a.h\"\n#include \"b.h\"\nint v() { return V + W; }\n");
  settle();
  log = compile();
  EXPECT_TRUE(says(log, "compiling at once (the source's directives changed)")) << log;
  EXPECT_TRUE(last_was_miss()) << log;
  EXPECT_TRUE(says(log, "stored ")) << log;
  log = compile();
  EXPECT_TRUE(last_was_hit()) << log;
  // b.h is in the key made beside the compile.
  dir_.write("inc/b.h", "#define W 9\n");
  settle();
  log = compile();
  EXPECT_TRUE(last_was_miss()) << log;
  EXPECT_FALSE(says(log, kEarly)) << "a header's change is not known to be a miss: " << log;
}

// Three versions of the source's directives, then the first again: neither
// the memo nor the one before it holds, so the compile starts at once, and
// its key has the first version's entry: the compiler is stopped and the
// entry served (the object a plain compile's, checked by compile()).
TEST_P(EarlyCompile, AnEditUndoneStopsTheCompilerAndHits) {
  const std::string first = compile_three_versions();
  dir_.write("m.cpp", first);
  settle();
  compile();
  const std::string log = dir_.read("log.txt");
  EXPECT_TRUE(says(log, "compiling at once (the source's directives changed)")) << log;
  EXPECT_TRUE(says(log, "compile started at once stopped: an entry may serve it")) << log;
  EXPECT_TRUE(last_was_hit()) << log;
}

// The same with the closure evaluated by the server: its memo, taken
// unchecked beside the compile, is checked before the entry answers.
TEST_P(EarlyCompile, AnEditUndoneStopsTheCompilerAndHitsWithTheServer) {
  ASSERT_TRUE(start_server());
  const std::string first = compile_three_versions(kServerEnv);
  dir_.write("m.cpp", first);
  settle();
  compile(kServerEnv);
  const std::string log = dir_.read("log.txt");
  EXPECT_TRUE(says(log, "closure evaluated by the server")) << log;
  EXPECT_TRUE(says(log, "compile started at once stopped: an entry may serve it")) << log;
  EXPECT_TRUE(last_was_hit()) << log;
  lexpack("server --stop", kServerEnv);
}

// The same, with a compiler whose driver waits for a child that does not end
// on its own (as gcc's waits for cc1plus): stopping it stops the child too.
TEST_P(EarlyCompile, AStoppedCompilerLeavesNoProcessBehind) {
  if (!write_wrapper("if [ -n \"$SLOW\" ]; then sleep 600 & echo $! > child.pid; wait; fi\n"
                     "exec \"$REAL\" \"$@\"\n")) {
    GTEST_SKIP() << GetParam() << " is not installed";
  }
  const std::string path = wrapped();
  const std::string first = compile_three_versions(path);
  dir_.write("m.cpp", first);
  settle();
  dir_.write("log.txt", "");
  base::ProcessResult r = lexpack(args() + " -o out.o", "LEXPACK_SERVER=0 SLOW=1 " + path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string log = dir_.read("log.txt");
  EXPECT_TRUE(says(log, "compile started at once stopped: an entry may serve it")) << log;
  EXPECT_TRUE(last_was_hit()) << log;
  // Stopped before the wrapper started its child, there is none to outlive it.
  if (!dir_.exists("child.pid")) return;
  base::ProcessResult child =
      sh("for i in $(seq 100); do kill -0 $(cat child.pid) 2>/dev/null || "
         "break; sleep 0.05; done; if kill -0 $(cat child.pid) 2>/dev/null; "
         "then kill $(cat child.pid); echo alive; else echo stopped; fi");
  EXPECT_EQ(child.out, "stopped\n") << "the compiler's child outlived its stop";
}

TEST_P(EarlyCompile, SwitchedOffItComputesTheKeyFirst) {
  dir_.write("inc/a.h", "#define V 1\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return V; }\n");
  settle();
  std::string log = compile("LEXPACK_COMPILE_EARLY=0");
  EXPECT_FALSE(says(log, kEarly)) << log;
  EXPECT_TRUE(says(log, "stored ")) << log;
}

// A header rewritten while the compiler runs, before or after the compiler
// read it: whatever the key made beside it saw, the result is not stored,
// and the next compile (the header settled) makes the new header's object.
TEST_P(EarlyCompile, HeaderChangedWhileTheCompilerRunsIsNeverStored) {
  header_changed_while_compiling("LEXPACK_SERVER=0");
}

// The same with the closure evaluated by the server, whose memo the launcher
// takes unchecked beside the compile: the checks after the compile are what
// refuse the result.
TEST_P(EarlyCompile, HeaderChangedWhileTheCompilerRunsIsNeverStoredWithTheServer) {
  ASSERT_TRUE(start_server());
  header_changed_while_compiling(kServerEnv);
  lexpack("server --stop", kServerEnv);
}

void EarlyCompile::header_changed_while_compiling(const std::string& server) {
  const bool with_server = server != "LEXPACK_SERVER=0";
  // With the server, "after" is tried up to three times: a loaded machine
  // may have the launcher evaluate the closure itself.
  std::vector<std::string> cases = {"before", "after"};
  if (with_server) cases = {"before", "after", "after", "after"};
  bool after_done = false;
  std::string after_log;
  int n = 0;
  for (const std::string& when : cases) {
    if (when == "after" && after_done) break;
    SCOPED_TRACE(when);
    // A header of its own each time (the one before was rewritten moments
    // before its compile's end, and what the server heard of it may lag).
    const std::string header = "a" + std::to_string(++n) + ".h";
    dir_.write("inc/" + header, "#define V 1\n");
    // Another directive each time: the closure kept with the memo is not
    // taken. Standard headers before the header: the key made beside the
    // compile likely reads it after the rewrite "before" the compiler runs.
    dir_.write("m.cpp", "#define WHEN_" + when +
                            "\n#include <map>\n#include <string>\n#include <vector>\n"
                            "#include \"" +
                            header + "\"\nint v() { return V; }\n");
    // The compiler (for a compile, not a question) rewrites the header just
    // before or just after the real one runs.
    const std::string rewrite =
        "[ -n \"$REWRITE\" ] && printf '#define V 2\\n' > inc/" + header + "\n";
    if (!write_wrapper(real_with(when, rewrite))) GTEST_SKIP() << GetParam() << " is not installed";
    settle();
    dir_.write("log.txt", "");
    base::ProcessResult r = lexpack(args() + " -o out.o", server + " REWRITE=1 " + wrapped());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::string log = dir_.read("log.txt");
    EXPECT_TRUE(says(log, kEarly)) << log;
    // "after" with the server: the header changed after the server read it.
    if (when == "after") {
      after_done = !with_server || says(log, "closure evaluated by the server");
      after_log = log;
    }
    // Whichever check sees it: the scan reading a.h as it changes (the
    // compile is then a passthrough), a.h's signature differing from the
    // key's, or the key reading it after the compiler started.
    EXPECT_TRUE(not_stored(log) && says(log, ("inc/" + header + " changed").c_str())) << log;
    EXPECT_FALSE(says(log, ": stored ")) << log;
    settle();
    log = compile();
    EXPECT_TRUE(last_was_miss()) << log;
  }
  EXPECT_TRUE(after_done) << "the server evaluated none of the closures; the last:\n" << after_log;
}

// Ninja stops an interrupted build's commands by signalling each one's
// process group: the compiler started at once is in the launcher's.
TEST_P(EarlyCompile, AnInterruptedBuildStopsTheCompilerWithTheLauncher) {
  dir_.write("inc/a.h", "#define V 1\n");
  dir_.write("m.cpp", "#include \"a.h\"\nint v() { return V; }\n");
  // A compile that never ends on its own, and says which process it is.
  if (!write_wrapper("echo $$ > compiler.pid\nexec sleep 600\n")) {
    GTEST_SKIP() << GetParam() << " is not installed";
  }
  settle();
  // The launcher leads a process group of its own, as ninja runs a command.
  base::ProcessResult run =
      sh(wrapped() + " LEXPACK_SERVER=0 setsid " + LEXPACK_BIN + " " + args() +
         " -o out.o >/dev/null 2>&1 & echo $! > launcher.pid; "
         "for i in $(seq 200); do [ -s compiler.pid ] && break; sleep 0.05; done; "
         "[ -s compiler.pid ] && kill -TERM -$(cat launcher.pid); "
         "for i in $(seq 100); do kill -0 $(cat compiler.pid) 2>/dev/null || break; "
         "sleep 0.05; done; "
         "if kill -0 $(cat compiler.pid) 2>/dev/null; then kill $(cat compiler.pid); echo alive; "
         "else echo stopped; fi");
  ASSERT_TRUE(dir_.exists("compiler.pid")) << dir_.read("log.txt");
  EXPECT_TRUE(says(dir_.read("log.txt"), kEarly)) << dir_.read("log.txt");
  EXPECT_EQ(run.out, "stopped\n") << "the compiler outlived its launcher's group";
}

// The include directory is a symlink, swapped to another directory just
// before or just after the real compiler runs: whatever the key made beside
// it saw, the result is not stored, and the next compile makes the object
// of the directory the link names then.
TEST_P(EarlyCompile, IncludeDirectorySwappedWhileTheCompilerRunsIsNeverStored) {
  for (const char* when : {"before", "after"}) {
    SCOPED_TRACE(when);
    dir_.write("v1/a.h", "#define V 1\n");
    dir_.write("v2/a.h", "#define V 2\n");
    ASSERT_EQ(sh("rm -f inc && ln -s v1 inc").exit_code, 0);
    dir_.write("m.cpp", std::string("#define WHEN_") + when +
                            "\n#include <map>\n#include \"a.h\"\nint v() { return V; }\n");
    const std::string swap = "[ -n \"$SWAP\" ] && ln -sfn v2 inc\n";
    if (!write_wrapper(real_with(when, swap))) GTEST_SKIP() << GetParam() << " is not installed";
    settle();
    std::string log;
    ASSERT_NO_FATAL_FAILURE(compile_disturbed("SWAP=1", &log));
    settle();
    log = compile();
    EXPECT_TRUE(last_was_miss()) << log;
  }
}

// A candidate the key found missing, in a directory that holds no file of
// the closure, made after the key was made and before the compiler looked:
// the directories of the missing candidates are checked after the compile
// too, so the result is not stored; once the candidate is gone again, the
// compile is the missing candidate's. Also two levels below the first
// missing directory (whose own directories the check does not stat).
TEST_P(EarlyCompile, AMissingCandidateMadeWhileTheCompilerRunsIsNeverStored) {
  for (const std::string dir : {"sub", "sub/deeper"}) {
    SCOPED_TRACE(dir);
    dir_.write("m.cpp", "#if __has_include(\"" + dir +
                            "/opt.h\")\n#define V 2\n#else\n#define V 1\n#endif\n"
                            "int v() { return V; }\n");
    // The key is made in the half second before the compiler starts.
    const std::string make = "[ -n \"$MAKE\" ] && sleep 0.5 && mkdir -p inc/" + dir +
                             " && printf '' > inc/" + dir + "/opt.h\n";
    if (!write_wrapper(real_with("before", make))) {
      GTEST_SKIP() << GetParam() << " is not installed";
    }
    ASSERT_EQ(sh("mkdir -p inc").exit_code, 0);
    settle();
    std::string log;
    ASSERT_NO_FATAL_FAILURE(compile_disturbed("MAKE=1", &log));
    ASSERT_EQ(sh("rm -r inc/sub").exit_code, 0);
    settle();
    log = compile();
    EXPECT_TRUE(last_was_miss()) << log;
  }
}

INSTANTIATE_TEST_SUITE_P(Compilers, EarlyCompile, ::testing::Values("g++", "clang++-14"),
                         [](const ::testing::TestParamInfo<const char*>& p) {
                           return std::string(p.param) == "g++" ? "gcc" : "clang";
                         });

}  // namespace
}  // namespace lexpack::testing
