// Shared state of served reads inside one process (plugin/serve_*.c): the
// mapped read manifest, one mapping per pack, the table of served descriptors,
// and libc's own definitions of the calls the plugin answers.
#ifndef LEXPACK_PLUGIN_SERVE_STATE_H
#define LEXPACK_PLUGIN_SERVE_STATE_H

#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "served_reads/read_manifest_format.h"

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
extern int g_on;
extern int g_relative_ok;   // the working directory is the one relative paths name
extern int g_missing_dirs;  // some missing entry is a directory ("dir/")
extern const char* g_base;
extern const LexpackManifestHeader* g_hdr;
extern const LexpackManifestEntry* g_entries;
extern PackState g_pack[LEXPACK_READ_MANIFEST_MAX_PACKS];
// Served descriptors: entry index + 1 (0: not served) and the read position.
extern uint32_t g_fd_entry[MAX_FDS];
extern uint64_t g_fd_pos[MAX_FDS];

// The calls the plugin defines, as libc defines them (resolved at load).
#define SERVE_REAL_CALLS(X)                                                   \
  X(int, open, const char*, int, ...)                                         \
  X(int, open64, const char*, int, ...)                                       \
  X(int, openat, int, const char*, int, ...)                                  \
  X(int, openat64, int, const char*, int, ...)                                \
  X(int, __open_2, const char*, int)                                          \
  X(int, __open64_2, const char*, int)                                        \
  X(int, __openat_2, int, const char*, int)                                   \
  X(int, __openat64_2, int, const char*, int)                                 \
  X(ssize_t, read, int, void*, size_t)                                        \
  X(ssize_t, pread, int, void*, size_t, off_t)                                \
  X(ssize_t, pread64, int, void*, size_t, off64_t)                            \
  X(ssize_t, readv, int, const struct iovec*, int)                            \
  X(ssize_t, preadv, int, const struct iovec*, int, off_t)                    \
  X(ssize_t, preadv64, int, const struct iovec*, int, off64_t)                \
  X(off_t, lseek, int, off_t, int)                                            \
  X(off64_t, lseek64, int, off64_t, int)                                      \
  X(void*, mmap, void*, size_t, int, int, int, off_t)                         \
  X(int, fstat, int, struct stat*)                                            \
  X(int, stat, const char*, struct stat*)                                     \
  X(int, lstat, const char*, struct stat*)                                    \
  X(int, fstatat, int, const char*, struct stat*, int)                        \
  X(int, statx, int, const char*, int, unsigned, struct statx*)               \
  X(int, access, const char*, int)                                            \
  X(int, faccessat, int, const char*, int, int)                               \
  X(ssize_t, readlink, const char*, char*, size_t)                            \
  X(ssize_t, readlinkat, int, const char*, char*, size_t)                     \
  X(char*, realpath, const char*, char*)                                      \
  X(int, close, int)                                                          \
  X(int, close_range, unsigned, unsigned, int)                                \
  X(void, closefrom, int)                                                     \
  X(int, dup, int)                                                            \
  X(int, dup2, int, int)                                                      \
  X(int, dup3, int, int, int)                                                 \
  X(int, fcntl, int, int, ...)                                                \
  X(int, fcntl64, int, int, ...)                                              \
  X(FILE*, fdopen, int, const char*)                                          \
  X(int, chdir, const char*)                                                  \
  X(ssize_t, sendfile, int, int, off_t*, size_t)                              \
  X(ssize_t, sendfile64, int, int, off64_t*, size_t)                          \
  X(ssize_t, copy_file_range, int, off64_t*, int, off64_t*, size_t, unsigned) \
  X(ssize_t, splice, int, off64_t*, int, off64_t*, size_t, unsigned)          \
  X(ssize_t, preadv2, int, const struct iovec*, int, off_t, int)              \
  X(ssize_t, preadv64v2, int, const struct iovec*, int, off64_t, int)         \
  X(int, fchdir, int)                                                         \
  /* end */

#define DECLARE_REAL(ret, name, ...) extern ret (*r_##name)(__VA_ARGS__);
SERVE_REAL_CALLS(DECLARE_REAL)
#undef DECLARE_REAL

// The next definition of `name` (libc's); looked up here only when a call
// comes before the plugin's constructor ran.
#define REAL(name) \
  (r_##name ? r_##name : (r_##name = (__typeof__(r_##name))dlsym(RTLD_NEXT, #name)))
#define NO_REAL(ret) \
  do {               \
    errno = ENOSYS;  \
    return ret;      \
  } while (0)

// A line on stderr when LEXPACK_PLUGIN_DEBUG is set.
void serve_debug(const char* fmt, ...);
// True in the process that loaded the manifest (or a fork of it), false in a
// vfork child, which shares our memory: there the tables stay untouched.
int may_mutate(void);
// The manifest entry of a path exactly as given, or the missing directory
// ("dir/") it lies under, or NULL.
const LexpackManifestEntry* lookup(const char* path);
// Maps pack `i` (once) and keeps a descriptor of it to hand out copies of.
int pack_ready(uint32_t i);
int is_pack_fd(int fd);
// The program closed or replaced descriptor `fd`: forget what we knew of it.
void forget_fd(int fd);
// Replaces served descriptor `fd` by a real open of its file at the same
// position. False when that failed (the descriptor stays served).
int materialize(int fd);
// A new real descriptor of served `fd`'s file at its position, made without
// touching the tables (a vfork child may call it); -1 on failure.
int real_copy(int fd, int cloexec);
// "/proc/self/fd/N" and the like name a served descriptor: make N a real
// open first, so the kernel's answer about it is the file's, not the pack's.
void unserve_fd_path(const char* path);
void fill_stat(const LexpackManifestEntry* e, struct stat* st);
void fill_statx(const LexpackManifestEntry* e, struct statx* sx);

// The entry served on `fd`, or NULL.
static inline const LexpackManifestEntry* served(int fd) {
  if (fd < 0 || fd >= MAX_FDS) return NULL;
  uint32_t v = __atomic_load_n(&g_fd_entry[fd], __ATOMIC_ACQUIRE);
  return v ? &g_entries[v - 1] : NULL;
}

// A real call just handed out descriptor `fd`: whatever the table says of
// that number is stale (it was closed behind the plugin's back).
static inline int fresh_fd(int fd) {
  if (fd >= 0 && fd < MAX_FDS && __atomic_load_n(&g_fd_entry[fd], __ATOMIC_ACQUIRE) &&
      may_mutate()) {
    __atomic_store_n(&g_fd_entry[fd], 0, __ATOMIC_RELEASE);
  }
  return fd;
}

static inline const char* entry_bytes(const LexpackManifestEntry* e) {
  return g_pack[e->pack].map + e->blob_offset;
}

#endif
