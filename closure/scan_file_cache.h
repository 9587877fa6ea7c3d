// What one whole-build scan learns about files, shared by all its threads:
// each path is stat'ed, looked up in the store or lexed once per scan rather
// than once per TU, and each include resolved once per search context. One
// compile outside a scan keeps a private one only for its include graph.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/file_stat.h"
#include "base/view_map.h"
#include "cache/hash/hash.h"
#include "cache/store.h"
#include "closure/file_summary.h"
#include "closure/resolution.h"
#include "lexer/scan_result.h"

namespace lexpack::closure {

// A file's bytes and lexer scan as a scan's walk read them: the evaluation
// of the scan's TUs takes them instead of reading and lexing it again.
struct LexedFile {
  base::StatSignature stat;
  std::string bytes;
  lexer::ScanResult scan;
};

class ScanFileCache {
 public:
  // The stat answer recorded for `abs_path`: nullopt when none yet; an empty
  // inner optional when the path is not a regular file.
  std::optional<std::optional<base::StatSignature>> find_stat(const std::string& abs_path);
  void put_stat(const std::string& abs_path, const std::optional<base::StatSignature>& sig);
  // stat_file() of `path` (relative to the working directory), asked once per
  // scan under `abs_path`; nullopt when it is not a regular file.
  std::optional<base::StatSignature> stat_once(const std::string& path,
                                               const std::string& abs_path);

  // The signature of directory `path` (following symlinks), nullopt when it
  // is not a directory; asked once per scan under `abs_path`.
  std::optional<base::StatSignature> dir_stat_once(const std::string& path,
                                                   const std::string& abs_path);

  // Whether this cache holds any answer about `abs_path` (a stat, a
  // directory's signature, an absence, a summary).
  bool knows(const std::string& abs_path);
  // For a cache kept past changes whose every path is known (a long-lived
  // server's): the stat answer of the file at `abs_path` is forgotten, and
  // the signature of the directory at `abs_dir` taken again now. The caller
  // makes sure no answer this cache keeps about a name in that directory
  // has changed: a signature newer than a kept answer would vouch for it.
  void forget_stat(const std::string& abs_path);
  void restat_dir(const std::string& abs_dir);

  // no_entry() of `abs_path` (closure/absence.h), asked once per scan.
  // Callers take the signature of its directory first (dir_stat_once), so
  // that signature is never newer than this answer; when that answer is
  // that the directory is gone, so is the entry (no syscall).
  bool no_entry_once(const std::string& abs_path);
  // vouchable_entry() of `abs_path` (closure/absence.h), asked once per scan,
  // after the signature of its directory (VouchedGroups takes it first).
  bool vouchable_once(const std::string& abs_path);
  // The same for the failed candidate numbered `candidate` (candidate_ids)
  // named `name` in the absolute directory `dir`: after the first time,
  // answered by the number alone, no path made (every TU's memo checks the
  // probes of the headers it shares with others).
  bool candidate_no_entry_once(uint32_t candidate, std::string_view dir, std::string_view name);

  // `path`, kept once for the life of this cache: equal paths give views of
  // the same string (a scan's answers name each file once, not once per TU).
  std::string_view intern(std::string_view path);

  // Every stat this cache answers was taken after this time (its creation):
  // whether a signature was settled when taken is judged against it.
  int64_t created_ns() const { return created_ns_; }

  // The summary recorded for `abs_path` when it was taken at `sig`.
  std::shared_ptr<const FileSummary> find_summary(const std::string& abs_path,
                                                  const base::StatSignature& sig);
  void put_summary(const std::string& abs_path, const base::StatSignature& sig,
                   std::shared_ptr<const FileSummary> summary);

  // Walks keep the bytes and scan of each file they lex (for a scan that
  // evaluates its TUs; off by default: nothing else reads them).
  void keep_lexed() { keep_lexed_ = true; }
  bool keeps_lexed() const { return keep_lexed_; }
  // The bytes and scan of the file with `sig` (by device and inode) when a
  // walk lexed it in this scan, else null.
  std::shared_ptr<const LexedFile> find_lexed(const base::StatSignature& sig);
  void put_lexed(std::shared_ptr<const LexedFile> file);
  // Calls `fn` on every file walks lexed so far.
  void for_each_lexed(const std::function<void(const LexedFile&)>& fn);

  // One search's outcome and the candidates it found missing, so that a TU
  // that asks the same question reports the same failed probes.
  struct Node;
  struct Answer {
    Resolution resolution;
    std::vector<std::string> failed;
    // Per failed candidate: its id and its directory's id (candidate_ids()),
    // so a walk dedupes and groups them by number, not by string. Empty when
    // the resolver that made the answer had no cache to number them.
    std::vector<uint32_t> failed_ids;
    std::vector<uint32_t> failed_dir_ids;
    // The graph node of `resolution` once a walk looked it up (the same for
    // every asker: an answer belongs to one search context).
    mutable std::atomic<Node*> node{nullptr};
  };
  // A small number for one (working directory, compiler kind, search chain).
  uint64_t context_id(const std::string& context);
  std::shared_ptr<const Answer> find_answer(const std::string& key) { return answers_.find(key); }
  // Keeps `answer` unless another thread put one for `key` first; returns the
  // one kept, which every asker must use (the other is freed with its owner).
  std::shared_ptr<const Answer> put_answer(const std::string& key,
                                           std::shared_ptr<const Answer> answer) {
    return answers_.put(key, std::move(answer));
  }

  // Dense numbers for failed candidates and, separately, for directories:
  // the same path has the same number in every context of this cache.
  struct CandidateIds {
    uint32_t candidate;
    uint32_t dir;
  };
  CandidateIds candidate_ids(std::string_view path);

  // When the absolute directory `dir` (numbered `dir_id` by candidate_ids)
  // is gone, its shortest prefix that is gone too (stat fails with ENOENT
  // or ENOTDIR), named with a trailing '/', with its numbers: nothing under
  // it can be opened while it is no directory, so a closure names it once
  // instead of every failed candidate under it (a Boost TU's thousands of
  // <boost/...> tried in each system directory). As a failed probe it is
  // checked as the missing directories of a memo are (its directory is the
  // prefix itself; lstat of "prefix/" fails unless it is a directory).
  // Null when `dir` is there or is relative. Asked once per directory
  // number.
  struct AbsentRoot {
    std::string_view path;  // intern()ed
    CandidateIds ids;
  };
  const AbsentRoot* absent_root(uint32_t dir_id, std::string_view dir);

  // One file of the include graph of a search context, as found at one place
  // in the search chain (which #include_next depends on). Its edges are worked
  // out once, by whichever walk claims it first; they are the same for every
  // TU of that context.
  struct Node {
    Resolution where;      // the path as the compiler names it, stat, chain index
    uint32_t path_id = 0;  // equal for every node of the same context and path
    // kNew, then kClaimed by the walk expanding it, then kExpanded: only then
    // may the fields below be read.
    enum State : int { kNew, kClaimed, kExpanded };
    std::atomic<int> state{kNew};
    std::mutex mu;
    std::condition_variable expanded;
    base::Status status;  // of the expansion
    std::shared_ptr<const FileSummary> summary;
    struct Edge {
      std::shared_ptr<const Answer> answer;
      Node* node = nullptr;   // the file the answer found; null when none
      bool presence = false;  // asked by __has_include only
      bool failed = false;    // the answer has failed candidates
    };
    std::vector<Edge> edges;  // one per plain directive, in order
    std::string normal;       // in a scan: where.path absolute and normal
    // Set by the first expand_reachable (a scan's first pass) that reached
    // this node: that one expands it and goes on to its children.
    std::atomic<bool> reached{false};
    bool computed = false;           // a computed #include or __has_include
    bool computed_presence = false;  // a computed __has_include
  };
  // The node of `where` in `context` (a resolver's context()), made on first
  // use; it lives as long as this cache.
  Node* node(const std::string& context, const Resolution& where);
  // The same for a file named on the command line (a TU's source), stat'ed
  // just before: a node kept from when the file had another signature is
  // put aside for a new one (the old one stays alive for those holding it).
  Node* root_node(const std::string& context, const Resolution& where);
  // Calls `fn` on every node some walk expanded. Not while walks run.
  void for_each_expanded(const std::function<void(const Node&)>& fn);

 private:
  const int64_t created_ns_ = base::now_ns();
  // candidate_no_entry_once's answers by candidate number, in chunks made
  // on first use: 0 not asked yet, 1 no entry, 2 some entry. Few pointers:
  // a compile outside a scan makes a cache of its own and never asks.
  static constexpr uint32_t kAnswerChunkBits = 16;
  static constexpr uint32_t kAnswerChunks = 256;
  std::array<std::atomic<std::atomic<uint8_t>*>, kAnswerChunks> no_entry_by_candidate_{};
  std::mutex no_entry_chunks_mu_;
  std::vector<std::unique_ptr<std::atomic<uint8_t>[]>> no_entry_chunks_;
  bool keep_lexed_ = false;
  struct Entry {
    bool stat_known = false;
    std::optional<base::StatSignature> stat;
    bool dir_known = false;
    std::optional<base::StatSignature> dir;
    bool entry_known = false;
    bool no_entry = false;
    bool vouch_known = false;
    bool vouchable = false;
    bool dir_gone = false;  // with dir_known: nothing can be under it (ENOENT, ENOTDIR)
    base::StatSignature summary_sig;
    std::shared_ptr<const FileSummary> summary;
  };
  struct Shard {
    std::mutex mu;
    std::unordered_map<std::string, Entry, cache::StringHash, std::equal_to<>> entries;
  };
  static constexpr size_t kShards = 64;
  Shard& shard_of(const std::string& abs_path);
  // A directory's signature (nullopt: not a directory), and whether nothing
  // can be under the path: it or a directory on the way is missing
  // (ENOENT), or a file stands on the way (ENOTDIR); not for EACCES and the
  // like.
  struct DirKnown {
    std::optional<base::StatSignature> sig;
    bool gone = false;
  };
  static DirKnown ask_dir(const std::string& path);  // a stat now
  // ask_dir()'s answer for `path`, asked once per cache under `abs_path`.
  DirKnown dir_answer_once(const std::string& path, const std::string& abs_path);
  // The answer of `ask` for abs_path, asked once per cache: `known` and
  // `value` are the entry's fields that hold it.
  template <class T, class Ask>
  T once(const std::string& abs_path, bool Entry::*known, T Entry::*value, Ask ask);
  std::array<Shard, kShards> shards_;
  struct InternPart {
    std::mutex mu;
    std::unordered_set<std::string, cache::StringHash, std::equal_to<>> paths;
  };
  std::array<InternPart, kShards> interned_;
  struct LexedPart {
    std::mutex mu;
    std::map<std::pair<uint64_t, uint64_t>, std::shared_ptr<const LexedFile>> files;
  };
  std::array<LexedPart, kShards> lexed_parts_;
  std::mutex contexts_mu_;
  std::unordered_map<std::string, uint64_t> contexts_;

  // Immutable values shared by key; the first one put for a key stays.
  template <typename V>
  class SharedMap {
   public:
    std::shared_ptr<const V> find(const std::string& key) {
      Part& p = part_of(key);
      std::lock_guard lock(p.mu);
      auto it = p.values.find(key);
      return it == p.values.end() ? nullptr : it->second;
    }
    std::shared_ptr<const V> put(const std::string& key, std::shared_ptr<const V> value) {
      Part& p = part_of(key);
      std::lock_guard lock(p.mu);
      return p.values.emplace(key, std::move(value)).first->second;
    }

   private:
    struct Part {
      std::mutex mu;
      std::unordered_map<std::string, std::shared_ptr<const V>, cache::StringHash, std::equal_to<>>
          values;
    };
    Part& part_of(const std::string& key) { return parts_[cache::hash64(key) % kShards]; }
    std::array<Part, kShards> parts_;
  };
  SharedMap<Answer> answers_;
  struct NodePart {
    std::mutex mu;
    std::unordered_map<std::string, std::unique_ptr<Node>, cache::StringHash, std::equal_to<>>
        nodes;
    std::vector<std::unique_ptr<Node>> put_aside;  // root_node's old ones
  };
  Node* node_impl(const std::string& context, const Resolution& where, bool root);
  std::array<NodePart, kShards> node_parts_;
  using IdMap = base::ViewMap<uint32_t>;
  std::mutex candidate_ids_mu_;
  IdMap candidate_ids_, dir_ids_;
  std::mutex absent_roots_mu_;
  // absent_root's answers by directory number; null: asked, none.
  std::unordered_map<uint32_t, const AbsentRoot*> absent_root_of_dir_;
  std::vector<std::unique_ptr<AbsentRoot>> absent_roots_;
  std::mutex path_ids_mu_;
  // context + path -> id
  std::unordered_map<std::string, uint32_t, cache::StringHash, std::equal_to<>> path_ids_;
};

}  // namespace lexpack::closure
