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

namespace {

// The record of `entry`, without its blobs yet.
ActionRecord record_of(const RemoteEntry& entry) {
  ActionRecord action;
  action.exit_code = 0;
  action.compile_time_us = entry.compile_time_us;
  action.payload = entry.payload;
  return action;
}

}  // namespace

namespace {

// store_entries() on entries where they lie (null: skipped).
std::vector<bool> store_each(Store& store, const std::vector<Hash128>& keys,
                             const std::vector<const RemoteEntry*>& entries) {
  std::vector<bool> stored(entries.size(), false);
  // Every blob, in the order the records below take their ids (empty text
  // has no blob).
  std::vector<std::string_view> nonempty;
  auto add = [&nonempty](std::string_view b) {
    if (!b.empty()) nonempty.push_back(b);
  };
  for (const RemoteEntry* e : entries) {
    if (!e) continue;
    for (const RemoteEntry::File& f : e->outputs) add(f.bytes);
    add(e->out);
    add(e->err);
  }
  std::vector<BlobId> ids;
  if (!nonempty.empty()) {
    auto put = store.put_blobs(nonempty, BlobOptions());
    if (!put.ok() || put->size() != nonempty.size()) return stored;
    ids = std::move(put.value());
  }
  std::vector<Store::ActionWrite> writes;
  std::vector<size_t> written;
  size_t next = 0;
  auto id_of = [&](std::string_view bytes) { return bytes.empty() ? BlobId{} : ids[next++]; };
  for (size_t i = 0; i < entries.size() && i < keys.size(); ++i) {
    if (!entries[i]) continue;
    const RemoteEntry& e = *entries[i];
    ActionRecord action = record_of(e);
    bool complete = true;
    for (const RemoteEntry::File& f : e.outputs) {
      ActionRecord::Output o{f.role, id_of(f.bytes)};
      complete = complete && !o.blob.is_zero();
      action.outputs.push_back(o);
    }
    action.stdout_blob = id_of(e.out);
    action.stderr_blob = id_of(e.err);
    if (!complete) continue;  // an output with no bytes is not an entry
    writes.push_back({keys[i], std::move(action)});
    written.push_back(i);
  }
  if (writes.empty() || !store.put_actions(writes).ok()) return stored;
  for (size_t i : written) stored[i] = true;
  return stored;
}

}  // namespace

std::vector<bool> store_entries(Store& store, const std::vector<Hash128>& keys,
                                const std::vector<std::optional<RemoteEntry>>& entries) {
  std::vector<const RemoteEntry*> each;
  each.reserve(entries.size());
  for (const std::optional<RemoteEntry>& e : entries) each.push_back(e ? &*e : nullptr);
  return store_each(store, keys, each);
}

std::optional<ActionRecord> store_entry(Store& store, const Hash128& key,
                                        const RemoteEntry& entry) {
  if (!store_each(store, {key}, {&entry})[0]) return std::nullopt;
  return store.get_action(key);
}

}  // namespace lexpack::cache::remote
