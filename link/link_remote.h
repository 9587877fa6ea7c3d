// Archive and link steps through the remote tier, as compiles go: a step
// that misses locally asks the remotes for the entries of its keys in one
// batch; a link this machine never ran asks for the records of what another
// machine's run of the same command read (its keys are made from them); what
// a step stores goes up with those records.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cache/hash/hash.h"
#include "cache/remote/remote_tier.h"
#include "cache/store.h"

namespace lexpack::link {

// The remote key of the records of link command `command_key` (relocated
// under base_dir, so that every checkout asks the same one).
cache::Hash128 link_records_key(const cache::Hash128& command_key);

// The records of what earlier runs of `command_key` read, as another machine
// left them (the bytes of the local "link" memo).
std::optional<std::string> fetch_link_records(cache::remote::RemoteTier& tier,
                                              const cache::Hash128& command_key,
                                              const cache::remote::CountFn& count,
                                              std::string* note);

// The first of `keys` (in order) whose entry a remote holds, stored in
// `store`: its index and record.
struct FetchedStep {
  size_t index = 0;
  cache::ActionRecord action;
};
std::optional<FetchedStep> fetch_step_entry(cache::remote::RemoteTier& tier, cache::Store& store,
                                            const std::vector<cache::Hash128>& keys,
                                            const cache::remote::CountFn& count, std::string* note);

// Sends the entry stored under `key` to the remotes, with `records` (a
// link's, empty for an archive) under link_records_key(command_key): queued
// for the build's uploader under `lexpack ninja`, else sent here.
void upload_step_entry(cache::remote::RemoteTier& tier, cache::Store& store,
                       const cache::Hash128& key, const cache::Hash128& command_key,
                       const std::string& records, const cache::remote::CountFn& count,
                       std::string* note);

}  // namespace lexpack::link
