// Computed includes (`#include MACRO`): the files they name are checked one
// by one on a hit (the payload), and every change to them must miss.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "tests/ninja_integration/launcher/launcher_fixture.h"

namespace lexpack::testing {
namespace {

// How many files outside the closure the last hit checked, from its log line
// ("hit (123 us, 4 files outside the scan checked)"); -1 when not a hit.
int outside_files_of_last_hit(const std::string& decision) {
  if (decision.rfind("hit (", 0) != 0) return -1;
  size_t comma = decision.find(", ");
  size_t files = decision.find(" files outside the scan checked");
  if (comma == std::string::npos || files == std::string::npos || files < comma) return -1;
  return std::stoi(decision.substr(comma + 2, files - comma - 2));
}

// The hit's log line says how many files outside the closure it checked.
TEST_F(NoFalseHit, InexactEvaluationChecksComputedIncludesOneByOne) {
  dir_.write("inc/comp.h", "#define C 1\n");
  dir_.write("m.cpp",
             "#define X __builtin_expect\n#if __has_builtin(X)\n#define B 1\n#else\n#define B 2\n"
             "#endif\n#define HDR <comp.h>\n#include HDR\nint v() { return B + C; }\n");
  const std::string command = "g++ -Iinc -c m.cpp";
  expect_miss(command);
  expect_hit(command);
  EXPECT_EQ(outside_files_of_last_hit(last_decision()), 1) << last_decision();
  dir_.write("inc/comp.h", "#define C 2\n");
  expect_miss(command);
}

}  // namespace
}  // namespace lexpack::testing
