// The action key: XXH3-128 over everything that decides the object, the
// depfile and the compiler's messages. Two keys are equal only when a fresh
// compile would produce the same bytes.
#pragma once

#include <string>
#include <vector>

#include "cache/hash/hash.h"
#include "closure/dependency_closure.h"
#include "closure/key_relocation.h"
#include "compiler/compile_command.h"
#include "compiler/identify_compiler.h"

namespace lexpack::closure {

// 2: the closure's files and failed probes hashed in path order, not in the
// order the walk met them (an evaluation replaying a recorded header asks
// its includes in another order than one evaluating it).
inline constexpr std::string_view kActionFormat = "lexpack-action-3";

// Names one translation unit as invoked (compiler, arguments, working dir,
// environment): the key of its closure memo.
cache::Hash128 translation_unit_key(const compiler::CompilerIdentity& identity,
                                    const compiler::CompileCommand& command, const std::string& cwd,
                                    std::string_view base_dir = {});

// The key of the compile, before the date is added for __DATE__ users.
cache::Hash128 action_key(const compiler::CompilerIdentity& identity,
                          const compiler::CompileCommand& command, const std::string& cwd,
                          const Closure& closure);
// The failed probes' digests in a key's order: the same in a compile's
// action key and its token key, so the second takes the first's.
struct ProbeDigests {
  std::vector<cache::Hash128> sorted;
  bool made = false;
};
// Puts `digests` in the order the key hashes them (by value); one who makes
// ProbeDigests of its own (each a hash of the probe's name as the key names
// it) sorts them so.
void sort_key_digests(std::vector<cache::Hash128>* digests);

// The same with the paths under relocation.base_dir named relative when
// relocation.relocated (decide_relocation). With `tokens`, the token key
// (token_keys.h): (*tokens)[i] stands for the bytes of closure file i.
// `probes`, when given, is used if made, else made (for the same closure
// and relocation only).
cache::Hash128 action_key(const compiler::CompilerIdentity& identity,
                          const compiler::CompileCommand& command, const std::string& cwd,
                          const Closure& closure, const KeyRelocation& relocation,
                          const std::vector<cache::Hash128>* tokens = nullptr,
                          ProbeDigests* probes = nullptr);

// The key a compile that makes a precompiled header is known by to the
// compiles that take it (pch_maker.h): its key with the paths relocated
// where only the precompiled header kept them absolute, dated like its
// stored key; zero when it makes none.
cache::Hash128 pch_maker_key(const compiler::CompilerIdentity& identity,
                             const compiler::CompileCommand& command, const std::string& cwd,
                             const Closure& closure, const KeyRelocation& relocation);

// `key` with today's date mixed in (for sources that expand __DATE__).
cache::Hash128 dated_key(const cache::Hash128& key);

// Where a result whose key is relocated but whose outputs name this
// checkout is stored (a path under base_dir in the object's own text): a key
// of `cwd` only, tried after the relocated one.
cache::Hash128 pinned_key(const cache::Hash128& key, const std::string& cwd);

}  // namespace lexpack::closure
