// A translation unit's closure as the walk and the evaluation made it, kept
// beside its closure memo. When a compile finds the memo out of date only
// because its own source changed, and the source's preprocessing
// fingerprint (file_summary.h) is the one the closure was made with, the
// closure is this one with the source's new content: nothing is walked or
// evaluated again (the edit-and-rebuild case).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/file_stat.h"
#include "cache/hash/hash.h"
#include "closure/closure_memo.h"
#include "closure/dependency_closure.h"

namespace lexpack::closure {

// The memo table snapshots are kept in, by translation unit key.
constexpr std::string_view kClosureSnapshotTable = "closure-snapshot";

// The encoded snapshot of `closure`, whose action key (before the date) is
// `action_key`: the key of the closure memo stored with it.
std::string encode_closure_snapshot(const Closure& closure, const cache::Hash128& action_key);
// The closure `bytes` hold and its action key; false when `bytes` are not a
// snapshot of this version. The closure's paths are views into `bytes`,
// kept as its storage (moved in, not copied, when the caller is done with
// them).
bool decode_closure_snapshot(std::string bytes, Closure* closure, cache::Hash128* action_key);

// The source's preprocessing fingerprint a snapshot was made with, read
// from its head alone; false when `bytes` are not a snapshot of this version.
bool snapshot_source_preprocessing(std::string_view bytes, cache::Hash128* source_preprocessing);

// The closure of a compile whose source alone changed: `snapshot` with the
// source's new signature and content. nullopt, with *why, when it does not
// apply: the source's preprocessing fingerprint is not the snapshot's, the
// source is or may become a #pragma once twin, `memo` (the closure memo
// stored with the snapshot) is of another closure, or it finds anything but
// the source changed (`content` as for check_closure_memo()).
std::optional<Closure> closure_with_new_source(std::string snapshot, ClosureMemo memo,
                                               const base::StatSignature& source_stat,
                                               const cache::Hash128& source_content,
                                               const cache::Hash128& source_preprocessing,
                                               const ContentLookup* content, std::string* why);

}  // namespace lexpack::closure
