// Inside a compiler the launcher runs with served reads: answers the opens,
// stats and reads of the files the read manifest names from one mapping per
// pack, and the failed include probes with ENOENT. Anything else, or anything
// uncertain, is the real call, so the compiler then reads the filesystem.
#undef _FORTIFY_SOURCE
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ninja_integration/read_manifest_format.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_FDS 4096

enum { PACK_UNTRIED = 0, PACK_READY = 1, PACK_BUSY = 2, PACK_FAILED = 3 };

typedef struct {
  int state;
  int fd;  // -1: closed by the program, reopened on next use
  const char* map;
  uint64_t length;
} PackState;

// The manifest, mapped once at load; read-only afterwards.
static int g_on;
static int g_debug;
static int g_relative_ok;  // the working directory is the one relative paths name
static pid_t g_pid;        // this process (0 in a vfork child that shares our memory)
static const char* g_base;
static const LexpackManifestHeader* g_hdr;
static const LexpackManifestPack* g_packs;
static const LexpackManifestEntry* g_entries;
static const uint32_t* g_slots;
static PackState g_pack[LEXPACK_READ_MANIFEST_MAX_PACKS];
// Served descriptors: entry index + 1 (0: not served) and the read position.
static uint32_t g_fd_entry[MAX_FDS];
static uint64_t g_fd_pos[MAX_FDS];

#define DECLARE_REAL(ret, name, ...) static ret (*r_##name)(__VA_ARGS__)
DECLARE_REAL(int, open, const char*, int, ...);
DECLARE_REAL(int, open64, const char*, int, ...);
DECLARE_REAL(int, openat, int, const char*, int, ...);
DECLARE_REAL(int, openat64, int, const char*, int, ...);
DECLARE_REAL(int, __open_2, const char*, int);
DECLARE_REAL(int, __open64_2, const char*, int);
DECLARE_REAL(int, __openat_2, int, const char*, int);
DECLARE_REAL(int, __openat64_2, int, const char*, int);
DECLARE_REAL(ssize_t, read, int, void*, size_t);
DECLARE_REAL(ssize_t, pread, int, void*, size_t, off_t);
DECLARE_REAL(ssize_t, pread64, int, void*, size_t, off64_t);
DECLARE_REAL(ssize_t, readv, int, const struct iovec*, int);
DECLARE_REAL(ssize_t, preadv, int, const struct iovec*, int, off_t);
DECLARE_REAL(ssize_t, preadv64, int, const struct iovec*, int, off64_t);
DECLARE_REAL(off_t, lseek, int, off_t, int);
DECLARE_REAL(off64_t, lseek64, int, off64_t, int);
DECLARE_REAL(void*, mmap, void*, size_t, int, int, int, off_t);
DECLARE_REAL(int, fstat, int, struct stat*);
DECLARE_REAL(int, stat, const char*, struct stat*);
DECLARE_REAL(int, lstat, const char*, struct stat*);
DECLARE_REAL(int, fstatat, int, const char*, struct stat*, int);
DECLARE_REAL(int, statx, int, const char*, int, unsigned, struct statx*);
DECLARE_REAL(int, access, const char*, int);
DECLARE_REAL(int, faccessat, int, const char*, int, int);
DECLARE_REAL(ssize_t, readlink, const char*, char*, size_t);
DECLARE_REAL(ssize_t, readlinkat, int, const char*, char*, size_t);
DECLARE_REAL(char*, realpath, const char*, char*);
DECLARE_REAL(int, close, int);
DECLARE_REAL(int, close_range, unsigned, unsigned, int);
DECLARE_REAL(void, closefrom, int);
DECLARE_REAL(int, dup, int);
DECLARE_REAL(int, dup2, int, int);
DECLARE_REAL(int, dup3, int, int, int);
DECLARE_REAL(int, fcntl, int, int, ...);
DECLARE_REAL(int, fcntl64, int, int, ...);
DECLARE_REAL(FILE*, fdopen, int, const char*);
DECLARE_REAL(int, chdir, const char*);
DECLARE_REAL(int, fchdir, int);

// The next definition of `name` (libc's), looked up once.
#define REAL(name) \
  (r_##name ? r_##name : (r_##name = (__typeof__(r_##name))dlsym(RTLD_NEXT, #name)))
#define NO_REAL(ret) \
  do {               \
    errno = ENOSYS;  \
    return ret;      \
  } while (0)

static void debug(const char* fmt, ...) {
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
static int may_mutate(void) {
  return (pid_t)syscall(SYS_getpid) == g_pid;
}

static void after_fork_child(void) {
  g_pid = (pid_t)syscall(SYS_getpid);
}

static const LexpackManifestEntry* lookup(const char* path) {
  if (!g_on || !path) return NULL;
  if (path[0] != '/' && !g_relative_ok) return NULL;
  size_t n = strlen(path);
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

static const LexpackManifestEntry* served(int fd) {
  if (fd < 0 || fd >= MAX_FDS) return NULL;
  uint32_t v = __atomic_load_n(&g_fd_entry[fd], __ATOMIC_ACQUIRE);
  return v ? &g_entries[v - 1] : NULL;
}

// Maps pack `i` (once) and keeps a descriptor of it to hand out copies of.
// False when the pack is not the file the launcher checked, or busy.
static int pack_ready(uint32_t i) {
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
    debug("pack %s unusable; its files are read from disk", g_base + mp->path_offset);
    __atomic_store_n(&p->state, PACK_FAILED, __ATOMIC_RELEASE);
    return 0;
  }
  __atomic_store_n(&p->fd, fd, __ATOMIC_RELEASE);
  __atomic_store_n(&p->state, PACK_READY, __ATOMIC_RELEASE);
  return 1;
}

static int is_pack_fd(int fd) {
  for (uint32_t i = 0; fd >= 0 && i < g_hdr->pack_count; ++i) {
    if (__atomic_load_n(&g_pack[i].fd, __ATOMIC_ACQUIRE) == fd) return 1;
  }
  return 0;
}

// The program closed or replaced descriptor `fd`: forget what we knew of it.
static void forget_fd(int fd) {
  if (fd >= 0 && fd < MAX_FDS) __atomic_store_n(&g_fd_entry[fd], 0, __ATOMIC_RELEASE);
  if (!g_on) return;
  for (uint32_t i = 0; i < g_hdr->pack_count; ++i) {
    if (__atomic_load_n(&g_pack[i].fd, __ATOMIC_ACQUIRE) == fd && fd >= 0)
      __atomic_store_n(&g_pack[i].fd, -1, __ATOMIC_RELEASE);
  }
}

// Serves an open of `path`: 1 with *result set when answered, 0 to fall
// through to the real open.
static int serve_open(const char* path, int flags, int* result) {
  if (!g_on || (flags & ~(O_CLOEXEC | O_NOCTTY | O_LARGEFILE)) != O_RDONLY) return 0;
  const LexpackManifestEntry* e = lookup(path);
  if (!e) return 0;
  if (e->kind == LEXPACK_ENTRY_MISSING) {
    errno = ENOENT;
    *result = -1;
    return 1;
  }
  int saved = errno;
  if (!may_mutate() || !pack_ready(e->pack)) return 0;
  const PackState* p = &g_pack[e->pack];
  if (e->blob_offset > p->length || e->size > p->length - e->blob_offset) return 0;
  int fd = REAL(fcntl) ? r_fcntl(__atomic_load_n(&p->fd, __ATOMIC_ACQUIRE),
                                 (flags & O_CLOEXEC) ? F_DUPFD_CLOEXEC : F_DUPFD, 0)
                       : -1;
  if (fd < 0 || fd >= MAX_FDS) {
    if (fd >= 0) r_close(fd);
    errno = saved;
    return 0;
  }
  g_fd_pos[fd] = 0;
  __atomic_store_n(&g_fd_entry[fd], (uint32_t)(e - g_entries) + 1, __ATOMIC_RELEASE);
  *result = fd;
  return 1;
}

// Replaces served descriptor `fd` by a real open of the file at the same
// position, before a call that would need the kernel to know the file.
static int materialize(int fd) {
  const LexpackManifestEntry* e = served(fd);
  if (!e) return 1;
  if (!may_mutate() || !REAL(open) || !REAL(fcntl) || !REAL(dup3) || !REAL(close) || !REAL(lseek)) {
    return 0;
  }
  int saved = errno;
  int cloexec = r_fcntl(fd, F_GETFD) & FD_CLOEXEC;
  int real = r_open(g_base + e->canonical_offset, O_RDONLY | O_CLOEXEC);
  if (real < 0) return 0;
  int ok = r_lseek(real, (off_t)g_fd_pos[fd], SEEK_SET) >= 0 &&
           r_dup3(real, fd, cloexec ? O_CLOEXEC : 0) == fd;
  r_close(real);
  if (ok) __atomic_store_n(&g_fd_entry[fd], 0, __ATOMIC_RELEASE);
  errno = saved;
  return ok;
}

static const char* blob(const LexpackManifestEntry* e) {
  return g_pack[e->pack].map + e->blob_offset;
}

static void fill_stat(const LexpackManifestEntry* e, struct stat* st) {
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

static void fill_statx(const LexpackManifestEntry* e, struct statx* sx) {
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

// stat-like answers for a path: 1 answered (result in *rc), 0 fall through.
static int serve_path_stat(const char* path, struct stat* st, int nofollow, int* rc) {
  const LexpackManifestEntry* e = lookup(path);
  if (!e) return 0;
  if (e->kind == LEXPACK_ENTRY_MISSING) {
    if (nofollow) return 0;  // a dangling symlink would still lstat
    errno = ENOENT;
    *rc = -1;
    return 1;
  }
  if (nofollow && (e->flags & LEXPACK_ENTRY_LAST_IS_SYMLINK)) return 0;
  fill_stat(e, st);
  *rc = 0;
  return 1;
}

static int empty_path(const char* path) {
  return path && path[0] == '\0';
}

static int names_cwd(int dirfd, const char* path) {
  return path && (path[0] == '/' || dirfd == AT_FDCWD);
}

static int get_mode(int flags, va_list ap) {
  return (flags & (O_CREAT | __O_TMPFILE)) ? va_arg(ap, int) : 0;
}

/* ---- opens ---- */

EXPORT int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  int mode = get_mode(flags, ap);
  va_end(ap);
  int fd;
  if (serve_open(path, flags, &fd)) return fd;
  if (!REAL(open)) NO_REAL(-1);
  return r_open(path, flags, mode);
}

EXPORT int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  int mode = get_mode(flags, ap);
  va_end(ap);
  int fd;
  if (serve_open(path, flags, &fd)) return fd;
  if (!REAL(open64)) NO_REAL(-1);
  return r_open64(path, flags, mode);
}

EXPORT int openat(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  int mode = get_mode(flags, ap);
  va_end(ap);
  int fd;
  if (names_cwd(dirfd, path) && serve_open(path, flags, &fd)) return fd;
  if (!REAL(openat)) NO_REAL(-1);
  return r_openat(dirfd, path, flags, mode);
}

EXPORT int openat64(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  int mode = get_mode(flags, ap);
  va_end(ap);
  int fd;
  if (names_cwd(dirfd, path) && serve_open(path, flags, &fd)) return fd;
  if (!REAL(openat64)) NO_REAL(-1);
  return r_openat64(dirfd, path, flags, mode);
}

EXPORT int __open_2(const char* path, int flags) {
  int fd;
  if (serve_open(path, flags, &fd)) return fd;
  if (!REAL(__open_2)) NO_REAL(-1);
  return r___open_2(path, flags);
}

EXPORT int __open64_2(const char* path, int flags) {
  int fd;
  if (serve_open(path, flags, &fd)) return fd;
  if (!REAL(__open64_2)) NO_REAL(-1);
  return r___open64_2(path, flags);
}

EXPORT int __openat_2(int dirfd, const char* path, int flags) {
  int fd;
  if (names_cwd(dirfd, path) && serve_open(path, flags, &fd)) return fd;
  if (!REAL(__openat_2)) NO_REAL(-1);
  return r___openat_2(dirfd, path, flags);
}

EXPORT int __openat64_2(int dirfd, const char* path, int flags) {
  int fd;
  if (names_cwd(dirfd, path) && serve_open(path, flags, &fd)) return fd;
  if (!REAL(__openat64_2)) NO_REAL(-1);
  return r___openat64_2(dirfd, path, flags);
}

/* ---- reads on served descriptors ---- */

static size_t copy_out(const LexpackManifestEntry* e, uint64_t pos, void* buf, size_t n) {
  if (pos >= e->size) return 0;
  if (n > e->size - pos) n = (size_t)(e->size - pos);
  memcpy(buf, blob(e) + pos, n);
  return n;
}

EXPORT ssize_t read(int fd, void* buf, size_t n) {
  const LexpackManifestEntry* e = served(fd);
  if (e) {
    size_t got = copy_out(e, g_fd_pos[fd], buf, n);
    g_fd_pos[fd] += got;
    return (ssize_t)got;
  }
  if (!REAL(read)) NO_REAL(-1);
  return r_read(fd, buf, n);
}

EXPORT ssize_t __read_chk(int fd, void* buf, size_t n, size_t buflen) {
  if (n > buflen) abort();
  return read(fd, buf, n);
}

static ssize_t serve_pread(const LexpackManifestEntry* e, void* buf, size_t n, int64_t off) {
  if (off < 0) {
    errno = EINVAL;
    return -1;
  }
  return (ssize_t)copy_out(e, (uint64_t)off, buf, n);
}

EXPORT ssize_t pread(int fd, void* buf, size_t n, off_t off) {
  const LexpackManifestEntry* e = served(fd);
  if (e) return serve_pread(e, buf, n, off);
  if (!REAL(pread)) NO_REAL(-1);
  return r_pread(fd, buf, n, off);
}

EXPORT ssize_t pread64(int fd, void* buf, size_t n, off64_t off) {
  const LexpackManifestEntry* e = served(fd);
  if (e) return serve_pread(e, buf, n, off);
  if (!REAL(pread64)) NO_REAL(-1);
  return r_pread64(fd, buf, n, off);
}

EXPORT ssize_t __pread_chk(int fd, void* buf, size_t n, off_t off, size_t buflen) {
  if (n > buflen) abort();
  return pread(fd, buf, n, off);
}

EXPORT ssize_t __pread64_chk(int fd, void* buf, size_t n, off64_t off, size_t buflen) {
  if (n > buflen) abort();
  return pread64(fd, buf, n, off);
}

static ssize_t serve_readv(const LexpackManifestEntry* e, const struct iovec* iov, int count,
                           uint64_t pos) {
  if (count < 0 || count > IOV_MAX) {
    errno = EINVAL;
    return -1;
  }
  size_t total = 0;
  for (int i = 0; i < count; ++i) {
    size_t got = copy_out(e, pos + total, iov[i].iov_base, iov[i].iov_len);
    total += got;
    if (got < iov[i].iov_len) break;
  }
  return (ssize_t)total;
}

EXPORT ssize_t readv(int fd, const struct iovec* iov, int count) {
  const LexpackManifestEntry* e = served(fd);
  if (e) {
    ssize_t n = serve_readv(e, iov, count, g_fd_pos[fd]);
    if (n > 0) g_fd_pos[fd] += (uint64_t)n;
    return n;
  }
  if (!REAL(readv)) NO_REAL(-1);
  return r_readv(fd, iov, count);
}

EXPORT ssize_t preadv(int fd, const struct iovec* iov, int count, off_t off) {
  const LexpackManifestEntry* e = served(fd);
  if (e) {
    if (off < 0) {
      errno = EINVAL;
      return -1;
    }
    return serve_readv(e, iov, count, (uint64_t)off);
  }
  if (!REAL(preadv)) NO_REAL(-1);
  return r_preadv(fd, iov, count, off);
}

EXPORT ssize_t preadv64(int fd, const struct iovec* iov, int count, off64_t off) {
  const LexpackManifestEntry* e = served(fd);
  if (e) {
    if (off < 0) {
      errno = EINVAL;
      return -1;
    }
    return serve_readv(e, iov, count, (uint64_t)off);
  }
  if (!REAL(preadv64)) NO_REAL(-1);
  return r_preadv64(fd, iov, count, off);
}

static int64_t serve_lseek(int fd, const LexpackManifestEntry* e, int64_t off, int whence) {
  int64_t size = (int64_t)e->size, pos = (int64_t)g_fd_pos[fd], next;
  switch (whence) {
    case SEEK_SET:
      next = off;
      break;
    case SEEK_CUR:
      next = pos + off;
      break;
    case SEEK_END:
      next = size + off;
      break;
    case SEEK_DATA:
    case SEEK_HOLE:
      if (off < 0 || off >= size) {
        errno = off < 0 ? EINVAL : ENXIO;
        return -1;
      }
      next = whence == SEEK_DATA ? off : size;
      break;
    default:
      errno = EINVAL;
      return -1;
  }
  if (next < 0) {
    errno = EINVAL;
    return -1;
  }
  g_fd_pos[fd] = (uint64_t)next;
  return next;
}

EXPORT off_t lseek(int fd, off_t off, int whence) {
  const LexpackManifestEntry* e = served(fd);
  if (e) return (off_t)serve_lseek(fd, e, off, whence);
  if (!REAL(lseek)) NO_REAL(-1);
  return r_lseek(fd, off, whence);
}

EXPORT off64_t lseek64(int fd, off64_t off, int whence) {
  const LexpackManifestEntry* e = served(fd);
  if (e) return (off64_t)serve_lseek(fd, e, off, whence);
  if (!REAL(lseek64)) NO_REAL(-1);
  return r_lseek64(fd, off, whence);
}

// A mapping of a served descriptor is a mapping of the pack at the blob: the
// blob is page-aligned and zero-padded like the tail of a file's last page.
EXPORT void* mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  const LexpackManifestEntry* e = served(fd);
  if (!REAL(mmap)) NO_REAL(MAP_FAILED);
  if (e && !(flags & MAP_ANONYMOUS) && off >= 0) {
    off = (off_t)(e->blob_offset + (uint64_t)off);
  }
  return r_mmap(addr, len, prot, flags, fd, off);
}

EXPORT void* mmap64(void* addr, size_t len, int prot, int flags, int fd, off64_t off) {
  return mmap(addr, len, prot, flags, fd, (off_t)off);
}

/* ---- stat family ---- */

EXPORT int fstat(int fd, struct stat* st) {
  const LexpackManifestEntry* e = served(fd);
  if (e) {
    fill_stat(e, st);
    return 0;
  }
  if (!REAL(fstat)) NO_REAL(-1);
  return r_fstat(fd, st);
}

EXPORT int fstat64(int fd, struct stat64* st) {
  return fstat(fd, (struct stat*)st);
}

EXPORT int stat(const char* path, struct stat* st) {
  int rc;
  if (serve_path_stat(path, st, 0, &rc)) return rc;
  if (!REAL(stat)) NO_REAL(-1);
  return r_stat(path, st);
}

EXPORT int stat64(const char* path, struct stat64* st) {
  return stat(path, (struct stat*)st);
}

EXPORT int lstat(const char* path, struct stat* st) {
  int rc;
  if (serve_path_stat(path, st, 1, &rc)) return rc;
  if (!REAL(lstat)) NO_REAL(-1);
  return r_lstat(path, st);
}

EXPORT int lstat64(const char* path, struct stat64* st) {
  return lstat(path, (struct stat*)st);
}

EXPORT int fstatat(int dirfd, const char* path, struct stat* st, int flags) {
  if (empty_path(path) && (flags & AT_EMPTY_PATH) && served(dirfd)) {
    return fstat(dirfd, st);
  }
  int rc;
  if (names_cwd(dirfd, path) && !empty_path(path) &&
      serve_path_stat(path, st, (flags & AT_SYMLINK_NOFOLLOW) != 0, &rc)) {
    return rc;
  }
  if (!REAL(fstatat)) NO_REAL(-1);
  return r_fstatat(dirfd, path, st, flags);
}

EXPORT int fstatat64(int dirfd, const char* path, struct stat64* st, int flags) {
  return fstatat(dirfd, path, (struct stat*)st, flags);
}

EXPORT int statx(int dirfd, const char* path, int flags, unsigned mask, struct statx* sx) {
  const LexpackManifestEntry* e = NULL;
  if (empty_path(path) && (flags & AT_EMPTY_PATH)) {
    e = served(dirfd);
  } else if (names_cwd(dirfd, path)) {
    e = lookup(path);
    if (e && e->kind == LEXPACK_ENTRY_MISSING && !(flags & AT_SYMLINK_NOFOLLOW)) {
      errno = ENOENT;
      return -1;
    }
    if (e && (e->kind != LEXPACK_ENTRY_FILE ||
              ((flags & AT_SYMLINK_NOFOLLOW) && (e->flags & LEXPACK_ENTRY_LAST_IS_SYMLINK)))) {
      e = NULL;
    }
  }
  if (e) {
    fill_statx(e, sx);
    return 0;
  }
  if (!REAL(statx)) NO_REAL(-1);
  return r_statx(dirfd, path, flags, mask, sx);
}

// The stat entry points of binaries built before glibc 2.33. Version 0 and 1
// are the kernel layout of struct stat on x86-64.
#if defined(__x86_64__)
EXPORT int __xstat(int ver, const char* path, struct stat* st) {
  if (ver != 0 && ver != 1) {
    errno = EINVAL;
    return -1;
  }
  return stat(path, st);
}
EXPORT int __xstat64(int ver, const char* path, struct stat64* st) {
  return __xstat(ver, path, (struct stat*)st);
}
EXPORT int __lxstat(int ver, const char* path, struct stat* st) {
  if (ver != 0 && ver != 1) {
    errno = EINVAL;
    return -1;
  }
  return lstat(path, st);
}
EXPORT int __lxstat64(int ver, const char* path, struct stat64* st) {
  return __lxstat(ver, path, (struct stat*)st);
}
EXPORT int __fxstat(int ver, int fd, struct stat* st) {
  if (ver != 0 && ver != 1) {
    errno = EINVAL;
    return -1;
  }
  return fstat(fd, st);
}
EXPORT int __fxstat64(int ver, int fd, struct stat64* st) {
  return __fxstat(ver, fd, (struct stat*)st);
}
EXPORT int __fxstatat(int ver, int dirfd, const char* path, struct stat* st, int flags) {
  if (ver != 0 && ver != 1) {
    errno = EINVAL;
    return -1;
  }
  return fstatat(dirfd, path, st, flags);
}
EXPORT int __fxstatat64(int ver, int dirfd, const char* path, struct stat64* st, int flags) {
  return __fxstatat(ver, dirfd, path, (struct stat*)st, flags);
}
#endif

/* ---- access, links, names ---- */

static int serve_access(const char* path, int mode, int nofollow, int* rc) {
  const LexpackManifestEntry* e = lookup(path);
  if (!e) return 0;
  if (e->kind == LEXPACK_ENTRY_MISSING && !nofollow) {
    errno = ENOENT;
    *rc = -1;
    return 1;
  }
  if (e->kind == LEXPACK_ENTRY_FILE && mode == F_OK) {
    *rc = 0;
    return 1;
  }
  return 0;
}

EXPORT int access(const char* path, int mode) {
  int rc;
  if (serve_access(path, mode, 0, &rc)) return rc;
  if (!REAL(access)) NO_REAL(-1);
  return r_access(path, mode);
}

EXPORT int faccessat(int dirfd, const char* path, int mode, int flags) {
  int rc;
  if (names_cwd(dirfd, path) && serve_access(path, mode, (flags & AT_SYMLINK_NOFOLLOW) != 0, &rc)) {
    return rc;
  }
  if (!REAL(faccessat)) NO_REAL(-1);
  return r_faccessat(dirfd, path, mode, flags);
}

// readlink of /proc/self/fd/N for a served N names the file; a manifest file
// that is no symlink is EINVAL.
static int serve_readlink(const char* path, char* buf, size_t size, ssize_t* rc) {
  if (!g_on || !path) return 0;
  static const char kProcFd[] = "/proc/self/fd/";
  if (strncmp(path, kProcFd, sizeof kProcFd - 1) == 0) {
    const char* p = path + sizeof kProcFd - 1;
    int fd = 0;
    if (*p == '\0') return 0;
    for (; *p; ++p) {
      if (*p < '0' || *p > '9' || fd > MAX_FDS) return 0;
      fd = fd * 10 + (*p - '0');
    }
    const LexpackManifestEntry* e = served(fd);
    if (!e) return 0;
    size_t n = e->canonical_length < size ? e->canonical_length : size;
    memcpy(buf, g_base + e->canonical_offset, n);
    *rc = (ssize_t)n;
    return 1;
  }
  const LexpackManifestEntry* e = lookup(path);
  if (!e || e->kind != LEXPACK_ENTRY_FILE || (e->flags & LEXPACK_ENTRY_LAST_IS_SYMLINK)) return 0;
  errno = EINVAL;
  *rc = -1;
  return 1;
}

EXPORT ssize_t readlink(const char* path, char* buf, size_t size) {
  ssize_t rc;
  if (serve_readlink(path, buf, size, &rc)) return rc;
  if (!REAL(readlink)) NO_REAL(-1);
  return r_readlink(path, buf, size);
}

EXPORT ssize_t readlinkat(int dirfd, const char* path, char* buf, size_t size) {
  ssize_t rc;
  if (names_cwd(dirfd, path) && serve_readlink(path, buf, size, &rc)) return rc;
  if (!REAL(readlinkat)) NO_REAL(-1);
  return r_readlinkat(dirfd, path, buf, size);
}

EXPORT char* realpath(const char* path, char* resolved) {
  const LexpackManifestEntry* e = lookup(path);
  if (e && e->kind == LEXPACK_ENTRY_MISSING) {
    errno = ENOENT;
    return NULL;
  }
  if (e && e->canonical_length < PATH_MAX) {
    const char* canonical = g_base + e->canonical_offset;
    if (resolved) return memcpy(resolved, canonical, (size_t)e->canonical_length + 1);
    char* out = malloc((size_t)e->canonical_length + 1);
    if (out) memcpy(out, canonical, (size_t)e->canonical_length + 1);
    return out;
  }
  if (!REAL(realpath)) NO_REAL(NULL);
  return r_realpath(path, resolved);
}

EXPORT char* canonicalize_file_name(const char* path) {
  return realpath(path, NULL);
}

EXPORT int chdir(const char* path) {
  g_relative_ok = 0;  // relative manifest paths no longer name the same files
  if (!REAL(chdir)) NO_REAL(-1);
  return r_chdir(path);
}

EXPORT int fchdir(int fd) {
  g_relative_ok = 0;
  if (!REAL(fchdir)) NO_REAL(-1);
  return r_fchdir(fd);
}

/* ---- descriptor bookkeeping ---- */

EXPORT int close(int fd) {
  if (g_on && (served(fd) || is_pack_fd(fd)) && may_mutate()) forget_fd(fd);
  if (!REAL(close)) NO_REAL(-1);
  return r_close(fd);
}

EXPORT int close_range(unsigned first, unsigned last, int flags) {
  if (g_on && !(flags & CLOSE_RANGE_CLOEXEC) && may_mutate()) {
    for (unsigned fd = first; fd <= last && fd < MAX_FDS; ++fd) forget_fd((int)fd);
    for (uint32_t i = 0; i < g_hdr->pack_count; ++i) {
      int fd = __atomic_load_n(&g_pack[i].fd, __ATOMIC_ACQUIRE);
      if (fd >= 0 && (unsigned)fd >= first && (unsigned)fd <= last) forget_fd(fd);
    }
  }
  if (!REAL(close_range)) NO_REAL(-1);
  return r_close_range(first, last, flags);
}

EXPORT void closefrom(int lowfd) {
  if (g_on && lowfd >= 0 && may_mutate()) {
    for (int fd = lowfd; fd < MAX_FDS; ++fd) forget_fd(fd);
    for (uint32_t i = 0; i < g_hdr->pack_count; ++i) {
      int fd = __atomic_load_n(&g_pack[i].fd, __ATOMIC_ACQUIRE);
      if (fd >= lowfd) forget_fd(fd);
    }
  }
  if (REAL(closefrom)) r_closefrom(lowfd);
}

// A copy of a served descriptor would share the position with it in the
// kernel; the original becomes a real open of the file first.
EXPORT int dup(int fd) {
  if (served(fd) && !materialize(fd)) {
    errno = EMFILE;
    return -1;
  }
  if (!REAL(dup)) NO_REAL(-1);
  return r_dup(fd);
}

static int dup_to(int oldfd, int newfd, int flags, int three) {
  if (served(oldfd) && !materialize(oldfd)) {
    errno = EMFILE;
    return -1;
  }
  int rc;
  if (three) {
    if (!REAL(dup3)) NO_REAL(-1);
    rc = r_dup3(oldfd, newfd, flags);
  } else {
    if (!REAL(dup2)) NO_REAL(-1);
    rc = r_dup2(oldfd, newfd);
  }
  if (rc >= 0 && oldfd != newfd && g_on && (served(newfd) || is_pack_fd(newfd)) && may_mutate()) {
    forget_fd(newfd);
  }
  return rc;
}

EXPORT int dup2(int oldfd, int newfd) {
  return dup_to(oldfd, newfd, 0, 0);
}

EXPORT int dup3(int oldfd, int newfd, int flags) {
  return dup_to(oldfd, newfd, flags, 1);
}

static int fcntl_common(int fd, int cmd, void* arg, int is64) {
  if ((cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) && served(fd) && !materialize(fd)) {
    errno = EMFILE;
    return -1;
  }
  if (is64) {
    if (!REAL(fcntl64)) NO_REAL(-1);
    return r_fcntl64(fd, cmd, arg);
  }
  if (!REAL(fcntl)) NO_REAL(-1);
  return r_fcntl(fd, cmd, arg);
}

EXPORT int fcntl(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return fcntl_common(fd, cmd, arg, 0);
}

EXPORT int fcntl64(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return fcntl_common(fd, cmd, arg, 1);
}

// stdio reads through the kernel descriptor: give it the real file.
EXPORT FILE* fdopen(int fd, const char* mode) {
  if (served(fd) && !materialize(fd)) {
    errno = EMFILE;
    return NULL;
  }
  if (!REAL(fdopen)) NO_REAL(NULL);
  return r_fdopen(fd, mode);
}

/* ---- loading the manifest ---- */

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
    debug("no usable read manifest on descriptor %s; reads go to the filesystem", value);
    return;
  }
  void* addr = r_mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (addr == MAP_FAILED) return;
  g_base = (const char*)addr;
  g_hdr = (const LexpackManifestHeader*)addr;
  if (!manifest_ok((uint64_t)st.st_size)) {
    debug("read manifest on descriptor %s is malformed; reads go to the filesystem", value);
    munmap(addr, (size_t)st.st_size);
    g_base = NULL;
    g_hdr = NULL;
    return;
  }
  for (uint32_t i = 0; i < LEXPACK_READ_MANIFEST_MAX_PACKS; ++i) g_pack[i].fd = -1;
  char cwd[PATH_MAX];
  g_relative_ok = getcwd(cwd, sizeof cwd) && strlen(cwd) == g_hdr->cwd_length &&
                  memcmp(cwd, g_base + g_hdr->cwd_offset, g_hdr->cwd_length) == 0;
  g_pid = (pid_t)syscall(SYS_getpid);
  pthread_atfork(NULL, NULL, after_fork_child);
  g_on = 1;
  debug("serving reads: %u paths, %u packs", g_hdr->entry_count, g_hdr->pack_count);
}

__attribute__((constructor)) static void serve_reads_init(void) {
  int saved = errno;
  const char* dbg = getenv("LEXPACK_PLUGIN_DEBUG");
  g_debug = dbg && *dbg && strcmp(dbg, "0") != 0;
  // Resolve the calls the hot paths use before anything runs.
  (void)REAL(open), (void)REAL(openat), (void)REAL(read), (void)REAL(pread64), (void)REAL(close);
  (void)REAL(fstat), (void)REAL(stat), (void)REAL(lstat), (void)REAL(fcntl), (void)REAL(mmap);
  (void)REAL(lseek), (void)REAL(realpath), (void)REAL(readlink), (void)REAL(access);
  const char* value = getenv(LEXPACK_READ_MANIFEST_ENV);
  if (value && *value) load_manifest(value);
  errno = saved;
}
