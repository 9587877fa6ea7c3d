#include <gtest/gtest.h>

#include "preprocessor/token.h"

namespace lexpack::preprocessor {
namespace {

std::string kinds(std::string_view text) {
  Tokens ts;
  tokenize(text, &ts);
  std::string out;
  for (const Token& t : ts) {
    static constexpr const char* kNames[] = {"id", "num", "chr", "str", "hdr",
                                             "p",  "?",   "pm",  "unk"};
    if (!out.empty()) out += ' ';
    if (t.space_before) out += '_';
    out += std::string(kNames[static_cast<int>(t.kind)]) + ":" + t.text;
  }
  return out;
}

TEST(Tokenizer, IdentifiersNumbersPunctuators) {
  EXPECT_EQ(kinds("a+=b<<=1 ..."), "id:a p:+= id:b p:<<= num:1 _p:...");
  EXPECT_EQ(kinds("0x1fULL 1'000 1.5e+3 .5"), "num:0x1fULL _num:1'000 _num:1.5e+3 _num:.5");
  EXPECT_EQ(kinds("$x a##b #c"), "id:$x _id:a p:## id:b _p:# id:c");
}

TEST(Tokenizer, LiteralsWithPrefixes) {
  EXPECT_EQ(kinds("L'a' u8\"x\" '\\'' R\"d(a\")d\" LR"),
            "chr:L'a' _str:u8\"x\" _chr:'\\'' _str:R\"d(a\")d\" _id:LR");
}

TEST(Tokenizer, CommentsAreWhitespace) {
  EXPECT_EQ(kinds("a/**/b // c"), "id:a _id:b");
  EXPECT_EQ(kinds("a/* x\n y */(b)"), "id:a _p:( id:b p:)");
}

TEST(Tokenizer, HeaderNameOnlyAfterHasInclude) {
  EXPECT_EQ(kinds("__has_include(<a/b.h>)"), "id:__has_include p:( hdr:<a/b.h> p:)");
  EXPECT_EQ(kinds("__has_include_next ( <a//b.h> )"),
            "id:__has_include_next _p:( _hdr:<a//b.h> _p:)");
  EXPECT_EQ(kinds("X(<a.h>)"), "id:X p:( p:< id:a p:. id:h p:> p:)");
}

TEST(Tokenizer, RemoveSplices) {
  EXPECT_EQ(remove_splices("#def\\\nine A\\  \r\n 1"), "#define A 1");
  EXPECT_EQ(remove_splices("a\\b"), "a\\b");
}

TEST(Tokenizer, SpellJoinsWithSingleSpaces) {
  Tokens ts;
  tokenize("  a  +b   c", &ts);
  EXPECT_EQ(spell(ts.data(), ts.data() + ts.size()), "a +b c");
}

}  // namespace
}  // namespace lexpack::preprocessor
