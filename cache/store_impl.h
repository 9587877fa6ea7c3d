// The Store behind store.h (internal to cache/): an LMDB index, a set of pack
// files and a counters file in one directory. Split over store.cpp (blobs and
// records), store_gc.cpp (eviction, clear, stats), store_verify.cpp and
// store_entries.cpp (the entry-level access export and import go through).
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cache/cache_files.h"
#include "cache/config/config.h"
#include "cache/counters_file.h"
#include "cache/function_ref.h"
#include "cache/index_env.h"
#include "cache/pack_file.h"
#include "cache/records.h"
#include "cache/store.h"

namespace lexpack::cache {

inline constexpr uint32_t kFormatVersion = 1;
inline constexpr char kIndexFileName[] = "index.mdb";
inline constexpr char kPacksDirName[] = "packs";
inline constexpr char kCountersFileName[] = "stats";
inline constexpr char kResetLockName[] = "reset.lock";
inline constexpr char kGcLockName[] = "gc.lock";

int64_t now_seconds();

// The index's sealed meta values ("format", "active", "gc_pending") and pack
// records (store_open.cpp).
base::Status get_meta(Txn& t, const char* name, std::optional<uint32_t>* out);
base::Status put_meta(Txn& t, const char* name, uint32_t v);
base::Status get_pack(Txn& t, uint32_t pack, std::optional<PackRecord>* out);
base::Status put_pack(Txn& t, uint32_t pack, const PackRecord& rec);

class StoreImpl final : public Store {
 public:
  static base::Result<std::unique_ptr<Store>> open(const StoreOptions& options);
  ~StoreImpl() override;

  const std::string& dir() const override { return dir_; }
  base::Result<BlobId> put_blob(std::string_view bytes, const BlobOptions& options) override;
  std::optional<std::string_view> get_blob(const BlobId& id) override;
  bool has_blob(const BlobId& id) override;
  std::optional<BlobPlace> locate_blob(const BlobId& id) override;
  std::optional<FileRecord> get_file(std::string_view path) override;
  base::Status put_file(std::string_view path, const FileRecord& record) override;
  std::optional<ActionRecord> get_action(const ActionKey& key) override;
  base::Status put_action(const ActionKey& key, const ActionRecord& record) override;
  std::optional<std::string> get_memo(std::string_view table, std::string_view key) override;
  bool visit_memo(std::string_view table, std::string_view key,
                  const std::function<void(std::string_view)>& fn) override;
  base::Status put_memo(std::string_view table, std::string_view key,
                        std::string_view value) override;
  base::Status put_records(const std::vector<FileWrite>& files,
                           const std::vector<MemoWrite>& memos) override;
  base::Status put_actions(const std::vector<ActionWrite>& actions) override;
  base::Status add_counter(std::string_view name, int64_t delta) override;

  base::Result<std::vector<BlobId>> put_blobs(const std::vector<std::string_view>& blobs,
                                              const BlobOptions& options) override;
  base::Status flush() override;
  std::vector<std::string> take_messages() override;
  base::Result<StoreStats> stats() override;
  base::Result<GcReport> gc(uint64_t max_size) override;
  base::Result<VerifyReport> verify() override;
  base::Status clear() override;
  base::Result<std::string> make_temp(const std::string& suffix) override;
  base::Result<StoreEntries> list_entries() override;
  std::optional<std::string_view> read_stored_blob(const StoredBlob& blob) override;
  base::Status put_stored_records(const std::vector<StoredRecord>& records) override;
  base::Status check_writable() override;
  std::string archive_secret() override;

 private:
  StoreImpl() = default;
  base::Status open_index();
  base::Status init_meta();
  // Checks the index structure when the file changed since the last recorded
  // commit, and records every commit from now on.
  base::Status watch_index();
  // Replaces a damaged index with an empty one and deletes the packs it indexed.
  base::Status reset_index(const std::string& reason);
  // After a failed index call: resets the index if it was found damaged.
  base::Status after_failure(base::Status status);
  void report(std::string message, const char* counter);

  // Looks a blob up and checks its bytes; nullopt when absent or damaged.
  std::optional<std::string_view> find_blob(const BlobId& id, BlobLocation* where);
  // Writes pieces to the active pack (rolling over when full) and indexes them.
  base::Result<std::vector<BlobId>> store_pieces(const std::vector<std::string_view>& blobs,
                                                 const std::vector<BlobId>& ids, bool page_aligned);
  base::Status roll_over(uint32_t full_pack);
  base::Status put_record(Table table, const std::string& key, std::string value);
  std::optional<std::string> get_record(Table table, const std::string& key);
  // Calls fn with the record's value in place, inside the read transaction;
  // false (fn not called) when it is absent, damaged or unreadable.
  bool visit_record(Table table, const std::string& key, FunctionRef<void(std::string_view)> fn);
  uint64_t pack_bytes_on_disk(std::vector<std::pair<uint32_t, PackRecord>>* packs);
  // Evicts a pack chunk by chunk; stops between chunks once the steady clock
  // passes deadline_ns (*done stays false, the pack stays marked evicting).
  base::Status evict_pack(uint32_t pack, int64_t keep_after, int64_t deadline_ns, GcReport* report,
                          uint64_t* copied_bytes, bool* done);
  // The eviction a put runs while the index says one is pending: bounded by
  // options_.auto_gc_budget_us, skipped while another process evicts.
  base::Status auto_gc_step();

  std::string dir_;
  std::string packs_dir_;
  std::string index_path_;
  StoreOptions options_;
  Config config_;
  FileModes modes_;
  bool read_only_ = false;
  ino_t index_ino_ = 0;
  std::unique_ptr<Index> index_;
  std::unique_ptr<PackSet> packs_;
  std::unique_ptr<CountersFile> counters_;
  std::map<std::string, uint32_t> pending_uses_;  // blob key -> pack it was read from
  std::vector<std::string> messages_;
  bool in_gc_ = false;
  uint32_t first_pack_ = 1;  // lowest number a fresh index may start at
};

}  // namespace lexpack::cache
