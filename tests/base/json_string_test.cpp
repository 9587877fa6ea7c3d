// The one JSON escaper: ASCII escapes, UTF-8 passed through, every other byte
// escaped, so that what lexpack prints is valid UTF-8 JSON for any path.
#include "base/json_string.h"

#include <gtest/gtest.h>

#include <string>

namespace lexpack::base {
namespace {

TEST(JsonString, QuotesAndEscapesAscii) {
  EXPECT_EQ(json_string(""), "\"\"");
  EXPECT_EQ(json_string("a/b c.h"), "\"a/b c.h\"");
  EXPECT_EQ(json_string("say \"hi\" \\ bye"), "\"say \\\"hi\\\" \\\\ bye\"");
  EXPECT_EQ(json_string("a\nb\rc\td"), "\"a\\nb\\rc\\td\"");
  EXPECT_EQ(json_string(std::string("\x01\x1f\x7f", 3)), "\"\\u0001\\u001f\\u007f\"");
  EXPECT_EQ(json_string(std::string("a\0b", 3)), "\"a\\u0000b\"");
}

TEST(JsonString, PassesWellFormedUtf8Through) {
  // é (2 bytes), € (3 bytes), U+1F600 (4 bytes), U+10FFFF (the last one).
  for (std::string s : {"caf\xc3\xa9.h", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbf"}) {
    EXPECT_EQ(json_string(s), "\"" + s + "\"") << s;
  }
}

TEST(JsonString, EscapesBytesThatAreNotUtf8) {
  // A lone Latin-1 byte, a lone continuation byte, a truncated sequence at
  // the end, an overlong '/', a surrogate and a code point above U+10FFFF.
  EXPECT_EQ(json_string("caf\xe9.h"), "\"caf\\u00e9.h\"");
  EXPECT_EQ(json_string("\x80"), "\"\\u0080\"");
  EXPECT_EQ(json_string("a\xe2\x82"), "\"a\\u00e2\\u0082\"");
  EXPECT_EQ(json_string("\xc0\xaf"), "\"\\u00c0\\u00af\"");
  EXPECT_EQ(json_string("\xed\xa0\x80"), "\"\\u00ed\\u00a0\\u0080\"");
  EXPECT_EQ(json_string("\xf4\x90\x80\x80"), "\"\\u00f4\\u0090\\u0080\\u0080\"");
}

TEST(JsonString, OutputIsAlwaysAsciiOrWellFormedUtf8) {
  // Every single byte and every pair of bytes: each output byte >= 0x80 must
  // belong to a sequence that was well-formed in the input, copied whole.
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      std::string in = {char(a), char(b)};
      std::string out = json_string(in);
      std::string rest = out.substr(1, out.size() - 2);
      for (size_t i = 0; i < rest.size(); ++i) {
        uint8_t c = uint8_t(rest[i]);
        ASSERT_TRUE((c >= 0x20 && c < 0x7f) || c >= 0xc2) << a << " " << b;
        if (c >= 0x80) {
          ASSERT_EQ(rest.substr(i), in) << "only a whole well-formed pair passes through";
          ASSERT_TRUE(c >= 0xc2 && c <= 0xdf && (uint8_t(in[1]) & 0xc0) == 0x80);
          break;
        }
      }
    }
  }
}

TEST(JsonString, AppendsToWhatIsThere) {
  std::string out = "{\"k\":";
  append_json_string(&out, "v");
  EXPECT_EQ(out, "{\"k\":\"v\"");
}

}  // namespace
}  // namespace lexpack::base
