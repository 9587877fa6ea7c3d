// What a remote holds for one action key: everything a hit writes (object,
// depfile, .dwo, compiler messages, the payload the hit checks), compressed
// with zstd behind a header that names the format, the key, both sizes and
// an XXH3 checksum, so a reply is checked completely before a byte is used.
// With a secret (remote_secret), the entry ends in an HMAC-SHA256 of all that
// precedes it: write access to the server alone cannot poison a build.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cache/hash/hash.h"

namespace lexpack::cache::remote {

inline constexpr uint32_t kEntryFormat = 1;
// A compiler's answer to a question (compiler_answers in ninja_integration):
// the same header and checks under its own format, so neither passes for
// the other.
inline constexpr uint32_t kAnswerFormat = 2;
inline constexpr size_t kEntryHeaderSize = 64;
inline constexpr size_t kEntrySignatureSize = 32;
inline constexpr uint32_t kEntrySigned = 1;  // header flag: a signature follows
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

// Signed with `secret` when it is not empty.
std::string encode_entry(const Hash128& key, const RemoteEntry& entry,
                         std::string_view secret = {});

// The entry in `bytes` if it is well formed, names `key`, its sizes and
// checksum agree and it holds exactly one object; an error saying what is
// wrong otherwise. With a `secret`, only an entry signed with it is taken
// (checked before anything is decompressed); without one, a signature is
// not checked.
base::Result<RemoteEntry> decode_entry(std::string_view bytes, const Hash128& key,
                                       std::string_view secret = {});

// An answer's bytes sealed like an entry (checksum, key, signature); opaque
// here, checked by whoever asked.
std::string encode_answer(const Hash128& key, std::string_view answer,
                          std::string_view secret = {});
base::Result<std::string> decode_answer(std::string_view bytes, const Hash128& key,
                                        std::string_view secret = {});

}  // namespace lexpack::cache::remote
