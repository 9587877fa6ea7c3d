// Differential tests of whole scans: every kernel must give the scalar
// kernel's ScanResult on generated inputs built from the fragments that
// change the scanner's state, and on real headers with candidate bytes
// inserted at every offset of a 64-byte block.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "lexer/kernel.h"
#include "lexer/scanner.h"
#include "scan_test_util.h"

namespace lexpack::lexer {
namespace {

using testing::scan_exact;

const std::vector<std::string>& fragments() {
  static const std::vector<std::string> kFragments = {"#include <a.h>\n",
                                                      "#include \"b/c.h\"\n",
                                                      "# define X 1\n",
                                                      "#if A\n",
                                                      "#endif\n",
                                                      "#else\n",
                                                      "#ifndef G\n",
                                                      "#define G\n",
                                                      "#include_next <n.h>\n",
                                                      "#include M(x)\n",
                                                      "#if __has_include(<h.h>)\n",
                                                      "#pragma once\n",
                                                      "_Pragma(\"once\")",
                                                      "import m;\n",
                                                      "export module a:b;\n",
                                                      "module;\n",
                                                      "import <v>;\n",
                                                      "__DATE__",
                                                      "__TIME__",
                                                      "__TIMESTAMP__",
                                                      "/*",
                                                      "*/",
                                                      "//",
                                                      "\\\n",
                                                      "\\ \r\n",
                                                      "\"",
                                                      "'",
                                                      "R\"x(",
                                                      ")x\"",
                                                      "u8R\"(",
                                                      ")\"",
                                                      "1'000",
                                                      "0x1'f",
                                                      "\n",
                                                      "\r\n",
                                                      "\r",
                                                      " ",
                                                      "\t",
                                                      "\f",
                                                      "#",
                                                      "##",
                                                      "<",
                                                      ">",
                                                      "x",
                                                      "int a;",
                                                      "\xEF\xBB\xBF",
                                                      std::string("\0", 1),
                                                      "\xff",
                                                      "#error don't\n",
                                                      "?"
                                                      "?=",
                                                      "(",
                                                      ")",
                                                      ";",
                                                      "[[a]]",
                                                      "::",
                                                      ".",
                                                      "export ",
                                                      "import",
                                                      "module"};
  return kFragments;
}

void expect_all_kernels_agree(const std::string& src) {
  const ScanResult ref = scan_exact(src, scalar_kernel());
  for (const Kernel* k : available_kernels()) {
    ASSERT_EQ(scan_exact(src, *k), ref)
        << "kernel " << k->name << " on input of " << src.size() << " bytes:\n"
        << src;
  }
}

TEST(ScannerDifferential, GeneratedInputs) {
  std::mt19937 rng(20261130);
  const std::vector<std::string>& f = fragments();
  for (int round = 0; round < 3000; ++round) {
    std::string src;
    const int pieces = 1 + static_cast<int>(rng() % 60);
    for (int i = 0; i < pieces; ++i) {
      if (rng() % 16 == 0) {
        src.append(rng() % 80, static_cast<char>('a' + rng() % 26));  // long plain runs
      } else {
        src += f[rng() % f.size()];
      }
    }
    expect_all_kernels_agree(src);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// One ScanResult reused for input after input (and the scanner's own buffers
// reused on this thread) gives each input exactly what a fresh scan gives:
// nothing of an earlier file, its guard, flags or diagnostics, is left over.
TEST(ScannerDifferential, ReusedResultEqualsFreshScan) {
  std::mt19937 rng(7);
  const std::vector<std::string>& f = fragments();
  ScanResult reused;
  for (int round = 0; round < 2000; ++round) {
    std::string src;
    if (round % 5 == 0) {
      src = "#ifndef G\n#define G\n#if __has_include(<x.h>)\n#endif\n__DATE__ __TIME__\n#endif\n";
    } else {
      const int pieces = static_cast<int>(rng() % 40);
      for (int i = 0; i < pieces; ++i) src += f[rng() % f.size()];
    }
    for (const Kernel* k : available_kernels()) {
      scan_into(src, *k, &reused);
      ASSERT_EQ(reused, scan(src, *k)) << "kernel " << k->name << " round " << round << ":\n"
                                       << src;
    }
  }
}

// A few real headers; the test needs none of them to exist.
std::vector<std::string> real_headers() {
  std::vector<std::string> out;
  for (const char* path : {"/usr/include/stdio.h", "/usr/include/c++/12/vector",
                           "/usr/include/c++/12/bits/stl_algo.h", "/usr/include/unistd.h"}) {
    std::ifstream in(path, std::ios::binary);
    if (!in) continue;
    std::stringstream ss;
    ss << in.rdbuf();
    std::string bytes = ss.str();
    if (bytes.size() > 24 * 1024) bytes.resize(24 * 1024);  // keep the test quick
    out.push_back(std::move(bytes));
  }
  out.push_back(
      "/* sample */\n#ifndef S_H\n#define S_H\n#include <a.h>\n// c \\\n#include <b.h>\n"
      "const char* s = \"/* \\\" */\";\nauto r = R\"d(#include <x>)d\";\nint n = 1'0;\n"
      "#if __has_include(<c.h>) /* x\n y */\n#endif\n#endif\n");
  return out;
}

TEST(ScannerDifferential, MutatedRealHeadersAtEveryBlockOffset) {
  static const char kCandidates[] = {'#', '/', '"', '\'', '\\', '\n', '\r', '*', ')', '<', '_'};
  std::mt19937 rng(7);
  for (const std::string& header : real_headers()) {
    expect_all_kernels_agree(header);
    // Pick a few block starts; put each candidate byte at each offset 0..64.
    for (int pick = 0; pick < 4; ++pick) {
      const size_t block = (rng() % (header.size() / 64 + 1)) * 64;
      for (char c : kCandidates) {
        for (size_t off = 0; off <= 64; ++off) {
          const size_t at = std::min(block + off, header.size());
          std::string mutated = header;
          if (rng() % 2) {
            mutated.insert(at, 1, c);
          } else if (at < mutated.size()) {
            mutated[at] = c;
          }
          expect_all_kernels_agree(mutated);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

}  // namespace
}  // namespace lexpack::lexer
