// verify(): reads every blob (checking its hash) and decodes every index
// record; drops the bad ones, actions whose blobs are gone, and pack files the
// index does not know. Reports whether anything was wrong.
#include <filesystem>
#include <unordered_set>

#include "cache/store_impl.h"

namespace lexpack::cache {

namespace {

struct Drop {
  Table table;
  std::string key;
  std::string raw;  // deleted only if still unchanged
};

// verify()'s read-only walk over every index table, in the order their
// checks need (packs before blobs, blobs before actions): what is wrong is
// counted in the report, and the records to delete are kept in `drops`.
class IndexWalk {
 public:
  IndexWalk(VerifyReport* r, PackSet* pack_files) : r_(*r), pack_files_(*pack_files) {}

  base::Status walk(Txn& t) {
    base::Status s = walk_meta(t);
    if (s.ok()) s = walk_packs(t);
    if (s.ok()) s = walk_blobs(t);
    if (s.ok()) s = walk_pack_blobs(t);
    if (s.ok()) s = walk_files(t);
    if (s.ok()) s = walk_actions(t);
    if (s.ok()) s = walk_memos(t);
    return s;
  }
  void problem(std::string text) {
    if (r_.problems.size() < 1000) r_.problems.push_back(std::move(text));
  }

  std::vector<Drop> drops;
  std::map<uint32_t, PackRecord> packs;
  std::optional<uint32_t> active;

 private:
  void bad(Table table, std::string_view key, std::string_view raw, std::string why) {
    ++r_.bad_records;
    problem(std::string("index table ") + table_name(table) + ": " + why);
    drops.push_back(Drop{table, std::string(key), std::string(raw)});
  }

  base::Status walk_meta(Txn& t) {
    return t.each(Table::kMeta, "", [&](std::string_view key, std::string_view raw) {
      ++r_.records_checked;
      auto value = unseal("meta", key, raw);
      if (!value) {
        bad(Table::kMeta, key, raw, "damaged record '" + std::string(key) + "'");
        return true;
      }
      FixedReader reader(*value);
      uint32_t v = reader.u32();
      if (key == "active" && reader.done()) active = v;
      return true;
    });
  }

  base::Status walk_packs(Txn& t) {
    return t.each(Table::kPacks, "", [&](std::string_view key, std::string_view raw) {
      ++r_.records_checked;
      auto value = unseal("packs", key, raw);
      auto rec = value ? decode_pack_record(*value) : std::nullopt;
      if (!rec || key.size() != 4) {
        bad(Table::kPacks, key, raw, "damaged pack record");
      } else {
        packs[key_pack(key)] = *rec;
      }
      return true;
    });
  }

  base::Status walk_blobs(Txn& t) {
    return t.each(Table::kBlobs, "", [&](std::string_view key, std::string_view raw) {
      ++r_.records_checked;
      auto value = unseal("blobs", key, raw);
      auto loc = value ? decode_blob_location(*value) : std::nullopt;
      if (!loc || key.size() != 16) {
        bad(Table::kBlobs, key, raw, "damaged blob record");
        return true;
      }
      ++r_.blobs_checked;
      BlobId id = key_hash(key);
      std::string why;
      if (!packs.count(loc->pack)) {
        why = "blob " + id.hex() + " points to unknown pack " + std::to_string(loc->pack);
      } else {
        auto bytes = pack_files_.view(loc->pack, loc->offset, loc->size);
        if (!bytes.ok()) {
          why = bytes.message() + " (blob " + id.hex() + ")";
        } else if (hash_bytes(bytes.value()) != id) {
          why = pack_files_.path(loc->pack) + ": blob " + id.hex() + " at offset " +
                std::to_string(loc->offset) + " does not match its hash";
        }
      }
      if (why.empty()) {
        good_blobs_.insert(std::string(key));
      } else {
        ++r_.bad_blobs;
        problem(why);
        drops.push_back(Drop{Table::kBlobs, std::string(key), std::string(raw)});
      }
      return true;
    });
  }

  base::Status walk_pack_blobs(Txn& t) {
    return t.each(Table::kPackBlobs, "", [&](std::string_view key, std::string_view raw) {
      // Stale entries (the blob moved or went) are normal after a race; drop quietly.
      if (key.size() != 20) {
        drops.push_back(Drop{Table::kPackBlobs, std::string(key), std::string(raw)});
        return true;
      }
      std::string bkey(key.substr(4));
      if (!good_blobs_.count(bkey)) {
        drops.push_back(Drop{Table::kPackBlobs, std::string(key), std::string(raw)});
      }
      return true;
    });
  }

  base::Status walk_files(Txn& t) {
    return t.each(Table::kFiles, "", [&](std::string_view key, std::string_view raw) {
      ++r_.records_checked;
      auto value = unseal("files", key, raw);
      std::string path;
      auto rec = value ? decode_file_record(*value, &path) : std::nullopt;
      if (!rec || file_key(path) != key) bad(Table::kFiles, key, raw, "damaged file record");
      return true;
    });
  }

  base::Status walk_actions(Txn& t) {
    return t.each(Table::kActions, "", [&](std::string_view key, std::string_view raw) {
      ++r_.records_checked;
      auto value = unseal("actions", key, raw);
      auto rec = value ? decode_action_record(*value) : std::nullopt;
      if (!rec || key.size() != 16) {
        bad(Table::kActions, key, raw, "damaged action record");
        return true;
      }
      bool dangling = false;
      for (const auto& o : rec->outputs) dangling |= !good_blobs_.count(hash_key(o.blob));
      for (const auto& b : {rec->stdout_blob, rec->stderr_blob}) {
        dangling |= !b.is_zero() && !good_blobs_.count(hash_key(b));
      }
      if (dangling) {
        ++r_.dangling_actions;
        drops.push_back(Drop{Table::kActions, std::string(key), std::string(raw)});
      }
      return true;
    });
  }

  base::Status walk_memos(Txn& t) {
    return t.each(Table::kMemo, "", [&](std::string_view key, std::string_view raw) {
      ++r_.records_checked;
      auto value = unseal("memo", key, raw);
      std::string_view table, mkey, mvalue;
      if (!value || !decode_memo(*value, &table, &mkey, &mvalue) || memo_key(table, mkey) != key) {
        bad(Table::kMemo, key, raw, "damaged memo record");
      }
      return true;
    });
  }

  VerifyReport& r_;
  PackSet& pack_files_;
  std::unordered_set<std::string> good_blobs_;
};

}  // namespace

base::Result<VerifyReport> StoreImpl::verify() {
  if (!index_) return base::Status::error(dir_ + ": the index is not open");
  flush();
  VerifyReport r;
  // The structure first: LMDB must not write into a damaged tree.
  if (!read_only_) {
    base::Status structure = index_->check_structure();
    if (!structure.ok()) {
      base::Status after = after_failure(structure);
      if (!index_ || !index_->damaged()) {
        ++r.bad_records;
        r.problems.push_back(structure.message() + "; the index was reset");
        if (!after.ok() && after.message() != structure.message()) return after;
        return r;
      }
      return after;
    }
  }
  IndexWalk walk(&r, packs_.get());
  base::Status st = index_->read([&](Txn& t) { return walk.walk(t); });
  if (!st.ok()) {
    bool damaged = index_->damaged();
    base::Status after = after_failure(st);
    if (!damaged) return after;
    ++r.bad_records;
    walk.problem(st.message() + "; the index was reset");
    return r;
  }
  const std::optional<uint32_t>& active = walk.active;
  if (!active) {
    ++r.bad_records;
    walk.problem(index_path_ + ": no active pack recorded");
  }
  if (read_only_) return r;

  bool unreachable = false;
  st = index_->write([&](Txn& t) {
    for (const auto& d : walk.drops) {
      std::optional<std::string_view> raw;
      base::Status s = t.get(d.table, d.key, &raw);
      if (!s.ok()) return s;
      // Seen while walking the table but not found by its key: the tree's
      // order is broken, which only a reset repairs.
      if (!raw) unreachable = true;
      if (raw && *raw == d.raw && !(s = t.del(d.table, d.key)).ok()) return s;
    }
    return base::Status();
  });
  if (!st.ok()) return after_failure(st);
  if (unreachable) {
    index_->mark_damaged();
    base::Status reset = after_failure(
        base::Status::error(index_path_ + ": records that cannot be found by their key"));
    ++r.bad_records;
    r.problems.push_back(index_path_ +
                         ": records that cannot be found by their key; the index was reset");
    if (!reset.ok() && !index_) return reset;
    return r;
  }

  // Pack files that no record describes (left by a reset or a crashed eviction).
  for (uint32_t n : packs_->list()) {
    if (walk.packs.count(n) || !active || n >= *active) continue;
    packs_->remove(n);
    ++r.orphan_packs;
  }
  return r;
}

}  // namespace lexpack::cache
