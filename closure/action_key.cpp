// Key derivation. Paths enter as the compiler names them (they appear in the
// depfile and in __FILE__), or relative to the working directory when the
// compile is relocatable (key_relocation.h); the working directory only when
// the object records it (debug info without a prefix map covering it).
#include "closure/action_key.h"

#include <algorithm>
#include <array>
#include <ctime>
#include <utility>

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
                          const std::vector<cache::Hash128>* tokens, ProbeDigests* probes) {
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
  // the walk met them in. Each file (its name, and what counts of it) and
  // each probe is hashed alone; the digests are hashed in their own order,
  // the source's first. No name is compared with another: a closure holds
  // thousands of paths that share long prefixes. Names as the key spells
  // them: the paths themselves, or their relocated names.
  std::string renamed, part;
  auto name_of = [&](std::string_view path) { return relocation.name_in(path, &renamed); };
  auto file_digest = [&](size_t i) {
    const ClosureFile& f = closure.files[i];
    part.assign(name_of(f.path));
    part.push_back('\0');
    cache::Hash128 value;
    if (f.opaque && !f.made_by.is_zero()) {
      part.push_back('m');  // made by that compile (a precompiled header)
      value = f.made_by;
    } else if (f.presence_only) {
      part.push_back('p');
    } else {
      const cache::Hash128& content =
          relocation.relocated ? relocation.content_of(i, f.content) : f.content;
      // A relocated content (relocated_content.h) and a precompiled header
      // count as for the action key.
      const bool by_tokens = tokens && !f.opaque && content == f.content;
      part.push_back(by_tokens ? 't' : 'c');
      value = by_tokens ? (*tokens)[i] : content;
    }
    part.append(reinterpret_cast<const char*>(&value.lo), sizeof value.lo);
    part.append(reinterpret_cast<const char*>(&value.hi), sizeof value.hi);
    return cache::hash_bytes(part);
  };
  auto put = [&h](const cache::Hash128& d) {
    h.field(d.lo);
    h.field(d.hi);
  };
  std::vector<cache::Hash128> digests;
  digests.reserve(closure.files.size());
  for (size_t i = 1; i < closure.files.size(); ++i) digests.push_back(file_digest(i));
  sort_key_digests(&digests);
  h.field(closure.files.size());
  if (!closure.files.empty()) put(file_digest(0));
  h.fields(digests);
  // Which identical #pragma once files the compiler takes as one.
  if (!closure.once_twins.empty()) h.field(closure.once_twins);
  ProbeDigests own;
  if (!probes) probes = &own;
  if (!probes->made) {
    std::vector<cache::Hash128>& sorted = probes->sorted;
    sorted.clear();
    sorted.reserve(closure.failed_probes.size());
    for (std::string_view p : closure.failed_probes)
      sorted.push_back(cache::hash_bytes(name_of(p)));
    sort_key_digests(&sorted);
    probes->made = true;
  }
  h.field(probes->sorted.size());
  h.fields(probes->sorted);
  return h.digest();
}

void sort_key_digests(std::vector<cache::Hash128>* digests) {
  auto by_value = [](const cache::Hash128& a, const cache::Hash128& b) {
    return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo;
  };
  // A Boost TU's key takes thousands (its failed candidates): sorted by
  // `hi` a byte at a time (each pass keeps the order of the last), then
  // each run of equal `hi` by `lo`: the order std::sort gives, in half its
  // time at that size.
  constexpr size_t kRadixFrom = 2048;
  const size_t n = digests->size();
  if (n < kRadixFrom) {
    std::sort(digests->begin(), digests->end(), by_value);
    return;
  }
  std::vector<cache::Hash128> other(n);
  cache::Hash128* from = digests->data();
  cache::Hash128* to = other.data();
  std::vector<std::array<size_t, 256>> counts(8);
  for (size_t i = 0; i < n; ++i) {
    for (size_t b = 0; b < 8; ++b) ++counts[b][(from[i].hi >> (8 * b)) & 0xff];
  }
  for (size_t b = 0; b < 8; ++b) {
    std::array<size_t, 256>& at = counts[b];
    if (at[(from[0].hi >> (8 * b)) & 0xff] == n) continue;  // one value of this byte
    size_t sum = 0;
    for (size_t& c : at) sum += std::exchange(c, sum);
    for (size_t i = 0; i < n; ++i) to[at[(from[i].hi >> (8 * b)) & 0xff]++] = from[i];
    std::swap(from, to);
  }
  if (from != digests->data()) std::copy(from, from + n, digests->data());
  for (auto run = digests->begin(); run != digests->end();) {
    auto end =
        std::find_if(run, digests->end(), [&](const cache::Hash128& d) { return d.hi != run->hi; });
    if (end - run > 1) std::sort(run, end, by_value);
    run = end;
  }
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
