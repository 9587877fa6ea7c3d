// Index record sealing: the checksum must stay the framed XXH3-128 of (table,
// key, value) whatever path computes it, since sealed records live on disk.
#include <gtest/gtest.h>

#include <string>

#include "cache/hash/hash.h"
#include "cache/records.h"

namespace lexpack::cache {
namespace {

uint64_t framed_sum(std::string_view table, std::string_view key, std::string_view value) {
  Hasher h;
  h.field(table);
  h.field(key);
  h.field(value);
  return h.digest().lo;
}

uint64_t stored_sum(const std::string& sealed) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) {
    v |= static_cast<uint64_t>(static_cast<uint8_t>(sealed[sealed.size() - 8 + i])) << (8 * i);
  }
  return v;
}

// Sizes on both sides of the small-record cut-over give the same checksum as
// the streaming hasher, and unseal accepts exactly what seal produced.
TEST(Records, SealIsTheFramedHashOnEverySize) {
  std::string data;
  for (size_t i = 0; i < 3000; ++i) data.push_back(static_cast<char>((i * 2654435761u) >> 11));
  const std::string key = "0123456789abcdef";
  for (size_t n = 0; n < data.size(); n = n < 700 ? n + 1 : n * 2) {
    std::string value = data.substr(0, n);
    std::string sealed = seal("blobs", key, value);
    ASSERT_EQ(sealed.size(), n + 8);
    ASSERT_EQ(stored_sum(sealed), framed_sum("blobs", key, value)) << "size " << n;
    auto back = unseal("blobs", key, sealed);
    ASSERT_TRUE(back.has_value()) << "size " << n;
    ASSERT_EQ(*back, value);
  }
}

TEST(Records, UnsealRejectsAnyFlippedByteOrOtherTableOrKey) {
  const std::string key = "0123456789abcdef";
  BlobLocation loc;
  loc.pack = 7;
  loc.offset = 4096;
  loc.size = 123;
  loc.last_use = 1700000000;
  std::string sealed = seal("blobs", key, encode(loc));
  ASSERT_TRUE(unseal("blobs", key, sealed).has_value());
  EXPECT_FALSE(unseal("packs", key, sealed).has_value());
  EXPECT_FALSE(unseal("blobs", "0123456789abcdeF", sealed).has_value());
  EXPECT_FALSE(unseal("blobs", key, sealed.substr(0, 7)).has_value());
  for (size_t i = 0; i < sealed.size(); ++i) {
    std::string bad = sealed;
    bad[i] = static_cast<char>(bad[i] ^ 0x10);
    EXPECT_FALSE(unseal("blobs", key, bad).has_value()) << "byte " << i;
  }
}

}  // namespace
}  // namespace lexpack::cache
