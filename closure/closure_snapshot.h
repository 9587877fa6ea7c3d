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
#include "lexer/kernel.h"

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

// What a snapshot's head says of its source's directive edits that cannot
// change the closure (file_summary.h's inert_fingerprint()): the source's
// inert fingerprint, and the macro reads it was made by.
struct SnapshotInert {
  cache::Hash128 fingerprint;  // zero: none known
  // The reads can be told: none (no evaluation ran: `reads` is empty), or
  // the filter's bytes in `reads` (a view into the snapshot).
  bool reads_known = false;
  std::optional<std::string_view> reads;
};
// Read from the head alone; false when `bytes` are not a snapshot of this
// version.
bool snapshot_source_inert(std::string_view bytes, SnapshotInert* inert);

// inert_fingerprint() of the file at `path` when its content is `content`,
// else nullopt.
std::optional<cache::Hash128> source_inert_fingerprint(const std::string& path,
                                                       const cache::Hash128& content,
                                                       const lexer::Kernel& kernel,
                                                       std::optional<std::string_view> reads);
// Sets closure->source_inert from the source as it is now (read and lexed
// again), or to zero when its content is no longer the closure's or the
// evaluation's macro reads are not known.
void note_source_inert(Closure* closure, const lexer::Kernel& kernel);

// The closure of a compile whose source alone changed: `snapshot` with the
// source's new signature and content. nullopt, with *why, when it does not
// apply: the source's preprocessing fingerprint is not the snapshot's (and
// `source_inert`, its inert fingerprint by the snapshot's macro reads, is
// not given or not the snapshot's either), the
// source is or may become a #pragma once twin, `memo` (the closure memo
// stored with the snapshot) is of another closure, or it finds anything but
// the source changed (`content` as for check_closure_memo()).
std::optional<Closure> closure_with_new_source(std::string snapshot, ClosureMemo memo,
                                               const base::StatSignature& source_stat,
                                               const cache::Hash128& source_content,
                                               const cache::Hash128& source_preprocessing,
                                               const cache::Hash128* source_inert,
                                               const ContentLookup* content, std::string* why);

}  // namespace lexpack::closure
