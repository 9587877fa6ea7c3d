#include "link/link_remote.h"

#include <cstdlib>

#include "cache/remote/local_copy.h"
#include "cache/remote/upload_queue.h"

namespace lexpack::link {

namespace {
constexpr uint64_t kLinkRecordsFormat = 1;
}  // namespace

cache::Hash128 link_records_key(const cache::Hash128& command_key) {
  cache::Hasher h;
  h.field("link-records");
  h.field(kLinkRecordsFormat);
  h.field(command_key.lo);
  h.field(command_key.hi);
  return h.digest();
}

std::optional<std::string> fetch_link_records(cache::remote::RemoteTier& tier,
                                              const cache::Hash128& command_key,
                                              const cache::remote::CountFn& count,
                                              std::string* note) {
  return tier.fetch_answer(link_records_key(command_key), count, note);
}

std::optional<FetchedStep> fetch_step_entry(cache::remote::RemoteTier& tier, cache::Store& store,
                                            const std::vector<cache::Hash128>& keys,
                                            const cache::remote::CountFn& count,
                                            std::string* note) {
  if (keys.empty()) return std::nullopt;
  // One key (an archive, a link run once) is one GET; more go in a batch.
  std::vector<std::optional<cache::remote::RemoteEntry>> entries;
  if (keys.size() == 1) {
    entries.push_back(tier.fetch(keys[0], count, note));
  } else {
    entries = tier.fetch_many(keys, count, note);
  }
  for (size_t i = 0; i < keys.size() && i < entries.size(); ++i) {
    if (!entries[i]) continue;
    std::optional<cache::ActionRecord> stored =
        cache::remote::store_entry(store, keys[i], *entries[i]);
    if (!stored) continue;
    return FetchedStep{i, std::move(*stored)};
  }
  return std::nullopt;
}

void upload_step_entry(cache::remote::RemoteTier& tier, cache::Store& store,
                       const cache::Hash128& key, const cache::Hash128& command_key,
                       const std::string& records, const cache::remote::CountFn& count,
                       std::string* note) {
  cache::remote::queue_or_send(
      store, tier, key, link_records_key(command_key), records,
      [&]() -> std::optional<cache::remote::RemoteEntry> {
        std::optional<cache::ActionRecord> action = store.get_action(key);
        if (!action) return std::nullopt;
        return cache::remote::entry_from_store(store, *action);
      },
      count, note);
}

}  // namespace lexpack::link
