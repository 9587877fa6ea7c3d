// Public face of lexpack's content-addressed store: blobs in a few large
// append-only pack files, an LMDB index (blobs, files, actions, key/value
// memo tables, counters). No LMDB type appears here; errors come back as
// Status values, never exceptions.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/hash.h"
#include "cache/status.h"

namespace lexpack::cache {

using BlobId = Hash128;     // XXH3-128 of the blob's bytes
using ActionKey = Hash128;  // computed by the launcher

// The stat fields that decide whether a file may have changed.
struct StatSignature {
  uint64_t dev = 0;
  uint64_t ino = 0;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  bool operator==(const StatSignature&) const = default;
};

// File table: path -> what we last knew of it.
struct FileRecord {
  StatSignature stat;
  BlobId content;      // id of the file's bytes (not necessarily stored as a blob)
  BlobId scan_result;  // id of the serialized scan result blob, zero if none
  bool operator==(const FileRecord&) const = default;
};

// Action table: one cached compile.
struct ActionRecord {
  struct Output {
    std::string role;  // "object", "dwo", "depfile", ...
    BlobId blob;
    bool operator==(const Output&) const = default;
  };
  std::vector<Output> outputs;
  int32_t exit_code = 0;
  BlobId stdout_blob;  // zero id when empty
  BlobId stderr_blob;
  // Opaque bytes the launcher keeps with the entry (dependency list etc.).
  std::string payload;
  uint64_t compile_time_us = 0;
  bool operator==(const ActionRecord&) const = default;
};

struct BlobOptions {
  // Page-align and zero-pad the blob inside its pack, so it can be mapped.
  bool page_aligned = false;
};

struct StoreOptions {
  std::string dir;            // empty: LEXPACK_DIR, XDG_CACHE_HOME/lexpack, ~/.cache/lexpack
  bool read_only = false;
};

// A process-wide handle. Thread-compatible; many processes may share one
// cache directory at once.
class Store {
 public:
  static Result<std::unique_ptr<Store>> open(const StoreOptions& options);
  virtual ~Store() = default;

  virtual const std::string& dir() const = 0;

  // Blobs. put() deduplicates by content; get() verifies the hash and returns a
  // view into the pack mapping, valid for the life of the Store.
  virtual Result<BlobId> put_blob(std::string_view bytes, const BlobOptions& options = {}) = 0;
  virtual std::optional<std::string_view> get_blob(const BlobId& id) = 0;
  virtual bool has_blob(const BlobId& id) = 0;

  virtual std::optional<FileRecord> get_file(std::string_view path) = 0;
  virtual Status put_file(std::string_view path, const FileRecord& record) = 0;

  virtual std::optional<ActionRecord> get_action(const ActionKey& key) = 0;
  virtual Status put_action(const ActionKey& key, const ActionRecord& record) = 0;

  // Small key/value memo tables named by `table` ("compiler", "closure", ...).
  virtual std::optional<std::string> get_memo(std::string_view table, std::string_view key) = 0;
  virtual Status put_memo(std::string_view table, std::string_view key, std::string_view value) = 0;

  // Statistics counters ("hits", "misses", "time_saved_us", ...).
  virtual Status add_counter(std::string_view name, int64_t delta) = 0;
};

}  // namespace lexpack::cache
