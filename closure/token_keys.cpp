// Token keys: which compiles may have one, the fingerprints of their files
// (kept by content hash, so a file is read and lexed once per content), and
// the key itself through action_key().
#include "closure/token_keys.h"

#include <array>

#include "base/file_util.h"
#include "closure/action_key.h"
#include "lexer/token_text.h"

namespace lexpack::closure {
namespace {

// C90: no // comments (strict), or a warning for each file with one
// (-pedantic).
bool is_c90(std::string_view standard) {
  return standard == "c89" || standard == "c90" || standard == "gnu89" || standard == "gnu90" ||
         standard == "iso9899:1990" || standard == "iso9899:199409";
}

// ISO C modes and C++ before C++17 read trigraphs.
bool iso_with_trigraphs(std::string_view standard) {
  static constexpr std::array<std::string_view, 14> kModes = {
      "c89", "c90", "c9x", "c99",   "c1x",   "c11",   "c17",
      "c18", "c2x", "c23", "c++98", "c++03", "c++0x", "c++11"};
  if (standard.starts_with("iso9899") || standard == "c++1y" || standard == "c++14") return true;
  for (std::string_view m : kModes) {
    if (standard == m) return true;
  }
  return false;
}

// The -std= the command ends with, or "".
std::string_view last_standard(const compiler::CompileCommand& command) {
  std::string_view standard;
  for (std::string_view a : command.args) {
    if (a.starts_with("-std=")) standard = a.substr(5);
    if (a.starts_with("--std=")) standard = a.substr(6);
  }
  return standard;
}

}  // namespace

std::string token_keys_refused(const compiler::CompileCommand& command,
                               compiler::CompilerKind kind) {
  using compiler::Language;
  if (command.language != Language::kC && command.language != Language::kCxx) {
    return "not C or C++";
  }
  if (command.makes_pch) return "makes a precompiled header";
  static constexpr std::array<std::string_view, 15> kReadsComments = {"-save-temps",
                                                                      "-fdirectives-only",
                                                                      "-traditional",
                                                                      "-fplugin",
                                                                      "-Wp,",
                                                                      "-Xpreprocessor",
                                                                      "-Xclang",
                                                                      "-Wdocumentation",
                                                                      "-Weverything",
                                                                      "-Wtrailing-whitespace",
                                                                      "-fms-",
                                                                      "-gembed-source",
                                                                      "-Wimplicit-fallthrough=1",
                                                                      "-fdump-",
                                                                      "-fsave-optimization-record"};
  std::string_view dwarf;
  for (std::string_view a : command.args) {
    if (a == "-C" || a == "-CC") return std::string(a);
    for (std::string_view p : kReadsComments) {
      if (a.starts_with(p)) return std::string(a);
    }
    if (a.starts_with("-gdwarf")) dwarf = a;
  }
  if (kind == compiler::CompilerKind::kClang && command.debug_info && dwarf != "-gdwarf-2" &&
      dwarf != "-gdwarf-3" && dwarf != "-gdwarf-4") {
    return "clang's DWARF 5 line table holds each file's MD5";
  }
  return "";
}

TokenMode token_mode(const compiler::CompileCommand& command) {
  TokenMode mode;
  const std::string_view standard = last_standard(command);
  mode.trigraphs = iso_with_trigraphs(standard);
  mode.c90 = is_c90(standard);
  for (std::string_view a : command.args) {
    if (a == "-trigraphs") mode.trigraphs = true;
    if (a == "-ansi") mode.trigraphs = mode.c90 = true;  // C90 in C, C++98 in C++
    if (a == "-Wc90-c99-compat") mode.c90 = true;
  }
  return mode;
}

namespace {

// A kTokenTable value read: the fingerprint, then '?' when the bytes hold
// "??" and '/' when they hold a line comment; "-" where the text is unsure.
bool read_known(std::string_view value, TokenMemory::Known* k) {
  if (value == "-") return true;
  if (value.size() < 32 || !cache::Hash128::from_hex(value.substr(0, 32), &k->fingerprint)) {
    return false;
  }
  k->trigraphs = value.find('?', 32) != std::string_view::npos;
  k->line_comment = value.find('/', 32) != std::string_view::npos;
  return true;
}

// The file counts by its bytes where its token text is unsure, or where
// `mode` reads what the text leaves out.
cache::Hash128 answer(const TokenMemory::Known& k, TokenMode mode, const cache::Hash128& content) {
  const bool by_bytes =
      k.fingerprint.is_zero() || (mode.trigraphs && k.trigraphs) || (mode.c90 && k.line_comment);
  return by_bytes ? content : k.fingerprint;
}

}  // namespace

std::optional<cache::Hash128> token_fingerprint(cache::Store* store, std::string_view path,
                                                const std::string& cwd,
                                                const cache::Hash128& content, TokenMode mode,
                                                std::vector<cache::Store::MemoWrite>* learned,
                                                TokenMemory* memory) {
  if (memory) {
    if (auto it = memory->values.find(content); it != memory->values.end()) {
      return answer(it->second, mode, content);
    }
  }
  const std::string content_hex = content.hex();
  TokenMemory::Known k;
  if (std::optional<std::string> value = store->get_memo(kTokenTable, content_hex);
      value && read_known(*value, &k)) {
    if (memory) memory->values.emplace(content, k);
    return answer(k, mode, content);
  }
  base::Result<std::string> bytes = base::read_file(base::absolute_path(std::string(path), cwd));
  if (!bytes.ok() || cache::hash_bytes(*bytes) != content) return std::nullopt;
  std::string text;
  if (!lexer::token_text(*bytes, &text, &k.line_comment)) {
    learned->push_back({std::string(kTokenTable), content_hex, "-"});
    if (memory) memory->values.emplace(content, TokenMemory::Known{});
    return content;
  }
  cache::Hasher h;
  h.field("token text");
  h.field(text);
  k.fingerprint = h.digest();
  k.trigraphs = bytes->find("??") != std::string::npos;
  learned->push_back(
      {std::string(kTokenTable), content_hex,
       k.fingerprint.hex() + (k.trigraphs ? "?" : "") + (k.line_comment ? "/" : "")});
  if (memory) memory->values.emplace(content, k);
  return answer(k, mode, content);
}

std::optional<cache::Hash128> token_key(const compiler::CompilerIdentity& identity,
                                        const compiler::CompileCommand& command,
                                        const std::string& cwd, const Closure& closure,
                                        const KeyRelocation& relocation, cache::Store* store,
                                        bool write, TokenMemory* memory, ProbeDigests* probes) {
  std::vector<cache::Hash128> tokens(closure.files.size());
  std::vector<cache::Store::MemoWrite> learned;
  const TokenMode mode = token_mode(command);
  for (size_t i = 0; i < closure.files.size(); ++i) {
    const ClosureFile& f = closure.files[i];
    if (f.opaque || f.presence_only) continue;  // in the key as for the action key
    std::optional<cache::Hash128> fingerprint =
        token_fingerprint(store, f.path, cwd, f.content, mode, &learned, memory);
    if (!fingerprint) return std::nullopt;
    tokens[i] = *fingerprint;
  }
  if (write && !learned.empty()) (void)store->put_records({}, learned);
  return action_key(identity, command, cwd, closure, relocation, &tokens, probes);
}

std::optional<cache::Hash128> compile_token_key(const compiler::CompilerIdentity& identity,
                                                const compiler::CompileCommand& command,
                                                const std::string& cwd, const Closure& closure,
                                                const KeyRelocation& relocation,
                                                cache::Store* store, bool write, std::string* why) {
  if (std::string refused = token_keys_refused(command, identity.kind); !refused.empty()) {
    *why = refused;
    return std::nullopt;
  }
  std::optional<cache::Hash128> key =
      token_key(identity, command, cwd, closure, relocation, store, write);
  if (!key) {
    *why = "a file of the closure changed or cannot be read";
    return std::nullopt;
  }
  return closure.uses_date ? dated_key(*key) : *key;
}

}  // namespace lexpack::closure
