// The store's hot path: blobs (dedup, pack append, verified reads from one
// mapping per pack) and the file/action/memo records. Opening it is in
// store_open.cpp.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "cache/store_impl.h"

namespace lexpack::cache {

namespace {

constexpr int kMaxPutAttempts = 8;
constexpr size_t kMaxPendingUses = 4096;

std::optional<BlobLocation> decode_blob(std::string_view key, std::string_view raw) {
  auto value = unseal("blobs", key, raw);
  if (!value) return std::nullopt;
  return decode_blob_location(*value);
}

}  // namespace

std::optional<std::string_view> StoreImpl::find_blob(const BlobId& id, BlobLocation* where) {
  if (!index_) return std::nullopt;
  const HashKeyBytes key(id);
  std::optional<BlobLocation> loc;
  bool bad_record = false;
  base::Status st = index_->read([&](Txn& t) {
    std::optional<std::string_view> raw;
    base::Status s = t.get(Table::kBlobs, key.view(), &raw);
    if (!s.ok() || !raw) return s;
    loc = decode_blob(key.view(), *raw);
    bad_record = !loc;
    return base::Status();
  });
  if (!st.ok()) {
    after_failure(st);
    return std::nullopt;
  }
  if (bad_record) {
    report(index_path_ + ": the index record of blob " + id.hex() + " is damaged; ignored",
           "corrupt_records");
    return std::nullopt;
  }
  if (!loc) return std::nullopt;
  auto bytes = packs_->view(loc->pack, loc->offset, loc->size);
  if (bytes.ok() && hash_bytes(bytes.value()) == id) {
    if (where) *where = *loc;
    return bytes.value();
  }
  // A pack evicted since the lookup is a plain miss; anything else is damage.
  bool still_there = false;
  index_->read([&](Txn& t) {
    std::optional<PackRecord> rec;
    base::Status s = get_pack(t, loc->pack, &rec);
    still_there = s.ok() && rec && rec->state == PackRecord::kLive;
    return s;
  });
  if (!still_there) return std::nullopt;
  report(bytes.ok() ? packs_->path(loc->pack) + ": blob " + id.hex() + " at offset " +
                          std::to_string(loc->offset) + " does not match its hash; ignored"
                    : bytes.message() + "; blob " + id.hex() + " ignored",
         "corrupt_blobs");
  return std::nullopt;
}

std::optional<std::string_view> StoreImpl::get_blob(const BlobId& id) {
  BlobLocation loc;
  auto bytes = find_blob(id, &loc);
  if (bytes && !read_only_ &&
      now_seconds() - static_cast<int64_t>(loc.last_use) >= options_.use_granularity_seconds) {
    pending_uses_[hash_key(id)] = loc.pack;
    if (pending_uses_.size() >= kMaxPendingUses) flush();
  }
  return bytes;
}

bool StoreImpl::has_blob(const BlobId& id) {
  return find_blob(id, nullptr).has_value();
}

std::optional<BlobPlace> StoreImpl::locate_blob(const BlobId& id) {
  BlobLocation loc;
  if (!find_blob(id, &loc) || !(loc.flags & kBlobPageAligned)) return std::nullopt;
  if (!read_only_ &&
      now_seconds() - static_cast<int64_t>(loc.last_use) >= options_.use_granularity_seconds) {
    pending_uses_[hash_key(id)] = loc.pack;
    if (pending_uses_.size() >= kMaxPendingUses) flush();
  }
  BlobPlace place;
  if (!packs_->file_id(loc.pack, &place.pack_dev, &place.pack_ino).ok()) return std::nullopt;
  place.pack_path = packs_->path(loc.pack);
  if (place.pack_path[0] != '/') {
    char cwd[4096];
    if (!::getcwd(cwd, sizeof cwd)) return std::nullopt;
    place.pack_path = std::string(cwd) + "/" + place.pack_path;
  }
  place.offset = loc.offset;
  place.size = loc.size;
  return place;
}

base::Result<BlobId> StoreImpl::put_blob(std::string_view bytes, const BlobOptions& options) {
  auto ids = put_blobs({bytes}, options);
  if (!ids.ok()) return ids.status();
  return ids.value()[0];
}

base::Result<std::vector<BlobId>> StoreImpl::put_blobs(const std::vector<std::string_view>& blobs,
                                                       const BlobOptions& options) {
  std::vector<BlobId> ids;
  ids.reserve(blobs.size());
  for (auto b : blobs) ids.push_back(hash_bytes(b));
  if (!index_) return base::Status::error(dir_ + ": the index is not open");
  if (read_only_) return base::Status::error(dir_ + ": the cache is read-only");
  // Deduplicate against what is stored (and readable) already.
  std::vector<std::string_view> todo;
  std::vector<BlobId> todo_ids;
  for (size_t i = 0; i < blobs.size(); ++i) {
    BlobLocation loc;
    bool dup = false;
    for (size_t j = 0; j < todo_ids.size() && !dup; ++j) dup = todo_ids[j] == ids[i];
    if (dup) continue;
    if (find_blob(ids[i], &loc) && (!options.page_aligned || (loc.flags & kBlobPageAligned))) {
      continue;
    }
    todo.push_back(blobs[i]);
    todo_ids.push_back(ids[i]);
  }
  // Write in chunks of at most a quarter pack, so a batch never bloats a pack.
  size_t begin = 0;
  while (begin < todo.size()) {
    size_t end = begin;
    uint64_t bytes = 0;
    while (end < todo.size() &&
           (end == begin || bytes + todo[end].size() <= packs_->pack_size() / 4)) {
      bytes += todo[end].size();
      ++end;
    }
    std::vector<std::string_view> part(todo.begin() + begin, todo.begin() + end);
    std::vector<BlobId> part_ids(todo_ids.begin() + begin, todo_ids.begin() + end);
    auto stored = store_pieces(part, part_ids, options.page_aligned);
    if (!stored.ok()) return stored.status();
    begin = end;
  }
  return ids;
}

base::Result<std::vector<BlobId>> StoreImpl::store_pieces(
    const std::vector<std::string_view>& blobs, const std::vector<BlobId>& ids, bool page_aligned) {
  std::vector<PackPiece> pieces;
  for (auto b : blobs) pieces.push_back(PackPiece{b, page_aligned});
  std::string last_error = "no attempt";
  for (int attempt = 0; attempt < kMaxPutAttempts; ++attempt) {
    std::optional<uint32_t> active, gc_pending;
    base::Status st = index_->read([&](Txn& t) {
      base::Status s = get_meta(t, "active", &active);
      if (s.ok()) s = get_meta(t, "gc_pending", &gc_pending);
      return s;
    });
    if (st.ok() && !active) st = base::Status::error(index_path_ + ": no active pack recorded");
    if (!st.ok()) return after_failure(st);
    std::vector<uint64_t> offsets;
    bool full = false;
    st = packs_->append(*active, pieces, &offsets, &full);
    if (!st.ok()) return st;
    if (full) {
      st = roll_over(*active);
      if (!st.ok()) return after_failure(st);
      continue;
    }
    // The bytes are in the pack; now make them visible.
    bool pack_gone = false;
    const uint64_t now = static_cast<uint64_t>(now_seconds());
    st = index_->write([&](Txn& t) {
      std::optional<PackRecord> rec;
      base::Status s = get_pack(t, *active, &rec);
      if (!s.ok()) return s;
      if (!rec || rec->state != PackRecord::kLive) {
        pack_gone = true;
        return base::Status::error("pack " + std::to_string(*active) +
                                   " is being evicted or unknown");
      }
      for (size_t i = 0; i < blobs.size(); ++i) {
        const std::string key = hash_key(ids[i]);
        std::optional<std::string_view> raw;
        if (!(s = t.get(Table::kBlobs, key, &raw)).ok()) return s;
        if (raw) {
          auto old = decode_blob(key, *raw);
          if (old) {
            std::optional<PackRecord> old_pack;
            if (!(s = get_pack(t, old->pack, &old_pack)).ok()) return s;
            bool usable = old_pack && old_pack->state == PackRecord::kLive &&
                          (!page_aligned || (old->flags & kBlobPageAligned));
            if (usable) continue;  // someone stored it meanwhile
            if (!(s = t.del(Table::kPackBlobs, pack_key(old->pack) + key)).ok()) return s;
          }
        }
        BlobLocation loc;
        loc.pack = *active;
        loc.flags = page_aligned ? kBlobPageAligned : 0;
        loc.offset = offsets[i];
        loc.size = blobs[i].size();
        loc.last_use = now;
        if (!(s = t.put(Table::kBlobs, key, seal("blobs", key, encode(loc)))).ok()) return s;
        if (!(s = t.put(Table::kPackBlobs, pack_key(*active) + key, "")).ok()) return s;
        rec->blob_bytes += loc.size;
      }
      rec->last_use = now;
      return put_pack(t, *active, *rec);
    });
    if (st.ok()) {
      if (gc_pending && *gc_pending && options_.auto_gc && !in_gc_) {
        // An eviction is under way: this put takes its bounded share of it.
        base::Status gc_status = auto_gc_step();
        if (!gc_status.ok()) report("automatic eviction failed: " + gc_status.message(), nullptr);
      }
      return ids;
    }
    if (!pack_gone) return after_failure(st);
    last_error = st.message();
    // The pack is being evicted or lost its record: move on to a new one.
    st = roll_over(*active);
    if (!st.ok()) return after_failure(st);
  }
  return base::Status::error(dir_ + ": could not store blobs: " + last_error);
}

base::Status StoreImpl::roll_over(uint32_t full_pack) {
  bool rolled = false;
  base::Status st = index_->write([&](Txn& t) {
    std::optional<uint32_t> active;
    base::Status s = get_meta(t, "active", &active);
    if (!s.ok() || !active || *active != full_pack) return s;
    PackRecord rec;
    rec.created = rec.last_use = static_cast<uint64_t>(now_seconds());
    if (!(s = put_pack(t, full_pack + 1, rec)).ok()) return s;
    rolled = true;
    return put_meta(t, "active", full_pack + 1);
  });
  if (!st.ok() || !rolled || !options_.auto_gc || in_gc_) return st;
  uint64_t max_size = options_.max_size ? options_.max_size : config_.max_size;
  if (pack_bytes_on_disk(nullptr) > max_size) {
    // Over the limit: mark an eviction pending, so that every put (from any
    // process, this one first) does a bounded part of it until the cache fits
    // again. Eviction failing must not fail the put that triggered it.
    base::Status gc_status = index_->write([&](Txn& t) { return put_meta(t, "gc_pending", 1); });
    if (!gc_status.ok()) report("automatic eviction failed: " + gc_status.message(), nullptr);
  }
  return {};
}

base::Status StoreImpl::flush() {
  if (pending_uses_.empty() || !index_ || read_only_) return {};
  const uint64_t now = static_cast<uint64_t>(now_seconds());
  base::Status st = index_->write([&](Txn& t) {
    std::map<uint32_t, bool> packs;
    for (const auto& [key, pack] : pending_uses_) {
      std::optional<std::string_view> raw;
      base::Status s = t.get(Table::kBlobs, key, &raw);
      if (!s.ok()) return s;
      if (!raw) continue;
      auto loc = decode_blob(key, *raw);
      if (!loc || loc->pack != pack) continue;
      loc->last_use = now;
      if (!(s = t.put(Table::kBlobs, key, seal("blobs", key, encode(*loc)))).ok()) return s;
      packs[pack] = true;
    }
    for (const auto& [pack, unused] : packs) {
      std::optional<PackRecord> rec;
      base::Status s = get_pack(t, pack, &rec);
      if (!s.ok()) return s;
      if (!rec) continue;
      rec->last_use = now;
      if (!(s = put_pack(t, pack, *rec)).ok()) return s;
    }
    return base::Status();
  });
  pending_uses_.clear();
  if (!st.ok()) return after_failure(st);
  return {};
}

base::Status StoreImpl::put_record(Table table, const std::string& key, std::string value) {
  if (!index_) return base::Status::error(dir_ + ": the index is not open");
  if (read_only_) return base::Status::error(dir_ + ": the cache is read-only");
  std::string sealed = seal(table_name(table), key, std::move(value));
  base::Status st = index_->write([&](Txn& t) { return t.put(table, key, sealed); });
  if (!st.ok()) return after_failure(st);
  return st;
}

bool StoreImpl::visit_record(Table table, const std::string& key,
                             FunctionRef<void(std::string_view)> fn) {
  if (!index_) return false;
  bool found = false, bad = false;
  base::Status st = index_->read([&](Txn& t) {
    std::optional<std::string_view> raw;
    base::Status s = t.get(table, key, &raw);
    if (!s.ok() || !raw) return s;
    auto value = unseal(table_name(table), key, *raw);
    if (value) {
      fn(*value);
      found = true;
    } else {
      bad = true;
    }
    return base::Status();
  });
  if (!st.ok()) {
    after_failure(st);
    return false;
  }
  if (bad) {
    report(index_path_ + ": a record in table " + table_name(table) + " is damaged; ignored",
           "corrupt_records");
  }
  return found;
}

std::optional<std::string> StoreImpl::get_record(Table table, const std::string& key) {
  std::optional<std::string> out;
  visit_record(table, key, [&](std::string_view value) { out = std::string(value); });
  return out;
}

std::optional<FileRecord> StoreImpl::get_file(std::string_view path) {
  auto raw = get_record(Table::kFiles, file_key(path));
  if (!raw) return std::nullopt;
  std::string stored_path;
  auto rec = decode_file_record(*raw, &stored_path);
  if (!rec || stored_path != path) return std::nullopt;
  return rec;
}

base::Status StoreImpl::put_file(std::string_view path, const FileRecord& record) {
  return put_record(Table::kFiles, file_key(path), encode(path, record));
}

std::optional<ActionRecord> StoreImpl::get_action(const ActionKey& key) {
  auto raw = get_record(Table::kActions, hash_key(key));
  if (!raw) return std::nullopt;
  return decode_action_record(*raw);
}

base::Status StoreImpl::put_action(const ActionKey& key, const ActionRecord& record) {
  return put_record(Table::kActions, hash_key(key), encode(record));
}

std::optional<std::string> StoreImpl::get_memo(std::string_view table, std::string_view key) {
  std::optional<std::string> out;
  visit_memo(table, key, [&](std::string_view value) { out = std::string(value); });
  return out;
}

bool StoreImpl::visit_memo(std::string_view table, std::string_view key,
                           const std::function<void(std::string_view)>& fn) {
  bool found = false;
  visit_record(Table::kMemo, memo_key(table, key), [&](std::string_view raw) {
    std::string_view t, k, v;
    if (!decode_memo(raw, &t, &k, &v) || t != table || k != key) return;
    fn(v);
    found = true;
  });
  return found;
}

base::Status StoreImpl::put_memo(std::string_view table, std::string_view key,
                                 std::string_view value) {
  return put_record(Table::kMemo, memo_key(table, key), encode_memo(table, key, value));
}

base::Status StoreImpl::put_records(const std::vector<FileWrite>& files,
                                    const std::vector<MemoWrite>& memos) {
  if (!index_) return base::Status::error(dir_ + ": the index is not open");
  if (read_only_) return base::Status::error(dir_ + ": the cache is read-only");
  struct Sealed {
    Table table;
    std::string key, value;
  };
  std::vector<Sealed> sealed;
  sealed.reserve(files.size() + memos.size());
  for (const FileWrite& f : files) {
    std::string key = file_key(f.path);
    std::string value = seal(table_name(Table::kFiles), key, encode(f.path, f.record));
    sealed.push_back({Table::kFiles, std::move(key), std::move(value)});
  }
  for (const MemoWrite& m : memos) {
    std::string key = memo_key(m.table, m.key);
    std::string value = seal(table_name(Table::kMemo), key, encode_memo(m.table, m.key, m.value));
    sealed.push_back({Table::kMemo, std::move(key), std::move(value)});
  }
  base::Status st = index_->write([&](Txn& t) {
    for (const Sealed& r : sealed) {
      if (base::Status put = t.put(r.table, r.key, r.value); !put.ok()) return put;
    }
    return base::Status();
  });
  if (!st.ok()) return after_failure(st);
  return st;
}

base::Status StoreImpl::put_actions(const std::vector<ActionWrite>& actions) {
  if (!index_) return base::Status::error(dir_ + ": the index is not open");
  if (read_only_) return base::Status::error(dir_ + ": the cache is read-only");
  std::vector<std::pair<std::string, std::string>> sealed;
  sealed.reserve(actions.size());
  for (const ActionWrite& a : actions) {
    std::string key = hash_key(a.key);
    std::string value = seal(table_name(Table::kActions), key, encode(a.record));
    sealed.emplace_back(std::move(key), std::move(value));
  }
  base::Status st = index_->write([&](Txn& t) {
    for (const auto& [key, value] : sealed) {
      if (base::Status put = t.put(Table::kActions, key, value); !put.ok()) return put;
    }
    return base::Status();
  });
  if (!st.ok()) return after_failure(st);
  return st;
}

base::Status StoreImpl::add_counter(std::string_view name, int64_t delta) {
  if (!counters_) return base::Status::error(dir_ + ": statistics are not available");
  return counters_->add(name, delta);
}

}  // namespace lexpack::cache
