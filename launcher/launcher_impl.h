// The Launcher object shared by the files of one compile's flow: the hit
// path (launcher.cpp), the miss and store (launcher_miss.cpp) and explain's
// comparisons (launcher_explain.cpp). Internal to this folder.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "base/byte_codec.h"
#include "base/depfile_flow.h"
#include "base/file_stat.h"
#include "base/file_util.h"
#include "base/process.h"
#include "base/program_paths.h"
#include "base/relocation.h"
#include "cache/config/config.h"
#include "cache/remote/local_copy.h"
#include "cache/remote/remote_tier.h"
#include "cache/remote/upload_queue.h"
#include "cache/store.h"
#include "closure/action_key.h"
#include "closure/closure_memo.h"
#include "closure/dependency_closure.h"
#include "closure/file_state.h"
#include "closure/key_relocation.h"
#include "closure/presence_evaluation.h"
#include "compiler/compile_command.h"
#include "compiler/derived_search_list.h"
#include "compiler/identify_compiler.h"
#include "compiler/search_list.h"
#include "launcher/action_payload.h"
#include "launcher/compile_key.h"
#include "launcher/decision_log.h"
#include "launcher/finished_run.h"
#include "launcher/launcher.h"
#include "launcher/output_files.h"
#include "launcher/relocated_text.h"
#include "launcher/self_check.h"
#include "launcher/temp_files.h"
#include "lexer/kernel.h"
#include "ninja_integration/build_counts.h"
#include "ninja_integration/build_record.h"
#include "served_reads/serve_reads.h"

namespace lexpack::launcher::detail {

bool env_flag(const char* name);

// A compile's words, as the "last" memo keeps them.
std::string encode_args(const compiler::CompileCommand& c);
bool decode_args(std::string_view bytes, std::vector<std::string>* out);

// The closure of the latest compile of a translation unit, kept for explain
// only, when its files were too fresh for a closure memo (the memo then still
// describes some older build). Emptied when a memo is stored or used.
constexpr std::string_view kExplainMemoTable = "closure-explain";

// When a miss's steps ended, in microseconds since the launcher started (the
// self-check's own length), for the note that says it was stored.
struct MissTimes {
  int64_t before_compile = 0;
  int64_t after_compile = 0;
  int64_t check_us = 0;
};

// What a successful compile leaves to store: its files, and its text as
// stored (relocated under a relocated key).
struct MissOutputs {
  std::string object;
  std::optional<std::string> dwo;  // -gsplit-dwarf, when the .dwo could be read
  std::string depfile, out, err;
};

// A compile started before its key (early_compile.cpp).
struct EarlyCompile {
  std::thread thread;
  base::ProcessResult result;     // set by `thread`
  std::atomic<int> pid{0};        // the compiler's while it runs (run_captured)
  std::atomic<bool> done{false};  // `result` is set
  std::string own_depfile;        // the depfile lexpack asked for, when the command has none
  std::optional<TempFileGuard> depfile_guard;
  int64_t file_clock = 0;  // the file clock when it started (base::file_clock_ns)
  // The directories the compile writes in, by (device, inode) at its start.
  std::map<std::string, std::pair<uint64_t, uint64_t>> written_dirs;
  int64_t started_us = 0;  // since the launcher started
  EarlyCompile() = default;
  EarlyCompile(const EarlyCompile&) = delete;
  EarlyCompile& operator=(const EarlyCompile&) = delete;
  ~EarlyCompile();  // waits for the compile
};

class Launcher {
 public:
  Launcher(const std::vector<std::string>& argv, bool explain, const EvaluateElsewhere& elsewhere)
      : argv_(argv), explain_(explain), elsewhere_(elsewhere) {}
  LaunchResult run();

 private:
  LaunchResult passthrough(std::string_view why);
  // Counters tell what builds did: explain (and warm, which runs it) compiles
  // nothing and counts nothing.
  void count(std::string_view name, int64_t delta = 1) {
    ninja_integration::note_build_count(name, delta);  // this build's own summary, even read-only
    if (store_ && !read_only_ && !explain_) store_->add_counter(name, delta);
  }
  void note(std::string line) {
    log_.write(line);
    if (explain_) result_.explanation += line + "\n";
  }
  bool open_store();
  // base_dir, prefix_command and the remote tier, from the configuration.
  void load_settings();
  // The compiler's identity and the lexer's kernel; why to pass the compile
  // through when they cannot be had, or the compiler refuses to be cached.
  std::optional<std::string> identify();
  // The key from a closure memo that still holds (true); else the memo it
  // would replace (`stale_memo`) and, for explain, what changed since.
  bool key_from_memo(const cache::Hash128& tu, std::string* stale_memo);
  // The key from the slow path, its closure memo stored; why to pass the
  // compile through when the closure cannot be cached.
  std::optional<std::string> key_from_scan(const cache::Hash128& tu, const std::string& stale_memo);
  // A hit served (or, for explain, one that would be), else nullopt and why
  // the compile misses.
  std::optional<LaunchResult> look_up(cache::Hash128 key, std::string* why_miss);
  LaunchResult explain_miss(std::string why_miss);
  // After a miss on `key`: the entry under the token key (token_hit.cpp),
  // served and stored under `key` as well.
  std::optional<LaunchResult> look_up_tokens(const cache::Hash128& key);
  void find_token_key();  // sets token_key_ when the compile may have one
  // A miss's entry, kept under the token key too when the compile wrote no
  // message.
  void store_under_token_key(const cache::ActionRecord& action, const LaunchResult& r);
  bool slow_path();                    // fills list_, closure_, key_
  void explain_precompiled_headers();  // under explain: makers and takers
  // Fills list_, closure_, key_ as slow_path() would, from the closure kept
  // with `stale_memo` when only the source changed, and outside what
  // preprocessing reads (closure_snapshot.h); false when that does not hold.
  bool closure_from_snapshot(const cache::Hash128& tu, const std::string& stale_memo);
  // Fills them from the snapshot kept with the closure memo that gave key_
  // (it still holds): a miss whose memo holds walks nothing. False when the
  // snapshot is of another key.
  bool closure_from_kept_snapshot(const cache::Hash128& tu);
  // Takes a snapshot's closure as this compile's when it is of its source
  // and its key is `key` here; notes `line`.
  bool take_snapshot(closure::Closure taken, const cache::Hash128& key, const std::string& line);
  // Fills them from the memo and snapshot `elsewhere_` stored; false when
  // it did not, or they do not hold. `again`: once more, after a file of
  // the closure it gave had changed when checked after an early compile.
  bool closure_from_elsewhere(const cache::Hash128& tu, bool again = false);
  // The check of an encoded closure memo a hit makes (files recorded by
  // content compared by content): false when it is not a memo, else *key,
  // and *changed ("" when it holds).
  bool memo_check(std::string_view memo, cache::Hash128* key, std::string* changed);
  // What changed since the server's memo taken unchecked was made ("" when
  // it holds or none was taken so); the memo is then dropped.
  std::string check_unchecked_memo();
  // Fills them from another machine's memo of this compile in the remote,
  // once everything it names holds here (closure/remote_memo.h).
  bool closure_from_remote();
  // Takes a closure found without a walk of its own, with its key.
  void take_closure(compiler::SearchList list, closure::Closure closure,
                    const closure::KeyRelocation& relocation, const cache::Hash128& key);
  // A valid remote entry for `key`, written into the local store; its record.
  std::optional<cache::ActionRecord> fetch_remote(const cache::Hash128& key);
  // `outside`: the files outside the scan its payload checked (for the log).
  std::optional<LaunchResult> serve_hit(const cache::ActionRecord& action, size_t outside);
  LaunchResult compile_and_store();
  // The compiler's arguments for a miss: the command's, with a depfile of
  // lexpack's own (`own_depfile`) when it asks for none.
  std::vector<std::string> compile_argv(std::string* own_depfile);
  // Early compiles (early_compile.cpp): whether this compile's answer is
  // known to be a miss, so that the compiler starts before the key.
  bool early_compile_applies() const;
  void start_early_compile();
  base::ProcessResult finish_early_compile();  // waits for it
  // Once the key is known: finds the token key (the result is kept under
  // it too), and stops the compile when an entry may serve it after all.
  // True when a compile started early goes on (it is the answer).
  bool settle_early_compile(const cache::Hash128& key);
  // Stops the compiler and the processes it started, and forgets it.
  void stop_early_compile();
  // The compile's own result, not stored (`why`), once it is done.
  LaunchResult early_result(std::string_view why);
  // A path the key rests on stamped at or after the early compile's start;
  // "" when none is. `outside`: the files outside the scan as the self-check
  // found them.
  std::string changed_since_early_start(
      const std::vector<std::pair<std::string, base::StatSignature>>& outside) const;
  // True when the compiler is to read the closure from the packs.
  bool serve_reads(served_reads::ServedReads* served);
  // Runs the compiler: through prefix_command (ignored, with `warning`, when
  // it cannot run), with served reads while `serving`, again without them
  // (and `serving` false) when that compile fails.
  base::ProcessResult run_compiler(std::vector<std::string> run_argv,
                                   const served_reads::ServedReads& served, bool* serving,
                                   std::string* warning);
  // The first file of the closure not at its recorded signature after the
  // compile ("" when none): those the depfile names as `check` found them.
  std::string closure_file_changed(const SelfCheckResult& check) const;
  // The self-check and the other checks before a successful compile is
  // stored, then the store: the note that ends the miss either way.
  std::string check_and_store(const std::string& depfile, const base::ProcessResult& p,
                              const LaunchResult& r, const served_reads::ServedReads* served,
                              MissTimes times);
  std::string store_outputs(const std::string& depfile_bytes, const ActionPayload& payload,
                            const base::ProcessResult& p, const LaunchResult& r,
                            const MissTimes& times);
  // Why the outputs of a relocated compile name this checkout, or "".
  std::string outputs_naming_base_dir(const MissOutputs& outputs);
  // Stores the blobs and names them in `action`; why not when that fails.
  std::string put_outputs(const MissOutputs& outputs, cache::ActionRecord* action);
  // Queues the entry for the build's uploader, or uploads it now.
  void upload_outputs(const cache::Hash128& key, const cache::ActionRecord& action,
                      MissOutputs outputs);
  std::string own_depfile_path();
  std::string describe_arg_change();
  // The arguments of the last compile stored for this output and this
  // one's (depfile options and the output name left out when they differ);
  // false when none is known.
  bool last_compile(std::vector<std::string>* before, std::vector<std::string>* now);
  bool compiled_before_with_these_arguments();
  void adopt_build_command();
  // The explain memo of `tu` holds only while no closure memo is newer.
  void drop_explain_memo(const cache::Hash128& tu);
  // Content hashes of the files this compile reads, through the file table.
  closure::ContentLookup content_lookup();
  // What changed since the closure memo before this one ("changed: PATH"):
  // the cause of a miss whose own memo holds (the server, evaluating again
  // as a header changed, or an earlier compile replaced it); "" when none
  // is kept or nothing it lists changed.
  std::string changed_since_previous_memo(const cache::Hash128& tu);
  // The previous closure memo of `tu`, when it holds (checked by content
  // where signatures moved): its key, and it becomes the latest again with
  // `latest` (out of date) as the previous.
  bool use_previous_memo(const cache::Hash128& tu, const std::string& latest, cache::Hash128* key,
                         bool* uses_date);

  // Microseconds since the launcher started, for the decision log.
  int64_t elapsed_us() const {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                                 start_)
        .count();
  }

  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::vector<std::string> argv_;
  bool explain_;
  EvaluateElsewhere elsewhere_;
  bool memo_stored_elsewhere_ = false;  // closure_from_elsewhere() took it
  cache::Hash128 elsewhere_tu_;         // the TU it was asked for
  // The server's memo (its TU's name and action key), taken unchecked
  // beside a compile started early: read again and checked only before an
  // entry would answer (settle_early_compile).
  struct UncheckedMemo {
    std::string tu;
    cache::Hash128 key;
  };
  std::optional<UncheckedMemo> unchecked_memo_;
  DecisionLog log_;
  LaunchResult result_;
  compiler::CompileCommand cmd_;
  std::string cwd_;
  std::unique_ptr<cache::Store> store_;
  bool read_only_ = false;
  compiler::CompilerIdentity identity_;
  const lexer::Kernel* kernel_ = nullptr;
  std::unique_ptr<closure::FileStates> files_;
  compiler::SearchList list_;
  closure::Closure closure_;
  bool have_closure_ = false;
  cache::Hash128 key_;                       // before the date
  std::optional<cache::Hash128> token_key_;  // dated where key_ is, when the compile has one
  bool uses_date_ = false;
  std::string miss_cause_;  // explain: what changed since the last compile
  std::string base_dir_;    // config base_dir (empty: off)
  std::unique_ptr<cache::remote::RemoteTier> remote_;  // null: no remote configured
  std::vector<std::string> prefix_;    // prefix_command's words (a miss runs through it)
  closure::KeyRelocation relocation_;  // set by slow_path
  // Set by key_from_memo: no memo for this command, or the memo's first
  // change is the source's content.
  bool never_compiled_ = false;
  bool source_changed_ = false;
  std::unique_ptr<EarlyCompile> early_;  // a compile started before its key
};

}  // namespace lexpack::launcher::detail
