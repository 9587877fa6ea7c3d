// What a remote holds for one action key: everything a hit writes (object,
// depfile, .dwo, compiler messages, the payload the hit checks), compressed
// with zstd behind a header that names the format, the key, both sizes and
// an XXH3 checksum, so a reply is checked completely before a byte is used.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cache/hash.h"

namespace lexpack::cache::remote {

inline constexpr uint32_t kEntryFormat = 1;
inline constexpr size_t kEntryHeaderSize = 64;
// Larger entries are refused on both sides (a reply that claims more is bad).
inline constexpr uint64_t kMaxEntrySize = 512ull << 20;

struct RemoteEntry {
  struct File {
    std::string role;  // "object", "depfile" or "dwo"
    std::string bytes;
  };
  uint64_t compile_time_us = 0;
  std::string payload;  // launcher/action_payload.h, opaque here
  std::vector<File> outputs;
  std::string out, err;
};

std::string encode_entry(const Hash128& key, const RemoteEntry& entry);

// The entry in `bytes` if it is well formed, names `key`, its sizes and
// checksum agree and it holds exactly one object; an error saying what is
// wrong otherwise.
base::Result<RemoteEntry> decode_entry(std::string_view bytes, const Hash128& key);

}  // namespace lexpack::cache::remote
