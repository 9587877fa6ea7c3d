// LMDB environment and transactions for the index; see index_env.h.
// Readers reuse one reset transaction; write transactions stay short.
#include "cache/index_env.h"

#include "cache/index_check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <setjmp.h>
#include <signal.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include <algorithm>
#include <cstdio>
#include <fstream>

namespace lexpack::cache {

namespace {

// Virtual size of the map; the file grows only as needed.
constexpr size_t kMapSize = size_t{64} << 30;
// One slot per open Store; a ninja -j64 build with helpers stays far below.
constexpr unsigned kMaxReaders = 1024;

constexpr const char* kTableNames[kTableCount] = {"blobs",   "pack_blobs", "packs", "files",
                                                  "actions", "memo",       "meta"};

MDB_val val(std::string_view s) {
  return MDB_val{s.size(), const_cast<char*>(s.data())};
}

// Where LMDB mapped the file: mdb_env_info() reports the address only for
// MDB_FIXEDMAP, so look the mapping up by inode in /proc/self/maps.
const char* find_mapping(ino_t ino) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    unsigned long long start = 0, end = 0, offset = 0, inode = 0;
    char perms[8] = {}, dev[16] = {};
    if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %15s %llu", &start, &end, perms, &offset, dev,
                    &inode) == 6 &&
        inode == static_cast<unsigned long long>(ino) && offset == 0 && end - start >= kMapSize) {
      return reinterpret_cast<const char*>(static_cast<uintptr_t>(start));
    }
  }
  return nullptr;
}

std::string_view view(const MDB_val& v) {
  return std::string_view(static_cast<const char*>(v.mv_data), v.mv_size);
}

thread_local sigjmp_buf* t_guard = nullptr;
struct sigaction g_old_segv, g_old_bus;

struct sigaction g_old_abrt;

void on_fault(int sig, siginfo_t*, void*) {
  if (sigjmp_buf* guard = t_guard) {
    t_guard = nullptr;
    siglongjmp(*guard, sig);
  }
  // Not a fault inside a guarded index call: give it back to the previous
  // handler (returning re-runs the faulting instruction; abort() re-raises).
  ::sigaction(sig,
              sig == SIGSEGV  ? &g_old_segv
              : sig == SIGBUS ? &g_old_bus
                              : &g_old_abrt,
              nullptr);
}

// LMDB's consistency assertions fire on some damaged pages; inside a guarded
// call they unwind like a fault instead of aborting.
void on_assert(MDB_env*, const char*) {
  if (sigjmp_buf* guard = t_guard) {
    t_guard = nullptr;
    siglongjmp(*guard, SIGABRT);
  }
}

void install_fault_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa = {};
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGSEGV, &sa, &g_old_segv);
    ::sigaction(SIGBUS, &sa, &g_old_bus);
    ::sigaction(SIGABRT, &sa, &g_old_abrt);
  });
}

// Runs body; a SIGSEGV or SIGBUS inside it (LMDB following a damaged page)
// makes it return false instead of killing the process. Nothing on the
// abandoned frames is cleaned up, so callers stop using the environment.
bool run_guarded(FunctionRef<void()> body) {
  install_fault_handlers();
  sigjmp_buf jump;
  sigjmp_buf* outer = t_guard;
  if (sigsetjmp(jump, 0) != 0) {
    t_guard = outer;
    return false;
  }
  t_guard = &jump;
  body();
  t_guard = outer;
  return true;
}

// LMDB sizes its lock file with ftruncate and writes it through a shared
// mapping; on a full disk a store into a hole there is SIGBUS. Give the file
// real blocks first (LMDB 0.9: a 128-byte header and one 64-byte slot per
// reader; a larger file is accepted), so a full disk is an error, not a fault.
constexpr off_t kLockFileBytes = 128 + 64 * off_t{kMaxReaders};

// Also checks the file (a regular file, never a symlink) and returns its inode.
base::Status allocate_lock_file(const std::string& path, const FileModes& modes, int* rc_out,
                                uint64_t* ino) {
  auto fd = open_cache_file(AT_FDCWD, path, O_RDWR | O_CREAT, modes, path);
  if (!fd.ok()) {
    *rc_out = errno == ELOOP ? EPERM : errno;
    return fd.status();
  }
  struct stat st;
  int rc = ::fstat(*fd, &st) != 0 ? errno : 0;
  if (rc == 0 && !S_ISREG(st.st_mode)) {
    ::close(*fd);
    *rc_out = EPERM;
    return base::Status::error(path + ": not a regular file");
  }
  *ino = static_cast<uint64_t>(st.st_ino);
  off_t want = std::max<off_t>(kLockFileBytes, rc == 0 ? st.st_size : 0);
  if (rc == 0 && static_cast<off_t>(st.st_blocks) * 512 < want) {
    rc = allocate_blocks(*fd, want);
  }
  ::close(*fd);
  if (rc == 0) return {};
  *rc_out = rc;
  return base::Status::error(path + ": cannot allocate the index lock file: " + std::strerror(rc));
}

bool same_inode(const std::string& path, uint64_t ino) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         static_cast<uint64_t>(st.st_ino) == ino;
}

}  // namespace

const char* table_name(Table t) {
  return kTableNames[static_cast<int>(t)];
}

bool is_damage_code(int rc) {
  return rc == MDB_CORRUPTED || rc == MDB_PAGE_NOTFOUND || rc == MDB_INVALID ||
         rc == MDB_VERSION_MISMATCH || rc == MDB_INCOMPATIBLE || rc == MDB_BAD_VALSIZE ||
         rc == MDB_CURSOR_FULL;
}

base::Status Index::mdb_fail(const char* op, int rc) {
  if (is_damage_code(rc)) damaged_ = true;
  return base::Status::error(path_ + ": " + op + ": " + mdb_strerror(rc));
}

base::Status Txn::fail(const char* op, int rc) {
  return index_->mdb_fail(op, rc);
}

bool Txn::in_map(const MDB_val& v) const {
  // Values read in a read transaction must lie inside the mapped file; a
  // damaged page could otherwise point anywhere.
  if (write_ || !index_->map_begin_) return true;
  const char* p = static_cast<const char*>(v.mv_data);
  if (p < index_->map_begin_ || p > index_->map_end_) return false;
  return v.mv_size <= static_cast<size_t>(index_->map_end_ - p);
}

base::Status Txn::get(Table t, std::string_view key, std::optional<std::string_view>* out) {
  MDB_val k = val(key), v;
  int rc = mdb_get(txn_, index_->dbi_[static_cast<int>(t)], &k, &v);
  if (rc == MDB_NOTFOUND) {
    *out = std::nullopt;
    return {};
  }
  if (rc != 0) return fail("mdb_get", rc);
  if (!in_map(v)) {
    index_->damaged_ = true;
    return base::Status::error(index_->path_ + ": record outside the index file in table " +
                               table_name(t));
  }
  *out = view(v);
  return {};
}

base::Status Txn::put(Table t, std::string_view key, std::string_view value) {
  MDB_val k = val(key), v = val(value);
  int rc = mdb_put(txn_, index_->dbi_[static_cast<int>(t)], &k, &v, 0);
  if (rc != 0) return fail("mdb_put", rc);
  return {};
}

base::Status Txn::del(Table t, std::string_view key, bool* found) {
  MDB_val k = val(key);
  int rc = mdb_del(txn_, index_->dbi_[static_cast<int>(t)], &k, nullptr);
  if (found) *found = rc == 0;
  if (rc != 0 && rc != MDB_NOTFOUND) return fail("mdb_del", rc);
  return {};
}

base::Status Txn::each(Table t, std::string_view prefix,
                       const std::function<bool(std::string_view, std::string_view)>& fn) {
  MDB_cursor* cursor = nullptr;
  int rc = mdb_cursor_open(txn_, index_->dbi_[static_cast<int>(t)], &cursor);
  if (rc != 0) return fail("mdb_cursor_open", rc);
  MDB_val k = val(prefix), v;
  rc = mdb_cursor_get(cursor, &k, &v, prefix.empty() ? MDB_FIRST : MDB_SET_RANGE);
  base::Status status;
  while (rc == 0) {
    std::string_view key = view(k);
    if (key.substr(0, prefix.size()) != prefix) break;
    if (!in_map(k) || !in_map(v)) {
      index_->damaged_ = true;
      status = base::Status::error(index_->path_ + ": record outside the index file in table " +
                                   table_name(t));
      break;
    }
    if (!fn(key, view(v))) break;
    rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT);
  }
  if (status.ok() && rc != 0 && rc != MDB_NOTFOUND) status = fail("mdb_cursor_get", rc);
  mdb_cursor_close(cursor);
  return status;
}

base::Status Txn::entries(Table t, uint64_t* count) {
  MDB_stat st;
  int rc = mdb_stat(txn_, index_->dbi_[static_cast<int>(t)], &st);
  if (rc != 0) return fail("mdb_stat", rc);
  *count = st.ms_entries;
  return {};
}

base::Status Txn::clear(Table t) {
  int rc = mdb_drop(txn_, index_->dbi_[static_cast<int>(t)], 0);
  if (rc != 0) return fail("mdb_drop", rc);
  return {};
}

base::Result<std::unique_ptr<Index>> Index::open_unguarded(const std::string& path, bool read_only,
                                                           bool sync, bool no_lock,
                                                           const FileModes& modes, int* rc_out) {
  *rc_out = 0;
  std::unique_ptr<Index> index(new Index());
  auto fail = [&](const char* op, int rc) {
    *rc_out = rc;
    return index->mdb_fail(op, rc);
  };
  index->path_ = path;
  index->read_only_ = read_only;
  int rc = mdb_env_create(&index->env_);
  if (rc != 0) return fail("mdb_env_create", rc);
  if ((rc = mdb_env_set_mapsize(index->env_, kMapSize)) != 0) {
    return fail("mdb_env_set_mapsize", rc);
  }
  if ((rc = mdb_env_set_maxdbs(index->env_, kTableCount)) != 0) {
    return fail("mdb_env_set_maxdbs", rc);
  }
  if ((rc = mdb_env_set_assert(index->env_, on_assert)) != 0) {
    return fail("mdb_env_set_assert", rc);
  }
  if ((rc = mdb_env_set_maxreaders(index->env_, kMaxReaders)) != 0) {
    return fail("mdb_env_set_maxreaders", rc);
  }
  // LMDB opens both files by path: check them first (never a symlink), make
  // the lock file (modes from the umask setting), and check afterwards that
  // LMDB opened the very files checked. The data file is left for LMDB to
  // create: an empty one made here would be a new environment to every
  // process opening it at once, each writing its first meta pages.
  const std::string lock_path = path + "-lock";
  uint64_t data_ino = 0, lock_ino = 0;
  if (base::Status s = prepare_cache_file(path, modes, true, &data_ino); !s.ok()) {
    *rc_out = EPERM;
    return s;
  }
  if (!no_lock && !read_only) {
    if (base::Status s = allocate_lock_file(lock_path, modes, rc_out, &lock_ino); !s.ok()) return s;
  } else if (!no_lock) {
    if (base::Status s = prepare_cache_file(lock_path, modes, true, &lock_ino); !s.ok()) {
      *rc_out = EPERM;
      return s;
    }
  }
  unsigned flags = MDB_NOSUBDIR | MDB_NOTLS;
  if (read_only) flags |= MDB_RDONLY;
  if (no_lock) flags |= MDB_NOLOCK;
  if (!sync) flags |= MDB_NOSYNC;
  const mode_t mode = 0666 & ~static_cast<mode_t>(modes.umask.value_or(0));
  if ((rc = mdb_env_open(index->env_, path.c_str(), flags, mode)) != 0) {
    return fail("mdb_env_open", rc);
  }
  int fd = -1;
  if ((rc = mdb_env_get_fd(index->env_, &fd)) != 0) return fail("mdb_env_get_fd", rc);
  struct stat file_stat;
  if (::fstat(fd, &file_stat) != 0) return fail("fstat", errno);
  const uint64_t opened_ino = static_cast<uint64_t>(file_stat.st_ino);
  if ((data_ino && opened_ino != data_ino) || !same_inode(path, opened_ino) ||
      (lock_ino && !same_inode(lock_path, lock_ino))) {
    *rc_out = EPERM;
    return base::Status::error(path + ": the index files were replaced while they were opened");
  }
  if (!data_ino && !read_only) give_created_mode(fd, false, modes);  // LMDB made it
  index->map_begin_ = find_mapping(file_stat.st_ino);
  if (!index->map_begin_) {
    *rc_out = 0;
    return base::Status::error(path + ": cannot find the index mapping in /proc/self/maps");
  }
  MDB_stat st;
  if ((rc = mdb_env_stat(index->env_, &st)) != 0) return fail("mdb_env_stat", rc);
  index->page_size_ = st.ms_psize;
  index->file_size_ = index->file_bytes();

  // The tables usually exist: open them in a read transaction (committed, so
  // the handles stay), and take the writer lock only to create them.
  for (int pass = 0; pass < 2; ++pass) {
    bool create = pass == 1;
    if (create && read_only) break;
    MDB_txn* txn = nullptr;
    if ((rc = mdb_txn_begin(index->env_, nullptr, create ? 0 : MDB_RDONLY, &txn)) != 0) {
      return fail("mdb_txn_begin", rc);
    }
    bool missing = false;
    for (int i = 0; i < kTableCount; ++i) {
      rc = mdb_dbi_open(txn, kTableNames[i], create ? MDB_CREATE : 0, &index->dbi_[i]);
      if (rc == MDB_NOTFOUND && !create) {
        missing = true;
        break;
      }
      if (rc != 0) {
        mdb_txn_abort(txn);
        return fail("mdb_dbi_open", rc);
      }
    }
    if (missing) {
      mdb_txn_abort(txn);
      if (read_only) {
        *rc_out = MDB_NOTFOUND;
        return base::Status::error(path + ": the index has no tables yet and is read-only");
      }
      continue;
    }
    if ((rc = mdb_txn_commit(txn)) != 0) return fail("mdb_txn_commit", rc);
    break;
  }
  return index;
}

Index::~Index() {
  // After a fault the environment's state is unknown: leave it alone.
  if (faulted_) return;
  if (reader_) mdb_txn_abort(reader_);
  if (env_) mdb_env_close(env_);
}

uint64_t Index::file_bytes() const {
  // The size of the file we have mapped, not of whatever the path names now:
  // after another process reset the cache the path is a new, smaller index,
  // and reading our mapping against its size would call our records damaged.
  int fd = -1;
  struct stat st;
  if (!env_ || mdb_env_get_fd(env_, &fd) != 0 || ::fstat(fd, &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_size);
}

bool Index::file_stamp(uint64_t* ino, uint64_t* mtime_ns) const {
  struct stat st;
  if (::stat(path_.c_str(), &st) != 0) return false;
  *ino = static_cast<uint64_t>(st.st_ino);
  *mtime_ns = static_cast<uint64_t>(st.st_mtim.tv_sec) * 1'000'000'000ull +
              static_cast<uint64_t>(st.st_mtim.tv_nsec);
  return true;
}

base::Status Index::check_structure() {
  // The read transaction pins its snapshot, so no writer reuses its pages
  // while they are walked; if its meta page was already overwritten by two
  // newer commits, try a fresh snapshot.
  for (int attempt = 0; attempt < 4; ++attempt) {
    bool stale = false;
    std::string problem;
    base::Status st = read([&](Txn& t) {
      problem = check_lmdb_pages(map_begin_, file_bytes(), t.id(), &stale);
      return base::Status();
    });
    if (!st.ok()) return st;
    if (stale) continue;
    if (!problem.empty()) {
      damaged_ = true;
      return base::Status::error(path_ + ": the index is damaged: " + problem);
    }
    return {};
  }
  return {};  // too busy to catch a stable snapshot; LMDB's own checks remain
}

int Index::check_readers() {
  int dead = 0;
  if (env_) mdb_reader_check(env_, &dead);
  return dead;
}

base::Status Index::read_unguarded(FunctionRef<base::Status(Txn&)> fn) {
  int rc;
  if (reader_) {
    rc = mdb_txn_renew(reader_);
    if (rc != 0) {
      mdb_txn_abort(reader_);
      reader_ = nullptr;
    }
  }
  if (!reader_) {
    rc = mdb_txn_begin(env_, nullptr, MDB_RDONLY, &reader_);
    if (rc == MDB_READERS_FULL) {
      check_readers();
      rc = mdb_txn_begin(env_, nullptr, MDB_RDONLY, &reader_);
    }
    if (rc != 0) {
      reader_ = nullptr;
      return mdb_fail("mdb_txn_begin (read)", rc);
    }
  }
  MDB_envinfo info;
  if ((rc = mdb_env_info(env_, &info)) != 0) {
    mdb_txn_reset(reader_);
    return mdb_fail("mdb_env_info", rc);
  }
  // The file size is re-read only when the index has grown past what we saw.
  uint64_t used = (static_cast<uint64_t>(info.me_last_pgno) + 1) * page_size_;
  if (used > file_size_) file_size_ = file_bytes();
  map_end_ = map_begin_ + std::min(used, file_size_);
  Txn txn(this, reader_, false);
  base::Status status = fn(txn);
  mdb_txn_reset(reader_);
  return status;
}

base::Status Index::write_unguarded(FunctionRef<base::Status(Txn&)> fn) {
  if (read_only_) return base::Status::error(path_ + ": the cache is read-only");
  MDB_txn* txn = nullptr;
  int rc = mdb_txn_begin(env_, nullptr, 0, &txn);
  if (rc == MDB_READERS_FULL) {
    check_readers();
    rc = mdb_txn_begin(env_, nullptr, 0, &txn);
  }
  if (rc != 0) return mdb_fail("mdb_txn_begin (write)", rc);
  Txn t(this, txn, true);
  base::Status status = fn(t);
  if (!status.ok()) {
    mdb_txn_abort(txn);
    return status;
  }
  rc = mdb_txn_commit(txn);
  if (rc != 0) return mdb_fail("mdb_txn_commit", rc);
  if (on_commit_) on_commit_();
  return {};
}

}  // namespace lexpack::cache

namespace lexpack::cache {

base::Result<std::unique_ptr<Index>> Index::open(const std::string& path, bool read_only, bool sync,
                                                 bool no_lock, const FileModes& modes, int* rc) {
  base::Result<std::unique_ptr<Index>> result = base::Status::error(path + ": not opened");
  if (!run_guarded([&] { result = open_unguarded(path, read_only, sync, no_lock, modes, rc); })) {
    *rc = MDB_CORRUPTED;
    return base::Status::error(path + ": the index file is damaged (a read of it faulted)");
  }
  return result;
}

base::Status Index::read(FunctionRef<base::Status(Txn&)> fn) {
  if (faulted_) return base::Status::error(path_ + ": the index file is damaged");
  base::Status status;
  if (!run_guarded([&] { status = read_unguarded(fn); })) {
    faulted_ = damaged_ = true;
    return base::Status::error(path_ + ": the index file is damaged (a read of it faulted)");
  }
  return status;
}

base::Status Index::write(FunctionRef<base::Status(Txn&)> fn) {
  if (faulted_) return base::Status::error(path_ + ": the index file is damaged");
  base::Status status;
  if (!run_guarded([&] { status = write_unguarded(fn); })) {
    faulted_ = damaged_ = true;
    return base::Status::error(path_ + ": the index file is damaged (a write faulted)");
  }
  return status;
}

}  // namespace lexpack::cache
