// A Store that holds the blobs, file records and memos put into it and writes
// them in batches (one pack write and one index transaction per batch) rather
// than one transaction each: a whole-build scan learns thousands of small
// records at once. Reads see what is held. Thread-compatible, like any Store:
// share it between threads through a LockedStore.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/store.h"

namespace lexpack::cache {

class BatchingStore : public cache::Store {
 public:
  // Writes out once `max_items` records or `max_bytes` bytes are held.
  explicit BatchingStore(cache::Store* inner, size_t max_items = 1024,
                         size_t max_bytes = size_t(16) << 20);
  ~BatchingStore() override;  // writes out what is held; errors are dropped

  const std::string& dir() const override { return inner_->dir(); }
  base::Result<cache::BlobId> put_blob(std::string_view bytes,
                                       const cache::BlobOptions& options) override;
  std::optional<std::string_view> get_blob(const cache::BlobId& id) override;
  bool has_blob(const cache::BlobId& id) override;
  std::optional<cache::FileRecord> get_file(std::string_view path) override;
  base::Status put_file(std::string_view path, const cache::FileRecord& record) override;
  std::optional<cache::ActionRecord> get_action(const cache::ActionKey& key) override {
    return inner_->get_action(key);
  }
  base::Status put_action(const cache::ActionKey& key, const cache::ActionRecord& record) override {
    return inner_->put_action(key, record);
  }
  std::optional<std::string> get_memo(std::string_view table, std::string_view key) override;
  bool visit_memo(std::string_view table, std::string_view key,
                  const std::function<void(std::string_view)>& fn) override;
  base::Status put_memo(std::string_view table, std::string_view key,
                        std::string_view value) override;
  base::Status add_counter(std::string_view name, int64_t delta) override {
    return inner_->add_counter(name, delta);
  }
  // Writes out everything held, then flushes the inner store.
  base::Status flush() override;
  // Writes out everything held, and no more.
  base::Status write_out() { return write_held(); }
  std::vector<std::string> take_messages() override { return inner_->take_messages(); }

 private:
  base::Status write_if_full();
  base::Status write_held();

  cache::Store* inner_;
  size_t max_items_, max_bytes_;
  size_t held_bytes_ = 0;
  struct IdLess {
    bool operator()(const cache::BlobId& a, const cache::BlobId& b) const {
      return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo;
    }
  };
  // Held blobs; get_blob's views into them must outlive a write-out (the
  // Store contract: valid for the life of the store), so written ones retire
  // to `written_` instead of being freed.
  std::map<cache::BlobId, std::unique_ptr<std::string>, IdLess> blobs_;
  std::vector<std::unique_ptr<std::string>> written_;
  std::unordered_map<std::string, cache::FileRecord> files_;
  std::map<std::pair<std::string, std::string>, std::string> memos_;  // (table, key)
};

}  // namespace lexpack::cache
