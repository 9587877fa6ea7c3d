// What lexpack reports about itself, end to end: the time saved is the CPU
// time the served compiles cost, not their wall time; explain counts nothing;
// explain matches a command on what changes the object (a command from
// compile_commands.json, without the depfile flags, is the build's compile)
// and names what changed since the last compile.
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>

#include "tests/support/launcher_fixture.h"

namespace lexpack::testing {
namespace {

class ReportTest : public LauncherTest {
 protected:
  // The counters of `lexpack stats --json`.
  std::map<std::string, long long> counters() {
    base::ProcessResult r = lexpack("stats --json");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::map<std::string, long long> out;
    size_t at = r.out.find("\"counters\": {");
    if (at == std::string::npos) return out;
    std::string body = r.out.substr(at + 13, r.out.find('}', at) - at - 13);
    size_t pos = 0;
    while ((pos = body.find('"', pos)) != std::string::npos) {
      size_t end = body.find('"', pos + 1);
      std::string name = body.substr(pos + 1, end - pos - 1);
      size_t colon = body.find(':', end);
      out[name] = std::atoll(body.c_str() + colon + 1);
      pos = body.find_first_of(",", colon);
      if (pos == std::string::npos) break;
    }
    return out;
  }
  std::string explain(const std::string& args) {
    base::ProcessResult r = lexpack("explain " + args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }
};

// A compiler that waits a second before compiling: the compile's wall time
// is long, its CPU time short, as for a compile that waited for a busy core.
TEST_F(ReportTest, TimeSavedIsTheCompilersCpuTime) {
  dir_.write("bin/slow-g++",
             "#!/bin/sh\ncase \" $* \" in *\" -c \"*) sleep 1;; esac\nexec g++ \"$@\"\n");
  ASSERT_EQ(sh("chmod +x bin/slow-g++").exit_code, 0);
  dir_.write("a.cpp", "int f() { return 1; }\n");
  ASSERT_EQ(lexpack("bin/slow-g++ -c a.cpp -o a.o").exit_code, 0);
  ASSERT_TRUE(last_was_miss()) << last_decision();
  dir_.remove("a.o");
  ASSERT_EQ(lexpack("bin/slow-g++ -c a.cpp -o a.o").exit_code, 0);
  ASSERT_TRUE(last_was_hit()) << last_decision();
  std::map<std::string, long long> c = counters();
  EXPECT_EQ(c["hits"], 1);
  EXPECT_GT(c["time_saved_us"], 0);
  EXPECT_LT(c["time_saved_us"], 900000) << "the second of sleep is not compile time";
}

TEST_F(ReportTest, ExplainCountsNothing) {
  dir_.write("a.cpp", "int f() { return 1; }\n");
  dir_.write("t.cpp", "const char* t() { return __TIME__; }\n");
  ASSERT_EQ(lexpack("g++ -c a.cpp -o a.o").exit_code, 0);
  ASSERT_EQ(lexpack("g++ -c a.cpp -o a.o").exit_code, 0);
  const std::map<std::string, long long> before = counters();
  ASSERT_EQ(before.at("hits"), 1);
  EXPECT_NE(explain("g++ -c a.cpp -o a.o").find("would hit"), std::string::npos);
  EXPECT_NE(explain("g++ -O2 -c a.cpp -o a.o").find("would miss"), std::string::npos);
  explain("g++ -E a.cpp");
  explain("g++ -c t.cpp -o t.o");
  explain("/bin/echo -c a.cpp -o a.o");
  EXPECT_EQ(counters(), before);
}

// compile_commands.json has no depfile options (CMake leaves them out there):
// explain takes such a command for the build's compile of the same output.
TEST_F(ReportTest, ExplainMatchesTheBuildsCompileWithoutDepfileOptions) {
  dir_.write("first/.keep", "");
  dir_.write("second/s.h", "#define S 1\n");
  dir_.write("m.cpp", "#include <s.h>\nint v() { return S; }\n");
  sleep(2);
  ASSERT_EQ(lexpack("g++ -Ifirst -Isecond -MD -MT m.o -MF m.o.d -c m.cpp -o m.o").exit_code, 0);
  const std::string from_compdb = "g++ -Ifirst -Isecond -c m.cpp -o m.o";
  std::string why = explain(from_compdb);
  EXPECT_NE(why.find("would hit"), std::string::npos) << why;
  EXPECT_EQ(why.find("-[-MD]"), std::string::npos) << why;
  // A new header shadowing the one the compile read.
  dir_.write("first/s.h", "#define S 2\n");
  why = explain(from_compdb);
  EXPECT_NE(why.find("closure memo out of date: appeared: first/s.h"), std::string::npos) << why;
  EXPECT_NE(why.find("would miss: no cached result for this key (appeared: first/s.h)"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("arguments unchanged"), std::string::npos) << why;
  // Other arguments are still told, without the depfile options.
  why = explain("g++ -Ifirst -Isecond -O2 -c m.cpp -o m.o");
  EXPECT_NE(why.find("changed since the last stored compile of this output: +[-O2]\n"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("(never compiled with these arguments)"), std::string::npos) << why;
}

// A compile right after an edit cannot leave a closure memo (its files are
// too fresh to trust for a hit); explain must still compare with that
// compile, not with the older one the memo describes.
TEST_F(ReportTest, ExplainNamesTheChangeSinceTheLastCompile) {
  dir_.write("inc/a.h", "#define A 1\n");
  dir_.write("inc/b.h", "#define B 1\n");
  dir_.write("m.cpp", "#include \"a.h\"\n#include \"b.h\"\nint v() { return A + B; }\n");
  sleep(2);
  const std::string args = "g++ -Iinc -c m.cpp -o m.o";
  ASSERT_EQ(lexpack(args).exit_code, 0);
  dir_.write("inc/a.h", "#define A 2\n");
  ASSERT_EQ(lexpack(args).exit_code, 0);  // a.h is fresh: no closure memo
  ASSERT_TRUE(last_was_miss()) << last_decision();
  sleep(2);
  dir_.write("inc/b.h", "#define B 2\n");
  std::string why = explain(args);
  EXPECT_NE(why.find("would miss: no cached result for this key (changed: inc/b.h)"),
            std::string::npos)
      << why;
  EXPECT_EQ(why.find("a.h"), std::string::npos) << why;
  // Once a compile leaves a memo, that memo is the one compared with.
  ASSERT_EQ(lexpack(args).exit_code, 0);
  sleep(2);
  ASSERT_EQ(lexpack(args).exit_code, 0);
  dir_.write("inc/a.h", "#define A 3\n");
  why = explain(args);
  EXPECT_NE(why.find("(changed: inc/a.h)"), std::string::npos) << why;
}

}  // namespace
}  // namespace lexpack::testing
