// The entry-level access behind export and import: the index's blobs and
// records as they lie in it, and records written back in one transaction, so
// cache/archive/ needs none of the index's internals.
#include "cache/store_impl.h"

namespace lexpack::cache {

namespace {

Table table_of(RecordKind kind) {
  switch (kind) {
    case RecordKind::kFile:
      return Table::kFiles;
    case RecordKind::kAction:
      return Table::kActions;
    case RecordKind::kMemo:
      break;
  }
  return Table::kMemo;
}

}  // namespace

base::Result<StoreEntries> StoreImpl::list_entries() {
  if (!index_) return base::Status::error(dir_ + ": the index is not open");
  StoreEntries entries;
  base::Status st = index_->read([&](Txn& t) {
    base::Status s = t.each(Table::kBlobs, "", [&](std::string_view key, std::string_view raw) {
      auto value = unseal("blobs", key, raw);
      auto loc = value ? decode_blob_location(*value) : std::nullopt;
      if (loc && key.size() == 16) {
        entries.blobs.push_back(StoredBlob{key_hash(key), (loc->flags & kBlobPageAligned) != 0,
                                           loc->pack, loc->offset, loc->size});
      }
      return true;
    });
    for (RecordKind kind : {RecordKind::kFile, RecordKind::kAction, RecordKind::kMemo}) {
      if (!s.ok()) return s;
      const char* name = table_name(table_of(kind));
      s = t.each(table_of(kind), "", [&](std::string_view key, std::string_view raw) {
        if (auto v = unseal(name, key, raw)) {
          entries.records.push_back(StoredRecord{kind, std::string(key), std::string(*v)});
        }
        return true;
      });
    }
    return s;
  });
  if (!st.ok()) return after_failure(st);
  return entries;
}

std::optional<std::string_view> StoreImpl::read_stored_blob(const StoredBlob& blob) {
  if (!packs_) return std::nullopt;
  auto bytes = packs_->view(blob.pack, blob.offset, blob.size);
  if (!bytes.ok() || hash_bytes(bytes.value()) != blob.id) return std::nullopt;
  return bytes.value();
}

base::Status StoreImpl::put_stored_records(const std::vector<StoredRecord>& records) {
  if (base::Status s = check_writable(); !s.ok()) return s;
  base::Status s = index_->write([&](Txn& t) {
    for (const StoredRecord& r : records) {
      Table table = table_of(r.kind);
      base::Status p = t.put(table, r.key, seal(table_name(table), r.key, r.value));
      if (!p.ok()) return p;
    }
    return base::Status();
  });
  return s.ok() ? s : after_failure(s);
}

base::Status StoreImpl::check_writable() {
  if (!index_) return base::Status::error(dir_ + ": the index is not open");
  if (read_only_) return base::Status::error(dir_ + ": the cache is read-only");
  return {};
}

std::string StoreImpl::archive_secret() {
  return options_.remote_secret.empty() ? config_.remote_secret : options_.remote_secret;
}

}  // namespace lexpack::cache
