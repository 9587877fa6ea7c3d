// End-to-end tests of served reads (LEXPACK_SERVE_READS=1): real g++ and
// clang++ compiling through `lexpack` with the plugin answering their header
// reads from the packs, compared with plain compiles; strace shows the header
// opens gone; the plugin without a manifest, or with a bad one, changes nothing.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "base/process.h"
#include "served_reads/read_manifest.h"
#include "tests/support/test_dir.h"

namespace lexpack::testing {
namespace {

bool have(const std::string& program) {
  return !base::find_program(program).empty();
}

// Three TUs over system headers, two -I directories where inc1/config.h
// shadows inc2/config.h, #pragma once and include guards included twice, a
// header over 16 KiB (clang maps those) and __has_include answers both ways.
void write_project(const TestDir& dir) {
  dir.write("inc1/config.h", "#pragma once\n#define CONFIG_VALUE 1\n");
  dir.write("inc2/config.h", "#pragma once\n#define CONFIG_VALUE 2\n");
  dir.write("inc2/only2.h",
            "#ifndef ONLY2_H\n#define ONLY2_H\ninline int only2() { return 7; }\n#endif\n");
  dir.write("inc1/once.h", "#pragma once\nstruct Once { int v = 3; };\n");
  std::string big = "#ifndef BIG_H\n#define BIG_H\n";
  for (int i = 0; i < 800; ++i) {
    big += "inline int big_function_number_" + std::to_string(i) + "(int x) { return x * " +
           std::to_string(i) + " + 1; }\n";
  }
  big += "#endif\n";
  dir.write("inc1/big.h", big);
  dir.write("a.cpp",
            "#include <vector>\n#include <string>\n#include \"config.h\"\n#include \"once.h\"\n"
            "#include \"once.h\"\n#include \"only2.h\"\n#include \"only2.h\"\n"
            "int a() { std::vector<std::string> v{\"x\"}; Once o; return int(v.size()) + "
            "CONFIG_VALUE + o.v + only2(); }\n");
  dir.write("b.cpp",
            "#include <map>\n#include \"big.h\"\n"
            "#if __has_include(<surely_not_a_header_anywhere.h>)\n#error wrong\n#endif\n"
            "#if __has_include(\"only2.h\")\nint b_has = 1;\n#endif\n"
            "int b() { std::map<int, int> m; m[1] = big_function_number_799(2); return m[1]; }\n");
  dir.write("c.c",
            "#include <stdio.h>\n#include \"config.h\"\nint c(void) { return CONFIG_VALUE; }\n");
}

struct Tu {
  std::string source;
  std::string object;
  bool is_c;
};
const std::vector<Tu> kTus = {
    {"a.cpp", "a.o", false}, {"b.cpp", "b.o", false}, {"c.c", "c.o", true}};

class ServeReadsTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    cxx_ = GetParam();
    cc_ = cxx_ == "g++" ? "gcc" : "clang";
    if (!have(cxx_) || !have(cc_)) GTEST_SKIP() << cxx_ << " is not installed";
    write_project(dir_);
  }

  // Runs `command` in the project directory with the cache and the plugin set.
  base::ProcessResult sh(const std::string& command, bool serve) {
    std::string env = "LEXPACK_DIR=" + shell_quote(dir_.at("cache")) +
                      " LEXPACK_LOGFILE=" + shell_quote(dir_.at("log.txt")) +
                      " LEXPACK_PLUGIN=" + shell_quote(LEXPACK_PLUGIN_SO) +
                      " LEXPACK_SERVE_READS=" + (serve ? "1" : "0");
    return base::run_captured(
        {"/bin/sh", "-c",
         "cd " + shell_quote(dir_.path()) + " || exit 99; export " + env + "; " + command},
        true);
  }

  std::string compile_command(const Tu& tu, const std::string& extra = "") {
    return std::string(tu.is_c ? cc_ : cxx_) + " -O1 -Iinc1 -Iinc2 " + extra + " -MD -MF " +
           tu.object + ".d -c " + tu.source + " -o " + tu.object;
  }

  std::string log() { return dir_.exists("log.txt") ? dir_.read("log.txt") : ""; }

  std::string cxx_, cc_;
  TestDir dir_;
};

// The resolver fails a candidate that is a directory ("../src/memory" for
// <memory>, "../qt/sub" for <sub>), yet the compiler may look inside it: such
// a probe must not be answered "does not exist". The served compile must
// succeed by itself, not through the launcher's plain retry.
TEST_P(ServeReadsTest, DirectoryNamedLikeAHeaderStaysVisible) {
  dir_.write("src/memory/pool.h", "#pragma once\ninline int pool() { return 5; }\n");
  dir_.write("qt/sub/sub", "#pragma once\ninline int sub() { return 6; }\n");
  dir_.write("build/m.cpp",
             "#include <memory>\n#include \"memory/pool.h\"\n#include <sub>\n"
             "int m() { return pool() + sub(); }\n");
  std::string compile = cxx_ + " -I../src -I../qt -I../qt/sub -c m.cpp -o m.o";
  base::ProcessResult plain = sh("cd build && " + compile, false);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  std::string object = dir_.read("build/m.o");
  dir_.remove("build/m.o");
  base::ProcessResult served = sh("cd build && " + std::string(LEXPACK_BIN) + " " + compile, true);
  ASSERT_EQ(served.exit_code, 0) << served.err << log();
  EXPECT_TRUE(dir_.read("build/m.o") == object);
  std::string l = log();
  EXPECT_NE(l.find("serving reads: "), std::string::npos) << l;
  EXPECT_EQ(l.find("running it again without"), std::string::npos) << l;
}

// Serving must never be why a compile fails: when the served compile fails,
// the compiler runs again reading the filesystem and that run is the answer.
TEST_P(ServeReadsTest, FailedServedCompileRunsAgainPlain) {
  std::string real = base::find_program(cxx_);
  ASSERT_FALSE(real.empty());
  dir_.write("wrap/" + cxx_, "#!/bin/sh\nif [ -n \"$" LEXPACK_READ_MANIFEST_ENV
                             "\" ]; then echo served-run-fails >&2; exit 1; fi\nexec " +
                                 real + " \"$@\"\n");
  ASSERT_EQ(::chmod(dir_.at("wrap/" + cxx_).c_str(), 0755), 0);
  const Tu& tu = kTus[0];
  base::ProcessResult plain = sh(compile_command(tu), false);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  std::string object = dir_.read(tu.object);
  dir_.remove(tu.object);
  base::ProcessResult served = sh("PATH=" + shell_quote(dir_.at("wrap")) + ":$PATH " +
                                      std::string(LEXPACK_BIN) + " " + compile_command(tu),
                                  true);
  ASSERT_EQ(served.exit_code, 0) << served.err << log();
  EXPECT_EQ(served.err.find("served-run-fails"), std::string::npos) << served.err;
  EXPECT_TRUE(dir_.read(tu.object) == object);
  EXPECT_NE(log().find("running it again without"), std::string::npos) << log();
}

TEST_P(ServeReadsTest, ObjectsAndDepfilesMatchPlainCompiles) {
  for (const Tu& tu : kTus) {
    base::ProcessResult plain = sh(compile_command(tu), false);
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    std::string object = dir_.read(tu.object), depfile = dir_.read(tu.object + ".d");
    dir_.remove(tu.object);
    dir_.remove(tu.object + ".d");

    base::ProcessResult served = sh(std::string(LEXPACK_BIN) + " " + compile_command(tu), true);
    ASSERT_EQ(served.exit_code, 0) << served.err << log();
    EXPECT_EQ(served.err, plain.err);
    EXPECT_TRUE(dir_.read(tu.object) == object) << tu.source << " object differs when served";
    EXPECT_EQ(dir_.read(tu.object + ".d"), depfile) << tu.source;
  }
  std::string l = log();
  EXPECT_NE(l.find("serving reads: "), std::string::npos) << l;
  EXPECT_EQ(l.find("reads not served"), std::string::npos) << l;
  // The served compiles were stored, and hit now.
  for (const Tu& tu : kTus) {
    dir_.remove(tu.object);
    base::ProcessResult again = sh(std::string(LEXPACK_BIN) + " " + compile_command(tu), true);
    ASSERT_EQ(again.exit_code, 0) << again.err;
  }
  l = log();
  size_t hits = 0;
  for (size_t at = 0; (at = l.find(": hit (", at)) != std::string::npos; ++at) ++hits;
  EXPECT_EQ(hits, kTus.size()) << l;
}

// Counts the header opens an `strace -f` log shows from the compiler's
// processes: every process but the first (the launcher, which may read a
// header written less than a second ago to hash it).
size_t header_opens(const std::string& trace) {
  size_t n = 0;
  size_t start = 0;
  std::string launcher_pid;
  while (start < trace.size()) {
    size_t end = trace.find('\n', start);
    if (end == std::string::npos) end = trace.size();
    std::string line = trace.substr(start, end - start);
    start = end + 1;
    std::string pid = line.substr(0, line.find(' '));
    if (launcher_pid.empty()) launcher_pid = pid;
    if (pid == launcher_pid || line.find("open") == std::string::npos) continue;
    bool header = line.find("inc1/") != std::string::npos ||
                  line.find("inc2/") != std::string::npos ||
                  line.find("/usr/include/") != std::string::npos;
    if (header && line.find(".h\"") != std::string::npos)
      ++n;
    else if (header && line.find("c++/") != std::string::npos)
      ++n;
  }
  return n;
}

TEST_P(ServeReadsTest, StraceShowsHeaderOpensGone) {
  if (!have("strace")) GTEST_SKIP() << "strace is not installed";
  const Tu& tu = kTus[0];
  // Store the closure's files as blobs and the file table first, so that the
  // traced misses below (new -D values) are the compiles alone.
  base::ProcessResult warm =
      sh(std::string(LEXPACK_BIN) + " " + compile_command(tu, "-DWARM"), true);
  ASSERT_EQ(warm.exit_code, 0) << warm.err << log();
  auto traced = [&](const std::string& define, bool serve) {
    base::ProcessResult r = sh("strace -f -qq -e trace=open,openat -o trace.txt " +
                                   std::string(LEXPACK_BIN) + " " + compile_command(tu, define),
                               serve);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return header_opens(dir_.read("trace.txt"));
  };
  size_t plain = traced("-DPLAIN", false);
  size_t served = traced("-DSERVED", true);
  EXPECT_GT(plain, 20u);
  EXPECT_EQ(served, 0u) << dir_.read("trace.txt");
}

// The header changes between the launcher's scan and the compiler's read: a
// wrapper script edits it, then runs the real compiler. Served, the compiler
// reads the bytes of the key; not served, the launcher sees the change and
// stores nothing. Either way no later compile gets a wrong object.
TEST_P(ServeReadsTest, HeaderEditedDuringTheCompileIsNeverStoredUnderTheWrongKey) {
  std::string real = base::find_program(cxx_);
  dir_.write("bin/" + cxx_,
             "#!/bin/sh\n"
             "for a in \"$@\"; do [ \"$a\" = -c ] && [ -f edit-me ] && "
             "printf '#pragma once\\n#define CONFIG_VALUE 5\\n' > inc1/config.h; done\n"
             "exec " +
                 real + " \"$@\"\n");
  ASSERT_EQ(::chmod(dir_.at("bin/" + cxx_).c_str(), 0755), 0);
  const std::string v1 = dir_.read("inc1/config.h");
  const std::string wrapper = dir_.at("bin/" + cxx_);
  auto command = [&](const std::string& tag) {
    return std::string(LEXPACK_BIN) + " " + wrapper + " -O1 -Iinc1 -Iinc2 -D" + tag +
           " -c a.cpp -o a.o";
  };
  auto plain_object = [&](const std::string& tag) {
    base::ProcessResult r = sh(real + " -O1 -Iinc1 -Iinc2 -D" + tag + " -c a.cpp -o want.o", false);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return dir_.read("want.o");
  };
  for (bool serve : {true, false}) {
    std::string tag = serve ? "SERVED" : "PLAIN";
    dir_.write("inc1/config.h", v1);
    std::string want_v1 = plain_object(tag);
    dir_.write("edit-me", "");
    base::ProcessResult edited = sh(command(tag), serve);
    ASSERT_EQ(edited.exit_code, 0) << edited.err << log();
    if (serve) {
      EXPECT_TRUE(dir_.read("a.o") == want_v1) << "served compile did not read the key's bytes";
    }
    dir_.remove("edit-me");
    // Back to the first version: a hit must give the first version's object.
    dir_.write("inc1/config.h", v1);
    base::ProcessResult again = sh(command(tag), serve);
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_TRUE(dir_.read("a.o") == want_v1) << (serve ? "served" : "plain") << "\n" << log();
  }
}

// A manifest that is garbage, or names a pack that is missing or is not the
// file it claims: the plugin steps aside and the compile reads the disk.
TEST_P(ServeReadsTest, BadManifestStepsAside) {
  base::ProcessResult plain = sh(cxx_ + " -O1 -Iinc1 -Iinc2 -c a.cpp -o want.o", false);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const std::string want = dir_.read("want.o");

  served_reads::ReadManifest m;
  m.cwd = dir_.path();
  m.packs.push_back({dir_.at("no-such-pack"), 1, 2});
  m.packs.push_back({dir_.at("inc2/only2.h"), 1, 2});  // exists, wrong identity
  for (uint32_t pack : {0u, 1u}) {
    served_reads::ManifestFile f;
    f.names = {pack == 0 ? "inc1/config.h" : "inc2/only2.h"};
    f.canonical = dir_.at(f.names[0]);
    f.pack = pack;
    f.size = 10;
    ASSERT_EQ(::stat(f.canonical.c_str(), &f.st), 0);
    m.files.push_back(f);
  }
  dir_.write("missing-pack.manifest", served_reads::encode_read_manifest(m));
  dir_.write("garbage.manifest", std::string(4096, 'g'));
  for (const char* manifest : {"missing-pack.manifest", "garbage.manifest"}) {
    base::ProcessResult r =
        sh(std::string("exec 7<") + manifest + "; LD_PRELOAD=" + shell_quote(LEXPACK_PLUGIN_SO) +
               " LEXPACK_READ_MANIFEST=7 " + cxx_ + " -O1 -Iinc1 -Iinc2 -c a.cpp -o a.o",
           false);
    ASSERT_EQ(r.exit_code, 0) << manifest << ": " << r.err;
    EXPECT_TRUE(dir_.read("a.o") == want) << manifest;
  }
}

INSTANTIATE_TEST_SUITE_P(Compilers, ServeReadsTest, ::testing::Values("g++", "clang++"),
                         [](const auto& info) {
                           return std::string(info.param == "g++" ? "gcc" : "clang");
                         });

// The plugin in programs that are not compilers, without a manifest: same
// output and exit status as without it.
TEST(ServeReadsPlugin, UnrelatedProgramsUnchanged) {
  TestDir dir;
  dir.write("Makefile", "all:\n\t@echo made $(words a b c)\n");
  dir.write("build.ninja", "rule echo\n  command = echo ninja-ran > $out\nbuild out.txt: echo\n");
  std::vector<std::string> commands = {
      "sh -c 'echo hi; cat Makefile; ls /usr/include/stdio.h; exit 3'",
      "make -s",
      "python3 -c 'import os,sys; print(os.path.realpath(\"/usr/include/stdio.h\"), "
      "os.stat(\"Makefile\").st_size); sys.exit(4)'",
  };
  if (have("ninja")) commands.push_back("ninja -t targets all && rm -f out.txt && ninja | tail -1");
  for (const std::string& c : commands) {
    std::string cd = "cd " + shell_quote(dir.path()) + " && ";
    base::ProcessResult without = base::run_captured({"/bin/sh", "-c", cd + c}, true);
    base::ProcessResult with = base::run_captured(
        {"/bin/sh", "-c",
         cd + "unset LEXPACK_READ_MANIFEST; LD_PRELOAD=" + shell_quote(LEXPACK_PLUGIN_SO) +
             " ; export LD_PRELOAD; " + c},
        true);
    EXPECT_EQ(with.exit_code, without.exit_code) << c;
    EXPECT_EQ(with.out, without.out) << c;
    EXPECT_EQ(with.err, without.err) << c;
  }
}

}  // namespace
}  // namespace lexpack::testing
