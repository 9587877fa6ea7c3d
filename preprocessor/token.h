// Preprocessing tokens of directive text (#if conditions, #define bodies,
// computed includes): the preprocessor never tokenizes ordinary code, only
// what the lexer's directive stream hands it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lexpack::preprocessor {

enum class TokenKind : uint8_t {
  kIdentifier,
  kNumber,      // a pp-number
  kChar,        // a character literal, with its prefix
  kString,      // a string literal, with its prefix
  kHeaderName,  // <...> right after `__has_include(` in a condition
  kPunctuator,
  kOther,        // any other single byte (`\`, '`', an unmatched quote)
  kPlacemarker,  // an empty argument next to ##; never leaves the expander
  kUnknown,      // a value the evaluator cannot know (an unanswered __has_builtin)
  kCounter,      // __COUNTER__ in a condition: its value at the directive's start
                 // (unknown: code expands it too) plus `counter`
};

struct Token {
  TokenKind kind = TokenKind::kOther;
  bool space_before = false;  // whitespace (or a comment) came before it
  uint16_t counter = 0;       // kCounter: the expansions of __COUNTER__ before it
  uint32_t hide = 0;          // HideSets id: macros this token must not expand
  std::string text;           // its spelling

  bool is(TokenKind k, std::string_view t) const { return kind == k && text == t; }
  bool is_punct(std::string_view t) const { return is(TokenKind::kPunctuator, t); }
  bool is_ident(std::string_view t) const { return is(TokenKind::kIdentifier, t); }
};

using Tokens = std::vector<Token>;

// Appends the tokens of `text` to *out. Line splices must already be gone
// (remove_splices); comments count as whitespace. A `<...>` right after
// `__has_include (` or `__has_include_next (` becomes one kHeaderName token,
// as the compilers lex it there.
void tokenize(std::string_view text, Tokens* out);

// `raw` without its line splices (a backslash, optional horizontal space, a
// line end): translation phase 2, for the raw spans of #define directives.
std::string remove_splices(std::string_view raw);

// The spelling of tokens joined with one space where whitespace came before
// a token (not before the first one), as the compilers spell a computed
// header name or a stringized argument.
std::string spell(const Token* begin, const Token* end);

// Identifier bytes as GCC and clang accept them by default ('$' included).
bool is_identifier_start(char c);
bool is_identifier_char(char c);

}  // namespace lexpack::preprocessor
