// What the server may still believe without a stat: every path a remembered
// closure depends on is resolved component by component under inotify
// watches, and an event on any entry it looked up (or on the file itself)
// makes that closure unknown again. Anything inotify cannot promise (queue
// overflow, watch limits, filesystems it does not hear) drops trust.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/file_stat.h"
#include "cache/hash/hash.h"

struct inotify_event;

namespace lexpack::server {

// A trusted thing (one closure) as the table knows it; `generation` changes
// each time trust is built again, so references from an older trust are ignored.
struct TrustRef {
  uint32_t id = 0;
  uint64_t generation = 0;
};

class WatchTable {
 public:
  WatchTable() = default;
  ~WatchTable();
  WatchTable(const WatchTable&) = delete;
  WatchTable& operator=(const WatchTable&) = delete;

  // inotify_init1; false when inotify is unavailable (then nothing is trusted).
  bool open();

  // Starts a pass of watch_path() calls for `ref`. Within one pass a lookup
  // is done once: every watch is in place before the first lookup through it.
  void begin_pass(TrustRef ref);
  // Resolves absolute `path` as the kernel would (symlinks, `..`), watching
  // each directory before looking the next component up in it, and the final
  // file itself. False when the path cannot be watched (watch limit, a
  // filesystem whose changes inotify may not report): then it must not be
  // trusted. A file with several links is added to `multi_linked`.
  bool watch_path(const std::string& path);
  struct Linked {
    std::string path;
    base::StatSignature stat;
  };
  const std::vector<Linked>& multi_linked() const { return multi_linked_; }

  // Reads every queued event (until EAGAIN) and reports each invalidated
  // reference through `invalidate`; `*drop_all` is set on queue overflow.
  template <typename F>
  void drain(F&& invalidate, bool* drop_all) {
    drain_impl([](void* f, TrustRef r) { (*static_cast<F*>(f))(r); }, &invalidate, drop_all);
  }
  // Forgets every dependency (after trust was dropped everywhere).
  void forget_dependencies();

  // What the events read so far named, for those who keep answers of their
  // own about watched paths (the server's walk share): each path an event
  // was about, as its watch was made, with whether a directory entry
  // changed (a name made, removed or renamed, not just written to) and
  // whether it is a name in a watched directory (else the watched file
  // itself).
  // `unknown`: something changed that no path tells (a queue overflow, a
  // watched directory itself removed or moved, too many events).
  struct Change {
    std::string path;
    bool entry = false;
    bool in_dir = false;
  };
  struct Changes {
    std::vector<Change> paths;
    bool unknown = false;
  };
  // The changes since the last call (or since the table opened).
  Changes take_changes();

  size_t watch_count() const { return watched_.size(); }
  // Names in the index of kept paths (live and forgotten ones), for tests.
  size_t chain_index_size() const { return chain_names_; }
  // Events read so far (by every drain): a stat answer taken before the
  // latest of them may be out of date.
  uint64_t events_read() const { return events_read_; }
  bool failed() const { return fd_ < 0; }

  // Filesystems whose changes inotify reports (local ones); others are never trusted.
  static bool local_filesystem(int64_t f_type);

 private:
  struct Deps {
    std::unordered_map<std::string, std::vector<TrustRef>> by_name;
    std::vector<TrustRef> all;
  };
  void drain_impl(void (*call)(void*, TrustRef), void* ctx, bool* drop_all);
  int watch(const std::string& path, bool is_dir);  // wd, or -1
  // Makes directory watch `wd` report the directory's own attribute changes
  // too (a name was found missing in it); false when it cannot.
  bool watch_attributes(int wd);
  // Registers this pass's reference in the list of (wd, name), or of the
  // whole watch for an empty name, and gives that list.
  std::vector<TrustRef>* depend(int wd, const std::string& name);
  void add_ref(std::vector<TrustRef>* list) const;

  int fd_ = -1;
  uint64_t events_read_ = 0;
  // Each watch's path as it was made, and whether it is a directory.
  struct Watched {
    std::string path;
    bool is_dir = false;
  };
  std::unordered_map<int, Watched> wd_paths_;
  Changes changes_;
  static constexpr size_t kMaxChanges = 4096;
  void note_change(const ::inotify_event& e);
  TrustRef ref_;
  std::unordered_map<int, Deps> deps_;
  std::unordered_map<int, bool> watched_;  // wd -> on a local filesystem
  std::unordered_set<int> attribute_wds_;  // directory watches that report their own attributes
  // Path -> wd, dropped whenever a directory entry changes anywhere.
  std::unordered_map<std::string, int> path_wd_;
  // This pass: looked-up path -> what was found.
  struct Lookup {
    int kind = 0;  // 0 missing, 1 dir, 2 file, 3 symlink, 4 other
    std::string link;
    // Where this pass's reference was registered: the directory's entry
    // and, for a file, the file's own watch.
    int dir_wd = -1, file_wd = -1;
    std::vector<TrustRef>* dir_list = nullptr;
    std::vector<TrustRef>* file_list = nullptr;
  };
  std::unordered_map<std::string, Lookup> pass_;
  // Lookups of earlier passes, kept until an event is read for the directory
  // they were made in or the file they found (both watched before the
  // lookup), and used only while their path still leads to that directory:
  // the closures of a build share most of their headers, and a later pass
  // only registers its dependencies on them. A file with several links is
  // never kept (its signature is taken on every pass).
  struct Known {
    Lookup lookup;
    int dir_wd = -1;
    int file_wd = -1;
  };
  std::unordered_map<std::string, Known> known_;
  std::unordered_map<int, std::vector<std::string>> known_by_wd_;
  void forget_known(int wd);
  // Whole paths resolved by an earlier pass: the dependency lists each of
  // their lookups registered in. A later pass through the same path only
  // adds its reference to those lists (a build's closures share most of
  // their paths), with no walk. Forgotten on any event of a watch the walk
  // went through, so a chain never outlives a lookup it stands for, nor
  // the lists it points into (erased only on IN_IGNORED or when all
  // dependencies are forgotten). Paths through a file with several links
  // are never kept (its signature is taken on every pass).
  struct Chain {
    std::vector<std::vector<TrustRef>*> lists;
    std::vector<int> wds;  // the watches its walk went through
  };
  std::unordered_map<std::string, Chain, cache::StringHash, std::equal_to<>> chains_;
  // The lists the last path of this pass registered in: the next path's
  // chain skips those it shares with it at the same places (its leading
  // directories, mostly), registered already.
  std::vector<std::vector<TrustRef>*> last_lists_;
  // Watch -> the paths of the chains through it. A forgotten chain stays
  // named under its other watches until they are rebuilt: when the names
  // outnumber the live chains' watches by far (a long-running server whose
  // files keep changing), the index is made again from the live chains.
  std::unordered_map<int, std::vector<std::string>> chains_by_wd_;
  size_t chain_names_ = 0, live_chain_wds_ = 0;
  void forget_chains(int wd);
  void clear_chains();
  // Keeps the walk of `path` as its chain: the lists it registered in and the
  // watches it went through.
  void save_chain(const std::string& path, Chain chain, std::vector<int> wds);
  // This pass's lookup of `name` in `dir` (the path `child`): made once per
  // pass, taken from an earlier pass while `dir` is the directory it was made
  // in, else made now; null when a watch or the lookup failed.
  const Lookup* look_up(const std::string& dir, const std::string& name, const std::string& child);
  // A lookup of `child` made now by lstat, `wd` watching its directory (and
  // a watch of the file itself); kept for later passes unless the file has
  // several links. False when a watch or the read of a symlink failed.
  bool new_lookup(const std::string& child, const std::string& name, int wd, Lookup* l);
  std::vector<Linked> multi_linked_;
};

}  // namespace lexpack::server
