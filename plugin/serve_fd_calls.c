// Served reads, the calls on descriptors: reads, seeks and maps of served
// descriptors come from the pack mapping; closes, copies and stdio keep the
// table of served descriptors right.
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

/* ---- reads on served descriptors ---- */

static size_t copy_out(const LexpackManifestEntry* e, uint64_t pos, void* buf, size_t n) {
  if (pos >= e->size) return 0;
  if (n > e->size - pos) n = (size_t)(e->size - pos);
  memcpy(buf, entry_bytes(e) + pos, n);
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

static ssize_t serve_preadv(const LexpackManifestEntry* e, const struct iovec* iov, int count,
                            int64_t off) {
  if (off < 0) {
    errno = EINVAL;
    return -1;
  }
  return serve_readv(e, iov, count, (uint64_t)off);
}

EXPORT ssize_t preadv(int fd, const struct iovec* iov, int count, off_t off) {
  const LexpackManifestEntry* e = served(fd);
  if (e) return serve_preadv(e, iov, count, off);
  if (!REAL(preadv)) NO_REAL(-1);
  return r_preadv(fd, iov, count, off);
}

EXPORT ssize_t preadv64(int fd, const struct iovec* iov, int count, off64_t off) {
  const LexpackManifestEntry* e = served(fd);
  if (e) return serve_preadv(e, iov, count, off);
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
  if (served(fd) && !may_mutate()) {
    // A vfork child shares our tables: hand it a real open of the file.
    int copy = real_copy(fd, 0);
    if (copy < 0) errno = EMFILE;
    return copy;
  }
  if (served(fd) && !materialize(fd)) {
    errno = EMFILE;
    return -1;
  }
  if (!REAL(dup)) NO_REAL(-1);
  return fresh_fd(r_dup(fd));
}

static int dup_to(int oldfd, int newfd, int flags, int three) {
  if (served(oldfd) && !may_mutate() && oldfd != newfd && REAL(dup3) && REAL(close)) {
    // A vfork child (e.g. setting up a child's stdin): a real open of the
    // file goes to `newfd`; the tables stay as they are.
    int copy = real_copy(oldfd, 0);
    if (copy < 0) {
      errno = EMFILE;
      return -1;
    }
    int rc = r_dup3(copy, newfd, three ? flags : 0);
    int saved = errno;
    r_close(copy);
    errno = saved;
    return rc;
  }
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
  int dups = cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC;
  if (dups && served(fd) && !may_mutate() && REAL(fcntl) && REAL(close)) {
    int copy = real_copy(fd, 0);
    if (copy < 0) {
      errno = EMFILE;
      return -1;
    }
    int rc = r_fcntl(copy, cmd, arg);
    int saved = errno;
    r_close(copy);
    errno = saved;
    return rc;
  }
  if (dups && served(fd) && !materialize(fd)) {
    errno = EMFILE;
    return -1;
  }
  int rc;
  if (is64) {
    if (!REAL(fcntl64)) NO_REAL(-1);
    rc = r_fcntl64(fd, cmd, arg);
  } else {
    if (!REAL(fcntl)) NO_REAL(-1);
    rc = r_fcntl(fd, cmd, arg);
  }
  return dups ? fresh_fd(rc) : rc;
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

/* ---- calls that move bytes inside the kernel ---- */

// The kernel would read the pack through a served descriptor: make it a real
// open of the file first, or fail rather than copy the wrong bytes.
static int unserved_for_kernel(int fd) {
  if (!served(fd) || materialize(fd)) return 1;
  errno = EBADF;
  return 0;
}

EXPORT ssize_t sendfile(int out_fd, int in_fd, off_t* offset, size_t count) {
  if (!unserved_for_kernel(in_fd)) return -1;
  if (!REAL(sendfile)) NO_REAL(-1);
  return r_sendfile(out_fd, in_fd, offset, count);
}

EXPORT ssize_t sendfile64(int out_fd, int in_fd, off64_t* offset, size_t count) {
  if (!unserved_for_kernel(in_fd)) return -1;
  if (!REAL(sendfile64)) NO_REAL(-1);
  return r_sendfile64(out_fd, in_fd, offset, count);
}

EXPORT ssize_t copy_file_range(int in_fd, off64_t* in_off, int out_fd, off64_t* out_off, size_t len,
                               unsigned flags) {
  if (!unserved_for_kernel(in_fd) || !unserved_for_kernel(out_fd)) return -1;
  if (!REAL(copy_file_range)) NO_REAL(-1);
  return r_copy_file_range(in_fd, in_off, out_fd, out_off, len, flags);
}

EXPORT ssize_t splice(int in_fd, off64_t* in_off, int out_fd, off64_t* out_off, size_t len,
                      unsigned flags) {
  if (!unserved_for_kernel(in_fd) || !unserved_for_kernel(out_fd)) return -1;
  if (!REAL(splice)) NO_REAL(-1);
  return r_splice(in_fd, in_off, out_fd, out_off, len, flags);
}

EXPORT ssize_t preadv2(int fd, const struct iovec* iov, int count, off_t off, int flags) {
  if (!unserved_for_kernel(fd)) return -1;
  if (!REAL(preadv2)) NO_REAL(-1);
  return r_preadv2(fd, iov, count, off, flags);
}

EXPORT ssize_t preadv64v2(int fd, const struct iovec* iov, int count, off64_t off, int flags) {
  if (!unserved_for_kernel(fd)) return -1;
  if (!REAL(preadv64v2)) NO_REAL(-1);
  return r_preadv64v2(fd, iov, count, off, flags);
}
