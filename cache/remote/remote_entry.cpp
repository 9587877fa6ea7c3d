// Layout: "LXRE", u32 format, key (lo, hi), u64 raw size, u64 compressed
// size, checksum (lo, hi) of the raw body, u32 flags, u32 reserved, all
// little-endian; then one zstd frame of the varint-coded body; then, when
// flags has kEntrySigned, the HMAC-SHA256 of a domain string and everything
// before it.
#include "cache/remote/remote_entry.h"

#include <zstd.h>

#include <cstring>

#include "base/byte_codec.h"
#include "cache/hash/sha256.h"

namespace lexpack::cache::remote {
namespace {

void put_le(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(char((v >> (8 * i)) & 0xff));
}

uint64_t get_le(std::string_view in, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t(uint8_t(in[at + i])) << (8 * i);
  return v;
}

// The signature covers a domain string first, so that no other signature made
// with the same secret (an archive's) can pass for an entry's.
Sha256Digest entry_mac(std::string_view secret, std::string_view signed_bytes) {
  HmacSha256 mac(secret);
  mac.update("lexpack remote entry signature v1\n");
  mac.update(signed_bytes);
  return mac.finish();
}

// The sealed form of `raw` (header, zstd frame, signature) under `format`.
std::string seal(const Hash128& key, uint32_t format, const std::string& raw,
                 std::string_view secret) {
  std::string packed(ZSTD_compressBound(raw.size()), '\0');
  size_t n = ZSTD_compress(packed.data(), packed.size(), raw.data(), raw.size(), 3);
  if (ZSTD_isError(n)) return {};
  packed.resize(n);
  Hash128 sum = hash_bytes(raw);
  std::string out = "LXRE";
  put_le(&out, format, 4);
  put_le(&out, key.lo, 8);
  put_le(&out, key.hi, 8);
  put_le(&out, raw.size(), 8);
  put_le(&out, packed.size(), 8);
  put_le(&out, sum.lo, 8);
  put_le(&out, sum.hi, 8);
  put_le(&out, secret.empty() ? 0 : kEntrySigned, 4);
  put_le(&out, 0, 4);
  out += packed;
  if (!secret.empty()) {
    Sha256Digest mac = entry_mac(secret, out);
    out.append(reinterpret_cast<const char*>(mac.data()), mac.size());
  }
  return out;
}

// The raw body of a sealed value, once every check passed.
base::Result<std::string> unseal(std::string_view bytes, const Hash128& key, uint32_t format,
                                 std::string_view secret) {
  using base::Status;
  if (bytes.size() < kEntryHeaderSize || bytes.substr(0, 4) != "LXRE") {
    return Status::error("not an entry");
  }
  if (get_le(bytes, 4, 4) != format) return Status::error("unknown entry format");
  Hash128 named{get_le(bytes, 8, 8), get_le(bytes, 16, 8)};
  if (!(named == key)) return Status::error("entry of another key");
  uint64_t raw_size = get_le(bytes, 24, 8), packed_size = get_le(bytes, 32, 8);
  Hash128 sum{get_le(bytes, 40, 8), get_le(bytes, 48, 8)};
  const uint64_t flags = get_le(bytes, 56, 4);
  if ((flags & ~uint64_t{kEntrySigned}) != 0) return Status::error("unknown entry flags");
  const size_t trailer = (flags & kEntrySigned) ? kEntrySignatureSize : 0;
  if (raw_size > kMaxEntrySize || bytes.size() < kEntryHeaderSize + trailer ||
      packed_size != bytes.size() - kEntryHeaderSize - trailer) {
    return Status::error("entry sizes disagree");
  }
  if (!secret.empty()) {
    if (!trailer) return Status::error("entry not signed, and a remote_secret is set");
    Sha256Digest expected = entry_mac(secret, bytes.substr(0, bytes.size() - trailer));
    Sha256Digest found;
    std::memcpy(found.data(), bytes.data() + bytes.size() - trailer, trailer);
    if (!digests_equal(expected, found)) {
      return Status::error("entry signature does not match the remote_secret");
    }
  }
  std::string_view packed = bytes.substr(kEntryHeaderSize, packed_size);
  unsigned long long frame = ZSTD_getFrameContentSize(packed.data(), packed.size());
  if (frame != raw_size) return Status::error("entry sizes disagree");
  std::string raw(raw_size, '\0');
  size_t n = ZSTD_decompress(raw.data(), raw.size(), packed.data(), packed.size());
  if (ZSTD_isError(n) || n != raw_size) return Status::error("entry does not decompress");
  if (!(hash_bytes(raw) == sum)) return Status::error("entry checksum mismatch");
  return raw;
}

}  // namespace

std::string encode_entry(const Hash128& key, const RemoteEntry& entry, std::string_view secret) {
  base::VarintWriter w;
  w.u64(entry.compile_time_us);
  w.str(entry.payload);
  w.u64(entry.outputs.size());
  for (const RemoteEntry::File& f : entry.outputs) {
    w.str(f.role);
    w.str(f.bytes);
  }
  w.str(entry.out);
  w.str(entry.err);
  return seal(key, kEntryFormat, w.take(), secret);
}

base::Result<RemoteEntry> decode_entry(std::string_view bytes, const Hash128& key,
                                       std::string_view secret) {
  using base::Status;
  base::Result<std::string> body = unseal(bytes, key, kEntryFormat, secret);
  if (!body.ok()) return body.status();
  const std::string& raw = body.value();
  RemoteEntry entry;
  base::VarintReader r(raw);
  uint64_t count = 0;
  if (!r.u64(&entry.compile_time_us) || !r.str(&entry.payload) || !r.u64(&count) || count > 3) {
    return Status::error("malformed entry");
  }
  // A compile's object (with its depfile and .dwo), or an archive or link
  // step's one output.
  int objects = 0, step_outputs = 0;
  for (uint64_t i = 0; i < count; ++i) {
    RemoteEntry::File f;
    if (!r.str(&f.role) || !r.str(&f.bytes)) return Status::error("malformed entry");
    if (f.role == "object") {
      ++objects;
    } else if (f.role == "output") {
      ++step_outputs;
    } else if (f.role != "depfile" && f.role != "dwo") {
      return Status::error("entry with an unknown output " + f.role);
    }
    entry.outputs.push_back(std::move(f));
  }
  const bool shaped = (objects == 1 && step_outputs == 0) || (step_outputs == 1 && count == 1);
  if (!r.str(&entry.out) || !r.str(&entry.err) || !r.done() || !shaped) {
    return Status::error("malformed entry");
  }
  return entry;
}

std::string encode_answer(const Hash128& key, std::string_view answer, std::string_view secret) {
  return seal(key, kAnswerFormat, std::string(answer), secret);
}

base::Result<std::string> decode_answer(std::string_view bytes, const Hash128& key,
                                        std::string_view secret) {
  return unseal(bytes, key, kAnswerFormat, secret);
}

}  // namespace lexpack::cache::remote
