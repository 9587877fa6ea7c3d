// Header evaluations kept in the store (memo table "header-eval"), so that a
// fresh server, a launcher evaluating on its own, or a cold scan on a
// machine that has built before replays what earlier processes evaluated
// instead of starting from nothing.
//
// A record holds the traces of one header in one context (compiler,
// working directory, language, preprocessor options), keyed by the header's
// file key: its path, where the search found it, and its stat signature. A
// header whose bytes change has another key; the record of its old bytes is
// never asked again. Every file a trace names (an include's answer, a
// #pragma once input) is named by its file key too, and a replay resolves
// each include again and compares keys, as it does within one scan. A trace
// naming a file changed in the last two seconds is not written: a file
// written twice within the clock's tick could keep its signature.
//
// A trace's record holds its own ops; an include's nested trace (the one
// replayed with its includer, whose inputs cover it) is named by its digest
// and taken from the nested header's own record when the includer's is
// read. One not found there leaves the include to look the header up when
// the replay enters it.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cache/store.h"
#include "closure/resolution.h"
#include "preprocessor/header_cache.h"

namespace lexpack::closure {

inline constexpr std::string_view kHeaderTable = "header-eval";

// The name a header cache knows `r`'s file by: the path as found, where in
// the search, and the stat of what was read.
std::string header_file_key(const Resolution& r);

// The traces as one record's bytes, file numbers written as `cache`'s
// names. Traces a record cannot hold (module lines) are left out; "" when
// none is left.
std::string encode_header_traces(
    const std::vector<std::shared_ptr<const preprocessor::HeaderTrace>>& traces,
    std::string_view context, std::string_view file, const preprocessor::HeaderCache& cache);

// The traces of a record written for `context` and `file`, their file names
// numbered by `cache`; empty when the bytes are damaged or for another key.
std::vector<std::shared_ptr<const preprocessor::HeaderTrace>> decode_header_traces(
    std::string_view bytes, std::string_view context, std::string_view file,
    preprocessor::HeaderCache& cache);

// The store as a header cache's backing.
class StoredHeaders : public preprocessor::HeaderCache::Backing {
 public:
  explicit StoredHeaders(cache::Store* store) : store_(store) {}
  std::vector<std::shared_ptr<const preprocessor::HeaderTrace>> load(
      std::string_view context, std::string_view file, preprocessor::HeaderCache& cache) override;
  cache::Store* store() const { return store_; }

 private:
  cache::Store* store_;
};

// Writes what `cache` learned since the last call to `store`, in one
// transaction; traces naming a file changed less than two seconds ago are
// left out (and their key written without them).
base::Status save_header_traces(cache::Store* store, preprocessor::HeaderCache& cache);

}  // namespace lexpack::closure
