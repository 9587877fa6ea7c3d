// One archive or link step: key, lookup, serve or run and store. The key of a
// link covers the files its last run read (from the linker's dependency file)
// and the search candidates before each library; a changed one is a new key.
#include "link/link_launcher.h"

#include "link/step_launcher.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <memory>

#include "base/file_stat.h"
#include "base/file_util.h"
#include "base/relocation.h"
#include "cache/config/config.h"
#include "launcher/output_files.h"
#include "link/link_inputs.h"
#include "link/link_relocation.h"
#include "link/link_remote.h"
#include "link/toolchain.h"

namespace lexpack::link {
namespace detail {

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

}  // namespace detail

namespace {

using detail::kind_name;
using detail::StepLauncher;

constexpr uint64_t kLinkKeyFormat = 3;

// Environment that changes what a driver or linker finds (MAKE: the make an
// LTO link's lto-wrapper runs its compiles with).
constexpr const char* kEnvironment[] = {
    "PATH",        "LIBRARY_PATH",    "COMPILER_PATH",     "GCC_EXEC_PREFIX",
    "LD_RUN_PATH", "LD_LIBRARY_PATH", "SOURCE_DATE_EPOCH", "MAKE"};

bool env_off(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string_view(v) == "0";
}

bool env_on(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string_view(v) != "0";
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

}  // namespace

namespace detail {

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

std::string StepLauncher::make_command_key() {
  const cache::Config config = cache::load_config("");
  if (!explain_) {
    std::string error;
    remote_ = cache::remote::RemoteTier::open(config, &error);
    if (!error.empty()) note(error);
  }
  cache::Hasher h;
  h.field("link-step");
  h.field(kLinkKeyFormat);
  h.field(kind_name(step_.kind));
  if (step_.kind == StepKind::kLink) {
    ToolchainRemote asked;
    asked.tier = remote_.get();
    asked.count = counter();
    base::Result<Toolchain> t =
        driver_toolchain(read_only_ ? nullptr : store_.get(), files_.get(), step_.tool, &asked);
    if (!asked.note.empty()) note(asked.note);
    if (!t.ok()) return "toolchain: " + t.message();
    toolchain_ = t.value();
    if (!step_.lto.empty() && !toolchain_.lto) {
      count("link_uncacheable_lto");
      return "uncacheable " + prefix() + ": LTO link (" + step_.lto +
             ") by a driver without gcc's lto-wrapper, lto1 and linker plugin (what else would "
             "compile in the link is not keyed)";
    }
    h.field(toolchain_.identity.lo);
    h.field(toolchain_.identity.hi);
  } else {
    base::Result<cache::Hash128> id = program_identity(files_.get(), step_.tool);
    if (!id.ok()) return "tool: " + id.message();
    h.field(id->lo);
    h.field(id->hi);
  }
  relocation_ = decide_link_relocation(step_, cwd_, config.base_dir);
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
  return {};
}

std::vector<std::vector<std::string>> StepLauncher::input_records() {
  std::vector<std::vector<std::string>> records;
  if (step_.kind == StepKind::kLink) {
    std::optional<std::string> memo = store_->get_memo("link", command_key_.hex());
    bool fetched = false;
    if (!memo && remote_) {
      // Never run here: what another machine's run of it read.
      std::string what;
      memo = fetch_link_records(*remote_, command_key_, counter(), &what);
      if (!what.empty()) note(what);
      if (memo) note("records of this link from the remote");
      fetched = memo.has_value();
    }
    if (memo && decode_records(*memo, &records)) {
      memo_records_ = records;
      // Kept here: the next build asks no remote for them. Only keys are
      // made of them, from this machine's files; a run here replaces them.
      if (fetched && !explain_ && !read_only_) store_->put_memo("link", command_key_.hex(), *memo);
    } else {
      records.clear();
    }
  } else {
    std::vector<std::string> paths;
    if (step_.kind == StepKind::kArchive) paths.push_back(step_.output);
    paths.insert(paths.end(), step_.inputs.begin(), step_.inputs.end());
    records.push_back(relocated_paths(paths, relocation_));
  }
  return records;
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

  if (std::string why = make_command_key(); !why.empty()) return passthrough(why);
  const std::vector<std::vector<std::string>> records = input_records();

  std::optional<cache::Hash128> key;
  std::string why_miss = "no earlier run of this command";
  // Every key looked up, for the remotes after a local miss.
  std::vector<cache::Hash128> lookups;
  std::vector<bool> lookups_relocated;
  // The states of the newest record's paths (the run last stored), to name
  // what changed on a miss.
  std::vector<std::string> newest_states;
  for (const std::vector<std::string>& paths : records) {
    cache::Hasher k;
    k.field(command_key_.lo);
    k.field(command_key_.hi);
    base::Status hashed = hash_path_states(paths, cwd_, files_.get(), &k, nullptr,
                                           &paths == &records.front() ? &newest_states : nullptr);
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
      lookups.push_back(lookup);
      lookups_relocated.push_back(relocated);
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
  if (!records.empty()) {
    std::optional<std::string> stored = store_->get_memo(kLinkStatesTable, command_key_.hex());
    std::vector<std::string> changed = stored
                                           ? changed_paths(*stored, records.front(), newest_states)
                                           : std::vector<std::string>();
    if (!changed.empty()) {
      why_miss += "; changed since the run stored last: " + changed[0];
      for (size_t i = 1; i < changed.size() && i < 3; ++i) why_miss += ", " + changed[i];
      if (changed.size() > 3) why_miss += " and " + std::to_string(changed.size() - 3) + " more";
    }
  }
  if (explain_) {
    note("would miss: " + why_miss);
    LinkResult r;
    r.explanation = explanation_;
    return r;
  }
  if (remote_ && !read_only_) {
    std::string what;
    std::optional<FetchedStep> fetched =
        fetch_step_entry(*remote_, *store_, lookups, counter(), &what);
    if (!what.empty()) note(what);
    if (fetched) {
      if (std::optional<LinkResult> hit =
              serve(fetched->action, lookups_relocated[fetched->index])) {
        count("link_remote_hits");
        return *hit;
      }
    }
  }
  note("miss: " + why_miss);
  LinkResult r = run_and_store(records.empty() ? std::vector<std::string>() : records.front(), key);
  if (stored_key_ && remote_) {
    std::string what;
    upload_step_entry(*remote_, *store_, *stored_key_, command_key_, stored_records_, counter(),
                      &what);
    if (!what.empty()) note(what);
  }
  return r;
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

}  // namespace detail

LinkResult launch_link_step(const LinkStep& step, const std::vector<std::string>& argv,
                            bool explain) {
  detail::StepLauncher launcher(step, argv, explain);
  LinkResult r = launcher.run();
  launcher.count_files_hashed();
  return r;
}

}  // namespace lexpack::link
