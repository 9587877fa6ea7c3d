// Token keys: a second key of a compile that counts each file by its token
// text (lexer/token_text.h) where the action key counts its bytes. A
// comment that ends a line, edited, added or removed, or blanks at a line
// end, leave it as it was, so the compile after such an edit finds the
// result of the one before without running the preprocessor.
//
// Exact only for compiles whose output reads no comment and no trailing
// blank: token_keys_refused() says which are not, and only a compile that
// wrote nothing on stdout or stderr (a diagnostic quotes its source line,
// comment and all) is stored under its token key.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cache/hash/hash.h"
#include "cache/store.h"
#include "closure/action_key.h"
#include "closure/dependency_closure.h"
#include "closure/key_relocation.h"
#include "compiler/compile_command.h"
#include "compiler/identify_compiler.h"

namespace lexpack::closure {

// Memo table: content hash (hex) -> token fingerprint (hex, then '?' when
// the bytes hold "??" and '/' when they hold a line comment), or "-" where
// the token text is unsure.
inline constexpr std::string_view kTokenTable = "token-text";

// Memo table: action key (hex, undated) -> the token key of the same
// compile (hex, undated), stored where the closure was evaluated (the
// server, which keeps every file's fingerprint in memory), so that the
// launcher taking that closure does not look up every file's fingerprint
// again. The two keys rest on the same inputs: one names the other, for any
// compile on any machine.
inline constexpr std::string_view kTokenKeyTable = "token-key";

// kTokenTable's values kept in a process's memory (the server's, across its
// requests), read, by content hash.
struct TokenMemory {
  struct Known {
    cache::Hash128 fingerprint;  // zero where the token text is unsure
    bool trigraphs = false;      // the bytes hold "??"
    bool line_comment = false;
  };
  struct Lo {
    size_t operator()(const cache::Hash128& h) const { return size_t(h.lo); }
  };
  std::unordered_map<cache::Hash128, Known, Lo> values;
};

// Why this compile's output may read comments or trailing blanks, so that
// it keeps its byte key only; "" when a token key is exact for it:
// - C and C++ only, not a precompiled header;
// - nothing that keeps or reads comments: -C, -CC, -save-temps,
//   -fdirectives-only, -traditional, a plugin, options passed to the
//   preprocessor or the compiler proper unread (-Wp, -Xpreprocessor,
//   -Xclang), -Wdocumentation, -Weverything, -Wimplicit-fallthrough=1 (any
//   comment counts), -Wtrailing-whitespace, Microsoft modes;
// - no debug info that holds the sources' bytes: clang's DWARF 5 line
//   table records each file's MD5 (DWARF 4 and lower do not), and
//   -gembed-source the text itself.
std::string token_keys_refused(const compiler::CompileCommand& command,
                               compiler::CompilerKind kind);

// How a compile reads what the token text leaves out.
struct TokenMode {
  bool trigraphs = false;  // ISO C, ISO C++ before C++17, -trigraphs, -ansi
  // C90 (and -ansi): // is no comment, or draws a warning under -pedantic;
  // -Wc90-c99-compat warns of one too
  bool c90 = false;
};
TokenMode token_mode(const compiler::CompileCommand& command);

// The token fingerprint of the file `path` (relative to `cwd`) whose content
// hash is `content`:
// from `memory` (may be null), else the store's table, else read (and
// checked to still hold `content`) and added to *learned for the caller to
// record (and to `memory`). Where the token text is
// unsure, or where `mode` reads what the file holds ("??" with trigraphs,
// a line comment in C90), `content` itself: the file counts by its bytes. nullopt
// when the file cannot be read or no longer holds `content`.
std::optional<cache::Hash128> token_fingerprint(cache::Store* store, std::string_view path,
                                                const std::string& cwd,
                                                const cache::Hash128& content, TokenMode mode,
                                                std::vector<cache::Store::MemoWrite>* learned,
                                                TokenMemory* memory = nullptr);

// The token key of a compile with this closure, undated (dated_key() as
// for its action key); nullopt when a file cannot be read or changed since
// the closure was taken. New fingerprints are recorded when `write`.
std::optional<cache::Hash128> token_key(const compiler::CompilerIdentity& identity,
                                        const compiler::CompileCommand& command,
                                        const std::string& cwd, const Closure& closure,
                                        const KeyRelocation& relocation, cache::Store* store,
                                        bool write, TokenMemory* memory = nullptr,
                                        ProbeDigests* probes = nullptr);

// The token key a compile's entry is looked up and stored under: token_key,
// dated as the action key is (closure.uses_date); nullopt with *why set when
// the compile has none (token_keys_refused, or a file of the closure changed
// or cannot be read).
std::optional<cache::Hash128> compile_token_key(const compiler::CompilerIdentity& identity,
                                                const compiler::CompileCommand& command,
                                                const std::string& cwd, const Closure& closure,
                                                const KeyRelocation& relocation,
                                                cache::Store* store, bool write, std::string* why);

}  // namespace lexpack::closure
