// The second half of an archive or link step (step_launcher.h): the step
// runs, what it read is learned (the linker's dependency file, the search
// candidates around each library) and the output is stored under the key
// those files make.

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/depfile_reader.h"
#include "base/file_stat.h"
#include "base/file_util.h"
#include "base/process.h"
#include "base/relocation.h"
#include "launcher/finished_run.h"
#include "launcher/output_files.h"
#include "link/elf_runpath.h"
#include "link/link_relocation.h"
#include "link/step_launcher.h"

namespace lexpack::link::detail {
namespace {

// How many records of one link command are kept (newest first).
constexpr size_t kLinkRecords = 4;

}  // namespace

LinkResult StepLauncher::run_and_store(const std::vector<std::string>& predicted,
                                       const std::optional<cache::Hash128>& before_key) {
  std::vector<std::string> run_argv = argv_;
  std::string depfile;
  if (step_.kind == StepKind::kLink) {
    depfile = step_.output + ".lexpack-" + std::to_string(::getpid()) + ".ld.d";
    run_argv.push_back("-Wl,--dependency-file=" + depfile);
  }
  const int64_t start_ns = base::next_file_clock_tick_ns();
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
  // A file gone after the link was a temporary one. The objects gcc's LTO
  // plugin compiled from the inputs' IR (keyed by the inputs and the LTO
  // tools) are left out; anything else is not stored.
  int64_t lto_temporaries = 0;
  std::erase_if(read, [&](const std::string& path) {
    base::StatSignature sig;
    if (base::stat_file(path, &sig) || !toolchain_.lto || !is_lto_temporary(path)) return false;
    ++lto_temporaries;
    return true;
  });
  if (lto_temporaries > 0) {
    note(std::to_string(lto_temporaries) + " temporary objects of the LTO plugin not keyed");
  }
  for (const std::string& path : read) {
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
  std::vector<std::string> states;
  base::Status hashed = hash_path_states(paths, cwd_, files_.get(), &k, &newest, &states);
  if (!hashed.ok()) return "not stored: " + hashed.message();
  if (newest >= start_ns) return "not stored: an input changed just before or during the link";
  *key = k.digest();
  // What this run read, by content: a later miss names what changed.
  store_->put_memo(kLinkStatesTable, command_key_.hex(), encode_path_states(paths, states));
  std::vector<std::vector<std::string>> kept = {paths};
  for (std::vector<std::string>& r : memo_records_) {
    if (kept.size() < kLinkRecords && r != paths) kept.push_back(std::move(r));
  }
  stored_records_ = encode_records(kept);
  store_->put_memo("link", command_key_.hex(), stored_records_);
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
  stored_key_ = key;
  return "stored " + key.hex();
}

}  // namespace lexpack::link::detail
