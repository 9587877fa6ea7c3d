// The archive format shared by export (archive.cpp) and import
// (archive_import.cpp), internal to cache/archive/. Layout: a 16-byte header
// (magic, version u32, zero u32), then entries {type u32, length u64,
// payload, checksum u64}, ending with an end entry {count u64 [, signature
// 32 bytes]}.
// The signature is HMAC-SHA256 with the remote_secret setting over
// kSignatureDomain and every byte of the file before it (the end entry's
// type, length and count included); checksums catch accidents, only the
// signature says who made the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cache/hash/hash.h"

namespace lexpack::cache {

inline constexpr char kMagic[8] = {'L', 'X', 'P', 'K', 'A', 'R', 'C', '\n'};
inline constexpr uint32_t kArchiveVersion = 1;
inline constexpr uint64_t kMaxEntryBytes = 4ull << 30;
inline constexpr size_t kImportBatchBytes = 64u << 20;
inline constexpr size_t kWriteBuffer = 4u << 20;

inline constexpr size_t kSignatureBytes = 32;
// Keeps an archive signature from passing for any other use of the secret
// (remote entries sign with their own domain).
inline constexpr std::string_view kSignatureDomain{"lexpack archive signature v1\n", 29};

enum EntryType : uint32_t {
  kBlob = 1,
  kAlignedBlob = 2,
  kFile = 3,
  kAction = 4,
  kMemo = 5,
  kEnd = 6,
};

inline uint64_t entry_checksum(uint32_t type, std::string_view payload) {
  Hasher h;
  h.field(type);
  h.field(payload);
  return h.digest().lo;
}

}  // namespace lexpack::cache
