// Shared counters file; see counters_file.h. Layout: a 64-byte header with a
// magic, then fixed 64-byte slots {tag, value, name[48]} found by open
// addressing on the name's hash. Tags are claimed with compare-and-swap.
#include "cache/counters_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "cache/hash/hash.h"

namespace lexpack::cache {

namespace {

constexpr size_t kFileSize = 8192;
constexpr size_t kSlotSize = 64;
constexpr size_t kSlots = kFileSize / kSlotSize - 1;
constexpr size_t kNameMax = 47;
constexpr char kMagic[16] = "lexpack-stats-1";
static_assert(sizeof(kMagic) + 16 <= kSlotSize);

struct Slot {
  uint64_t tag;
  int64_t value;
  char name[48];
};
static_assert(sizeof(Slot) == kSlotSize);

Slot* slot(char* map, size_t i) {
  return reinterpret_cast<Slot*>(map + kSlotSize * (i + 1));
}

bool write_all_at(int fd, const char* data, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

CountersFile::~CountersFile() {
  if (map_) ::munmap(map_, kFileSize);
}

base::Result<std::unique_ptr<CountersFile>> CountersFile::open(const std::string& path,
                                                               bool read_only,
                                                               const FileModes& modes) {
  std::unique_ptr<CountersFile> c(new CountersFile());
  c->path_ = path;
  c->read_only_ = read_only;
  auto opened =
      open_cache_file(AT_FDCWD, path, read_only ? O_RDONLY : O_RDWR | O_CREAT, modes, path);
  if (!opened.ok()) return opened.status();
  int fd = *opened;
  // Writers size and stamp a new file under an exclusive lock, so a process
  // opening it at the same moment never sees it half made and resets it.
  if (!read_only && ::flock(fd, LOCK_EX) != 0) {
    base::Status err = base::Status::error(path + ": flock: " + std::strerror(errno));
    ::close(fd);
    return err;
  }
  // Unlock explicitly: the mapping keeps the open file alive after close(),
  // and with it a flock, which would make every other opener wait for this
  // process to exit.
  auto release = [&] {
    if (!read_only) ::flock(fd, LOCK_UN);
    ::close(fd);
  };
  auto fail = [&](std::string message) {
    release();
    return base::Status::error(path + ": " + message);
  };
  struct stat st;
  if (::fstat(fd, &st) != 0) return fail(std::string("fstat: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return fail("not a regular file");
  if (static_cast<size_t>(st.st_size) != kFileSize) {
    if (read_only) return fail("counters file has the wrong size");
    // Write the file's bytes for real: a size set by ftruncate leaves holes,
    // and a store into a hole of a shared mapping on a full disk is SIGBUS.
    static const char zeros[kFileSize] = {};
    if (!write_all_at(fd, zeros, kFileSize) || ::ftruncate(fd, kFileSize) != 0) {
      return fail(std::string("cannot size the counters file: ") + std::strerror(errno));
    }
  } else if (!read_only && static_cast<uint64_t>(st.st_blocks) * 512 < kFileSize) {
    // Holes in a file of the right size (made by ftruncate elsewhere): get
    // its blocks now, or do without counters, rather than fault later.
    int rc = allocate_blocks(fd, kFileSize);
    if (rc != 0)
      return fail(std::string("cannot allocate the counters file: ") + std::strerror(rc));
  }
  void* m =
      ::mmap(nullptr, kFileSize, read_only ? PROT_READ : PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) return fail(std::string("mmap: ") + std::strerror(errno));
  c->map_ = static_cast<char*>(m);
  if (std::memcmp(c->map_, kMagic, sizeof kMagic) != 0) {
    if (read_only) return fail("not a counters file");
    c->reset();
  }
  release();
  return c;
}

void CountersFile::reset() {
  if (read_only_) return;
  std::memset(map_ + sizeof kMagic, 0, kFileSize - sizeof kMagic);
  std::memcpy(map_, kMagic, sizeof kMagic);
}

base::Status CountersFile::add(std::string_view name, int64_t delta) {
  if (read_only_) return base::Status::error(path_ + ": the cache is read-only");
  if (name.empty() || name.size() > kNameMax) {
    return base::Status::error("counter name '" + std::string(name) + "' must have 1 to 47 bytes");
  }
  uint64_t tag = hash_bytes(name).lo | 1;
  for (size_t probe = 0; probe < kSlots; ++probe) {
    Slot* s = slot(map_, (tag + probe) % kSlots);
    uint64_t current = __atomic_load_n(&s->tag, __ATOMIC_ACQUIRE);
    if (current == 0) {
      uint64_t expected = 0;
      if (__atomic_compare_exchange_n(&s->tag, &expected, tag, false, __ATOMIC_ACQ_REL,
                                      __ATOMIC_ACQUIRE)) {
        std::memcpy(s->name, name.data(), name.size());
        current = tag;
      } else {
        current = expected;
      }
    }
    if (current == tag) {
      __atomic_fetch_add(&s->value, delta, __ATOMIC_RELAXED);
      return {};
    }
  }
  return base::Status::error(path_ + ": no free counter slot for '" + std::string(name) + "'");
}

// Header words after the magic: the index inode and modification time.
uint64_t* stamp_word(char* map, int i) {
  return reinterpret_cast<uint64_t*>(map + 16 + 8 * i);
}

bool CountersFile::index_stamp_matches(uint64_t ino, uint64_t mtime_ns) const {
  return __atomic_load_n(stamp_word(map_, 0), __ATOMIC_ACQUIRE) == ino &&
         __atomic_load_n(stamp_word(map_, 1), __ATOMIC_ACQUIRE) >= mtime_ns;
}

void CountersFile::record_index_stamp(uint64_t ino, uint64_t mtime_ns) {
  if (read_only_) return;
  uint64_t* ino_word = stamp_word(map_, 0);
  uint64_t* time_word = stamp_word(map_, 1);
  if (__atomic_load_n(ino_word, __ATOMIC_ACQUIRE) != ino) {
    __atomic_store_n(time_word, 0, __ATOMIC_RELEASE);
    __atomic_store_n(ino_word, ino, __ATOMIC_RELEASE);
  }
  // Keep the maximum: commits by several processes may record out of order.
  uint64_t seen = __atomic_load_n(time_word, __ATOMIC_ACQUIRE);
  while (seen < mtime_ns && !__atomic_compare_exchange_n(time_word, &seen, mtime_ns, false,
                                                         __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
  }
}

std::map<std::string, int64_t> CountersFile::read_all() const {
  std::map<std::string, int64_t> out;
  for (size_t i = 0; i < kSlots; ++i) {
    const Slot* s = slot(map_, i);
    if (__atomic_load_n(&s->tag, __ATOMIC_ACQUIRE) == 0) continue;
    size_t n = strnlen(s->name, kNameMax);
    if (n == 0) continue;
    out[std::string(s->name, n)] += __atomic_load_n(&s->value, __ATOMIC_RELAXED);
  }
  return out;
}

}  // namespace lexpack::cache
