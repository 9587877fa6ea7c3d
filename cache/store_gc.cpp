// Size limit and eviction by whole packs, oldest last use first, copying the
// blobs still in use forward (cost follows what is evicted, never a walk over
// every entry); also clear() and stats().
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

#include <algorithm>
#include <filesystem>

#include "cache/orphan_files.h"
#include "cache/store_impl.h"

namespace lexpack::cache {

namespace {

base::Status read_meta(Txn& t, const char* name, std::optional<uint32_t>* out) {
  std::optional<std::string_view> raw;
  base::Status s = t.get(Table::kMeta, name, &raw);
  *out = std::nullopt;
  if (!s.ok() || !raw) return s;
  auto value = unseal("meta", name, *raw);
  if (!value)
    return base::Status::error(std::string("index meta record '") + name + "' is damaged");
  FixedReader r(*value);
  uint32_t v = r.u32();
  if (r.done()) *out = v;
  return {};
}

base::Status read_active(Txn& t, std::optional<uint32_t>* active) {
  return read_meta(t, "active", active);
}

// Blobs dropped from an evicted pack per index transaction, and the most
// bytes copied forward in one chunk: what one step of a bounded eviction costs.
constexpr size_t kEvictChunkBlobs = 64;
constexpr uint64_t kEvictChunkBytes = uint64_t{1} << 20;

int64_t steady_ns() {
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// An exclusive flock on the gc lock file while alive: one process evicts at a
// time. Non-blocking for puts (another process is already on it).
class GcLock {
 public:
  GcLock(const std::string& path, bool wait, const FileModes& modes) {
    auto fd = open_cache_file(AT_FDCWD, path, O_RDWR | O_CREAT, modes, path);
    if (!fd.ok()) return;
    fd_ = *fd;
    int rc;
    while ((rc = ::flock(fd_, LOCK_EX | (wait ? 0 : LOCK_NB))) != 0 && errno == EINTR) {
    }
    held_ = rc == 0;
  }
  ~GcLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  // False when another process holds it (or the file cannot be opened).
  bool held() const { return held_; }

 private:
  int fd_ = -1;
  bool held_ = false;
};

base::Status write_meta(Txn& t, const char* name, uint32_t v) {
  FixedWriter w;
  w.u32(v);
  return t.put(Table::kMeta, name, seal("meta", name, std::move(w.bytes())));
}

// Marks the pack `pkey` evicting, so that no new blob is indexed into it (a
// write only the first time: a resumed eviction finds the pack marked
// already); *exists false when the index has no record of it.
base::Status mark_evicting(Index& index, const std::string& pkey, bool* exists) {
  bool marked = false;
  *exists = false;
  base::Status st = index.read([&](Txn& t) {
    std::optional<std::string_view> raw;
    base::Status s = t.get(Table::kPacks, pkey, &raw);
    if (!s.ok() || !raw) return s;
    auto value = unseal("packs", pkey, *raw);
    auto rec = value ? decode_pack_record(*value) : std::nullopt;
    *exists = true;
    marked = rec && rec->state == PackRecord::kEvicting;
    return base::Status();
  });
  if (!st.ok() || !*exists || marked) return st;
  return index.write([&](Txn& t) {
    std::optional<std::string_view> raw;
    base::Status s = t.get(Table::kPacks, pkey, &raw);
    *exists = s.ok() && raw;
    if (!*exists) return s;
    auto value = unseal("packs", pkey, *raw);
    auto rec = value ? decode_pack_record(*value) : std::nullopt;
    if (!rec) rec = PackRecord{};
    rec->state = PackRecord::kEvicting;
    return t.put(Table::kPacks, pkey, seal("packs", pkey, encode(*rec)));
  });
}

}  // namespace

uint64_t StoreImpl::pack_bytes_on_disk(std::vector<std::pair<uint32_t, PackRecord>>* packs) {
  std::vector<std::pair<uint32_t, PackRecord>> list;
  index_->read([&](Txn& t) {
    return t.each(Table::kPacks, "", [&](std::string_view key, std::string_view raw) {
      auto value = unseal("packs", key, raw);
      auto rec = value ? decode_pack_record(*value) : std::nullopt;
      if (rec && key.size() == 4) list.emplace_back(key_pack(key), *rec);
      return true;
    });
  });
  uint64_t total = 0;
  for (const auto& [n, rec] : list) total += packs_->file_size(n);
  if (packs) *packs = std::move(list);
  return total;
}

base::Result<GcReport> StoreImpl::gc(uint64_t max_size) {
  if (!index_) return base::Status::error(dir_ + ": the index is not open");
  if (read_only_) return base::Status::error(dir_ + ": the cache is read-only");
  struct Guard {
    bool* flag;
    ~Guard() { *flag = false; }
  } guard{&in_gc_};
  in_gc_ = true;
  GcLock lock(dir_ + "/" + kGcLockName, true, modes_);
  flush();
  index_->check_readers();

  GcReport report;
  report.leftovers_removed = sweep_leftovers(dir_);
  std::vector<std::pair<uint32_t, PackRecord>> packs;
  uint64_t total = pack_bytes_on_disk(&packs);
  report.bytes_before = total;
  std::optional<uint32_t> active;
  base::Status st = index_->read([&](Txn& t) { return read_active(t, &active); });
  if (!st.ok()) return after_failure(st);
  if (!active) return base::Status::error(index_path_ + ": no active pack recorded");

  // Oldest last use first; an interrupted eviction is finished first of all.
  std::sort(packs.begin(), packs.end(), [](const auto& a, const auto& b) {
    if (a.second.state != b.second.state) return a.second.state > b.second.state;
    if (a.second.last_use != b.second.last_use) return a.second.last_use < b.second.last_use;
    return a.first < b.first;
  });
  // Copying forward is bounded, so a cache full of recently used blobs still shrinks.
  const uint64_t copy_budget = max_size / 4;
  uint64_t copied_before = 0;
  auto keep_after = [&]() -> int64_t {
    if (copied_before >= copy_budget) return INT64_MAX;
    return now_seconds() - options_.keep_recent_seconds;
  };
  for (const auto& [n, rec] : packs) {
    if (total <= max_size) break;
    if (n == *active) continue;
    uint64_t copied = report.blobs_copied, copied_bytes = 0;
    bool done = false;
    st = evict_pack(n, keep_after(), INT64_MAX, &report, &copied_bytes, &done);
    if (!st.ok()) return after_failure(st);
    if (report.blobs_copied != copied) copied_before = pack_bytes_on_disk(nullptr);
    total = pack_bytes_on_disk(nullptr);
  }
  if (total > max_size) {
    // Only the active pack is left over the limit: close it and evict it too.
    st = roll_over(*active);
    if (!st.ok()) return after_failure(st);
    uint64_t copied_bytes = 0;
    bool done = false;
    st = evict_pack(*active, keep_after(), INT64_MAX, &report, &copied_bytes, &done);
    if (!st.ok()) return after_failure(st);
    total = pack_bytes_on_disk(nullptr);
  }
  report.bytes_after = total;
  uint64_t limit = options_.max_size ? options_.max_size : config_.max_size;
  if (total <= limit) {
    // Nothing is left for the puts to evict.
    st = index_->write([&](Txn& t) {
      base::Status s = t.del(Table::kMeta, "gc_pending");
      return s.ok() ? t.del(Table::kMeta, "gc_copied_kib") : s;
    });
    if (!st.ok()) return after_failure(st);
  }
  return report;
}

base::Status StoreImpl::auto_gc_step() {
  if (!options_.auto_gc || in_gc_ || read_only_ || !index_) return {};
  GcLock lock(dir_ + "/" + kGcLockName, false, modes_);
  if (!lock.held()) return {};  // another process is evicting
  struct Guard {
    bool* flag;
    ~Guard() { *flag = false; }
  } guard{&in_gc_};
  in_gc_ = true;
  const int64_t deadline = steady_ns() + std::max<int64_t>(options_.auto_gc_budget_us, 0) * 1000;
  const uint64_t max_size = options_.max_size ? options_.max_size : config_.max_size;
  const uint64_t target = max_size - max_size / 10;
  GcReport report;
  for (;;) {
    std::vector<std::pair<uint32_t, PackRecord>> packs;
    uint64_t total = pack_bytes_on_disk(&packs);
    std::optional<uint32_t> active, copied_kib;
    base::Status st = index_->read([&](Txn& t) {
      base::Status s = read_active(t, &active);
      if (s.ok()) s = read_meta(t, "gc_copied_kib", &copied_kib);
      return s;
    });
    if (!st.ok()) return after_failure(st);
    if (!active) return base::Status::error(index_path_ + ": no active pack recorded");
    // A pack already being evicted first, else the least recently used one.
    std::optional<std::pair<uint32_t, PackRecord>> victim;
    for (const auto& p : packs) {
      if (p.first == *active) continue;
      if (p.second.state == PackRecord::kEvicting) {
        victim = p;
        break;
      }
      if (total > target &&
          (!victim || p.second.last_use < victim->second.last_use ||
           (p.second.last_use == victim->second.last_use && p.first < victim->first))) {
        victim = p;
      }
    }
    if (!victim) {
      // Within the limit (or only the active pack is left): nothing pending.
      st = index_->write([&](Txn& t) {
        base::Status s = t.del(Table::kMeta, "gc_pending");
        return s.ok() ? t.del(Table::kMeta, "gc_copied_kib") : s;
      });
      return st.ok() ? st : after_failure(st);
    }
    // Copying forward is bounded over the whole eviction, as in gc().
    const uint64_t copied_before = uint64_t{copied_kib.value_or(0)} * 1024;
    const int64_t keep_after =
        copied_before >= max_size / 4 ? INT64_MAX : now_seconds() - options_.keep_recent_seconds;
    uint64_t copied = 0;
    bool done = false;
    st = evict_pack(victim->first, keep_after, deadline, &report, &copied, &done);
    if (st.ok() && copied > 0) {
      const uint64_t kib = std::min<uint64_t>((copied_before + copied) / 1024, UINT32_MAX);
      st = index_->write(
          [&](Txn& t) { return write_meta(t, "gc_copied_kib", static_cast<uint32_t>(kib)); });
    }
    if (!st.ok()) return after_failure(st);
    if (steady_ns() >= deadline) return {};
  }
}

base::Status StoreImpl::evict_pack(uint32_t pack, int64_t keep_after, int64_t deadline_ns,
                                   GcReport* report, uint64_t* copied_bytes, bool* done) {
  *done = false;
  const std::string pkey = pack_key(pack);
  // 1. No new blob may be indexed into the pack from now on.
  bool exists = false;
  base::Status st = mark_evicting(*index_, pkey, &exists);
  if (!st.ok()) return st;
  if (!exists) {
    *done = true;
    return st;
  }

  // 2. Its blobs, through the per-pack table (cost follows the pack, not the
  // cache), a chunk at a time: each chunk's entries are gone from the index
  // before the next is read, so an interrupted eviction resumes where it was.
  struct Entry {
    std::string key;
    BlobLocation loc;
    bool ours = false;
  };
  for (;;) {
    std::vector<Entry> entries;
    st = index_->read([&](Txn& t) {
      base::Status s = t.each(Table::kPackBlobs, pkey, [&](std::string_view key, std::string_view) {
        if (key.size() == 20) entries.push_back(Entry{std::string(key.substr(4)), {}, false});
        return entries.size() < kEvictChunkBlobs;
      });
      uint64_t bytes = 0;
      for (size_t i = 0; i < entries.size(); ++i) {
        if (!s.ok()) break;
        auto& e = entries[i];
        std::optional<std::string_view> raw;
        s = t.get(Table::kBlobs, e.key, &raw);
        if (!raw) continue;
        auto value = unseal("blobs", e.key, *raw);
        auto loc = value ? decode_blob_location(*value) : std::nullopt;
        if (loc && loc->pack == pack) {
          e.loc = *loc;
          e.ours = true;
          bytes += loc->size;
          if (bytes >= kEvictChunkBytes) {
            entries.resize(i + 1);  // the rest is for the next chunk
            break;
          }
        }
      }
      return s;
    });
    if (!st.ok()) return st;
    if (entries.empty()) break;

    // 3. Copy the recently used ones forward (verified), outside any write txn.
    for (int aligned = 0; aligned < 2; ++aligned) {
      std::vector<std::string_view> bytes;
      std::vector<BlobId> ids;
      for (const auto& e : entries) {
        if (!e.ours || static_cast<int64_t>(e.loc.last_use) < keep_after) continue;
        if (((e.loc.flags & kBlobPageAligned) != 0) != (aligned == 1)) continue;
        auto view = packs_->view(pack, e.loc.offset, e.loc.size);
        BlobId id = key_hash(e.key);
        if (!view.ok() || hash_bytes(view.value()) != id) continue;  // damaged: let it go
        bytes.push_back(view.value());
        ids.push_back(id);
        *copied_bytes += e.loc.size;
      }
      if (bytes.empty()) continue;
      auto stored = store_pieces(bytes, ids, aligned == 1);
      if (!stored.ok()) return stored.status();
      report->blobs_copied += ids.size();
    }

    // 4. Drop what still points into the pack.
    st = index_->write([&](Txn& t) {
      base::Status s;
      for (const auto& e : entries) {
        std::optional<std::string_view> raw;
        if (!(s = t.get(Table::kBlobs, e.key, &raw)).ok()) return s;
        if (raw) {
          auto value = unseal("blobs", e.key, *raw);
          auto loc = value ? decode_blob_location(*value) : std::nullopt;
          if (!loc || loc->pack == pack) {
            if (!(s = t.del(Table::kBlobs, e.key)).ok()) return s;
            ++report->blobs_dropped;
          }
        }
        if (!(s = t.del(Table::kPackBlobs, pkey + e.key)).ok()) return s;
      }
      return s;
    });
    if (!st.ok()) return st;
    if (steady_ns() >= deadline_ns) return {};  // the rest on a later call
  }

  // 5. Nothing points into the pack any more: drop it.
  st = index_->write([&](Txn& t) { return t.del(Table::kPacks, pkey); });
  if (!st.ok()) return st;
  packs_->remove(pack);
  ++report->packs_evicted;
  *done = true;
  return {};
}

base::Status StoreImpl::clear() {
  if (!index_) return base::Status::error(dir_ + ": the index is not open");
  if (read_only_) return base::Status::error(dir_ + ": the cache is read-only");
  pending_uses_.clear();
  uint32_t highest = 0;
  std::vector<uint32_t> files = packs_->list();
  if (!files.empty()) highest = files.back();
  base::Status st = index_->write([&](Txn& t) {
    std::optional<uint32_t> active;
    base::Status s = read_active(t, &active);
    if (!s.ok()) return s;
    uint32_t next = std::max(highest, active.value_or(0)) + 1;
    for (Table table : {Table::kBlobs, Table::kPackBlobs, Table::kPacks, Table::kFiles,
                        Table::kActions, Table::kMemo}) {
      if (!(s = t.clear(table)).ok()) return s;
    }
    PackRecord rec;
    rec.created = rec.last_use = static_cast<uint64_t>(now_seconds());
    if (!(s = t.put(Table::kPacks, pack_key(next), seal("packs", pack_key(next), encode(rec))))
             .ok()) {
      return s;
    }
    return write_meta(t, "active", next);
  });
  if (!st.ok()) return after_failure(st);
  for (uint32_t n : files) packs_->remove(n);
  if (counters_) counters_->reset();
  sweep_leftovers(dir_);
  return {};
}

base::Result<std::string> StoreImpl::make_temp(const std::string& suffix) {
  if (read_only_) return base::Status::error(dir_ + ": the cache is read-only");
  return make_cache_temp(dir_, suffix, modes_);
}

base::Result<StoreStats> StoreImpl::stats() {
  if (!index_) return base::Status::error(dir_ + ": the index is not open");
  StoreStats s;
  std::vector<std::pair<uint32_t, PackRecord>> packs;
  s.pack_bytes = pack_bytes_on_disk(&packs);
  s.packs = packs.size();
  for (const auto& [n, rec] : packs) s.blob_bytes += rec.blob_bytes;
  base::Status st = index_->read([&](Txn& t) {
    base::Status r = t.entries(Table::kBlobs, &s.blobs);
    if (r.ok()) r = t.entries(Table::kFiles, &s.files);
    if (r.ok()) r = t.entries(Table::kActions, &s.actions);
    if (r.ok()) r = t.entries(Table::kMemo, &s.memos);
    return r;
  });
  if (!st.ok()) return after_failure(st);
  s.index_bytes = index_->file_bytes();
  s.max_size = options_.max_size ? options_.max_size : config_.max_size;
  if (counters_) s.counters = counters_->read_all();
  return s;
}

}  // namespace lexpack::cache
