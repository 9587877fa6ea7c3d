// The LMDB environment behind the store's index (internal to cache/; the
// public header store.h never sees an MDB type). Wraps every mdb_* call so its
// return code is checked and reported with the operation and mdb_strerror.
#pragma once

#include <lmdb.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "cache/cache_files.h"
#include "cache/function_ref.h"

namespace lexpack::cache {

enum class Table { kBlobs, kPackBlobs, kPacks, kFiles, kActions, kMemo, kMeta };
inline constexpr int kTableCount = 7;
const char* table_name(Table t);

class Index;

// One transaction. Values returned by get()/each() are valid until it ends.
class Txn {
 public:
  Txn(Index* index, MDB_txn* txn, bool write) : index_(index), txn_(txn), write_(write) {}
  // *out is nullopt when the key is absent.
  base::Status get(Table t, std::string_view key, std::optional<std::string_view>* out);
  base::Status put(Table t, std::string_view key, std::string_view value);
  base::Status del(Table t, std::string_view key, bool* found = nullptr);  // absent is fine
  // Calls fn for each record whose key starts with prefix, in key order, until
  // it returns false.
  base::Status each(Table t, std::string_view prefix,
                    const std::function<bool(std::string_view key, std::string_view value)>& fn);
  base::Status entries(Table t, uint64_t* count);
  base::Status clear(Table t);
  bool is_write() const { return write_; }
  uint64_t id() const { return mdb_txn_id(txn_); }

 private:
  base::Status fail(const char* op, int rc);
  bool in_map(const MDB_val& v) const;
  Index* index_;
  MDB_txn* txn_;
  bool write_;
};

class Index {
 public:
  // path: the index file (MDB_NOSUBDIR); its lock file is path + "-lock".
  // no_lock: for a read-only directory whose lock file cannot be written.
  // *rc receives the failing LMDB/errno code (0 on success). Both files are
  // created with `modes` and refused when they are symlinks.
  static base::Result<std::unique_ptr<Index>> open(const std::string& path, bool read_only,
                                                   bool sync, bool no_lock, const FileModes& modes,
                                                   int* rc);
  ~Index();

  // Both run fn under a fault guard: LMDB trusts the file, so a damaged page
  // can make it fault; that becomes a "damaged" error instead of a crash.
  base::Status read(FunctionRef<base::Status(Txn&)> fn);
  // Commits when fn returns ok, aborts otherwise.
  base::Status write(FunctionRef<base::Status(Txn&)> fn);

  // Set once an LMDB call reported a damaged file (MDB_CORRUPTED, ...).
  bool damaged() const { return damaged_; }
  void mark_damaged() { damaged_ = true; }
  const std::string& path() const { return path_; }
  // Size of the mapped index file (by its descriptor, not its path).
  uint64_t file_bytes() const;
  // Clears reader slots left by killed processes; returns how many.
  int check_readers();
  // Walks the current snapshot's pages (see index_check.h); marks the index
  // damaged and fails when they are not sound.
  base::Status check_structure();
  // Inode and modification time (ns) of the index file.
  bool file_stamp(uint64_t* ino, uint64_t* mtime_ns) const;
  // Called after every successful commit.
  void set_on_commit(std::function<void()> fn) { on_commit_ = std::move(fn); }

 private:
  friend class Txn;
  Index() = default;
  static base::Result<std::unique_ptr<Index>> open_unguarded(const std::string& path,
                                                             bool read_only, bool sync,
                                                             bool no_lock, const FileModes& modes,
                                                             int* rc);
  base::Status read_unguarded(FunctionRef<base::Status(Txn&)> fn);
  base::Status write_unguarded(FunctionRef<base::Status(Txn&)> fn);
  base::Status mdb_fail(const char* op, int rc);
  std::string path_;
  MDB_env* env_ = nullptr;
  MDB_dbi dbi_[kTableCount] = {};
  MDB_txn* reader_ = nullptr;  // kept reset between reads (MDB_NOTLS)
  bool read_only_ = false;
  bool damaged_ = false;
  bool faulted_ = false;  // a call faulted: the environment is abandoned
  const char* map_begin_ = nullptr;
  const char* map_end_ = nullptr;
  std::function<void()> on_commit_;
  uint64_t page_size_ = 4096;
  uint64_t file_size_ = 0;
};

// True for return codes that mean the index file itself is broken.
bool is_damage_code(int rc);

}  // namespace lexpack::cache
