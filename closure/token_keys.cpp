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

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// C90 warns about // comments under -pedantic.
bool is_c90(std::string_view standard) {
  return standard == "c89" || standard == "c90" || standard == "gnu89" || standard == "gnu90" ||
         standard == "iso9899:1990" || standard == "iso9899:199409";
}

// ISO C modes and C++ before C++17 read trigraphs.
bool iso_with_trigraphs(std::string_view standard) {
  static constexpr std::array<std::string_view, 12> kModes = {
      "c9x", "c99", "c1x", "c11", "c17", "c18", "c2x", "c23", "c++98", "c++03", "c++0x", "c++11"};
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
  static constexpr std::array<std::string_view, 16> kReadsComments = {"-save-temps",
                                                                      "-fdirectives-only",
                                                                      "-traditional",
                                                                      "-fplugin",
                                                                      "-Wp,",
                                                                      "-Xpreprocessor",
                                                                      "-Xclang",
                                                                      "-Wdocumentation",
                                                                      "-Weverything",
                                                                      "-Wtrailing-whitespace",
                                                                      "-Wc90-c99-compat",
                                                                      "-fms-",
                                                                      "-gembed-source",
                                                                      "-Wimplicit-fallthrough=1",
                                                                      "-fdump-",
                                                                      "-fsave-optimization-record"};
  std::string_view dwarf;
  for (std::string_view a : command.args) {
    if (a == "-C" || a == "-CC" || a == "-ansi") return std::string(a);
    for (std::string_view p : kReadsComments) {
      if (starts_with(a, p)) return std::string(a);
    }
    if (starts_with(a, "-gdwarf")) dwarf = a;
  }
  if (std::string_view standard = last_standard(command); is_c90(standard)) {
    return "-std=" + std::string(standard);
  }
  if (kind == compiler::CompilerKind::kClang && command.debug_info && dwarf != "-gdwarf-2" &&
      dwarf != "-gdwarf-3" && dwarf != "-gdwarf-4") {
    return "clang's DWARF 5 line table holds each file's MD5";
  }
  return "";
}

bool reads_trigraphs(const compiler::CompileCommand& command) {
  for (std::string_view a : command.args) {
    if (a == "-trigraphs") return true;
  }
  return iso_with_trigraphs(last_standard(command));
}

std::optional<cache::Hash128> token_fingerprint(cache::Store* store, const std::string& path,
                                                const cache::Hash128& content, bool trigraphs,
                                                std::vector<cache::Store::MemoWrite>* learned) {
  const std::string content_hex = content.hex();
  if (std::optional<std::string> known = store->get_memo(kTokenTable, content_hex)) {
    cache::Hash128 fingerprint;
    if (*known == "-" || (trigraphs && known->ends_with("?"))) return content;
    if (cache::Hash128::from_hex(std::string_view(*known).substr(0, 32), &fingerprint)) {
      return fingerprint;
    }
  }
  base::Result<std::string> bytes = base::read_file(path);
  if (!bytes.ok() || cache::hash_bytes(*bytes) != content) return std::nullopt;
  std::string text;
  if (!lexer::token_text(*bytes, &text)) {
    learned->push_back({std::string(kTokenTable), content_hex, "-"});
    return content;
  }
  cache::Hasher h;
  h.field("token text");
  h.field(text);
  const cache::Hash128 fingerprint = h.digest();
  // "??" anywhere: a trigraph where they are read (kept apart with a '?').
  const bool question_marks = bytes->find("??") != std::string::npos;
  learned->push_back(
      {std::string(kTokenTable), content_hex, fingerprint.hex() + (question_marks ? "?" : "")});
  return trigraphs && question_marks ? content : fingerprint;
}

std::optional<cache::Hash128> token_key(const compiler::CompilerIdentity& identity,
                                        const compiler::CompileCommand& command,
                                        const std::string& cwd, const Closure& closure,
                                        const KeyRelocation& relocation, cache::Store* store,
                                        bool write) {
  std::vector<cache::Hash128> tokens(closure.files.size());
  std::vector<cache::Store::MemoWrite> learned;
  const bool trigraphs = reads_trigraphs(command);
  for (size_t i = 0; i < closure.files.size(); ++i) {
    const ClosureFile& f = closure.files[i];
    if (f.opaque || f.presence_only) continue;  // in the key as for the action key
    std::optional<cache::Hash128> fingerprint = token_fingerprint(
        store, base::absolute_path(std::string(f.path), cwd), f.content, trigraphs, &learned);
    if (!fingerprint) return std::nullopt;
    tokens[i] = *fingerprint;
  }
  if (write && !learned.empty()) (void)store->put_records({}, learned);
  return action_key(identity, command, cwd, closure, relocation, &tokens);
}

}  // namespace lexpack::closure
