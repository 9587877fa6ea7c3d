// The word-at-a-time identifier skip against the byte tables it replaces:
// every byte value at every position of a word, and random runs of every
// length up to past two words, cut at every end.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "lexer/chars.h"

namespace lexpack::lexer {
namespace {

const char* skip_ident_oracle(const char* p, const char* end) {
  while (p < end && is_ident_char(*p)) ++p;
  return p;
}

TEST(CharsTest, IdentTableIsTheLanguageSet) {
  for (int c = 0; c < 256; ++c) {
    const bool want = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                      (c >= '0' && c <= '9') || c >= 0x80;
    EXPECT_EQ(is_ident_char(char(c)), want) << c;
  }
}

TEST(CharsTest, EveryByteAtEveryPositionOfAWord) {
  for (int c = 0; c < 256; ++c) {
    for (size_t pos = 0; pos < 12; ++pos) {
      std::string s(16, 'a');
      s[pos] = char(c);
      for (size_t len = pos + 1; len <= s.size(); ++len) {
        const char* b = s.data();
        ASSERT_EQ(skip_ident_bytes(b, b + len) - b, skip_ident_oracle(b, b + len) - b)
            << "byte " << c << " pos " << pos << " len " << len;
      }
    }
  }
}

TEST(CharsTest, RandomRunsAgainstTheTable) {
  std::mt19937 rng(77);
  // Identifier bytes and the bytes right next to each range's ends.
  std::string alpha = "_aAzZ09@[`{/:^\x7f\x80\xff -(\t";
  alpha.push_back('\0');
  for (int iter = 0; iter < 50000; ++iter) {
    std::string s(rng() % 40, ' ');
    for (char& ch : s) ch = rng() % 4 ? alpha[rng() % 7] : alpha[rng() % alpha.size()];
    for (size_t from = 0; from <= s.size() && from < 3; ++from) {
      const char* b = s.data();
      ASSERT_EQ(skip_ident_bytes(b + from, b + s.size()) - b,
                skip_ident_oracle(b + from, b + s.size()) - b)
          << "iteration " << iter;
    }
  }
}

}  // namespace
}  // namespace lexpack::lexer
