// The read manifest: what the preloaded plugin may answer inside a compiler
// the launcher runs with served reads (which paths are which blob of which
// pack, with their stat fields, and which paths do not exist), encoded in the
// layout of read_manifest_format.h with a hash table the plugin searches
// without allocating.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "served_reads/read_manifest_format.h"

namespace lexpack::served_reads {

struct ManifestPackFile {
  std::string path;  // absolute
  uint64_t dev = 0;
  uint64_t ino = 0;
};

struct ManifestFile {
  std::vector<std::string> names;  // every spelling that opens it: as named, absolute
  std::string canonical;           // realpath of the file
  bool last_is_symlink = false;
  uint32_t pack = 0;  // index into ReadManifest::packs
  uint64_t blob_offset = 0;
  uint64_t size = 0;
  struct stat st {};
};

struct ReadManifest {
  std::string cwd;
  std::vector<ManifestPackFile> packs;
  std::vector<ManifestFile> files;
  // Paths answered ENOENT; one ending in '/' is a missing directory, and
  // so is every path under it (a closure's probe for all of those).
  std::vector<std::string> missing;
};

// The manifest bytes. A name given twice keeps its first entry.
std::string encode_read_manifest(const ReadManifest& manifest);

// The entry for `path` in encoded manifest bytes, or null. Checks the layout
// as the plugin does (for tests and tools).
const LexpackManifestEntry* find_manifest_entry(std::string_view bytes, std::string_view path);

// The string an entry's offset and length name.
std::string_view manifest_string(std::string_view bytes, uint64_t offset, uint32_t length);

}  // namespace lexpack::served_reads
