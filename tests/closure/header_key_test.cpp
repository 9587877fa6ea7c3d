// A header's key names its file, where it was found and its signature; a
// kept evaluation outlives a change only when that signature had settled.
#include "closure/header_key.h"

#include <gtest/gtest.h>

namespace lexpack::closure {
namespace {

Resolution at(std::string path, int64_t mtime, int64_t ctime) {
  Resolution r;
  r.found = true;
  r.path = std::move(path);
  r.chain_index = 2;
  r.stat.dev = 1;
  r.stat.ino = 7;
  r.stat.size = 100;
  r.stat.mtime_ns = mtime;
  r.stat.ctime_ns = ctime;
  return r;
}

constexpr int64_t kSecond = 1'000'000'000;

TEST(HeaderKey, EachNumberTellsKeysApart) {
  const Resolution r = at("inc/a.h", 5 * kSecond, 6 * kSecond);
  const std::string key = header_key(r);
  EXPECT_EQ(key, header_key(at("inc/a.h", 5 * kSecond, 6 * kSecond)));
  EXPECT_NE(key, header_key(at("inc/b.h", 5 * kSecond, 6 * kSecond)));
  EXPECT_NE(key, header_key(at("inc/a.h", 5 * kSecond + 1, 6 * kSecond)));
  EXPECT_NE(key, header_key(at("inc/a.h", 5 * kSecond, 6 * kSecond + 1)));
  Resolution elsewhere = r;
  elsewhere.chain_index = 3;
  EXPECT_NE(key, header_key(elsewhere));
}

TEST(HeaderKey, SettledOnlyASecondAfterBothTimes) {
  const std::string key = header_key(at("inc/a.h", 5 * kSecond, 6 * kSecond));
  EXPECT_TRUE(header_key_settled(key, 7 * kSecond));
  EXPECT_FALSE(header_key_settled(key, 7 * kSecond - 1));  // the ctime's second
  const std::string written_later = header_key(at("inc/a.h", 9 * kSecond, 6 * kSecond));
  EXPECT_FALSE(header_key_settled(written_later, 7 * kSecond));  // an mtime ahead
  EXPECT_TRUE(header_key_settled(written_later, 10 * kSecond));
}

TEST(HeaderKey, AnyOtherStringIsNeverSettled) {
  EXPECT_FALSE(header_key_settled("", 100 * kSecond));
  EXPECT_FALSE(header_key_settled("inc/a.h", 100 * kSecond));
  EXPECT_FALSE(header_key_settled(std::string(100, 'x'), 100 * kSecond));
}

}  // namespace
}  // namespace lexpack::closure
