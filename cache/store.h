// Public face of lexpack's content-addressed store: blobs in a few large
// append-only pack files, an LMDB index (blobs, files, actions, key/value
// memo tables, counters). No LMDB type appears here; errors come back as
// Status values, never exceptions.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/file_stat.h"
#include "base/status.h"
#include "cache/hash/hash.h"

namespace lexpack::cache {

using BlobId = Hash128;     // XXH3-128 of the blob's bytes
using ActionKey = Hash128;  // computed by the launcher

// File table: path -> what we last knew of it.
struct FileRecord {
  base::StatSignature stat;
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
  uint64_t compile_time_us = 0;  // CPU time (user + system) of the compiler
  bool operator==(const ActionRecord&) const = default;
};

struct BlobOptions {
  // Page-align and zero-pad the blob inside its pack, so it can be mapped.
  bool page_aligned = false;
};

// Where a page-aligned blob's bytes lie, for a process that maps the pack
// itself. The pack stays open in this Store, so its device and inode keep
// naming that file for the life of the Store.
struct BlobPlace {
  std::string pack_path;  // absolute
  uint64_t pack_dev = 0;
  uint64_t pack_ino = 0;
  uint64_t offset = 0;  // page-aligned; the bytes are zero-padded to a page end
  uint64_t size = 0;
};

struct StoreOptions {
  std::string dir;  // empty: LEXPACK_DIR, XDG_CACHE_HOME/lexpack, ~/.cache/lexpack
  bool read_only = false;
  // Zero: take the value from the configuration (see cache/config/config.h).
  uint64_t pack_size = 0;
  uint64_t max_size = 0;
  // A blob's last use is written to the index at most this often, in one
  // batched write when the Store closes (or flush()), so a hit is no write.
  int64_t use_granularity_seconds = 3600;
  // Eviction copies forward the blobs of an evicted pack used this recently.
  int64_t keep_recent_seconds = 86400;
  // Evict when a pack fills up and the cache is over its size limit.
  bool auto_gc = true;
  // Eviction inside a put stops once it has run this long (checked between
  // chunks of at most 64 blobs or 1 MiB) and the next puts go on with it;
  // `gc()` finishes it at once. Zero: one chunk per put.
  int64_t auto_gc_budget_us = 2000;
  // Signs exported archives and is required of imported ones; empty: the
  // remote_secret setting (see cache/config/config.h).
  std::string remote_secret;
};

struct StoreStats {
  uint64_t blobs = 0;
  uint64_t blob_bytes = 0;  // sum of blob sizes
  uint64_t files = 0;
  uint64_t actions = 0;
  uint64_t memos = 0;
  uint64_t packs = 0;
  uint64_t pack_bytes = 0;  // size of the pack files on disk
  uint64_t index_bytes = 0;
  uint64_t max_size = 0;
  // "hits", "misses", "time_saved_us", "corrupt_blobs", ... (as added).
  std::map<std::string, int64_t> counters;
};

struct GcReport {
  uint64_t bytes_before = 0;
  uint64_t bytes_after = 0;
  uint64_t packs_evicted = 0;
  uint64_t blobs_copied = 0;  // still in use, copied forward
  uint64_t blobs_dropped = 0;
  uint64_t leftovers_removed = 0;  // temporaries of killed processes (cache/orphan_files.h)
};

struct VerifyReport {
  uint64_t blobs_checked = 0;
  uint64_t records_checked = 0;
  uint64_t bad_blobs = 0;             // unreadable or wrong hash: dropped
  uint64_t bad_records = 0;           // undecodable index records: dropped
  uint64_t dangling_actions = 0;      // refer to a blob that is gone: dropped (not an error)
  uint64_t orphan_packs = 0;          // pack files the index does not know: deleted
  std::vector<std::string> problems;  // one line per bad item
  bool clean() const { return bad_blobs == 0 && bad_records == 0; }
};

// The index's entries as they lie in it, for the archive code
// (cache/archive/), which writes them to one file and back.
enum class RecordKind : uint32_t { kFile, kAction, kMemo };
struct StoredRecord {
  RecordKind kind = RecordKind::kFile;
  std::string key;    // the index key
  std::string value;  // the record's bytes (cache/records.h)
};
struct StoredBlob {
  BlobId id;
  bool page_aligned = false;
  // Where the index says its bytes lie (for Store::read_stored_blob).
  uint32_t pack = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
};
struct StoreEntries {
  std::vector<StoredBlob> blobs;
  std::vector<StoredRecord> records;  // files, then actions, then memos
};

// A process-wide handle. Thread-compatible; many processes may share one
// cache directory at once.
class Store {
 public:
  static base::Result<std::unique_ptr<Store>> open(const StoreOptions& options);
  virtual ~Store() = default;

  virtual const std::string& dir() const = 0;

  // Blobs. put() deduplicates by content; get() verifies the hash and returns a
  // view into the pack mapping, valid for the life of the Store.
  virtual base::Result<BlobId> put_blob(std::string_view bytes,
                                        const BlobOptions& options = {}) = 0;
  virtual std::optional<std::string_view> get_blob(const BlobId& id) = 0;
  virtual bool has_blob(const BlobId& id) = 0;
  // The place of a blob stored page-aligned, after checking its bytes against
  // the id; nullopt when absent, damaged or not page-aligned.
  virtual std::optional<BlobPlace> locate_blob(const BlobId& id);

  virtual std::optional<FileRecord> get_file(std::string_view path) = 0;
  virtual base::Status put_file(std::string_view path, const FileRecord& record) = 0;

  virtual std::optional<ActionRecord> get_action(const ActionKey& key) = 0;
  virtual base::Status put_action(const ActionKey& key, const ActionRecord& record) = 0;

  // Small key/value memo tables named by `table` ("compiler", "closure", ...).
  virtual std::optional<std::string> get_memo(std::string_view table, std::string_view key) = 0;
  // Calls fn with the memo's value where it lies, valid only during the call
  // (a large memo is not copied); false, fn not called, when there is none.
  virtual bool visit_memo(std::string_view table, std::string_view key,
                          const std::function<void(std::string_view)>& fn);
  virtual base::Status put_memo(std::string_view table, std::string_view key,
                                std::string_view value) = 0;

  // File records and memos written together, for callers that learn many at
  // once (a whole-build scan): the store writes them in one index transaction,
  // all or none; the default writes them one by one.
  struct FileWrite {
    std::string path;
    FileRecord record;
  };
  struct MemoWrite {
    std::string table, key, value;
  };
  virtual base::Status put_records(const std::vector<FileWrite>& files,
                                   const std::vector<MemoWrite>& memos);
  // Action records written together (a whole build's fetched entries): the
  // store writes them in one index transaction, all or none; the default
  // writes them one by one.
  struct ActionWrite {
    ActionKey key;
    ActionRecord record;
  };
  virtual base::Status put_actions(const std::vector<ActionWrite>& actions);

  // Statistics counters ("hits", "misses", "time_saved_us", ...).
  virtual base::Status add_counter(std::string_view name, int64_t delta) = 0;

  // Stores many blobs with one pack write and one index transaction.
  virtual base::Result<std::vector<BlobId>> put_blobs(const std::vector<std::string_view>& blobs,
                                                      const BlobOptions& options = {});
  // Writes batched last-use marks to the index (also done on destruction).
  virtual base::Status flush();
  // Reports of damage found (corrupt blobs, an index reset) since the last call.
  virtual std::vector<std::string> take_messages();

  // Maintenance, for the command line.
  virtual base::Result<StoreStats> stats();
  // Evicts least recently used packs until the packs fit in max_size bytes.
  // gc and clear also remove temporaries that killed processes left.
  virtual base::Result<GcReport> gc(uint64_t max_size);
  // Checks every blob and record; drops the bad ones.
  virtual base::Result<VerifyReport> verify();
  virtual base::Status clear();
  // A fresh empty file in the cache's tmp/ for a temporary of this process
  // (named after its pid, so gc and clear sweep it once the process is gone).
  virtual base::Result<std::string> make_temp(const std::string& suffix);

  // Entry-level access for export and import (cache/archive/archive.h).
  // Every blob and record the index holds, read in one transaction; damaged
  // ones are left out.
  virtual base::Result<StoreEntries> list_entries();
  // A listed blob's bytes, checked against its id; nullopt when damaged.
  // Marks no use and reports nothing.
  virtual std::optional<std::string_view> read_stored_blob(const StoredBlob& blob);
  // Records written back as they were listed, all in one index transaction.
  virtual base::Status put_stored_records(const std::vector<StoredRecord>& records);
  // Ok when entries can be written: the index is open, the store not read-only.
  virtual base::Status check_writable();
  // Signs exported archives and is required of imported ones:
  // StoreOptions::remote_secret, else the remote_secret setting.
  virtual std::string archive_secret();
};

}  // namespace lexpack::cache
