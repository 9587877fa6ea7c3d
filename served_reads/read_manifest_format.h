/* The layout of the read manifest the launcher hands to a compiler it runs
 * with served reads: plain C, so that the preloaded plugin (which links no
 * project library) reads the same structs the launcher writes. */
#ifndef LEXPACK_READ_MANIFEST_FORMAT_H
#define LEXPACK_READ_MANIFEST_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* Environment variable naming the inherited descriptor that holds the manifest. */
#define LEXPACK_READ_MANIFEST_ENV "LEXPACK_READ_MANIFEST"
#define LEXPACK_READ_MANIFEST_MAGIC "LXPREAD1"
#define LEXPACK_READ_MANIFEST_VERSION 1u
#define LEXPACK_READ_MANIFEST_MAX_PACKS 64u

/* The whole manifest: header, packs[], entries[], slots[] (the hash table),
 * then the string bytes. Offsets are from the start of the manifest. */
typedef struct {
  char magic[8];
  uint32_t version;
  uint32_t pack_count;
  uint32_t entry_count;
  uint32_t slot_count; /* a power of two, more than entry_count */
  uint64_t packs_offset;
  uint64_t entries_offset;
  uint64_t slots_offset; /* uint32_t each: entry index + 1, 0 for empty */
  uint64_t strings_offset;
  uint64_t strings_size;
  uint64_t total_size;
  uint64_t cwd_offset; /* the working directory relative paths are read against */
  uint32_t cwd_length;
  uint32_t reserved;
} LexpackManifestHeader;

typedef struct {
  uint64_t path_offset; /* absolute path of the pack file */
  uint32_t path_length;
  uint32_t reserved;
  uint64_t dev; /* the pack must be this file: the launcher holds it open */
  uint64_t ino;
} LexpackManifestPack;

enum {
  LEXPACK_ENTRY_FILE = 1,    /* a regular file whose bytes are a blob */
  LEXPACK_ENTRY_MISSING = 2, /* a failed include probe: ENOENT */
};
enum {
  LEXPACK_ENTRY_LAST_IS_SYMLINK = 1, /* lstat and readlink of the path are not answered */
};

typedef struct {
  uint64_t path_offset; /* the lookup key: a path exactly as a program passes it */
  uint32_t path_length;
  uint32_t kind;
  uint64_t canonical_offset; /* realpath() of the file */
  uint32_t canonical_length;
  uint32_t pack;
  uint32_t flags;
  uint32_t reserved;
  uint64_t blob_offset; /* page-aligned, zero-padded to a page end */
  uint64_t size;
  /* stat(2) of the file when the launcher checked it */
  uint64_t dev;
  uint64_t ino;
  uint64_t nlink;
  uint64_t rdev;
  int64_t blksize;
  int64_t blocks;
  uint32_t mode;
  uint32_t uid;
  uint32_t gid;
  uint32_t reserved2;
  int64_t atime_sec, atime_nsec;
  int64_t mtime_sec, mtime_nsec;
  int64_t ctime_sec, ctime_nsec;
} LexpackManifestEntry;

/* FNV-1a, 64 bits: the hash of the lookup table. */
static inline uint64_t lexpack_manifest_hash(const char* s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= (unsigned char)s[i];
    h *= 1099511628211ull;
  }
  return h;
}

#endif
