// The per-TU closure memo behind the fast hit path: for one translation unit
// as invoked, the stat signature of every dependency and of every directory
// where a search candidate was missing, plus the action key they led to.
// Checking it costs one stat per dependency and per probed directory that
// exists; missing probed directories are vouched for by their deepest
// existing ancestor, so the cost does not grow with the number of them.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/hash/hash.h"
#include "cache/store.h"
#include "closure/dependency_closure.h"
#include "closure/memo_stat_source.h"
#include "compiler/search_list.h"

namespace lexpack::closure {

class ScanFileCache;

struct ClosureMemo {
  struct Dependency {
    std::string path;
    base::StatSignature stat;
    cache::Hash128 content;  // zero: any change of `stat` is a change
  };
  // A directory in which some candidates were missing. While its signature
  // (or its absence) is unchanged, no entry was added to it.
  struct ProbedDir {
    std::string dir;
    bool exists = false;
    bool check_each = false;  // signature too fresh to rely on: stat each probe
    base::StatSignature stat;
    std::vector<std::string> probes;  // full paths that must stay missing
  };
  cache::Hash128 action_key;  // before the date is mixed in
  bool uses_date = false;
  std::vector<Dependency> dependencies;
  std::vector<ProbedDir> probed_dirs;
  std::vector<std::string> absent_dirs;  // search dirs the compiler skipped as missing
  // Pairs, dropped then kept: search dirs the compiler dropped as the same
  // directory as a listed one, which must still be (SearchList::same_dirs).
  std::vector<std::string> same_dirs;
  // Missing probed directories under one existing ancestor that held no entry
  // for the next component of any of them (the kernel resolves a path's
  // components in order): while the ancestor's signature is unchanged, every
  // one of them is still missing, so a check stats the ancestor alone.
  struct VouchedDirs {
    std::string ancestor;  // "" for the working directory
    base::StatSignature stat;
    std::vector<std::string> dirs;
  };
  std::vector<VouchedDirs> vouched;
};

// A signature a memo check found moved while what it stands for did not (a
// header rewritten with the same bytes, a directory that gained an unrelated
// entry): applying these to the memo spares the next check the same work.
struct MemoRefresh {
  enum class Kind : uint8_t { kDependency, kProbedDir, kVouched };
  Kind kind{};
  size_t index = 0;  // into dependencies, probed_dirs or vouched
  base::StatSignature stat;
};

// Content of `path` at `sig` (the file table's answer, else hashed now); a
// memo check asks it for a dependency whose signature moved. nullopt: unknown.
using ContentLookup =
    std::function<std::optional<cache::Hash128>(std::string_view path, const base::StatSignature&)>;

// Whether a dependency recorded with signature `stat` (and, when not zero,
// its bytes' hash `recorded`) still holds now that its signature is `now`:
// the same signature, or the same bytes under a new one (`content` asked).
bool dependency_holds(std::string_view path, const base::StatSignature& now,
                      const base::StatSignature& stat, const cache::Hash128& recorded,
                      const ContentLookup* content);

// The lookup through `files` (FileStates::content_hash: the file table's
// answer, shared by every process, else the file read and hashed), paths
// relative to `cwd` made absolute. `files` and `cwd` must outlive it.
ContentLookup content_lookup(FileStates* files, const std::string& cwd);

// Applies `refresh` to `memo`, keeping only signatures settled by `now_ns`
// (a fresh one could still change unseen). False when nothing was applied.
bool apply_memo_refresh(const std::vector<MemoRefresh>& refresh, int64_t now_ns, ClosureMemo* memo);

// How a memo records a file whose signature is too fresh to be trusted.
enum class YoungFiles {
  kNoMemo,            // no memo may be stored
  kCheckedByContent,  // recorded as no file's signature: its content is
                      // compared on every use, until a check finds it
                      // settled and refreshes it (the prefetch, right
                      // after a configure wrote generated headers)
};

// The encoded memo of `closure` (action key before the date is mixed in).
// nullopt when some signature is too fresh to be trusted and `young` says
// kNoMemo (or the file has no content to compare: a #pragma once twin). A
// whole-build scan passes its `shared` cache, whose directory signatures
// were taken before any probe in them, and whose creation time is when
// signatures are judged settled; without one each probed directory is
// stat'ed now.
std::optional<std::string> encode_closure_memo(const Closure& closure,
                                               const compiler::SearchList& list,
                                               const cache::Hash128& action_key,
                                               ScanFileCache* shared = nullptr,
                                               const std::string& cwd = {},
                                               YoungFiles young = YoungFiles::kNoMemo);
// For explain only, when encode_closure_memo() refused: the same layout
// whatever the age of the signatures. Never to be checked for a hit: a file
// changed again within its signature's resolution looks unchanged. Empty when
// the closure cannot be encoded at all.
std::string encode_explain_memo(const Closure& closure, const compiler::SearchList& list,
                                const cache::Hash128& action_key);
// The same layout from a memo given field by field.
std::string encode_closure_memo(const ClosureMemo& memo);
bool decode_closure_memo(std::string_view bytes, ClosureMemo* memo);

// One memo holding what each memo added holds, each fact once (a
// directory's probes from every memo that probed it under the same
// signature): its check fails exactly when one of theirs would. What it
// keeps is copied, so each memo need only live through its add().
class ClosureMemoUnion {
 public:
  ClosureMemoUnion();
  ~ClosureMemoUnion();
  // False when `memo` is not an encoded memo (nothing is added).
  bool add(std::string_view memo);
  // The union, encoded; its action key is zero.
  std::string encode() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};
// The dependencies' paths of encoded memo `bytes`, as views into it; false
// when it is not a memo.
bool closure_memo_dependencies(std::string_view bytes, std::vector<std::string_view>* paths);

// Empty when everything recorded still holds; else what changed first
// ("changed: inc/a.h", "appeared: inc/b.h", ...). `stats` null: the default.
std::string check_closure_memo(const ClosureMemo& memo, MemoStatSource* stats = nullptr,
                               const ContentLookup* content = nullptr,
                               std::vector<MemoRefresh>* refresh = nullptr);

// The action key an encoded memo leads to, and whether its closure uses
// __DATE__, from its head alone, with nothing checked. False when `bytes`
// does not start as a memo.
bool closure_memo_key(std::string_view bytes, cache::Hash128* action_key, bool* uses_date);

// The first dependency of an encoded memo (the source), from the bytes
// before the others: its path as a view into `bytes`, its signature and
// content as recorded. False when `bytes` does not start as a memo naming
// one.
bool closure_memo_first_dependency(std::string_view bytes, std::string_view* path,
                                   base::StatSignature* stat, cache::Hash128* content);

// check_closure_memo() on the encoded memo, without decoding it into a
// ClosureMemo (the hit path: no string built per dependency). False when
// `bytes` is not a memo; else *action_key, *uses_date and *changed are set.
bool check_encoded_closure_memo(std::string_view bytes, cache::Hash128* action_key, bool* uses_date,
                                std::string* changed);
// The same for all but the dependencies: whether what the memo found
// missing is still missing and its directories the same (probed, vouched,
// absent and same directories). For a caller that checks every dependency
// otherwise (the launcher of a compile already running checks each file of
// its closure after the compile).
bool check_encoded_memo_directories(std::string_view bytes, std::string* changed);
// The same through `stats` (may be null), also giving the dependencies' paths
// as views into `bytes` when `dependencies` is not null.
bool check_encoded_closure_memo(std::string_view bytes, MemoStatSource* stats,
                                cache::Hash128* action_key, bool* uses_date, std::string* changed,
                                std::vector<std::string_view>* dependencies,
                                const ContentLookup* content = nullptr,
                                std::vector<MemoRefresh>* refresh = nullptr);

}  // namespace lexpack::closure
