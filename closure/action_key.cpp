// Key derivation. Paths enter as the compiler names them (they appear in the
// depfile and in __FILE__), or relative to the working directory when the
// compile is relocatable (key_relocation.h); the working directory only when
// the object records it (debug info without a prefix map covering it).
#include "closure/action_key.h"

#include <algorithm>
#include <ctime>

#include "compiler/search_list.h"

namespace lexpack::closure {
namespace {

void hash_command(cache::Hasher* h, const compiler::CompilerIdentity& identity,
                  const std::vector<std::string>& args, const std::string& source) {
  h->field(identity.hash.lo);
  h->field(identity.hash.hi);
  h->field(args.size());
  for (const std::string& a : args) h->field(a);
  h->field(source);
  h->field(compiler::relevant_environment());
}

}  // namespace

cache::Hash128 translation_unit_key(const compiler::CompilerIdentity& identity,
                                    const compiler::CompileCommand& command, const std::string& cwd,
                                    std::string_view base_dir) {
  cache::Hasher h;
  h.field("lexpack-tu-1");
  hash_command(&h, identity, command.args, command.source);
  h.field(cwd);
  // A memo written under another base_dir holds a key named differently.
  if (!base_dir.empty()) h.field(base_dir);
  return h.digest();
}

cache::Hash128 action_key(const compiler::CompilerIdentity& identity,
                          const compiler::CompileCommand& command, const std::string& cwd,
                          const Closure& closure, const KeyRelocation& relocation,
                          const std::vector<cache::Hash128>* tokens) {
  cache::Hasher h;
  h.field(kActionFormat);
  if (tokens) h.field("tokens");
  if (relocation.relocated) {
    // Never equal to a key whose stored text holds absolute paths.
    h.field("relocated");
    hash_command(&h, identity, relocated_args(command, relocation),
                 relocation.name(command.source));
  } else {
    hash_command(&h, identity, command.args, command.source);
  }
  bool records_cwd = command.debug_info && !compiler::cwd_is_mapped(command, cwd);
  h.field(records_cwd ? cwd : std::string("-"));
  // The set of files and of failed probes decides the output, not the order
  // the walk met them in: each is hashed in name order (the source first).
  // Names as the key spells them: the paths themselves, or their relocated
  // names (kept in `renamed`, which the views point into).
  std::vector<std::string> renamed;
  auto names = [&](auto paths, size_t n) {
    std::vector<std::string_view> out(n);
    if (relocation.relocated) {
      renamed.resize(n);
      for (size_t i = 0; i < n; ++i) out[i] = renamed[i] = relocation.name(paths(i));
    } else {
      for (size_t i = 0; i < n; ++i) out[i] = paths(i);
    }
    return out;
  };
  const std::vector<std::string_view> file_names = names(
      [&](size_t i) -> std::string_view { return closure.files[i].path; }, closure.files.size());
  std::vector<std::pair<std::string_view, size_t>> files;
  files.reserve(file_names.size());
  for (size_t i = 0; i < file_names.size(); ++i) files.emplace_back(file_names[i], i);
  if (!files.empty()) std::stable_sort(files.begin() + 1, files.end());
  h.field(files.size());
  for (const auto& [file_name, i] : files) {
    const ClosureFile& f = closure.files[i];
    h.field(file_name);
    if (f.opaque && !f.made_by.is_zero()) {
      h.field("made by " + f.made_by.hex());
    } else if (f.presence_only) {
      h.field("present");
    } else {
      const cache::Hash128& content =
          relocation.relocated ? relocation.content_of(i, f.content) : f.content;
      // A relocated content (relocated_content.h) and a precompiled header
      // count as for the action key.
      h.field(tokens && !f.opaque && content == f.content ? "t" + (*tokens)[i].hex()
                                                          : content.hex());
    }
  }
  // Which identical #pragma once files the compiler takes as one.
  if (!closure.once_twins.empty()) h.field(closure.once_twins);
  // (The files' names are hashed: `renamed` may hold the probes' now.)
  std::vector<std::string_view> probes =
      names([&](size_t i) { return closure.failed_probes[i]; }, closure.failed_probes.size());
  std::sort(probes.begin(), probes.end());
  h.field(probes.size());
  for (std::string_view p : probes) h.field(p);
  return h.digest();
}

cache::Hash128 pch_maker_key(const compiler::CompilerIdentity& identity,
                             const compiler::CompileCommand& command, const std::string& cwd,
                             const Closure& closure, const KeyRelocation& relocation) {
  if (!command.makes_pch) return cache::Hash128();
  KeyRelocation as_maker = relocation;
  as_maker.relocated = relocation.relocated || relocation.pch_maker_relocatable;
  cache::Hasher h;
  h.field("pch-maker");
  const cache::Hash128 key = action_key(identity, command, cwd, closure, as_maker);
  h.field((closure.uses_date ? dated_key(key) : key).hex());
  return h.digest();
}

cache::Hash128 action_key(const compiler::CompilerIdentity& identity,
                          const compiler::CompileCommand& command, const std::string& cwd,
                          const Closure& closure) {
  return action_key(identity, command, cwd, closure, KeyRelocation());
}

cache::Hash128 dated_key(const cache::Hash128& key) {
  time_t now = time(nullptr);
  struct tm local;
  localtime_r(&now, &local);
  char date[32];
  strftime(date, sizeof date, "%b %e %Y", &local);  // the form of __DATE__
  cache::Hasher h;
  h.field("dated");
  h.field(key.hex());
  h.field(date);
  return h.digest();
}

cache::Hash128 pinned_key(const cache::Hash128& key, const std::string& cwd) {
  cache::Hasher h;
  h.field("compile-pinned");
  h.field(key.lo);
  h.field(key.hi);
  h.field(cwd);
  return h.digest();
}

}  // namespace lexpack::closure
