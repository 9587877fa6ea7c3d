// A C or C++ file's text with what cannot reach a compile's output taken
// out: the comments that end a line, and trailing whitespace. Two files with
// the same token text have the same tokens at the same lines and columns, the
// same comments wherever a comment is followed by a token, and differ only
// in comments that no compiler diagnostic reads. Keys built on it (closure/
// token_keys.h) survive comment edits without a preprocessor run.
#pragma once

#include <string>
#include <string_view>

namespace lexpack::lexer {

// Writes the token text of `bytes` into *out and returns true; false (and
// *out unspecified) where the lexer cannot be sure what is a comment: a raw
// string literal, a line splice inside a block comment or between the two
// characters of a comment's opening, a lone carriage return.
//
// A comment is dropped, with the whitespace before it, when only blanks
// (spaces, tabs) follow it on its last line, and when nothing in it can
// draw a diagnostic: printable ASCII only (no bidirectional controls, no
// invalid UTF-8), no "/*" inside a block comment, no line comment continued
// by a splice, no "??" (a trigraph), no "fall" in any case (gcc's
// -Wimplicit-fallthrough reads "falls through" comments). Its line ends stay,
// so every line keeps its number. Any other comment is kept as it is, and
// every character outside comments too, except blanks before a line end
// (kept after a backslash: gcc splices "\ " at a line end with a warning).
//
// The caller decides when the text is exact for a compile: not in trigraph
// modes, not with options that keep comments (-C) or read them.
bool token_text(std::string_view bytes, std::string* out);
// The same, also saying whether the text holds a line comment (`//`
// outside literals and block comments), which C90 does not read as one.
bool token_text(std::string_view bytes, std::string* out, bool* line_comment);

}  // namespace lexpack::lexer
