// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for signing what leaves
// one machine (archives, remote entries) with a shared secret. Content ids
// stay XXH3: these are for origin, not for speed.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace lexpack::cache {

using Sha256Digest = std::array<uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  void update(std::string_view bytes);
  Sha256Digest finish();  // the object is spent afterwards

 private:
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_ = 0;
};

Sha256Digest sha256(std::string_view bytes);

class HmacSha256 {
 public:
  explicit HmacSha256(std::string_view key);
  void update(std::string_view bytes) { inner_.update(bytes); }
  Sha256Digest finish();

 private:
  Sha256 inner_;
  uint8_t outer_key_[64];
};

Sha256Digest hmac_sha256(std::string_view key, std::string_view message);

// Constant-time comparison, for checking a signature.
bool digests_equal(const Sha256Digest& a, const Sha256Digest& b);
std::string to_hex(const Sha256Digest& d);

}  // namespace lexpack::cache
