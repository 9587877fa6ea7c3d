// Served reads, the state: loads and checks the read manifest the launcher
// handed over, maps packs on first use, keeps the table of served descriptors.
// The calls themselves are in serve_path_calls.c and serve_fd_calls.c.
#undef _FORTIFY_SOURCE
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "plugin/serve_state.h"

int g_on;
int g_relative_ok;
int g_missing_dirs;
const char* g_base;
const LexpackManifestHeader* g_hdr;
const LexpackManifestEntry* g_entries;
PackState g_pack[LEXPACK_READ_MANIFEST_MAX_PACKS];
uint32_t g_fd_entry[MAX_FDS];
uint64_t g_fd_pos[MAX_FDS];
static int g_debug;
static pid_t g_pid;  // this process, as the kernel says at load and after fork
static const LexpackManifestPack* g_packs;
static const uint32_t* g_slots;

#define DEFINE_REAL(ret, name, ...) ret (*r_##name)(__VA_ARGS__);
SERVE_REAL_CALLS(DEFINE_REAL)
#undef DEFINE_REAL

void serve_debug(const char* fmt, ...) {
  if (!g_debug) return;
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = snprintf(buf, sizeof buf, "lexpack-plugin[%d]: ", (int)syscall(SYS_getpid));
  if (n > 0 && (size_t)n < sizeof buf) vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
  va_end(ap);
  size_t len = strlen(buf);
  if (len + 1 < sizeof buf) buf[len++] = '\n';
  ssize_t w = syscall(SYS_write, 2, buf, len);
  (void)w;
}

// True in the process that loaded the manifest (or a fork of it), false in a
// vfork child, which shares our memory: there the tables stay untouched.
int may_mutate(void) {
  return (pid_t)syscall(SYS_getpid) == g_pid;
}

static void after_fork_child(void) {
  g_pid = (pid_t)syscall(SYS_getpid);
}

// The entry of the first `n` bytes of `path`, or NULL.
static const LexpackManifestEntry* lookup_n(const char* path, size_t n) {
  uint32_t mask = g_hdr->slot_count - 1;
  uint32_t s = (uint32_t)lexpack_manifest_hash(path, n) & mask;
  for (uint32_t k = 0; k <= mask; ++k, s = (s + 1) & mask) {
    uint32_t v = g_slots[s];
    if (v == 0) return NULL;
    const LexpackManifestEntry* e = &g_entries[v - 1];
    if (e->path_length == n && memcmp(g_base + e->path_offset, path, n) == 0) return e;
  }
  return NULL;
}

const LexpackManifestEntry* lookup(const char* path) {
  if (!g_on || !path) return NULL;
  if (path[0] != '/' && !g_relative_ok) return NULL;
  size_t n = strlen(path);
  const LexpackManifestEntry* e = lookup_n(path, n);
  if (e || !g_missing_dirs) return e;
  // A missing directory ("dir/") stands for every path under it.
  for (size_t i = 1; i < n; ++i) {
    if (path[i] != '/') continue;
    e = lookup_n(path, i + 1);
    if (e && e->kind == LEXPACK_ENTRY_MISSING) return e;
  }
  return NULL;
}

// Maps pack `i` (once) and keeps a descriptor of it to hand out copies of.
// False when the pack is not the file the launcher checked, or busy.
int pack_ready(uint32_t i) {
  PackState* p = &g_pack[i];
  int state = __atomic_load_n(&p->state, __ATOMIC_ACQUIRE);
  if (state == PACK_READY && __atomic_load_n(&p->fd, __ATOMIC_ACQUIRE) >= 0) return 1;
  if (state == PACK_FAILED || state == PACK_BUSY) return 0;
  if (!__atomic_compare_exchange_n(&p->state, &state, PACK_BUSY, 0, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE)) {
    return 0;
  }
  const LexpackManifestPack* mp = &g_packs[i];
  int fd = REAL(open) ? r_open(g_base + mp->path_offset, O_RDONLY | O_CLOEXEC) : -1;
  struct stat st;
  int ok = fd >= 0 && REAL(fstat) && r_fstat(fd, &st) == 0 && (uint64_t)st.st_dev == mp->dev &&
           (uint64_t)st.st_ino == mp->ino;
  if (ok && !p->map) {
    void* addr =
        REAL(mmap) ? r_mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
    if (addr == MAP_FAILED) {
      ok = 0;
    } else {
      p->map = (const char*)addr;
      p->length = (uint64_t)st.st_size;
    }
  }
  if (!ok) {
    if (fd >= 0 && REAL(close)) r_close(fd);
    serve_debug("pack %s unusable; its files are read from disk", g_base + mp->path_offset);
    __atomic_store_n(&p->state, PACK_FAILED, __ATOMIC_RELEASE);
    return 0;
  }
  __atomic_store_n(&p->fd, fd, __ATOMIC_RELEASE);
  __atomic_store_n(&p->state, PACK_READY, __ATOMIC_RELEASE);
  return 1;
}

int is_pack_fd(int fd) {
  for (uint32_t i = 0; fd >= 0 && i < g_hdr->pack_count; ++i) {
    if (__atomic_load_n(&g_pack[i].fd, __ATOMIC_ACQUIRE) == fd) return 1;
  }
  return 0;
}

// The program closed or replaced descriptor `fd`: forget what we knew of it.
void forget_fd(int fd) {
  if (fd >= 0 && fd < MAX_FDS) __atomic_store_n(&g_fd_entry[fd], 0, __ATOMIC_RELEASE);
  if (!g_on) return;
  for (uint32_t i = 0; i < g_hdr->pack_count; ++i) {
    if (__atomic_load_n(&g_pack[i].fd, __ATOMIC_ACQUIRE) == fd && fd >= 0)
      __atomic_store_n(&g_pack[i].fd, -1, __ATOMIC_RELEASE);
  }
}

// Replaces served descriptor `fd` by a real open of the file at the same
// position, before a call that would need the kernel to know the file.
int materialize(int fd) {
  const LexpackManifestEntry* e = served(fd);
  if (!e) return 1;
  if (!may_mutate() || !REAL(open) || !REAL(fcntl) || !REAL(dup3) || !REAL(close) || !REAL(lseek)) {
    return 0;
  }
  int saved = errno;
  int cloexec = r_fcntl(fd, F_GETFD) & FD_CLOEXEC;
  int real = r_open(g_base + e->canonical_offset, O_RDONLY | O_CLOEXEC);
  if (real < 0) {
    errno = saved;
    return 0;
  }
  int ok = r_lseek(real, (off_t)g_fd_pos[fd], SEEK_SET) >= 0 &&
           r_dup3(real, fd, cloexec ? O_CLOEXEC : 0) == fd;
  r_close(real);
  if (ok) __atomic_store_n(&g_fd_entry[fd], 0, __ATOMIC_RELEASE);
  errno = saved;
  return ok;
}

int real_copy(int fd, int cloexec) {
  const LexpackManifestEntry* e = served(fd);
  if (!e || !REAL(open) || !REAL(lseek) || !REAL(close)) return -1;
  int saved = errno;
  int real = r_open(g_base + e->canonical_offset, O_RDONLY | (cloexec ? O_CLOEXEC : 0));
  if (real >= 0 && r_lseek(real, (off_t)g_fd_pos[fd], SEEK_SET) < 0) {
    r_close(real);
    real = -1;
  }
  errno = saved;
  return real;
}

// N of "/proc/self/fd/N", "/proc/thread-self/fd/N", "/proc/<pid>/fd/N" or
// "/dev/fd/N", else -1.
static int fd_of_path(const char* path) {
  const char* p = NULL;
  if (strncmp(path, "/dev/fd/", 8) == 0) {
    p = path + 8;
  } else if (strncmp(path, "/proc/", 6) == 0) {
    p = path + 6;
    if (strncmp(p, "self/", 5) == 0) {
      p += 5;
    } else if (strncmp(p, "thread-self/", 12) == 0) {
      p += 12;
    } else {
      while (*p >= '0' && *p <= '9') ++p;
      if (*p != '/') return -1;
      ++p;
    }
    if (strncmp(p, "fd/", 3) != 0) return -1;
    p += 3;
  }
  if (!p || *p == '\0') return -1;
  int fd = 0;
  for (; *p; ++p) {
    if (*p < '0' || *p > '9' || fd > MAX_FDS) return -1;
    fd = fd * 10 + (*p - '0');
  }
  return fd;
}

void unserve_fd_path(const char* path) {
  if (!g_on || !path || path[0] != '/') return;
  int fd = fd_of_path(path);
  if (fd >= 0 && served(fd)) materialize(fd);
}

void fill_stat(const LexpackManifestEntry* e, struct stat* st) {
  memset(st, 0, sizeof *st);
  st->st_dev = (dev_t)e->dev;
  st->st_ino = (ino_t)e->ino;
  st->st_nlink = (nlink_t)e->nlink;
  st->st_mode = (mode_t)e->mode;
  st->st_uid = (uid_t)e->uid;
  st->st_gid = (gid_t)e->gid;
  st->st_rdev = (dev_t)e->rdev;
  st->st_size = (off_t)e->size;
  st->st_blksize = (blksize_t)e->blksize;
  st->st_blocks = (blkcnt_t)e->blocks;
  st->st_atim.tv_sec = e->atime_sec;
  st->st_atim.tv_nsec = e->atime_nsec;
  st->st_mtim.tv_sec = e->mtime_sec;
  st->st_mtim.tv_nsec = e->mtime_nsec;
  st->st_ctim.tv_sec = e->ctime_sec;
  st->st_ctim.tv_nsec = e->ctime_nsec;
}

_Static_assert(sizeof(struct stat) == sizeof(struct stat64), "stat and stat64 differ here");

void fill_statx(const LexpackManifestEntry* e, struct statx* sx) {
  memset(sx, 0, sizeof *sx);
  sx->stx_mask = STATX_BASIC_STATS;
  sx->stx_blksize = (uint32_t)e->blksize;
  sx->stx_nlink = (uint32_t)e->nlink;
  sx->stx_uid = e->uid;
  sx->stx_gid = e->gid;
  sx->stx_mode = (uint16_t)e->mode;
  sx->stx_ino = e->ino;
  sx->stx_size = e->size;
  sx->stx_blocks = (uint64_t)e->blocks;
  sx->stx_atime.tv_sec = e->atime_sec;
  sx->stx_atime.tv_nsec = (uint32_t)e->atime_nsec;
  sx->stx_mtime.tv_sec = e->mtime_sec;
  sx->stx_mtime.tv_nsec = (uint32_t)e->mtime_nsec;
  sx->stx_ctime.tv_sec = e->ctime_sec;
  sx->stx_ctime.tv_nsec = (uint32_t)e->ctime_nsec;
  sx->stx_rdev_major = major(e->rdev);
  sx->stx_rdev_minor = minor(e->rdev);
  sx->stx_dev_major = major(e->dev);
  sx->stx_dev_minor = minor(e->dev);
}

static int in_range(uint64_t offset, uint64_t length, uint64_t total) {
  return offset <= total && length <= total - offset;
}

// A string of the string area followed by its NUL.
static int string_ok(uint64_t offset, uint32_t length) {
  uint64_t begin = g_hdr->strings_offset, end = begin + g_hdr->strings_size;
  return offset >= begin && offset <= end && (uint64_t)length < end - offset &&
         g_base[offset + length] == '\0';
}

static int manifest_ok(uint64_t size) {
  const LexpackManifestHeader* h = g_hdr;
  if (size < sizeof *h || memcmp(h->magic, LEXPACK_READ_MANIFEST_MAGIC, 8) != 0 ||
      h->version != LEXPACK_READ_MANIFEST_VERSION || h->total_size != size ||
      h->pack_count > LEXPACK_READ_MANIFEST_MAX_PACKS || h->slot_count == 0 ||
      (h->slot_count & (h->slot_count - 1)) != 0 || h->slot_count <= h->entry_count ||
      (h->packs_offset | h->entries_offset | h->slots_offset) % 8 != 0 ||
      !in_range(h->packs_offset, (uint64_t)h->pack_count * sizeof *g_packs, size) ||
      !in_range(h->entries_offset, (uint64_t)h->entry_count * sizeof *g_entries, size) ||
      !in_range(h->slots_offset, (uint64_t)h->slot_count * sizeof *g_slots, size) ||
      !in_range(h->strings_offset, h->strings_size, size) ||
      !in_range(h->cwd_offset, h->cwd_length, size)) {
    return 0;
  }
  g_packs = (const LexpackManifestPack*)(g_base + h->packs_offset);
  g_entries = (const LexpackManifestEntry*)(g_base + h->entries_offset);
  g_slots = (const uint32_t*)(g_base + h->slots_offset);
  if (!string_ok(h->cwd_offset, h->cwd_length)) return 0;
  for (uint32_t i = 0; i < h->pack_count; ++i) {
    if (!string_ok(g_packs[i].path_offset, g_packs[i].path_length)) return 0;
  }
  for (uint32_t i = 0; i < h->entry_count; ++i) {
    const LexpackManifestEntry* e = &g_entries[i];
    if (!string_ok(e->path_offset, e->path_length)) return 0;
    if (e->kind == LEXPACK_ENTRY_FILE) {
      if (e->pack >= h->pack_count || !string_ok(e->canonical_offset, e->canonical_length) ||
          e->blob_offset + e->size < e->blob_offset || e->blob_offset % 4096 != 0) {
        return 0;
      }
    } else if (e->kind != LEXPACK_ENTRY_MISSING) {
      return 0;
    }
  }
  for (uint32_t s = 0; s < h->slot_count; ++s) {
    if (g_slots[s] > h->entry_count) return 0;
  }
  return 1;
}

static void load_manifest(const char* value) {
  int fd = 0;
  for (const char* p = value; *p; ++p) {
    if (*p < '0' || *p > '9' || fd > 1000000) return;
    fd = fd * 10 + (*p - '0');
  }
  struct stat st;
  if (!REAL(fstat) || !REAL(mmap) || r_fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_size < (off_t)sizeof(LexpackManifestHeader)) {
    serve_debug("no usable read manifest on descriptor %s; reads go to the filesystem", value);
    return;
  }
  void* addr = r_mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (addr == MAP_FAILED) return;
  g_base = (const char*)addr;
  g_hdr = (const LexpackManifestHeader*)addr;
  if (!manifest_ok((uint64_t)st.st_size)) {
    serve_debug("read manifest on descriptor %s is malformed; reads go to the filesystem", value);
    munmap(addr, (size_t)st.st_size);
    g_base = NULL;
    g_hdr = NULL;
    return;
  }
  for (uint32_t i = 0; i < LEXPACK_READ_MANIFEST_MAX_PACKS; ++i) g_pack[i].fd = -1;
  for (uint32_t i = 0; i < g_hdr->entry_count && !g_missing_dirs; ++i) {
    const LexpackManifestEntry* e = &g_entries[i];
    g_missing_dirs = e->kind == LEXPACK_ENTRY_MISSING && e->path_length > 0 &&
                     g_base[e->path_offset + e->path_length - 1] == '/';
  }
  char cwd[PATH_MAX];
  g_relative_ok = getcwd(cwd, sizeof cwd) && strlen(cwd) == g_hdr->cwd_length &&
                  memcmp(cwd, g_base + g_hdr->cwd_offset, g_hdr->cwd_length) == 0;
  g_pid = (pid_t)syscall(SYS_getpid);
  pthread_atfork(NULL, NULL, after_fork_child);
  g_on = 1;
  serve_debug("serving reads: %u paths, %u packs", g_hdr->entry_count, g_hdr->pack_count);
}

__attribute__((constructor)) static void serve_reads_init(void) {
  int saved = errno;
  const char* dbg = getenv("LEXPACK_PLUGIN_DEBUG");
  g_debug = dbg && *dbg && strcmp(dbg, "0") != 0;
  // Resolve every call before anything runs: no dlsym in the calls themselves.
#define RESOLVE(ret, name, ...) (void)REAL(name);
  SERVE_REAL_CALLS(RESOLVE)
#undef RESOLVE
  const char* value = getenv(LEXPACK_READ_MANIFEST_ENV);
  if (value && *value) load_manifest(value);
  errno = saved;
}
