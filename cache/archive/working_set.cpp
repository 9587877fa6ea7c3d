// Reuses the archive writer of a whole-cache export through a scratch store,
// so there is one archive format and one writer for it; the extra copy costs
// one sequential pack write of the working set.
#include "cache/archive/working_set.h"

#include "cache/archive/archive.h"
#include "cache/config/config.h"

#include <stdlib.h>

#include <filesystem>
#include <set>

namespace lexpack::cache {
namespace {

// Removes the scratch directory however the export ends.
struct ScratchDir {
  std::string path;
  ~ScratchDir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
};

}  // namespace

base::Result<WorkingSetReport> export_working_set(Store& store, const std::vector<ActionKey>& keys,
                                                  const std::string& file) {
  std::filesystem::path parent = std::filesystem::path(file).parent_path();
  std::string pattern =
      (parent.empty() ? std::string(".") : parent.string()) + "/.lexpack-working-set-XXXXXX";
  ScratchDir scratch;
  if (char* made = ::mkdtemp(pattern.data())) {
    scratch.path = made;
  } else {
    return base::Status::error(pattern + ": cannot create a scratch directory beside " + file);
  }
  StoreOptions options;
  options.dir = scratch.path;
  options.auto_gc = false;
  options.max_size = ~uint64_t(0) >> 1;
  // Signed like the cache's own export (its lexpack.conf, not the scratch dir's).
  options.remote_secret = load_config(store.dir()).remote_secret;
  auto scratch_store = Store::open(options);
  if (!scratch_store.ok()) return base::Status::error("scratch store: " + scratch_store.message());
  Store& out = **scratch_store;

  WorkingSetReport report;
  std::set<std::pair<uint64_t, uint64_t>> copied;  // (hi, lo)
  for (const ActionKey& key : keys) {
    std::optional<ActionRecord> action = store.get_action(key);
    if (!action) {
      ++report.missing_actions;
      continue;
    }
    std::vector<BlobId> ids = {action->stdout_blob, action->stderr_blob};
    for (const ActionRecord::Output& o : action->outputs) ids.push_back(o.blob);
    bool complete = true;
    for (const BlobId& id : ids) {
      if (id.is_zero() || copied.count({id.hi, id.lo})) continue;
      std::optional<std::string_view> bytes = store.get_blob(id);
      if (!bytes) {
        complete = false;
        break;
      }
      auto put = out.put_blob(*bytes);
      if (!put.ok()) return base::Status::error("scratch store: " + put.message());
      copied.insert({id.hi, id.lo});
      ++report.blobs;
      report.blob_bytes += bytes->size();
    }
    if (!complete) {
      ++report.missing_actions;
      continue;
    }
    base::Status s = out.put_action(key, *action);
    if (!s.ok()) return base::Status::error("scratch store: " + s.message());
    ++report.actions;
  }
  base::Status s = export_archive(out, file);
  if (!s.ok()) return s;
  return report;
}

}  // namespace lexpack::cache
