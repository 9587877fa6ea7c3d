// Whole-build prefetch: the action keys of many compiles computed in one
// process (one file graph shared by every TU, all cores), each TU's closure
// memo left in the local store, and the entries missing locally fetched from
// the remote in batches, so that the compiles that follow are local hits.
// Best effort: a compile whose key cannot be computed is left to the launcher.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cache/hash/hash.h"

namespace lexpack::launcher {

struct PrefetchCompile {
  std::string directory;          // absolute: the compile's working directory
  std::vector<std::string> argv;  // argv[0] is the compiler
};

struct PrefetchOptions {
  int jobs = 0;       // <= 0: one per core
  bool fetch = true;  // false: compute the keys and look locally, fetch nothing
  // Stop after a batch of compiles of which the remote had none (a build
  // whose entries are not there yet): the rest are left without a key.
  bool stop_when_remote_lacks = false;
  size_t chunk = 256;  // compiles keyed, then fetched, together
  // No chunk is begun this long after the start (0: no bound): the build
  // waits for the prefetch, and the compiles left fetch their own entries.
  int deadline_ms = 0;
  size_t cold_chunk = 32;  // a chunk that asked this many keys and got none stops it
  // Called as soon as some compiles' closure memos are in the local store,
  // with their indices in `compiles` (each keyed compile once, in slices of
  // at most `memo_slice` compiles of one directory, or as many as threads):
  // a server can check those closures while the rest are keyed and the
  // entries are on their way.
  // Called from the prefetch's own thread, before the last batch is fetched.
  std::function<void(std::vector<size_t>)> memos_stored;
  size_t memo_slice = 16;
};

struct PrefetchResult {
  // Per compile, in the order given: its action key as the launcher will look
  // it up (the date mixed in where the closure uses __DATE__), or nullopt.
  std::vector<std::optional<cache::Hash128>> keys;
  std::vector<std::string> why_not;  // per compile without a key: why
  std::vector<bool> local;           // per compile: its entry was in the local store
  std::vector<bool> fetched_now;     // per compile: its entry was fetched from the remote
  size_t fetched = 0;                // entries fetched from the remote and stored
  bool remote = false;               // a remote is configured
  std::string note;                  // what went wrong with the remote
  // Where the time went, for the decision log: "memos fetched 9 ms, ...".
  std::string phases;
};

// Never fails: what could not be done is a compile without a key, or a note.
// Changes the working directory while it runs and restores it.
PrefetchResult prefetch_compiles(const std::vector<PrefetchCompile>& compiles,
                                 const PrefetchOptions& options);

}  // namespace lexpack::launcher
