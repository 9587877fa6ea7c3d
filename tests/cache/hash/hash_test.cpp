// Hash128 hex round trips, Hasher field framing, and the one-shot hash
// agreeing with the streaming one.
#include <gtest/gtest.h>

#include <vector>

#include "cache/hash/hash.h"

namespace lexpack::cache {
namespace {

TEST(Hash, HexRoundTrip) {
  Hash128 h = hash_bytes("hello");
  std::string hex = h.hex();
  ASSERT_EQ(hex.size(), 32u);
  Hash128 back;
  ASSERT_TRUE(Hash128::from_hex(hex, &back));
  EXPECT_EQ(back, h);
  EXPECT_FALSE(Hash128::from_hex("xyz", &back));
  EXPECT_FALSE(Hash128::from_hex(std::string(32, 'g'), &back));
  EXPECT_NE(hash_bytes("hello"), hash_bytes("hellp"));
}

TEST(Hash, FieldsAreFramed) {
  Hasher a, b, c;
  a.field("ab");
  a.field("c");
  b.field("a");
  b.field("bc");
  c.field("ab");
  c.field("c");
  EXPECT_NE(a.digest(), b.digest());
  EXPECT_EQ(a.digest(), c.digest());
  Hasher whole;
  whole.update("hello");
  EXPECT_EQ(whole.digest(), hash_bytes("hello"));
}

// hash_bytes may use a wider vector kernel than the streaming Hasher; both
// must agree on every size, including the ones around its cut-over.
TEST(Hash, OneShotAgreesWithStreamingOnEverySize) {
  std::string data;
  for (size_t i = 0; i < 20000; ++i) data.push_back(static_cast<char>((i * 2654435761u) >> 13));
  for (size_t n = 0; n < data.size(); n = n < 600 ? n + 1 : n * 3 / 2) {
    Hasher h;
    h.update(std::string_view(data).substr(0, n));
    ASSERT_EQ(hash_bytes(std::string_view(data).substr(0, n)), h.digest()) << "size " << n;
  }
}

// fields() hashes the bytes field() of each half of each digest would.
TEST(Hash, FieldsOfDigestsAgreeWithFieldByField) {
  std::vector<Hash128> digests;
  for (uint64_t i = 0; i < 300; ++i) digests.push_back({i * 0x9E3779B97F4A7C15ull, ~i});
  Hasher at_once, one_by_one;
  at_once.fields(digests);
  for (const Hash128& d : digests) {
    one_by_one.field(d.lo);
    one_by_one.field(d.hi);
  }
  EXPECT_EQ(at_once.digest().hex(), one_by_one.digest().hex());
  Hasher other;
  digests.back().hi ^= 1;
  other.fields(digests);
  EXPECT_NE(other.digest().hex(), one_by_one.digest().hex());
}

}  // namespace
}  // namespace lexpack::cache
