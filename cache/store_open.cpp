// Opening the store (index, packs, the first meta records, a reset when the
// index is damaged), its sealed meta and pack records, and the defaults of the
// Store interface's later methods.
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

// Holds a flock on the reset lock file while alive (shared or exclusive).
class ResetLock {
 public:
  ResetLock(const std::string& path, int op, const FileModes& modes) {
    if (::access(path.c_str(), F_OK) != 0 &&
        ::access(path.substr(0, path.rfind('/')).c_str(), W_OK) != 0) {
      return;  // a read-only directory: nobody can reset it anyway
    }
    auto fd = open_cache_file(AT_FDCWD, path, O_RDWR | O_CREAT, modes, path);
    if (!fd.ok()) fd = open_cache_file(AT_FDCWD, path, O_RDONLY, modes, path);
    if (fd.ok()) {
      fd_ = *fd;
      while (::flock(fd_, op) != 0 && errno == EINTR) {
      }
    }
  }
  ~ResetLock() {
    if (fd_ >= 0) ::close(fd_);
  }

 private:
  int fd_ = -1;
};

ino_t inode_of(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

std::string encode_u32(uint32_t v) {
  FixedWriter w;
  w.u32(v);
  return std::move(w.bytes());
}

}  // namespace

// The meta table's sealed u32 values ("format", "active").
base::Status get_meta(Txn& t, const char* name, std::optional<uint32_t>* out) {
  std::optional<std::string_view> raw;
  base::Status s = t.get(Table::kMeta, name, &raw);
  if (!s.ok()) return s;
  *out = std::nullopt;
  if (!raw) return {};
  auto value = unseal("meta", name, *raw);
  FixedReader r(value ? *value : std::string_view());
  uint32_t v = r.u32();
  if (!value || !r.done())
    return base::Status::error(std::string("index meta record '") + name + "' is damaged");
  *out = v;
  return {};
}

base::Status put_meta(Txn& t, const char* name, uint32_t v) {
  return t.put(Table::kMeta, name, seal("meta", name, encode_u32(v)));
}

base::Status get_pack(Txn& t, uint32_t pack, std::optional<PackRecord>* out) {
  std::optional<std::string_view> raw;
  *out = std::nullopt;
  std::string key = pack_key(pack);
  base::Status s = t.get(Table::kPacks, key, &raw);
  if (!s.ok() || !raw) return s;
  auto value = unseal("packs", key, *raw);
  if (value) *out = decode_pack_record(*value);
  return {};
}

base::Status put_pack(Txn& t, uint32_t pack, const PackRecord& rec) {
  std::string key = pack_key(pack);
  return t.put(Table::kPacks, key, seal("packs", key, encode(rec)));
}

int64_t now_seconds() {
  return static_cast<int64_t>(std::time(nullptr));
}

base::Result<std::unique_ptr<Store>> Store::open(const StoreOptions& options) {
  return StoreImpl::open(options);
}

base::Result<std::unique_ptr<Store>> StoreImpl::open(const StoreOptions& options) {
  std::unique_ptr<StoreImpl> s(new StoreImpl());
  s->options_ = options;
  s->config_ = load_config(options.dir);
  if (s->config_.dir.empty()) {
    return base::Status::error("no cache directory: set LEXPACK_DIR, XDG_CACHE_HOME or HOME");
  }
  s->dir_ = s->config_.dir;
  s->packs_dir_ = s->dir_ + "/" + kPacksDirName;
  s->index_path_ = s->dir_ + "/" + kIndexFileName;
  s->read_only_ = options.read_only;
  s->modes_ = FileModes::from(s->config_);
  // The directory and packs/ are opened as checked handles: a symlink someone
  // else planted there is refused, so nothing is ever written through it.
  auto dir_fd = open_cache_dir(AT_FDCWD, s->dir_, !s->read_only_, s->modes_);
  if (!dir_fd.ok()) {
    return base::Status::error(dir_fd.message().find("symbolic link") != std::string::npos
                                   ? dir_fd.message()
                                   : s->dir_ +
                                         ": cannot open the cache directory: " + dir_fd.message());
  }
  auto packs_fd = open_cache_dir(*dir_fd, kPacksDirName, !s->read_only_, s->modes_);
  ::close(*dir_fd);
  if (!packs_fd.ok() && packs_fd.message().find("symbolic link") != std::string::npos) {
    return base::Status::error(s->packs_dir_ +
                               packs_fd.message().substr(std::strlen(kPacksDirName)));
  }
  if (!s->read_only_ && (!packs_fd.ok() || ::access(s->dir_.c_str(), W_OK) != 0 ||
                         ::access(s->packs_dir_.c_str(), W_OK) != 0)) {
    s->read_only_ = true;
    s->messages_.push_back(s->dir_ + ": the cache directory is not writable; using it read-only");
  }
  uint64_t pack_size = options.pack_size ? options.pack_size : s->config_.pack_size;
  pack_size = std::max<uint64_t>(pack_size, 2 * kPageSize);
  s->packs_ = std::make_unique<PackSet>(s->packs_dir_, packs_fd.ok() ? *packs_fd : -1, pack_size,
                                        s->read_only_, s->modes_);
  auto counters = CountersFile::open(s->dir_ + "/" + kCountersFileName, s->read_only_, s->modes_);
  if (counters.ok()) {
    s->counters_ = std::move(counters.value());
  } else if (!s->read_only_) {
    s->messages_.push_back(counters.message());
  }
  base::Status st = s->open_index();
  if (!st.ok()) return st;
  return std::unique_ptr<Store>(std::move(s));
}

base::Status StoreImpl::open_index() {
  // Shared while opening, so a reset (exclusive) never swaps files under us.
  auto lock = std::make_unique<ResetLock>(dir_ + "/" + kResetLockName, LOCK_SH, modes_);
  index_ino_ = inode_of(index_path_);
  int rc = 0;
  auto opened = Index::open(index_path_, read_only_, config_.sync, false, modes_, &rc);
  if (!opened.ok() && read_only_ && (rc == EACCES || rc == EROFS)) {
    // A lock file we cannot write: read without LMDB's reader table.
    opened = Index::open(index_path_, true, false, true, modes_, &rc);
  }
  if (!opened.ok() && !read_only_ && (rc == EACCES || rc == EROFS)) {
    read_only_ = true;
    messages_.push_back(opened.message() + "; using the cache read-only");
    packs_ = std::make_unique<PackSet>(packs_dir_, packs_->release_dir(), packs_->pack_size(), true,
                                       modes_);
    opened = Index::open(index_path_, true, false, false, modes_, &rc);
    if (!opened.ok() && (rc == EACCES || rc == EROFS)) {
      opened = Index::open(index_path_, true, false, true, modes_, &rc);
    }
  }
  if (!opened.ok()) {
    if (read_only_ || !is_damage_code(rc)) return opened.status();
    lock.reset();
    return reset_index(opened.message());
  }
  index_ = std::move(opened.value());
  index_ino_ = inode_of(index_path_);
  base::Status st = watch_index();
  if (st.ok()) st = init_meta();
  if (!st.ok() && !read_only_ &&
      (index_->damaged() || st.message().find("damaged") != std::string::npos)) {
    lock.reset();
    return reset_index(st.message());
  }
  return st;
}

base::Status StoreImpl::watch_index() {
  if (read_only_ || !counters_) return {};
  uint64_t ino = 0, mtime = 0;
  if (index_->file_stamp(&ino, &mtime) && !counters_->index_stamp_matches(ino, mtime)) {
    base::Status st = index_->check_structure();
    if (!st.ok()) return st;
    counters_->record_index_stamp(ino, mtime);
  }
  Index* index = index_.get();
  CountersFile* counters = counters_.get();
  index_->set_on_commit([index, counters] {
    uint64_t i = 0, m = 0;
    if (index->file_stamp(&i, &m)) counters->record_index_stamp(i, m);
  });
  return {};
}

base::Status StoreImpl::init_meta() {
  std::optional<uint32_t> format, active;
  base::Status st = index_->read([&](Txn& t) {
    base::Status s = get_meta(t, "format", &format);
    if (s.ok()) s = get_meta(t, "active", &active);
    return s;
  });
  if (!st.ok()) return st;
  if (format && *format != kFormatVersion) {
    return base::Status::error(index_path_ + ": index format " + std::to_string(*format) +
                               " is damaged or from another version (expected " +
                               std::to_string(kFormatVersion) + ")");
  }
  if ((format && active) || read_only_) return {};
  // A fresh index: numbering continues after any pack already on disk, so a
  // number is never reused while some process may still append to it.
  uint32_t first = first_pack_;
  for (uint32_t n : packs_->list()) {
    if (n >= first) first = n + 1;
  }
  return index_->write([&](Txn& t) {
    std::optional<uint32_t> f, a;
    base::Status s = get_meta(t, "format", &f);
    if (s.ok()) s = get_meta(t, "active", &a);
    if (!s.ok() || (f && a)) return s;
    s = put_meta(t, "format", kFormatVersion);
    if (s.ok()) s = put_meta(t, "active", first);
    PackRecord rec;
    rec.created = rec.last_use = static_cast<uint64_t>(now_seconds());
    if (s.ok()) s = put_pack(t, first, rec);
    return s;
  });
}

base::Status StoreImpl::reset_index(const std::string& reason) {
  ResetLock lock(dir_ + "/" + kResetLockName, LOCK_EX, modes_);
  index_.reset();
  if (inode_of(index_path_) == index_ino_) {
    // Nobody replaced it yet: drop the index and the packs it described.
    ::unlink(index_path_.c_str());
    ::unlink((index_path_ + "-lock").c_str());
    for (uint32_t n : packs_->list()) {
      packs_->remove(n);
      // Never reuse a number: a process still on the old index may append to it.
      first_pack_ = std::max(first_pack_, n + 1);
    }
  }
  int rc = 0;
  auto opened = Index::open(index_path_, false, config_.sync, false, modes_, &rc);
  if (!opened.ok()) return opened.status();
  index_ = std::move(opened.value());
  index_ino_ = inode_of(index_path_);
  report(index_path_ + ": the index was damaged (" + reason + "); the cache was reset",
         "index_resets");
  base::Status st = watch_index();
  // Pack numbering restarts after the highest pack still on disk.
  return st.ok() ? init_meta() : st;
}

base::Status StoreImpl::after_failure(base::Status status) {
  if (index_ && index_->damaged() && !read_only_) {
    base::Status reset = reset_index(status.message());
    if (!reset.ok())
      return base::Status::error(status.message() + "; reset failed: " + reset.message());
  }
  return status;
}

void StoreImpl::report(std::string message, const char* counter) {
  if (messages_.size() < 1000) messages_.push_back(std::move(message));
  if (counter && counters_) counters_->add(counter, 1);
}

std::vector<std::string> StoreImpl::take_messages() {
  std::vector<std::string> out;
  out.swap(messages_);
  return out;
}

StoreImpl::~StoreImpl() {
  flush();
}

// Defaults for the methods added after the first version of the interface, so
// that other implementations (test doubles) keep compiling.
base::Result<std::vector<BlobId>> Store::put_blobs(const std::vector<std::string_view>& blobs,
                                                   const BlobOptions& options) {
  std::vector<BlobId> ids;
  for (auto b : blobs) {
    auto id = put_blob(b, options);
    if (!id.ok()) return id.status();
    ids.push_back(id.value());
  }
  return ids;
}
bool Store::visit_memo(std::string_view table, std::string_view key,
                       const std::function<void(std::string_view)>& fn) {
  std::optional<std::string> value = get_memo(table, key);
  if (value) fn(*value);
  return value.has_value();
}
base::Status Store::put_records(const std::vector<FileWrite>& files,
                                const std::vector<MemoWrite>& memos) {
  for (const FileWrite& f : files) {
    if (base::Status st = put_file(f.path, f.record); !st.ok()) return st;
  }
  for (const MemoWrite& m : memos) {
    if (base::Status st = put_memo(m.table, m.key, m.value); !st.ok()) return st;
  }
  return base::Status();
}

base::Status Store::put_actions(const std::vector<ActionWrite>& actions) {
  for (const ActionWrite& a : actions) {
    if (base::Status st = put_action(a.key, a.record); !st.ok()) return st;
  }
  return base::Status();
}

std::optional<BlobPlace> Store::locate_blob(const BlobId&) {
  return std::nullopt;
}
base::Status Store::flush() {
  return {};
}
std::vector<std::string> Store::take_messages() {
  return {};
}
base::Result<StoreStats> Store::stats() {
  return base::Status::error("stats: not supported by this store");
}
base::Result<GcReport> Store::gc(uint64_t) {
  return base::Status::error("gc: not supported by this store");
}
base::Result<VerifyReport> Store::verify() {
  return base::Status::error("verify: not supported by this store");
}
base::Status Store::clear() {
  return base::Status::error("clear: not supported by this store");
}
base::Result<std::string> Store::make_temp(const std::string&) {
  return base::Status::error("make_temp: not supported by this store");
}
base::Result<StoreEntries> Store::list_entries() {
  return base::Status::error("export: not supported by this store");
}
std::optional<std::string_view> Store::read_stored_blob(const StoredBlob&) {
  return std::nullopt;
}
base::Status Store::put_stored_records(const std::vector<StoredRecord>&) {
  return base::Status::error("import: not supported by this store");
}
base::Status Store::check_writable() {
  return base::Status::error("import: not supported by this store");
}
std::string Store::archive_secret() {
  return {};
}
}  // namespace lexpack::cache
