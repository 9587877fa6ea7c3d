// Served reads, the calls that name a path: opens of manifest files get a
// served descriptor, stats and access checks are answered from the manifest,
// failed include probes get ENOENT, realpath and readlink the canonical name.
#undef _FORTIFY_SOURCE
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

// stat-like answers for a path: 1 answered (result in *rc), 0 fall through.
static int serve_path_stat(const char* path, struct stat* st, int nofollow, int* rc) {
  const LexpackManifestEntry* e = lookup(path);
  if (!e) {
    unserve_fd_path(path);
    return 0;
  }
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
  const PackState* p = &g_pack[e->pack];
  if (!may_mutate() || !pack_ready(e->pack) || e->blob_offset > p->length ||
      e->size > p->length - e->blob_offset) {
    errno = saved;
    return 0;
  }
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

/* ---- opens ---- */

EXPORT int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  int mode = get_mode(flags, ap);
  va_end(ap);
  int fd;
  if (serve_open(path, flags, &fd)) return fd;
  if (!REAL(open)) NO_REAL(-1);
  return fresh_fd(r_open(path, flags, mode));
}

EXPORT int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  int mode = get_mode(flags, ap);
  va_end(ap);
  int fd;
  if (serve_open(path, flags, &fd)) return fd;
  if (!REAL(open64)) NO_REAL(-1);
  return fresh_fd(r_open64(path, flags, mode));
}

EXPORT int openat(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  int mode = get_mode(flags, ap);
  va_end(ap);
  int fd;
  if (names_cwd(dirfd, path) && serve_open(path, flags, &fd)) return fd;
  if (!REAL(openat)) NO_REAL(-1);
  return fresh_fd(r_openat(dirfd, path, flags, mode));
}

EXPORT int openat64(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  int mode = get_mode(flags, ap);
  va_end(ap);
  int fd;
  if (names_cwd(dirfd, path) && serve_open(path, flags, &fd)) return fd;
  if (!REAL(openat64)) NO_REAL(-1);
  return fresh_fd(r_openat64(dirfd, path, flags, mode));
}

EXPORT int __open_2(const char* path, int flags) {
  int fd;
  if (serve_open(path, flags, &fd)) return fd;
  if (!REAL(__open_2)) NO_REAL(-1);
  return fresh_fd(r___open_2(path, flags));
}

EXPORT int __open64_2(const char* path, int flags) {
  int fd;
  if (serve_open(path, flags, &fd)) return fd;
  if (!REAL(__open64_2)) NO_REAL(-1);
  return fresh_fd(r___open64_2(path, flags));
}

EXPORT int __openat_2(int dirfd, const char* path, int flags) {
  int fd;
  if (names_cwd(dirfd, path) && serve_open(path, flags, &fd)) return fd;
  if (!REAL(__openat_2)) NO_REAL(-1);
  return fresh_fd(r___openat_2(dirfd, path, flags));
}

EXPORT int __openat64_2(int dirfd, const char* path, int flags) {
  int fd;
  if (names_cwd(dirfd, path) && serve_open(path, flags, &fd)) return fd;
  if (!REAL(__openat64_2)) NO_REAL(-1);
  return fresh_fd(r___openat64_2(dirfd, path, flags));
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
    if (!e) unserve_fd_path(path);
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
  if (!e) {
    unserve_fd_path(path);
    return 0;
  }
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
  if (!e) unserve_fd_path(path);
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
  if (!e) unserve_fd_path(path);
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
