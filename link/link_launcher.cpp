// One archive or link step: key, lookup, serve or run and store. The key of a
// link covers the files its last run read (from the linker's dependency file)
// and the search candidates before each library; a changed one is a new key.
#include "link/link_launcher.h"

#include <sys/stat.h>
#include <unistd.h>

#include <time.h>

#include <algorithm>
#include <cerrno>

#include <cstdlib>
#include <memory>

#include "base/depfile_reader.h"
#include "base/file_stat.h"
#include "base/file_util.h"
#include "base/process.h"
#include "base/relocation.h"
#include "cache/config/config.h"
#include "cache/store.h"
#include "closure/file_state.h"
#include "launcher/decision_log.h"
#include "launcher/finished_run.h"
#include "launcher/output_files.h"
#include "link/elf_runpath.h"
#include "link/link_inputs.h"
#include "link/link_relocation.h"
#include "ninja_integration/build_counts.h"

namespace lexpack::link {
namespace {

constexpr uint64_t kLinkKeyFormat = 2;
// The clock the kernel stamps files with (coarse: one scheduler tick). A file
// stamped at or after the step's start on this clock may have changed during
// the step; one stamped before cannot have.
int64_t file_clock_ns() {
  struct timespec ts;
  if (::clock_gettime(CLOCK_REALTIME_COARSE, &ts) != 0) return base::now_ns();
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
// The step's start on that clock: its next tick. A file written by the edge
// that ran just before (within the current tick) is then stamped before the
// start, not taken for a change during the step; waiting costs at most one
// tick (a few milliseconds), on a miss only.
int64_t step_start_ns() {
  const int64_t now = file_clock_ns();
  for (int i = 0; i < 200; ++i) {
    struct timespec pause = {0, 250'000};
    ::nanosleep(&pause, nullptr);
    const int64_t t = file_clock_ns();
    if (t != now) return t;
  }
  return file_clock_ns();
}
// How many records of one link command are kept (newest first).
constexpr size_t kLinkRecords = 4;

// Environment that changes what a driver or linker finds.
constexpr const char* kEnvironment[] = {
    "PATH",        "LIBRARY_PATH",    "COMPILER_PATH",    "GCC_EXEC_PREFIX",
    "LD_RUN_PATH", "LD_LIBRARY_PATH", "SOURCE_DATE_EPOCH"};

bool env_off(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string_view(v) == "0";
}

bool env_on(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string_view(v) != "0";
}

const char* kind_name(StepKind k) {
  switch (k) {
    case StepKind::kArchive:
      return "archive";
    case StepKind::kRanlib:
      return "ranlib";
    case StepKind::kLink:
      return "link";
    case StepKind::kRemove:
      return "remove";
    default:
      return "none";
  }
}

// The counter suffix for why a step is not cached ("link_uncacheable_lto").
std::string reason_code(std::string_view why) {
  if (why.starts_with("LTO")) return "lto";
  if (why.find("-fuse-ld") != std::string_view::npos) return "fuse_ld";
  if (why.find("plugin") != std::string_view::npos) return "plugin";
  if (why.starts_with("response file")) return "response_file";
  if (why.starts_with("linker response file") || why.find("linker @files") != why.npos) {
    return "linker_response_file";
  }
  if (why.starts_with("linker option") || why.starts_with("linker search")) return "linker_option";
  if (why.starts_with("driver option")) return "driver_option";
  if (why.starts_with("ar ")) return "ar_shape";
  if (why.starts_with("ranlib")) return "ranlib_shape";
  return "unrecognised";
}

class StepLauncher {
 public:
  StepLauncher(const LinkStep& step, const std::vector<std::string>& argv, bool explain)
      : step_(step), argv_(argv), explain_(explain) {}
  LinkResult run();
  // Counts the files this step read to hash them (none when every input was
  // vouched for by the file table) as link_files_hashed.
  void count_files_hashed() {
    if (files_ && files_->files_read() > 0)
      count("link_files_hashed", int64_t(files_->files_read()));
  }

 private:
  LinkResult passthrough(const std::string& why) {
    note("passthrough: " + why);
    LinkResult r;
    r.exec_tool = true;
    r.explanation = explanation_;
    return r;
  }
  void note(const std::string& line) {
    log_.write(line);
    if (explain_) explanation_ += line + "\n";
  }
  void count(const std::string& name, int64_t delta = 1) {
    if (explain_) return;                              // explain changes no counter
    ninja_integration::note_build_count(name, delta);  // this build's own summary, even read-only
    if (store_ && !read_only_) store_->add_counter(name, delta);
  }
  bool open_store();
  LinkResult remove_files();
  std::string prefix() const { return kind_name(step_.kind); }
  // `relocated`: the entry's messages are stored relocated (base/relocation.h).
  std::optional<LinkResult> serve(const cache::ActionRecord& action, bool relocated);
  // The key of an entry that names this checkout (stored when the output or
  // the messages name a path under base_dir): only this working directory
  // finds it.
  cache::Hash128 pinned(const cache::Hash128& key) const {
    cache::Hasher h;
    h.field("link-pinned");
    h.field(key.lo);
    h.field(key.hi);
    h.field(cwd_);
    return h.digest();
  }
  LinkResult run_and_store(const std::vector<std::string>& predicted,
                           const std::optional<cache::Hash128>& before_key);
  // The key a link just run is stored under, from the files its dependency
  // file names and the search candidates around them (its record kept for
  // the next lookup); why not when it cannot be stored.
  std::string link_key(const std::string& depfile, const std::vector<std::string>& predicted,
                       int64_t start_ns, cache::Hash128* key);
  // Where the linker looked for the files it read, a candidate too many
  // rather than one too few; why not when that cannot be known.
  std::string search_dirs(const std::vector<std::string>& read, std::vector<std::string>* search);
  // An archive's key: the one looked up, when its members held still.
  std::string archive_key(const std::optional<cache::Hash128>& before_key, int64_t start_ns,
                          cache::Hash128* key);
  // Stores the output and the messages under `key` (pinned to this checkout
  // when they name it): the note that ends the step.
  std::string store_output(cache::Hash128 key, const LinkResult& r, uint64_t elapsed_us);

  const LinkStep& step_;
  std::vector<std::string> argv_;
  bool explain_;
  launcher::DecisionLog log_;
  std::string explanation_;
  std::string cwd_;
  std::unique_ptr<cache::Store> store_;
  bool read_only_ = false;
  std::unique_ptr<closure::FileStates> files_;
  Toolchain toolchain_;
  std::vector<std::vector<std::string>> memo_records_;
  cache::Hash128 command_key_;
  closure::KeyRelocation relocation_;
};

bool StepLauncher::open_store() {
  cache::StoreOptions options;
  auto opened = cache::Store::open(options);
  if (!opened.ok()) {
    options.read_only = true;
    opened = cache::Store::open(options);
    if (!opened.ok()) return false;
    read_only_ = true;
  }
  store_ = std::move(opened.value());
  return true;
}

LinkResult StepLauncher::run() {
  log_.set_subject(step_.output.empty() ? step_.tool : step_.output);
  if (!explain_ && (env_on("LEXPACK_DISABLE") || env_off("LEXPACK_CACHE_LINKS"))) {
    return passthrough("archive and link caching is off");
  }
  if (step_.kind == StepKind::kRemove) return remove_files();
  if (!step_.uncacheable.empty()) {
    if (open_store()) count("link_uncacheable_" + reason_code(step_.uncacheable));
    return passthrough("uncacheable " + prefix() + ": " + step_.uncacheable);
  }
  cwd_ = base::working_dir();
  if (cwd_.empty()) return passthrough("cannot read the working directory");
  if (!open_store()) return passthrough("no cache");
  files_ = std::make_unique<closure::FileStates>(read_only_ ? nullptr : store_.get(), nullptr);

  cache::Hasher h;
  h.field("link-step");
  h.field(kLinkKeyFormat);
  h.field(kind_name(step_.kind));
  if (step_.kind == StepKind::kLink) {
    base::Result<Toolchain> t =
        driver_toolchain(read_only_ ? nullptr : store_.get(), files_.get(), step_.tool);
    if (!t.ok()) return passthrough("toolchain: " + t.message());
    toolchain_ = t.value();
    h.field(toolchain_.identity.lo);
    h.field(toolchain_.identity.hi);
  } else {
    base::Result<cache::Hash128> id = program_identity(files_.get(), step_.tool);
    if (!id.ok()) return passthrough("tool: " + id.message());
    h.field(id->lo);
    h.field(id->hi);
  }
  relocation_ = decide_link_relocation(step_, cwd_, cache::load_config("").base_dir);
  if (!relocation_.base_dir.empty()) {
    note(relocation_.relocated
             ? "relocatable: paths under " + relocation_.base_dir + " are keyed relative to " + cwd_
             : "not relocatable: " + relocation_.not_relocatable);
  }
  h.field(step_.tool);
  if (relocation_.relocated) {
    // Never equal to a key whose entry names absolute paths.
    h.field("relocated");
  } else {
    h.field(cwd_);
  }
  std::vector<std::string> key_args = relocated_link_args(step_, relocation_);
  h.field(key_args.size());
  for (const std::string& a : key_args) h.field(a);
  for (const char* name : kEnvironment) {
    const char* v = std::getenv(name);
    h.field(name);
    h.field(v ? std::string_view(v) : std::string_view("\x01unset"));
  }
  command_key_ = h.digest();

  // The files this step reads: named on the command line (archives), or
  // learned from the last runs of the same command (links; each record a
  // key of its own, so that a link whose inputs go back and forth hits).
  std::vector<std::vector<std::string>> records;
  if (step_.kind == StepKind::kLink) {
    std::optional<std::string> memo = store_->get_memo("link", command_key_.hex());
    if (memo && decode_records(*memo, &records)) {
      memo_records_ = records;
    } else {
      records.clear();
    }
  } else {
    std::vector<std::string> paths;
    if (step_.kind == StepKind::kArchive) paths.push_back(step_.output);
    paths.insert(paths.end(), step_.inputs.begin(), step_.inputs.end());
    records.push_back(relocated_paths(paths, relocation_));
  }
  std::optional<cache::Hash128> key;
  std::string why_miss = "no earlier run of this command";
  for (const std::vector<std::string>& paths : records) {
    cache::Hasher k;
    k.field(command_key_.lo);
    k.field(command_key_.hi);
    base::Status hashed = hash_path_states(paths, cwd_, files_.get(), &k, nullptr);
    if (!hashed.ok()) return passthrough("input: " + hashed.message());
    cache::Hash128 this_key = k.digest();
    if (!key) key = this_key;
    if (explain_) {
      note(prefix() + " key: " + this_key.hex() + " over " + std::to_string(paths.size()) +
           " paths");
    }
    why_miss = "no cached result for this key";
    // A relocated key first; then the entry this checkout stored pinned.
    for (bool relocated : {relocation_.relocated, false}) {
      cache::Hash128 lookup = relocated || !relocation_.relocated ? this_key : pinned(this_key);
      if (std::optional<cache::ActionRecord> action = store_->get_action(lookup)) {
        if (explain_) {
          note(relocated || !relocation_.relocated ? "would hit"
                                                   : "would hit (entry of this checkout only)");
          LinkResult r;
          r.explanation = explanation_;
          return r;
        }
        if (std::optional<LinkResult> hit = serve(*action, relocated)) return *hit;
        why_miss = "cached output unavailable";
      }
      if (!relocation_.relocated) break;
    }
  }
  if (explain_) {
    note("would miss: " + why_miss);
    LinkResult r;
    r.explanation = explanation_;
    return r;
  }
  note("miss: " + why_miss);
  return run_and_store(records.empty() ? std::vector<std::string>() : records.front(), key);
}

// What `cmake -E rm -f` does to files that are absent, regular or symlinks
// (unlinks them; absent is no error), without starting cmake. Anything else
// (a directory, a file that cannot be removed) is left to cmake itself,
// which runs as written and gives its own answer.
LinkResult StepLauncher::remove_files() {
  for (const std::string& path : step_.inputs) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) {
      if (errno == ENOENT) continue;
      return passthrough("cannot stat " + path);
    }
    if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
      return passthrough(path + " is not a file or a symlink");
    }
    if (explain_) continue;
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      return passthrough("cannot remove " + path);
    }
  }
  note(explain_ ? "would remove the files without starting cmake" : "removed");
  LinkResult r;
  r.explanation = explanation_;
  return r;
}

std::optional<LinkResult> StepLauncher::serve(const cache::ActionRecord& action, bool relocated) {
  if (action.exit_code != 0 || action.outputs.size() != 1 || action.outputs[0].role != "output") {
    return std::nullopt;
  }
  auto blob = [this](const cache::BlobId& id) -> std::optional<std::string_view> {
    if (id.is_zero()) return std::string_view();
    return store_->get_blob(id);
  };
  std::optional<std::string_view> out = blob(action.stdout_blob);
  std::optional<std::string_view> err = blob(action.stderr_blob);
  std::optional<std::string_view> bytes = store_->get_blob(action.outputs[0].blob);
  if (!out || !err || !bytes) return std::nullopt;
  // Messages stored relocated come back naming this checkout's paths.
  std::string out_text(*out), err_text(*err);
  if (relocated &&
      (!base::restore_text(*out, cwd_, &out_text) || !base::restore_text(*err, cwd_, &err_text))) {
    note("cached messages hold a malformed relocated path");
    return std::nullopt;
  }
  std::string error;
  unsigned mode = step_.kind == StepKind::kLink ? 0777 : 0666;
  std::optional<base::StatSignature> vouched;
  if (!launcher::write_file_atomic(step_.output, *bytes, &error, mode, &vouched)) {
    note("cannot write output: " + error);
    return std::nullopt;
  }
  // Vouched for in the file table (a link reading this archive right after
  // does not hash it again): see write_file_atomic.
  if (vouched && !read_only_) {
    store_->put_file(base::normal_path(step_.output, cwd_),
                     cache::FileRecord{*vouched, action.outputs[0].blob, {}});
  }
  count("link_hits");
  // Apart from the compilers' CPU time: a link's is its wall time.
  count("link_time_saved_us", int64_t(action.compile_time_us));
  note("hit");
  LinkResult r;
  r.out = std::move(out_text);
  r.err = std::move(err_text);
  return r;
}

LinkResult StepLauncher::run_and_store(const std::vector<std::string>& predicted,
                                       const std::optional<cache::Hash128>& before_key) {
  std::vector<std::string> run_argv = argv_;
  std::string depfile;
  if (step_.kind == StepKind::kLink) {
    depfile = step_.output + ".lexpack-" + std::to_string(::getpid()) + ".ld.d";
    run_argv.push_back("-Wl,--dependency-file=" + depfile);
  }
  const int64_t start_ns = step_start_ns();
  base::ProcessResult p = base::run_captured(run_argv, false);
  if (!depfile.empty() && p.started && p.exit_code != 0 && p.exit_code < 128) {
    // A linker without --dependency-file (GNU ld before 2.35) must not make
    // the link fail: the command runs again as written, and that is the
    // answer (not after a signal: an interrupted link stays interrupted).
    ::unlink(depfile.c_str());
    depfile.clear();
    note("link failed with a dependency file; running it again as written");
    p = base::run_captured(argv_, false);
  }
  LinkResult r;
  const launcher::FinishedRunWords words{"link_failed", prefix() + " failed, not cached",
                                         "link_misses", "cache read-only, not stored"};
  std::optional<std::string> why = launcher::take_finished_run(
      p, read_only_, words, [this](std::string_view name) { count(std::string(name)); }, &r);
  if (!why) {
    cache::Hash128 key;
    why = step_.kind == StepKind::kLink ? link_key(depfile, predicted, start_ns, &key)
                                        : archive_key(before_key, start_ns, &key);
    if (why->empty()) why = store_output(key, r, p.elapsed_us);
  }
  launcher::finish_run(depfile, *why, [this](const std::string& line) { note(line); });
  return r;
}

std::string StepLauncher::link_key(const std::string& depfile,
                                   const std::vector<std::string>& predicted, int64_t start_ns,
                                   cache::Hash128* key) {
  if (depfile.empty()) return "not stored: no dependency file from the linker";
  base::Result<std::string> dep = base::read_file(depfile);
  if (!dep.ok()) return "not stored: no dependency file from the linker";
  std::vector<std::string> read;
  std::string err;
  if (!base::parse_depfile(*dep, &read, &err)) return "not stored: " + err;
  for (const std::string& path : read) {
    // A file gone after the link was a temporary one (objects of an LTO
    // plugin run, a source compiled on the way): not something to key.
    base::StatSignature sig;
    if (!base::stat_file(path, &sig)) {
      count("link_not_stored_temporary_input");
      return "not stored: the linker read " + path + ", gone after the link";
    }
  }
  std::vector<std::string> search;
  if (std::string why = search_dirs(read, &search); !why.empty()) return why;
  std::vector<std::string> recorded = recorded_paths(read, search, step_.linker.has_script);
  // Files the options make the linker read that its dependency file
  // leaves out (its @files, --retain-symbols-file).
  for (const std::string& f : step_.linker.files) {
    if (std::find(recorded.begin(), recorded.end(), f) == recorded.end()) recorded.push_back(f);
  }
  std::vector<std::string> paths = relocated_paths(recorded, relocation_);
  if (!predicted.empty()) {
    int64_t unpredicted = 0;
    for (const std::string& path : paths) {
      if (std::find(predicted.begin(), predicted.end(), path) == predicted.end()) ++unpredicted;
    }
    if (unpredicted > 0) {
      count("link_unpredicted_reads", unpredicted);
      note(std::to_string(unpredicted) + " paths not in the previous record of this link");
    }
  }
  cache::Hasher k;
  k.field(command_key_.lo);
  k.field(command_key_.hi);
  int64_t newest = 0;
  base::Status hashed = hash_path_states(paths, cwd_, files_.get(), &k, &newest);
  if (!hashed.ok()) return "not stored: " + hashed.message();
  if (newest >= start_ns) return "not stored: an input changed just before or during the link";
  *key = k.digest();
  std::vector<std::vector<std::string>> kept = {paths};
  for (std::vector<std::string>& r : memo_records_) {
    if (kept.size() < kLinkRecords && r != paths) kept.push_back(std::move(r));
  }
  store_->put_memo("link", command_key_.hex(), encode_records(kept));
  return {};
}

std::string StepLauncher::search_dirs(const std::vector<std::string>& read,
                                      std::vector<std::string>* search) {
  base::Result<std::vector<std::string>> dirs = driver_link_dirs(step_.tool, step_.args);
  if (!dirs.ok()) return "not stored: " + dirs.message();
  // The directories the linker words name (-rpath-link, -rpath, -L in a
  // linker @file) and the environment's first: a candidate too many is
  // keyed, never one too few.
  *search = step_.linker.search_dirs;
  // A native ld looks for needed libraries along these too.
  for (const char* name : {"LD_RUN_PATH", "LD_LIBRARY_PATH"}) {
    const char* v = std::getenv(name);
    for (std::string_view list = v ? v : ""; !list.empty();) {
      size_t colon = list.find(':');
      std::string_view d = list.substr(0, colon);
      search->emplace_back(d.empty() ? "." : d);
      list.remove_prefix(colon == std::string_view::npos ? list.size() : colon + 1);
    }
  }
  // And along the run paths of the shared libraries it read.
  for (const std::string& path : read) {
    std::string_view name = std::string_view(path).substr(path.rfind('/') + 1);
    if (name.find(".so") == std::string_view::npos) continue;
    std::optional<std::vector<std::string>> runpath = elf_runpath_dirs(path);
    if (!runpath) return "not stored: the run path of " + path + " is too long";
    search->insert(search->end(), runpath->begin(), runpath->end());
  }
  search->insert(search->end(), dirs->begin(), dirs->end());
  search->insert(search->end(), toolchain_.search_dirs.begin(), toolchain_.search_dirs.end());
  return {};
}

std::string StepLauncher::archive_key(const std::optional<cache::Hash128>& before_key,
                                      int64_t start_ns, cache::Hash128* key) {
  if (!before_key) return "not stored: no key";
  // The members must not have changed while ar ran (the archive itself did).
  cache::Hasher unused;
  int64_t newest = 0;
  base::Status hashed = hash_path_states(step_.inputs, cwd_, files_.get(), &unused, &newest);
  if (!hashed.ok()) return "not stored: " + hashed.message();
  if (step_.kind == StepKind::kArchive && newest >= start_ns) {
    return "not stored: a member changed just before or during ar";
  }
  *key = *before_key;
  return {};
}

std::string StepLauncher::store_output(cache::Hash128 key, const LinkResult& r,
                                       uint64_t elapsed_us) {
  base::Result<std::string> output = base::read_file(step_.output);
  if (!output.ok()) return "not stored: " + output.message();
  if (step_.kind != StepKind::kLink && !archive_is_deterministic(*output)) {
    count("link_not_stored_nondeterministic_archive");
    return "not stored: the archive has timestamps or owners (not ar D mode)";
  }
  // A relocated key is shared by other checkouts: its entry may name none of
  // this one's paths, except messages written back relocated. An entry that
  // does is stored under a key of this working directory alone.
  std::string stored_out = r.out, stored_err = r.err;
  if (relocation_.relocated) {
    std::string why;
    if (bytes_name_dir(*output, relocation_.base_dir)) {
      why = "the output names a path under " + relocation_.base_dir;
    } else if (!base::relocate_text(r.out, relocation_.base_dir, cwd_, &stored_out) ||
               !base::relocate_text(r.err, relocation_.base_dir, cwd_, &stored_err)) {
      why = "the messages name " + relocation_.base_dir + " in a form that cannot be relocated";
    }
    if (!why.empty()) {
      count("link_not_relocatable");
      note("not relocatable: " + why + "; stored for this checkout only");
      key = pinned(key);
      stored_out = r.out;
      stored_err = r.err;
    }
  } else if (!relocation_.base_dir.empty()) {
    count("link_not_relocatable");
  }
  cache::ActionRecord action;
  action.exit_code = 0;
  action.compile_time_us = elapsed_us;
  std::string err;
  cache::ActionRecord::Output o{"output", {}};
  if (!launcher::put_output_blob(store_.get(), *output, &o.blob, &err) || o.blob.is_zero()) {
    return "not stored: " + err;
  }
  action.outputs.push_back(o);
  if (!launcher::put_output_blob(store_.get(), stored_out, &action.stdout_blob, &err) ||
      !launcher::put_output_blob(store_.get(), stored_err, &action.stderr_blob, &err)) {
    return "not stored: " + err;
  }
  base::Status stored = store_->put_action(key, action);
  if (!stored.ok()) return "not stored: " + stored.message();
  return "stored " + key.hex();
}

}  // namespace

LinkResult launch_link_step(const LinkStep& step, const std::vector<std::string>& argv,
                            bool explain) {
  StepLauncher launcher(step, argv, explain);
  LinkResult r = launcher.run();
  launcher.count_files_hashed();
  return r;
}

}  // namespace lexpack::link
