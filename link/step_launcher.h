// The launcher of one archive or link step, shared by the two halves of its
// flow: link_launcher.cpp (key, lookup, serve) and step_store.cpp (run the
// step, learn what it read, store the output). Internal to link/.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/hash/hash.h"
#include "cache/remote/remote_tier.h"
#include "cache/store.h"
#include "closure/file_state.h"
#include "closure/key_relocation.h"
#include "launcher/decision_log.h"
#include "link/link_inputs.h"
#include "link/link_launcher.h"
#include "link/link_step.h"
#include "link/toolchain.h"
#include "ninja_integration/build_counts.h"

namespace lexpack::link::detail {

const char* kind_name(StepKind k);

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
  cache::remote::CountFn counter() {
    return [this](std::string_view name, int64_t delta) { count(std::string(name), delta); };
  }
  bool open_store();
  // The key of the command (tools, arguments relocated, environment) in
  // command_key_, the remote opened; why not ("" when made).
  std::string make_command_key();
  // The files this step reads, one record per key to look up: named on the
  // command line (archives), or learned from the last runs of the same
  // command (links; each record a key of its own, so that a link whose
  // inputs go back and forth hits), here or on another machine.
  std::vector<std::vector<std::string>> input_records();
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
  std::unique_ptr<cache::remote::RemoteTier> remote_;  // null: no remote
  std::optional<cache::Hash128> stored_key_;           // what run_and_store stored
  std::string stored_records_;                         // with the link's records
  cache::Hash128 command_key_;
  closure::KeyRelocation relocation_;
};

}  // namespace lexpack::link::detail
