// Blobs are stored before the record that names them, so a reader never finds
// a record whose blobs are missing (beyond eviction, which it already handles).
#include "cache/remote/local_copy.h"

namespace lexpack::cache::remote {

std::optional<RemoteEntry> entry_from_store(Store& store, const ActionRecord& action) {
  RemoteEntry entry;
  entry.compile_time_us = action.compile_time_us;
  entry.payload = action.payload;
  auto text = [&](const BlobId& id, std::string* out) {
    if (id.is_zero()) return true;
    std::optional<std::string_view> bytes = store.get_blob(id);
    if (!bytes) return false;
    *out = std::string(*bytes);
    return true;
  };
  for (const ActionRecord::Output& o : action.outputs) {
    RemoteEntry::File f{o.role, {}};
    if (!text(o.blob, &f.bytes)) return std::nullopt;
    entry.outputs.push_back(std::move(f));
  }
  if (!text(action.stdout_blob, &entry.out) || !text(action.stderr_blob, &entry.err)) {
    return std::nullopt;
  }
  return entry;
}

std::optional<ActionRecord> store_entry(Store& store, const Hash128& key,
                                        const RemoteEntry& entry) {
  ActionRecord action;
  action.exit_code = 0;
  action.compile_time_us = entry.compile_time_us;
  action.payload = entry.payload;
  auto put = [&store](std::string_view bytes, BlobId* id) {
    if (bytes.empty()) return true;
    auto stored = store.put_blob(bytes, BlobOptions());
    if (!stored.ok()) return false;
    *id = stored.value();
    return true;
  };
  for (const RemoteEntry::File& f : entry.outputs) {
    ActionRecord::Output o{f.role, {}};
    if (!put(f.bytes, &o.blob) || o.blob.is_zero()) return std::nullopt;
    action.outputs.push_back(o);
  }
  if (!put(entry.out, &action.stdout_blob) || !put(entry.err, &action.stderr_blob)) {
    return std::nullopt;
  }
  if (!store.put_action(key, action).ok()) return std::nullopt;
  return store.get_action(key);
}

}  // namespace lexpack::cache::remote
