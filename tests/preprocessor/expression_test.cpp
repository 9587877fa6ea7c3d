#include <gtest/gtest.h>

#include "preprocessor/expression.h"

namespace lexpack::preprocessor {
namespace {

// "1", "0", "?" (unknown) or "error".
std::string eval(std::string_view text, ConditionOptions options = {}) {
  Tokens ts;
  tokenize(text, &ts);
  for (Token& t : ts) {
    if (t.is_ident("UNKNOWN")) t.kind = TokenKind::kUnknown;
    // COUNTERk: the k-th expansion of __COUNTER__ in the directive.
    if (t.kind == TokenKind::kIdentifier && t.text.rfind("COUNTER", 0) == 0) {
      t.kind = TokenKind::kCounter;
      t.counter = uint16_t(std::stoi(t.text.substr(7)));
    }
  }
  const ConditionResult r = evaluate_condition(ts, options);
  switch (r.state) {
    case ConditionResult::State::kTrue:
      return "1";
    case ConditionResult::State::kFalse:
      return "0";
    case ConditionResult::State::kUnknown:
      return "?";
    default:
      return "error";
  }
}

TEST(Expression, Precedence) {
  EXPECT_EQ(eval("1 + 2 * 3 == 7"), "1");
  EXPECT_EQ(eval("(1 + 2) * 3 == 9"), "1");
  EXPECT_EQ(eval("1 | 2 ^ 3 & 4"), "1");
  EXPECT_EQ(eval("(1 | 2 ^ 3 & 4) == 3"), "1");
  EXPECT_EQ(eval("1 << 2 + 1 == 8"), "1");
  EXPECT_EQ(eval("!0 && ~0 == -1"), "1");
  EXPECT_EQ(eval("1 ? 2 : 0 ? 3 : 0"), "1");
  EXPECT_EQ(eval("0 ? 1 : 0"), "0");
  EXPECT_EQ(eval("(2, 0)"), "0");
  EXPECT_EQ(eval("10 / 3 * 3 + 10 % 3 == 10 && -7 / 2 == -3 && -7 % 2 == -1"), "1");
}

TEST(Expression, UsualArithmeticConversions) {
  EXPECT_EQ(eval("-1 < 0u"), "0");
  EXPECT_EQ(eval("-1 < 0"), "1");
  EXPECT_EQ(eval("-1 > 0u"), "1");
  EXPECT_EQ(eval("(0 ? 1u : -1) > 0"), "1");  // ?: converts both arms
  EXPECT_EQ(eval("-1 / 2u > 0"), "1");
  EXPECT_EQ(eval("18446744073709551615 == -1"), "1");  // too big for intmax_t: unsigned
  EXPECT_EQ(eval("0xffffffffffffffff > 0"), "1");
  EXPECT_EQ(eval("9223372036854775807 + 1 < 0"), "1");  // wraps, as both compilers do
  EXPECT_EQ(eval("(-1 >> 1) == -1 && (1u << 63) > 0 && -1 >> 63 == -1"), "1");
  EXPECT_EQ(eval("!-1u == 0"), "1");
  EXPECT_EQ(eval("0b101 == 5 && 010 == 8 && 1'0 == 10 && 10ull == 10"), "1");
}

TEST(Expression, CharacterLiterals) {
  EXPECT_EQ(eval("'a' == 97 && '\\n' == 10 && '\\0' == 0 && '\\x41' == 65 && '\\101' == 65"), "1");
  EXPECT_EQ(eval("'\\xff' < 0"), "1");
  ConditionOptions unsigned_char;
  unsigned_char.char_is_signed = false;
  EXPECT_EQ(eval("'\\xff' == 255 && 'a' - 98 > 0", unsigned_char), "1");
  EXPECT_EQ(eval("'ab' == 1"), "?");       // multi-character: left to the compiler
  EXPECT_EQ(eval("u'a' - 98 > 0"), "1");   // char16_t is unsigned
  EXPECT_EQ(eval("L'\\0' - 1 > 0"), "0");  // glibc's test for an unsigned wchar_t
  ConditionOptions unsigned_wchar;
  unsigned_wchar.wchar_is_signed = false;
  EXPECT_EQ(eval("L'\\0' - 1 > 0", unsigned_wchar), "1");
  EXPECT_EQ(eval("u8'a' == 97"), "?");
}

TEST(Expression, IdentifiersAndCppNames) {
  EXPECT_EQ(eval("FOO"), "0");
  EXPECT_EQ(eval("true && !false"), "1");
  EXPECT_EQ(eval("1 and not 0 or 0"), "1");
  ConditionOptions c;
  c.cplusplus = false;
  EXPECT_EQ(eval("true", c), "0");
}

TEST(Expression, Errors) {
  EXPECT_EQ(eval("1 / 0"), "error");
  EXPECT_EQ(eval("1 % 0"), "error");
  EXPECT_EQ(eval("0 && 1 / 0"), "0");
  EXPECT_EQ(eval("1 || 1 / 0"), "1");
  EXPECT_EQ(eval("1 ? 2 : 1 / 0"), "1");
  EXPECT_EQ(eval(""), "error");
  EXPECT_EQ(eval("1 +"), "error");
  EXPECT_EQ(eval("(1"), "error");
  EXPECT_EQ(eval("1 2"), "error");
  EXPECT_EQ(eval("1.0"), "error");
  EXPECT_EQ(eval("\"s\""), "error");
  EXPECT_EQ(eval("1 = 1"), "error");
  EXPECT_EQ(eval("99999999999999999999"), "error");
  EXPECT_EQ(eval("1 ? 2"), "error");
}

TEST(Expression, UnknownValues) {
  EXPECT_EQ(eval("UNKNOWN"), "?");
  EXPECT_EQ(eval("0 && UNKNOWN"), "0");
  EXPECT_EQ(eval("UNKNOWN && 0"), "0");
  EXPECT_EQ(eval("UNKNOWN || 1"), "1");
  EXPECT_EQ(eval("UNKNOWN || 0"), "?");
  EXPECT_EQ(eval("UNKNOWN + 1 > 0"), "?");
  EXPECT_EQ(eval("UNKNOWN ? 1 : 1"), "1");
  EXPECT_EQ(eval("1 << 64"), "?");  // GCC and clang disagree
  EXPECT_EQ(eval("1 << -1"), "?");
}

TEST(Expression, CounterComparedWithItself) {
  // Its first value is unknown (code expands it too); what does not depend
  // on it is known.
  EXPECT_EQ(eval("COUNTER0 + 1 == COUNTER1 + 0"), "1");
  EXPECT_EQ(eval("defined_elsewhere || (COUNTER0 + 1 == COUNTER1 + 0)"), "1");
  EXPECT_EQ(eval("COUNTER0 == COUNTER1"), "0");
  EXPECT_EQ(eval("COUNTER0 - COUNTER1 == -1"), "1");
  EXPECT_EQ(eval("-COUNTER0 + COUNTER1 == 1"), "1");
  EXPECT_EQ(eval("(COUNTER0 - COUNTER1) * 3 == -3"), "1");
  EXPECT_EQ(eval("COUNTER0 * 2 < COUNTER1 * 2"), "1");
  EXPECT_EQ(eval("2 * COUNTER0 >= COUNTER1 * 2"), "0");
  EXPECT_EQ(eval("0 && COUNTER0 == 1"), "0");
  EXPECT_EQ(eval("COUNTER0 == 1 || 1"), "1");
}

TEST(Expression, CounterValuesThatDependOnItsStartAreUnknown) {
  EXPECT_EQ(eval("COUNTER0"), "?");
  EXPECT_EQ(eval("COUNTER0 == 0"), "?");
  EXPECT_EQ(eval("COUNTER0 < COUNTER1 * 2"), "?");
  EXPECT_EQ(eval("COUNTER0 * COUNTER1 == 0"), "?");
  EXPECT_EQ(eval("COUNTER0 / 2 == COUNTER1 / 2"), "?");
  EXPECT_EQ(eval("COUNTER0 % 2 == COUNTER1 % 2"), "?");
  EXPECT_EQ(eval("(COUNTER0 & 1) == (COUNTER1 & 1)"), "?");
  EXPECT_EQ(eval("~COUNTER0 == ~COUNTER0"), "?");
  EXPECT_EQ(eval("!COUNTER0"), "?");
  EXPECT_EQ(eval("COUNTER0 && 1"), "?");
  EXPECT_EQ(eval("COUNTER0 + UNKNOWN == COUNTER1"), "?");
  // Unsigned arithmetic wraps; large values could overflow: unknown.
  EXPECT_EQ(eval("COUNTER0 + 1u == COUNTER1 + 0u"), "?");
  EXPECT_EQ(eval("COUNTER0 + 0x7fffffffffffffff == COUNTER1 + 0x7ffffffffffffffe"), "?");
  EXPECT_EQ(eval("COUNTER0 * 100000 == COUNTER0 * 100000"), "?");
}

}  // namespace
}  // namespace lexpack::preprocessor
