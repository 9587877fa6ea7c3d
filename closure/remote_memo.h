// A translation unit's closure as another machine can take it: the files it
// read (named as the key names them, relative to the working directory under
// base_dir) with their contents, the candidates it found missing and the
// search list it walked. A machine that finds the same contents, the same
// absences and the same search list would walk the same closure, so it takes
// this one and computes the key itself, without evaluating anything.
// Stored in the remote under a key of the command as relocated.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/file_stat.h"
#include "base/status.h"
#include "cache/hash/hash.h"
#include "cache/store.h"
#include "closure/dependency_closure.h"
#include "closure/key_relocation.h"
#include "closure/remote_memo_format.h"
#include "compiler/compile_command.h"
#include "compiler/identify_compiler.h"
#include "compiler/search_list.h"

namespace lexpack::closure {

class ScanFileCache;

// Where the memo of `command` lives in the remote: its compiler, arguments,
// source and environment as a relocatable key names them (the working
// directory too when base_dir is empty), so every checkout asks the same.
cache::Hash128 remote_memo_key(const compiler::CompilerIdentity& identity,
                               const compiler::CompileCommand& command, const std::string& cwd,
                               std::string_view base_dir);

// The memo of `closure` (keyed `action_key` before the date, walked with
// `list`, named as `relocation` names paths). nullopt when it cannot travel:
// not relocated while base_dir is set, unsure, __TIME__, #pragma once
// twins, a precompiled header, a computed include left to the depfile, a
// missing forced include, a search list that is not memoizable.
// `base`: the compiler's answer to the compile's base question, sent along
// when it may travel (compiler::shareable_base_answer), so that the machine
// that takes the memo asks its compiler nothing.
std::optional<std::string> encode_remote_memo(
    const Closure& closure, const compiler::SearchList& list, const KeyRelocation& relocation,
    const cache::Hash128& action_key,
    const std::optional<compiler::SearchList>& base = std::nullopt);

// What one build learns about this machine's files while it takes remote
// memos: each name a memo gives (in one working directory) is resolved,
// stat'ed, hashed or found missing once, however many memos give it.
// Thread-safe. `store` (may be null) answers contents from its file table.
// A closure taken with it keeps what it needs of it alive.
class LocalFacts {
 public:
  explicit LocalFacts(cache::Store* store);
  ~LocalFacts();
  LocalFacts(const LocalFacts&) = delete;
  LocalFacts& operator=(const LocalFacts&) = delete;
  // Finds what the names of `memos` (the memos of compiles in `cwd`) come to
  // here, on `jobs` threads, each name once: the memos taken next find
  // everything known.
  // `memos` as decode_remote_memo() gave them; one whose paths are not
  // relocated as `base_dir` says is left out. Each memo learned keeps the
  // facts of its names (RemoteMemoView::learned_files), for take_remote_memo
  // with these facts in `cwd`.
  void learn(const std::vector<RemoteMemoView*>& memos, const std::string& cwd,
             std::string_view base_dir, ScanFileCache* shared, int jobs);

  struct Impl;
  const std::shared_ptr<Impl>& impl() const { return impl_; }

 private:
  std::shared_ptr<Impl> impl_;
};

struct TakenClosure {
  Closure closure;  // paths as this machine's compiler names them, signatures taken now
  KeyRelocation relocation;
  cache::Hash128 key;  // before the date, equal to the one the memo was made with
};

// The closure memo `bytes` describes, for `command` in `cwd` here, whose
// search list is `list`: only when every file it names has the same content
// here, every candidate it found missing is missing here, the search list
// names the same directories and the paths relocate as they did. An error
// saying what differs otherwise (then the closure is evaluated as usual).
// A whole build passes its `shared` cache: each path is then stat'ed once
// per build, each directory before the candidates in it (so a closure memo
// encoded with the same cache vouches only for what was seen).
base::Result<TakenClosure> take_remote_memo(std::string_view bytes,
                                            const compiler::CompilerIdentity& identity,
                                            const compiler::CompileCommand& command,
                                            const std::string& cwd, std::string_view base_dir,
                                            const compiler::SearchList& list, LocalFacts* facts,
                                            ScanFileCache* shared = nullptr);
// The same for a memo decoded already (a build's memos are decoded once,
// for learn() and for this).
base::Result<TakenClosure> take_remote_memo(const RemoteMemoView& memo,
                                            const compiler::CompilerIdentity& identity,
                                            const compiler::CompileCommand& command,
                                            const std::string& cwd, std::string_view base_dir,
                                            const compiler::SearchList& list, LocalFacts* facts,
                                            ScanFileCache* shared = nullptr);

}  // namespace lexpack::closure
