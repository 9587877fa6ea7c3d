// The server's state and its answer to one request, shared by the loop
// (server.cpp) and the answering (server_answer.cpp, compile_answer.cpp).
// Internal to server/.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/file_stat.h"
#include "cache/batching_store.h"
#include "cache/hash/hash.h"
#include "cache/store.h"
#include "closure/closure_memo.h"
#include "closure/dependency_closure.h"
#include "closure/file_state.h"
#include "closure/key_relocation.h"
#include "closure/presence_evaluation.h"
#include "closure/scan_file_cache.h"
#include "closure/token_keys.h"
#include "compiler/compile_command.h"
#include "compiler/identify_compiler.h"
#include "compiler/search_list.h"
#include "launcher/output_files.h"
#include "lexer/kernel.h"
#include "scan/scan_memo.h"
#include "server/protocol.h"
#include "server/spare_files.h"
#include "server/stat_recheck.h"
#include "server/watch_table.h"

namespace lexpack::server {

// A hit whose client has yet to rename the outputs and acknowledge: the
// server goes on with other requests meanwhile and removes what is left of
// the temporaries once the client answered, hung up, or took too long.
constexpr int kAckTimeoutMs = 2000;  // as long as a client waits for its reply
struct PendingHit {
  int fd = -1;
  std::vector<std::string> temps;  // and the second names of replaced outputs
  std::chrono::steady_clock::time_point deadline;
  // Outputs stamped before the reply: once the client renamed them, each
  // still the stamped file is vouched for in the file table (by its path,
  // normal), as the launcher vouches for the objects it writes, so that a
  // link reading it does not hash it again.
  struct Output {
    std::string path;
    launcher::Stamped stamped;
    cache::BlobId blob;
  };
  std::vector<Output> stamped;
};

// Stat answers shared by the checks of one request about many compiles (a
// build's compiles share most headers). Each answer is taken after the watch
// of its path exists, so a later change is an event; the answers are dropped
// whenever an event has been read since, or trust dropped (that drain may
// have untrusted only the entries then depending on the path, not one
// checked next).
class SharedStats : public closure::MemoStatSource {
 public:
  // Before each check: `epoch` counts the events read and the trust drops.
  void start_check(const std::string& cwd, uint64_t epoch);
  void clear() { files_.clear(), dirs_.clear(); }
  bool stat_file(std::string_view path, base::StatSignature* sig) override;
  bool stat_dir(std::string_view path, base::StatSignature* sig) override;

 private:
  struct PathHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  using Answers = std::unordered_map<std::string, std::optional<base::StatSignature>, PathHash,
                                     std::equal_to<>>;
  bool stat_once(Answers* answers, std::string_view path, base::StatSignature* sig,
                 bool (*stat)(const std::string&, base::StatSignature*));
  std::string cwd_;
  uint64_t epoch_ = 0;
  Answers files_, dirs_;
};

// Each compiler's identity asked once per request about many compiles (it
// looks the program up on PATH, stats it and reads its memo).
// A compiler's identity as a launcher finds it: remembered in the store,
// else another machine's answer from the remote of the client's
// configuration (the server runs no compiler a launcher would not), else
// asked.
base::Result<compiler::CompilerIdentity> shared_compiler_identity(cache::Store* store,
                                                                  const std::string& compiler);

class IdentityMemo {
 public:
  base::Result<compiler::CompilerIdentity> get(cache::Store* store, const std::string& compiler,
                                               const std::string& cwd);

 private:
  std::unordered_map<std::string, base::Result<compiler::CompilerIdentity>> known_;
};

// How long one request about many compiles (prepare, scan answers) checks
// closures before it answers with what it has.
constexpr std::chrono::seconds kBatchCheckBudget{2};

// Writes a file that must not exist yet; false (and nothing left) on error.
// With `stamped`, the file written is stamped for vouching
// (launcher/output_files.h).
bool write_new_file(const std::string& path, std::string_view bytes,
                    std::optional<launcher::Stamped>* stamped = nullptr);

class Server {
 public:
  explicit Server(std::unique_ptr<cache::Store> store) : store_(std::move(store)) {}
  bool init(std::string* err);
  // Serves one connection; the caller closes it unless it became *pending
  // (a hit waiting for its client's acknowledgement). False when the server
  // must leave.
  bool serve(int fd, std::optional<PendingHit>* pending);
  // Work left for a moment when no request waits: the spare files, and the
  // closure checks of the entries declined while others waited or learned
  // from a launcher (one per call).
  bool wants_idle_work() const {
    return spares_.wants_work() || !to_trust_.empty() || !to_vouch_.empty();
  }
  void idle_work();
  // The outputs of pending hits renamed into place by their clients: each
  // still the file stamped is vouched for in the file table when nothing
  // waits (in one transaction for many hits, off the hits' path), or now
  // with `now` (the server leaving).
  void vouch(std::vector<PendingHit::Output> renamed, bool now = false);
  void set_listener(int listener) { listener_ = listener; }
  // Why the client `pid` (SO_PEERCRED's) must not be answered from this
  // server's view of the files, or empty: another mount namespace or root
  // names other files by the same paths (a container sharing the cache
  // directory with its host).
  std::string foreign_client(pid_t pid) const;
  // `dir`: the server's private directory (the spare files' journal).
  void use_dir(const std::string& dir) { spares_.use_journal(dir + "/spare-dirs"); }

 private:
  struct Entry {
    bool trusted = false;
    uint64_t generation = 0;
    std::string tu;
    cache::Hash128 action_key;
    bool uses_date = false;
    bool queued = false;  // in to_trust_
    std::string cwd;      // of the request that queued it
    std::vector<WatchTable::Linked> linked;
    // Search dirs the compiler dropped as the same directory as one it kept,
    // by absolute path: no event tells of a component of the dropped path
    // turned into a symlink, so each answer stats both.
    std::vector<compiler::SearchList::SameDir> same_dirs;
    scan::NumberedScan known;  // a scan's entry: its answer (paths in scan_paths_)
    // A compile's entry: the files it rests on, looked at again by a hit
    // from `recheck_due` on (stat_recheck.h).
    std::vector<StatRecheck::Ref> rechecks;
    StatRecheck::Clock::time_point recheck_due{};
  };
  void drain();
  void drop_all_trust();
  void apply_client(const Request& req);
  // Answers a compile, its outputs written under the names put in `temps`;
  // without `temps`, a dry run for `lexpack explain` (nothing written or
  // counted, a kInfo reply).
  Reply compile(const Request& req, std::vector<std::string>* temps);
  // For a compile declined `why`: whether its closure was evaluated again
  // (and its memo stored) because a file other than its source changed.
  bool evaluated_again(const Request& req, const compiler::CompileCommand& cmd,
                       const std::string& why);
  // compile()'s steps (compile_answer.cpp), each false with *why on a
  // decline. A trusted entry's checks that no event covers: its files with
  // several links, its dropped search dirs, its look by stat when due.
  bool still_trusted(Entry* e, std::string* why);
  // The entry's action record (its dated key, or the key pinned to `cwd`
  // under a base_dir), *key naming the one found.
  std::optional<cache::ActionRecord> cached_action(const Entry& e, const std::string& cwd,
                                                   cache::Hash128* key);
  // The record's stdout and stderr, naming this checkout again.
  bool restore_messages(const cache::ActionRecord& action, const std::string& cwd,
                        std::string* out_text, std::string* err_text, std::string* why);
  // The outputs the command asks for, written under temporary names (put in
  // *temps, and in hit->renames with their final names); without `temps`
  // only checked.
  bool place_outputs(const compiler::CompileCommand& cmd, const cache::ActionRecord& action,
                     const Request& req, std::vector<std::string>* temps, Reply* hit,
                     std::string* why);
  // A compile's entry trusted from its closure memo: watches on everything
  // it rests on, then the stat check.
  // `shared`: stat answers shared with the other checks of this request.
  bool build_trust(uint32_t id, const std::string& cwd, std::string* why,
                   SharedStats* shared = nullptr);
  // A scan's entry (`lexpack scan`), the same from its scan memo; its answer kept.
  bool build_scan_trust(uint32_t id, const std::string& cwd, std::string* why,
                        closure::ScanFileCache* files, scan::DirStatCache* dirs);
  // Changes whenever a stat answer taken before may no longer hold.
  uint64_t stat_epoch() const { return watches_.events_read() + drops_; }
  bool watch_memo(uint32_t id, const closure::ClosureMemo& memo, const std::string& cwd,
                  std::string* why);
  bool trusted_after_check(uint32_t id, std::string* why);
  // build_trust()'s steps apart (trust_build.cpp), so that a build's
  // prepare reads, watches and checks different entries on three threads:
  // read_pending() reads the memo, watch_pending() adds the watches,
  // check_pending() (on any thread: it touches no server state but through
  // `stats` and `content`) checks it, finish_trust() keeps what the check
  // found; the entry is trusted after a drain.
  struct PendingTrust {
    uint32_t id = 0;
    std::string cwd;
    std::string bytes;
    closure::ClosureMemo memo;
    std::vector<WatchTable::Linked> linked;
    bool read = false;  // the memo parsed
    cache::Hash128 key;
    bool uses_date = false;
    std::string changed;  // what no longer holds, if anything
    std::vector<closure::MemoRefresh> refresh;
    bool wants_content = false;  // asked a content its lookup did not give
  };
  // The memo of `tu` read and decoded into `p` (`p`'s cwd set;
  // *changed_first when the source changed), on any thread while this one
  // leaves the store and the file table alone; then, here, its watches.
  bool read_pending(const std::string& tu, PendingTrust* p, std::string* why, bool* changed_first);
  bool watch_pending(PendingTrust* p, std::string* why);
  static void check_pending(PendingTrust* p, closure::MemoStatSource* stats,
                            const closure::ContentLookup* content);
  bool finish_trust(PendingTrust* p, std::string* why);
  // The checks of a build's prepare (the entries queued past `deadline` or
  // while others wait), on three threads where there are two cores.
  struct ToCheck {
    uint32_t id = 0;
    std::string cwd;
    std::string tu;  // the entry's
  };
  // Gives how many were left for a moment when nothing waits.
  size_t check_for_build(const std::vector<ToCheck>& checks,
                         std::chrono::steady_clock::time_point deadline);
  // An entry of the check ahead whose check wanted a dependency compared by
  // content, checked again on this thread under the watches it has.
  void trust_by_content(PendingTrust* p, SharedStats* shared);
  // A checked entry of the check ahead trusted, with the watches it was
  // given (finish_trust); false when its check found it out of date.
  bool trust_checked(PendingTrust* p);
  void check_beside_watches(const std::vector<ToCheck>& checks,
                            const std::function<bool(const ToCheck&)>& go_on, SharedStats* shared,
                            std::deque<PendingTrust>* pending);
  // The files a trusted entry rests on, for its looks by stat (stat_recheck.h).
  void note_rechecks(Entry* e, const closure::ClosureMemo& memo, const std::string& cwd);
  // False (and the entry untrusted) when such a look finds a file changed.
  bool rechecked(Entry* e);
  // The answers of `lexpack scan` for its TUs (kScanAnswers): each one the
  // server trusts or can check now, empty for the others.
  Reply scan_answers(const Request& req);
  // The entry of this compile in `cwd` (made if new); nullopt with
  // why when the compile cannot have one.
  std::optional<uint32_t> entry_of(const std::string& cwd, const compiler::CompileCommand& cmd,
                                   const std::string& base_dir, std::string* why,
                                   IdentityMemo* identities = nullptr);
  // A compile's closure evaluated for its launcher (kClosure), with every
  // header evaluation kept from the ones before; its closure memo and
  // snapshot stored (closure_evaluation.cpp).
  Reply evaluate_closure(const Request& req);
  // The token key (closure/token_keys.h) of the compile whose closure was
  // just evaluated (undated, as its action key); nullopt when it has none.
  std::optional<cache::Hash128> token_key(const compiler::CompilerIdentity& identity,
                                          const compiler::CompileCommand& cmd,
                                          const std::string& cwd, const closure::Closure& closure,
                                          const closure::KeyRelocation& relocation,
                                          closure::ProbeDigests* probes);
  // After evaluating a known translation unit again: when no entry is stored
  // under its new action key `key` but one is under its token key `token`
  // (both undated), that entry is stored under `key` too.
  void take_token_entry(const closure::Closure& closure, const cache::Hash128& key,
                        const cache::Hash128& token);
  // The closure checks of the compiles a build is about to run (kPrepare),
  // so that they are answered from memory when they come.
  Reply prepare(const Request& req);
  bool others_waiting() const;
  void queue_trust(uint32_t id, const std::string& cwd);
  // A launcher the server declined has finished (its closure memo stored):
  // the entry's check is queued for a moment when nothing waits.
  void learn(const Request& req);
  std::string status_text() const;
  // The current client's base_dir (LEXPACK_BASE_DIR, else lexpack.conf's),
  // the configuration read again only when that variable or the file's
  // signature differs from the last request's.
  const std::string& client_base_dir();

  std::unique_ptr<cache::Store> store_;
  const lexer::Kernel* kernel_ = nullptr;
  std::unique_ptr<closure::FileStates> files_;
  // What evaluate_closure() keeps between requests: the walks' file graph
  // (stat answers, summaries, include answers, lexed files) and the
  // evaluations' files, compiler answers and header evaluations. A stat
  // answer kept may be old: a memo made from it records the signature it
  // saw, and is checked before it is taken. Kept past the changes the
  // watches hear of while each changed path is a source it evaluated (walked
  // again from its new signature) or a name it never asked about (the
  // directory's signature taken again); made anew when a path it knows
  // changed, on a trust drop, after kWalkShareLife or kEvaluationsPerShare
  // closures, or when an answer it gave did not hold. Once a change was
  // heard of, after a pause of kWalkShareIdle, or after kWalkShareUnchecked,
  // each answer is checked before it is given (memo_holds), so a change no
  // watch heard makes it anew; past kWalkShareUnchecked with
  // kCheckedEvaluations closures (a build under way) it is made anew
  // instead. The header evaluations, keyed by their files' signatures, go on
  // into a new share (up to kMaxCarriedTraces), except those whose files had
  // not settled when the old one was made.
  struct WalkShare {
    std::shared_ptr<closure::ScanFileCache> walked;
    // The file records and summaries the share's loads learn, held and
    // written to the store together when an evaluation ends (WriteLearned
    // in evaluate_closure), not in two index transactions per file read.
    // The summaries written stay in memory for the share's life (a blob's
    // view must), as the share keeps each file's bytes and scan anyway.
    std::unique_ptr<cache::BatchingStore> learned;
    std::unique_ptr<closure::FileStates> files;
    std::unique_ptr<closure::EvaluationShare> evaluations;
    uint64_t drops = 0;  // drops_ when made
    // An answer it gave did not hold: made anew before the next evaluation.
    bool outdated = false;
    // What it answers is checked before it is given (memo_holds): a change
    // was heard of since it was made, it was left unused for
    // kWalkShareIdle, or it is older than kWalkShareUnchecked.
    bool validate = false;
    std::chrono::steady_clock::time_point made, last_used;
    int64_t made_file_clock_ns = 0;  // the same moment on the file clock
    // The signature each source evaluated had (by normal_path): a source
    // changed since is walked from a new node (ScanFileCache::root_node),
    // its kept stat answer forgotten.
    std::unordered_map<std::string, base::StatSignature> sources;
    uint64_t evaluated = 0;
  };
  static constexpr uint64_t kEvaluationsPerShare = 4096;
  // The header evaluations a share hands to the next (those whose files had
  // settled) unless it holds more than this many.
  static constexpr size_t kMaxCarriedTraces = size_t(1) << 20;
  static constexpr std::chrono::seconds kWalkShareUnchecked{60};
  static constexpr std::chrono::seconds kWalkShareIdle{1};
  static constexpr uint64_t kCheckedEvaluations = 64;
  static constexpr std::chrono::seconds kWalkShareLife{3600};
  // The share for evaluating the source at `source` (absolute) whose
  // signature is `sig` now.
  WalkShare& walk_share(const std::string& source, const base::StatSignature& sig);
  // Whether `w` can go on past the changes the watches heard of since the
  // last call: every changed path is a source it evaluated or a name it
  // never asked about; the directories where names changed get their
  // signatures again.
  bool keep_share_past_changes(WalkShare* w);
  // Whether the closure memo `memo` (of a compile in `cwd`) holds now, as
  // its launcher checks it; only its directories when `directories_only`
  // (the launcher checks each of its files after the compile).
  bool memo_holds(const std::string& memo, const std::string& cwd, bool directories_only);
  std::optional<WalkShare> walk_share_;
  // Every file's token fingerprint met, for token_key.
  closure::TokenMemory token_memory_;
  uint64_t evaluations_stored_ = 0, walk_shares_made_ = 0;
  // Shares kept past a change with directories' signatures taken again, and
  // shares whose answer did not hold (made anew).
  uint64_t share_dirs_restatted_ = 0, stale_shares_ = 0;
  // kClosureAgain requests: a launcher found a file of a closure evaluated
  // here changed when it checked it after its compile.
  uint64_t closures_changed_ = 0;
  // Trust not built as the memo's first dependency (the source) changed.
  uint64_t declined_by_first_ = 0;
  // Header evaluations handed from one share to the next, in all.
  uint64_t traces_carried_ = 0;
  // Time spent evaluating closures and building trust (the status shows it).
  uint64_t evaluation_us_ = 0, trust_us_ = 0;
  WatchTable watches_;
  StatRecheck rechecks_;
  SpareFiles spares_;
  // /proc/self/mountinfo, polled: the kernel reports POLLPRI once after each
  // change of the mount table, without the file being read again.
  int mounts_fd_ = -1;
  // The server's own mount namespace and root (/proc/self/ns/mnt, /proc/self/root).
  struct stat own_mnt_ {};
  struct stat own_root_ {};
  bool own_view_known_ = false;
  // Set by serve() for the request at hand: why its client is declined.
  std::string foreign_;
  std::vector<Entry> entries_;
  std::deque<uint32_t> to_trust_;
  int listener_ = -1;
  // Translation unit key -> entry (a compile's), "scan " + key -> entry (a scan's).
  std::unordered_map<std::string, uint32_t> index_;
  scan::PathTable scan_paths_;    // every path a scan's answer names
  std::vector<std::string> env_;  // the current client's environment (putenv keeps pointers)
  std::string version_ = protocol_version();
  uint64_t temp_counter_ = 0;
  // The outputs the last compile() answered wrote, stamped (PendingHit),
  // and those renamed since, to vouch for.
  std::vector<PendingHit::Output> stamped_, to_vouch_;
  uint64_t hits_ = 0, misses_ = 0, validations_ = 0, drops_ = 0, busy_declines_ = 0;
  uint64_t foreign_declines_ = 0;  // requests of clients in another namespace or root
  uint64_t scan_answers_ = 0;      // TUs of `lexpack scan` answered from memory
  uint64_t content_trusts_ = 0;    // trusts built with a dependency compared by content
  std::string last_miss_;
  struct BaseDirSource {
    std::optional<std::string> variable;
    std::optional<base::StatSignature> file;
    bool operator==(const BaseDirSource&) const = default;
  };
  std::optional<BaseDirSource> base_dir_source_;
  std::string base_dir_;
};

}  // namespace lexpack::server
