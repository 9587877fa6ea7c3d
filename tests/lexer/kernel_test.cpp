// Every kernel against a naive byte-loop oracle, on the same inputs: needles at
// every offset of a block and every tail length, buffers that end right before
// (or start right after) an inaccessible page, and forced-kernel selection.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "lexer/kernel.h"

namespace lexpack::lexer {
namespace {

// ---- Oracles: the obvious loops, written independently of any kernel. ----

const char* oracle_find_any4(const char* begin, const char* end, const char needles[4]) {
  for (const char* p = begin; p < end; ++p) {
    for (int i = 0; i < 4; ++i) {
      if (*p == needles[i]) return p;
    }
  }
  return end;
}

const char* oracle_find_quad(const char* begin, const char* end, const uint32_t* quads, int count) {
  for (const char* p = begin; end - p >= 4; ++p) {
    for (int i = 0; i < count; ++i) {
      const uint32_t q = quads[i];
      if (uint8_t(p[0]) == (q & 0xff) && uint8_t(p[1]) == ((q >> 8) & 0xff) &&
          uint8_t(p[2]) == ((q >> 16) & 0xff) && uint8_t(p[3]) == (q >> 24)) {
        return p;
      }
    }
  }
  return end;
}

size_t oracle_count_lines(const char* begin, const char* end) {
  size_t n = 0;
  for (const char* p = begin; p < end; ++p) {
    if (*p == '\n') ++n;
    if (*p == '\r' && (p + 1 == end || p[1] != '\n')) ++n;
  }
  return n;
}

// ---- Guarded memory: bytes placed flush against PROT_NONE pages. ----

// Three pages: [guard][data][guard]. at_end() puts the bytes so the last one
// is the last byte before the upper guard; at_start() puts them right after the
// lower guard. Any read outside the bytes faults.
class GuardedBuffer {
 public:
  GuardedBuffer() {
    page_ = size_t(sysconf(_SC_PAGESIZE));
    void* m = mmap(nullptr, 3 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return;
    base_ = static_cast<char*>(m);
    ok_ = mprotect(base_, page_, PROT_NONE) == 0 &&
          mprotect(base_ + 2 * page_, page_, PROT_NONE) == 0;
  }
  ~GuardedBuffer() {
    if (base_) munmap(base_, 3 * page_);
  }
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  bool ok() const { return ok_; }
  size_t capacity() const { return page_; }

  // Copies s so that it ends at the upper guard page; returns its first byte.
  // s must fit in one page.
  const char* at_end(std::string_view s) {
    if (s.size() > page_) std::abort();
    char* p = base_ + 2 * page_ - s.size();
    if (!s.empty()) std::memcpy(p, s.data(), s.size());
    return p;
  }
  // Copies s so that it starts right after the lower guard page.
  const char* at_start(std::string_view s) {
    if (s.size() > page_) std::abort();
    char* p = base_ + page_;
    if (!s.empty()) std::memcpy(p, s.data(), s.size());
    return p;
  }

 private:
  size_t page_ = 0;
  char* base_ = nullptr;
  bool ok_ = false;
};

std::string random_text(std::mt19937& rng, size_t n, std::string_view alphabet) {
  std::string s(n, ' ');
  for (char& c : s) c = alphabet[rng() % alphabet.size()];
  return s;
}

// Block lengths of every kernel are at most 64 bytes; lengths up to 2 blocks
// plus a tail cover every whole-block/tail split.
constexpr size_t kMaxLen = 2 * 64 + 40;

class KernelTest : public ::testing::TestWithParam<const Kernel*> {
 protected:
  void SetUp() override { ASSERT_TRUE(guard_.ok()) << "mmap/mprotect failed"; }
  const Kernel& k() const { return *GetParam(); }

  // Checks all three primitives on s, placed flush against each guard page.
  void check_all(const std::string& s, const char needles[4], const uint32_t* quads, int count) {
    for (int where = 0; where < 2; ++where) {
      const char* b = where ? guard_.at_start(s) : guard_.at_end(s);
      const char* e = b + s.size();
      ASSERT_EQ(k().find_any4(b, e, needles) - b, oracle_find_any4(b, e, needles) - b)
          << "len " << s.size();
      ASSERT_EQ(k().find_quad(b, e, covering_search(quads, count)) - b,
                oracle_find_quad(b, e, quads, count) - b)
          << "len " << s.size() << " quads " << count;
      ASSERT_EQ(k().count_lines(b, e), oracle_count_lines(b, e)) << "len " << s.size();
    }
  }

  // find_quad with a given search against the oracle on s, at both guards.
  void check_search(const std::string& s, const QuadSearch& search) {
    ASSERT_TRUE(search.covers());
    for (int where = 0; where < 2; ++where) {
      const char* b = where ? guard_.at_start(s) : guard_.at_end(s);
      const char* e = b + s.size();
      ASSERT_EQ(k().find_quad(b, e, search) - b,
                oracle_find_quad(b, e, search.quads, search.quad_count) - b)
          << "len " << s.size() << " quads " << search.quad_count << " tests " << search.test_count;
    }
  }

  GuardedBuffer guard_;
};

TEST_P(KernelTest, FindAny4EveryNeedleAtEveryOffsetAndLength) {
  const char needles[4] = {'#', '\n', '/', '"'};
  for (size_t len = 0; len <= kMaxLen; ++len) {
    for (int which = 0; which < 4; ++which) {
      for (size_t pos = 0; pos < len; ++pos) {
        std::string s(len, 'x');
        s[pos] = needles[which];
        // A second match later must not win over the first.
        if (pos + 7 < len) s[pos + 7] = needles[(which + 1) % 4];
        const char* b = guard_.at_end(s);
        ASSERT_EQ(k().find_any4(b, b + len, needles), b + pos) << "len " << len << " pos " << pos;
        b = guard_.at_start(s);
        ASSERT_EQ(k().find_any4(b, b + len, needles), b + pos) << "len " << len << " pos " << pos;
      }
    }
    const std::string none(len, 'x');
    const char* b = guard_.at_end(none);
    EXPECT_EQ(k().find_any4(b, b + len, needles), b + len) << "len " << len;
  }
}

TEST_P(KernelTest, FindAny4RepeatedAndZeroNeedles) {
  // A NUL needle must not match the zero padding some kernels use for tails.
  const char zero[4] = {'\0', '\0', '\0', '\0'};
  const char one[4] = {'q', 'q', 'q', 'q'};
  for (size_t len = 0; len <= kMaxLen; ++len) {
    const std::string s(len, 'a');
    const char* b = guard_.at_end(s);
    EXPECT_EQ(k().find_any4(b, b + len, zero), b + len) << "len " << len;
    EXPECT_EQ(k().find_any4(b, b + len, one), b + len) << "len " << len;
    for (size_t pos = 0; pos < len; ++pos) {
      std::string t = s;
      t[pos] = '\0';
      b = guard_.at_end(t);
      ASSERT_EQ(k().find_any4(b, b + len, zero), b + pos) << "len " << len << " pos " << pos;
    }
  }
}

TEST_P(KernelTest, FindAny4HighBytes) {
  // Bytes >= 0x80 must compare as bytes, not be confused by sign or borrow.
  const char needles[4] = {char(0x80), char(0xff), char(0x7f), char(0x01)};
  std::mt19937 rng(7);
  for (int iter = 0; iter < 3000; ++iter) {
    std::string s(rng() % kMaxLen, '\0');
    for (char& c : s) c = char(rng() % 256);
    const char* b = guard_.at_end(s);
    ASSERT_EQ(k().find_any4(b, b + s.size(), needles), oracle_find_any4(b, b + s.size(), needles));
  }
}

TEST_P(KernelTest, FindQuadEveryCountOffsetAndLength) {
  const uint32_t quads[kMaxQuads] = {make_quad("impo"),   make_quad("modu"),   make_quad("expo"),
                                     make_quad("__DA"),   make_quad("__TI"),   make_quad("#inc"),
                                     make_quad("\r\n#i"), make_quad("a\0\0\0")};
  for (int count = 1; count <= kMaxQuads; ++count) {
    for (size_t len = 0; len <= kMaxLen; ++len) {
      const std::string none(len, '_');
      const char* b = guard_.at_end(none);
      ASSERT_EQ(k().find_quad(b, b + len, covering_search(quads, count)), b + len) << "len " << len;
      for (size_t pos = 0; pos + 4 <= len; ++pos) {
        const int q = int(pos % size_t(count));
        std::string s = none;
        for (int j = 0; j < 4; ++j) s[pos + j] = char((quads[q] >> (8 * j)) & 0xff);
        // Near misses before the match: first and last byte right, middle wrong.
        if (pos >= 5) {
          s[pos - 5] = char(quads[q] & 0xff);
          s[pos - 2] = char(quads[q] >> 24);
        }
        b = guard_.at_end(s);
        ASSERT_EQ(k().find_quad(b, b + len, covering_search(quads, count)),
                  oracle_find_quad(b, b + len, quads, count))
            << "count " << count << " len " << len << " pos " << pos;
        ASSERT_EQ(oracle_find_quad(b, b + len, quads, count), b + pos);
        b = guard_.at_start(s);
        ASSERT_EQ(k().find_quad(b, b + len, covering_search(quads, count)), b + pos)
            << "count " << count << " len " << len << " pos " << pos;
      }
    }
  }
}

TEST_P(KernelTest, FindQuadCutByEnd) {
  // Only the first three bytes of a quad before end: no match, and no read past end.
  const uint32_t quads[2] = {make_quad("abcd"), make_quad("a\0\0\0")};
  for (size_t len = 3; len <= kMaxLen; ++len) {
    std::string s(len, '.');
    std::memcpy(&s[len - 3], "abc", 3);
    const char* b = guard_.at_end(s);
    ASSERT_EQ(k().find_quad(b, b + len, covering_search(quads, 2)), b + len) << "len " << len;
  }
  // A quad with NUL bytes must not match zero padding past the end.
  for (size_t len = 1; len <= kMaxLen; ++len) {
    std::string s(len, '.');
    s[len - 1] = 'a';
    const char* b = guard_.at_end(s);
    ASSERT_EQ(k().find_quad(b, b + len, covering_search(quads, 2)), b + len) << "len " << len;
  }
}

TEST_P(KernelTest, FindQuadStraddlesBlockBoundaries) {
  const uint32_t quads[3] = {make_quad("#inc"), make_quad("__TI"), make_quad("expo")};
  for (size_t block : {8u, 16u, 32u, 64u}) {
    for (size_t shift = 1; shift <= 3; ++shift) {
      for (size_t blocks = 1; blocks <= 3; ++blocks) {
        const size_t pos = block * blocks - shift;
        for (size_t extra : {0u, 1u, 5u, 40u}) {
          std::string s(pos + 4 + extra, 'x');
          std::memcpy(&s[pos], "__TI", 4);
          const char* b = guard_.at_end(s);
          ASSERT_EQ(k().find_quad(b, b + s.size(), covering_search(quads, 3)), b + pos)
              << "block " << block << " pos " << pos;
        }
      }
    }
  }
}

TEST_P(KernelTest, CountLinesEveryOffsetAndLength) {
  for (size_t len = 0; len <= kMaxLen; ++len) {
    for (size_t pos = 0; pos < len; ++pos) {
      for (std::string_view ending : {"\n", "\r", "\r\n", "\n\r", "\r\r"}) {
        std::string s(len, 'x');
        for (size_t j = 0; j < ending.size() && pos + j < len; ++j) s[pos + j] = ending[j];
        const char* b = guard_.at_end(s);
        ASSERT_EQ(k().count_lines(b, b + len), oracle_count_lines(b, b + len))
            << "len " << len << " pos " << pos << " ending " << int(ending[0]);
      }
    }
  }
}

TEST_P(KernelTest, CountLinesCrLfSplitAcrossBlocks) {
  for (size_t block : {8u, 16u, 32u, 64u}) {
    for (size_t blocks = 1; blocks <= 3; ++blocks) {
      const size_t cr = block * blocks - 1;  // '\r' last in a block, '\n' first in the next
      for (size_t extra : {0u, 1u, 2u, 31u, 70u}) {
        std::string s(cr + 2 + extra, 'y');
        s[cr] = '\r';
        s[cr + 1] = '\n';
        const char* b = guard_.at_end(s);
        ASSERT_EQ(k().count_lines(b, b + s.size()), 1u) << "block " << block << " cr " << cr;
        // Cut between the two: the '\r' is now the last byte and counts alone.
        ASSERT_EQ(k().count_lines(b, b + cr + 1), 1u);
        ASSERT_EQ(k().count_lines(b + cr + 1, b + s.size()), 1u);
      }
    }
  }
}

TEST_P(KernelTest, CountLinesLongRuns) {
  // Long enough to overflow any 8-bit per-lane counter that is not flushed.
  for (std::string_view unit : {"\n", "\r", "\r\n", "\n\r", "\r\r\n", "ab\n"}) {
    std::string s;
    while (s.size() < 100000) s += unit;
    const char* b = s.data();
    EXPECT_EQ(k().count_lines(b, b + s.size()), oracle_count_lines(b, b + s.size()))
        << "unit " << int(unit[0]);
  }
}

TEST_P(KernelTest, RandomBuffersAgainstOracle) {
  std::mt19937 rng(12345);
  const std::string_view alphabets[] = {"ab#/\"\r\n", "\r\n", "_DATEIM_", "imp ortexmdul\n",
                                        std::string_view("\0\x80\xff\r\na", 6)};
  for (int iter = 0; iter < 20000; ++iter) {
    const std::string_view alpha = alphabets[iter % 5];
    const size_t len = iter % 7 == 0 ? rng() % 2000 : rng() % kMaxLen;
    const std::string s = random_text(rng, len, alpha);
    const char needles[4] = {alpha[rng() % alpha.size()], alpha[rng() % alpha.size()], '#', '#'};
    uint32_t quads[kMaxQuads];
    const int count = 1 + int(rng() % kMaxQuads);
    for (int i = 0; i < count; ++i) {
      char q[5] = {};
      for (int j = 0; j < 4; ++j) q[j] = alpha[rng() % alpha.size()];
      quads[i] = make_quad(q);
    }
    ASSERT_NO_FATAL_FAILURE(check_all(s, needles, quads, count)) << "iteration " << iter;
  }
}

// Needle sets that pair up (two bytes one bit apart, or repeated), as the
// scanner's own sets do, in text full of bytes one bit away from each needle.
TEST_P(KernelTest, FindAny4PairedNeedlesAgainstOracle) {
  const char sets[][4] = {{'#', '/', '"', '\''},     {'\n', '\r', '\n', '\r'},
                          {'/', '/', '/', '/'},      {')', ')', ')', ')'},
                          {'a', 'c', 'b', 'f'},      {'\0', '\x80', 'x', 'y'},
                          {'\xff', '\x7f', 'p', 'p'}};
  std::mt19937 rng(99);
  for (const auto& needles : sets) {
    std::string alpha = "  ab";
    for (char n : needles) {
      alpha += n;
      for (int bit = 0; bit < 8; ++bit) alpha += char(n ^ (1 << bit));
    }
    for (int iter = 0; iter < 3000; ++iter) {
      const size_t len = iter % 9 == 0 ? rng() % 700 : rng() % kMaxLen;
      std::string s = random_text(rng, len, alpha);
      // Mostly needle-free text, so the first match lands anywhere.
      if (iter % 2) {
        for (char& c : s) {
          for (char n : needles) {
            if (c == n && rng() % 8) c = 'q';
          }
        }
      }
      const uint32_t quad = make_quad("abab");
      ASSERT_NO_FATAL_FAILURE(check_all(s, needles, &quad, 1)) << "iteration " << iter;
    }
  }
}

// A test that accepts several bytes (bits in `ones`) and two tests on other
// byte positions, as the scanner's prepass uses them: text full of bytes that
// pass the tests but are no quad, and of bytes one bit away from passing.
TEST_P(KernelTest, FindQuadTwoTestsWithMergedBits) {
  const QuadSearch search = {{make_quad("DATE"), make_quad("TIME"), make_quad("Prag"),
                              make_quad("port"), make_quad("modu")},
                             5,
                             {{{0, 3}, {0x14, 0x22}, {'T', 'g'}}, {{1, 3}, {0, 0x01}, {'o', 'u'}}},
                             2};
  ASSERT_TRUE(search.covers());
  std::mt19937 rng(31);
  const std::string alpha = "@DPTEGegotuDATIMEPragportmodu_ xUVQ\x04\xd4";
  for (int iter = 0; iter < 20000; ++iter) {
    const size_t len = iter % 11 == 0 ? rng() % 900 : rng() % kMaxLen;
    std::string s = random_text(rng, len, alpha);
    if (iter % 3 == 0 && len >= 4) {
      // One real quad somewhere, often after near misses.
      const uint32_t q = search.quads[rng() % 5];
      const size_t pos = rng() % (len - 3);
      for (int j = 0; j < 4; ++j) s[pos + j] = char((q >> (8 * j)) & 0xff);
    }
    ASSERT_NO_FATAL_FAILURE(check_search(s, search)) << "iteration " << iter;
  }
}

// Random quads split between two tests on random byte positions; each test's
// merged bits are exactly what its quads need, or more.
TEST_P(KernelTest, FindQuadRandomSearchesAgainstOracle) {
  std::mt19937 rng(4242);
  const std::string_view alpha("ab\x01\x81\xfe\x7f\0cA", 9);
  for (int iter = 0; iter < 20000; ++iter) {
    QuadSearch search;
    search.quad_count = 1 + int(rng() % kMaxQuads);
    search.test_count = 1 + int(rng() % kMaxQuadTests);
    for (int q = 0; q < search.quad_count; ++q) {
      char w[5] = {};
      for (int j = 0; j < 4; ++j) w[j] = alpha[rng() % alpha.size()];
      search.quads[q] = make_quad(w);
    }
    for (int t = 0; t < search.test_count; ++t) {
      const uint8_t at0 = uint8_t(rng() % 4), at1 = uint8_t(rng() % 4);
      const int in_group = (search.quad_count - t + search.test_count - 1) / search.test_count;
      QuadTest& test = search.tests[t];
      test = in_group > 0 ? merged_test(at0, at1, search.quads + t, in_group, search.test_count)
                          : QuadTest{{at0, at1}, {0, 0}, {0, 0}};
      for (int k = 0; k < 2; ++k) {
        if (rng() % 4 == 0) test.ones[k] |= uint8_t(1u << (rng() % 8));
        test.value[k] |= test.ones[k];
      }
    }
    const size_t len = iter % 7 == 0 ? rng() % 1500 : rng() % kMaxLen;
    const std::string s = random_text(rng, len, alpha);
    ASSERT_NO_FATAL_FAILURE(check_search(s, search)) << "iteration " << iter;
  }
}

TEST(QuadSearchTest, CoversOnlyWhenEveryQuadPassesATest) {
  const uint32_t quads[3] = {make_quad("DATE"), make_quad("TIME"), make_quad("abcd")};
  QuadSearch s = covering_search(quads, 3);
  EXPECT_TRUE(s.covers());
  s.quads[2] = make_quad("zzzz");  // 'z' | ones differs from the test's value
  EXPECT_FALSE(s.covers());
  QuadSearch merged = {
      {make_quad("DATE"), make_quad("TIME")}, 2, {{{0, 3}, {0x10, 0}, {'T', 'E'}}}, 1};
  EXPECT_TRUE(merged.covers());
  merged.tests[0].value[0] = 'D';  // the value lacks the merged bit: nothing passes
  EXPECT_FALSE(merged.covers());
  merged.tests[0] = {{0, 4}, {0x10, 0}, {'T', 'E'}};  // byte 4 is outside a quad
  EXPECT_FALSE(merged.covers());
  merged.tests[0] = {{0, 3}, {0x10, 0}, {'T', 'E'}};
  merged.test_count = 0;
  EXPECT_FALSE(merged.covers());
}

TEST_P(KernelTest, EmptyRanges) {
  const char needles[4] = {'a', 'b', 'c', 'd'};
  const uint32_t quad = make_quad("abcd");
  const char* b = guard_.at_end("");
  EXPECT_EQ(k().find_any4(b, b, needles), b);
  EXPECT_EQ(k().find_quad(b, b, covering_search(&quad, 1)), b);
  EXPECT_EQ(k().count_lines(b, b), 0u);
  const char* s = guard_.at_end("abcd");
  EXPECT_EQ(k().find_quad(s, s + 4, covering_search(&quad, 0)), s + 4);
}

std::string kernel_name(const ::testing::TestParamInfo<const Kernel*>& info) {
  return info.param->name;
}

INSTANTIATE_TEST_SUITE_P(AllKernels, KernelTest, ::testing::ValuesIn(available_kernels()),
                         kernel_name);

// ---- Selection: names, CPU support and LEXPACK_LEXER. ----

// Sets LEXPACK_LEXER for one test and restores the previous value.
class ScopedLexerEnv {
 public:
  explicit ScopedLexerEnv(const char* value) {
    if (const char* old = std::getenv("LEXPACK_LEXER")) old_ = old;
    if (value) {
      setenv("LEXPACK_LEXER", value, 1);
    } else {
      unsetenv("LEXPACK_LEXER");
    }
  }
  ~ScopedLexerEnv() {
    if (old_) {
      setenv("LEXPACK_LEXER", old_->c_str(), 1);
    } else {
      unsetenv("LEXPACK_LEXER");
    }
  }

 private:
  std::optional<std::string> old_;
};

bool has_kernel(std::string_view name) {
  for (const Kernel* k : available_kernels()) {
    if (name == k->name) return true;
  }
  return false;
}

TEST(KernelSelection, ScalarIsFirstAndAlwaysThere) {
  const auto kernels = available_kernels();
  ASSERT_FALSE(kernels.empty());
  EXPECT_STREQ(kernels.front()->name, "scalar");
  EXPECT_EQ(kernels.front(), &scalar_kernel());
}

TEST(KernelSelection, MatchesThisMachine) {
#if defined(__x86_64__)
  EXPECT_TRUE(has_kernel("sse2"));
  EXPECT_FALSE(has_kernel("neon"));
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
                    __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt");
  EXPECT_EQ(has_kernel("avx2"), avx2);
#elif defined(__aarch64__)
  EXPECT_TRUE(has_kernel("neon"));
  EXPECT_FALSE(has_kernel("sse2"));
  EXPECT_FALSE(has_kernel("avx2"));
#endif
}

TEST(KernelSelection, FindKernelByName) {
  for (const Kernel* k : available_kernels()) {
    std::string err;
    EXPECT_EQ(find_kernel(k->name, &err), k);
    EXPECT_TRUE(err.empty());
  }
  std::string err;
  EXPECT_EQ(find_kernel("SSE2x", &err), nullptr);
  EXPECT_NE(err.find("SSE2x"), std::string::npos) << err;
  EXPECT_NE(err.find("scalar"), std::string::npos) << err;
  EXPECT_EQ(find_kernel("", &err), nullptr);
}

TEST(KernelSelection, DefaultIsBestWithoutEnv) {
  ScopedLexerEnv env(nullptr);
  std::string err;
  const Kernel* k = default_kernel(&err);
  ASSERT_NE(k, nullptr) << err;
  EXPECT_EQ(k, available_kernels().back());
  ScopedLexerEnv empty("");
  EXPECT_EQ(default_kernel(&err), available_kernels().back());
}

TEST(KernelSelection, EnvForcesEachAvailableKernel) {
  for (const Kernel* want : available_kernels()) {
    ScopedLexerEnv env(want->name);
    std::string err;
    EXPECT_EQ(default_kernel(&err), want) << err;
  }
}

TEST(KernelSelection, EnvUnknownNameIsAnError) {
  ScopedLexerEnv env("turbo");
  std::string err;
  EXPECT_EQ(default_kernel(&err), nullptr);
  EXPECT_NE(err.find("LEXPACK_LEXER"), std::string::npos) << err;
  EXPECT_NE(err.find("turbo"), std::string::npos) << err;
  for (const char* valid : {"scalar", "sse2", "avx2", "neon"}) {
    EXPECT_NE(err.find(valid), std::string::npos) << err;
  }
}

TEST(KernelSelection, EnvUnsupportedNameIsAnError) {
  const char* missing = nullptr;
  for (const char* name : {"neon", "sse2", "avx2"}) {
    if (!has_kernel(name)) {
      missing = name;
      break;
    }
  }
  if (!missing) GTEST_SKIP() << "every kernel runs here";
  ScopedLexerEnv env(missing);
  std::string err;
  EXPECT_EQ(default_kernel(&err), nullptr);
  EXPECT_NE(err.find(missing), std::string::npos) << err;
  EXPECT_NE(err.find("not supported"), std::string::npos) << err;
}

}  // namespace
}  // namespace lexpack::lexer
