// Held writes go out blobs first, then the records in one transaction, so a
// file record never names a blob that is not stored (a crash in between
// leaves unreferenced blobs, which gc removes).
#include "cache/batching_store.h"

namespace lexpack::cache {

BatchingStore::BatchingStore(cache::Store* inner, size_t max_items, size_t max_bytes)
    : inner_(inner), max_items_(max_items), max_bytes_(max_bytes) {}

BatchingStore::~BatchingStore() {
  write_held();
}

base::Result<cache::BlobId> BatchingStore::put_blob(std::string_view bytes,
                                                    const cache::BlobOptions& options) {
  if (options.page_aligned) return inner_->put_blob(bytes, options);
  cache::BlobId id = cache::hash_bytes(bytes);
  auto [it, added] = blobs_.try_emplace(id);
  if (added) {
    it->second = std::make_unique<std::string>(bytes);
    held_bytes_ += bytes.size();
  }
  if (base::Status st = write_if_full(); !st.ok()) return st;
  return id;
}

std::optional<std::string_view> BatchingStore::get_blob(const cache::BlobId& id) {
  if (auto it = blobs_.find(id); it != blobs_.end()) return std::string_view(*it->second);
  return inner_->get_blob(id);
}

bool BatchingStore::has_blob(const cache::BlobId& id) {
  return blobs_.count(id) || inner_->has_blob(id);
}

std::optional<cache::FileRecord> BatchingStore::get_file(std::string_view path) {
  if (auto it = files_.find(std::string(path)); it != files_.end()) return it->second;
  return inner_->get_file(path);
}

base::Status BatchingStore::put_file(std::string_view path, const cache::FileRecord& record) {
  auto [it, added] = files_.insert_or_assign(std::string(path), record);
  if (added) held_bytes_ += path.size() + sizeof record;
  return write_if_full();
}

std::optional<std::string> BatchingStore::get_memo(std::string_view table, std::string_view key) {
  auto it = memos_.find({std::string(table), std::string(key)});
  if (it != memos_.end()) return it->second;
  return inner_->get_memo(table, key);
}

bool BatchingStore::visit_memo(std::string_view table, std::string_view key,
                               const std::function<void(std::string_view)>& fn) {
  auto it = memos_.find({std::string(table), std::string(key)});
  if (it == memos_.end()) return inner_->visit_memo(table, key, fn);
  fn(it->second);
  return true;
}

base::Status BatchingStore::put_memo(std::string_view table, std::string_view key,
                                     std::string_view value) {
  held_bytes_ += table.size() + key.size() + value.size();
  memos_.insert_or_assign({std::string(table), std::string(key)}, std::string(value));
  return write_if_full();
}

base::Status BatchingStore::flush() {
  base::Status held = write_held();
  base::Status inner = inner_->flush();
  return held.ok() ? inner : held;
}

base::Status BatchingStore::write_if_full() {
  if (blobs_.size() + files_.size() + memos_.size() < max_items_ && held_bytes_ < max_bytes_) {
    return base::Status();
  }
  return write_held();
}

base::Status BatchingStore::write_held() {
  std::vector<std::string_view> blobs;
  blobs.reserve(blobs_.size());
  for (const auto& [id, bytes] : blobs_) blobs.push_back(*bytes);
  std::vector<cache::Store::FileWrite> files;
  files.reserve(files_.size());
  for (auto& [path, record] : files_) files.push_back({path, record});
  std::vector<cache::Store::MemoWrite> memos;
  memos.reserve(memos_.size());
  for (auto& [key, value] : memos_) memos.push_back({key.first, key.second, std::move(value)});
  base::Status st;
  if (!blobs.empty()) {
    base::Result<std::vector<cache::BlobId>> stored = inner_->put_blobs(blobs);
    if (!stored.ok()) st = stored.status();
  }
  // Without their blobs the file records would only name missing summaries:
  // drop everything (a cache may forget) and report why.
  if (st.ok() && (!files.empty() || !memos.empty())) st = inner_->put_records(files, memos);
  for (auto& [id, bytes] : blobs_) written_.push_back(std::move(bytes));
  blobs_.clear();
  files_.clear();
  memos_.clear();
  held_bytes_ = 0;
  return st;
}

}  // namespace lexpack::cache
