// Between the local store and a remote entry, both ways: the entry a remote
// gets for a stored action, and a fetched entry written into the local store
// so that it is served like any local hit.
#pragma once

#include <optional>
#include <vector>

#include "cache/hash/hash.h"
#include "cache/remote/remote_entry.h"
#include "cache/store.h"

namespace lexpack::cache::remote {

// The entry a remote holds for `action`, read back from `store`; nullopt
// when one of its blobs is gone (evicted since).
std::optional<RemoteEntry> entry_from_store(Store& store, const ActionRecord& action);

// Stores `entry`'s blobs and its action record under `key`; the record as
// stored, or nullopt when the store refused a write.
std::optional<ActionRecord> store_entry(Store& store, const Hash128& key, const RemoteEntry& entry);

// Stores many fetched entries at once: every blob in one batch (one pack
// write, one index transaction per quarter pack), then every record in one
// transaction. Gives, for each entry, whether it is stored; nullopt entries
// are skipped.
std::vector<bool> store_entries(Store& store, const std::vector<Hash128>& keys,
                                const std::vector<std::optional<RemoteEntry>>& entries);

}  // namespace lexpack::cache::remote
