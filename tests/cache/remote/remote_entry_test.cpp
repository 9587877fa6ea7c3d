// An entry is used only when every check passes: another key, a flipped
// byte, sizes that disagree or a missing object are refused.
#include "cache/remote/remote_entry.h"

#include <gtest/gtest.h>

namespace lexpack::cache::remote {
namespace {

RemoteEntry sample() {
  RemoteEntry e;
  e.compile_time_us = 1234;
  e.payload = "payload";
  e.outputs.push_back({"object", std::string(5000, 'o') + "\x7f"
                                                          "ELF"});
  e.outputs.push_back({"depfile", "x.o: ../src/x.cpp\n"});
  e.err = "warning\n";
  return e;
}

TEST(RemoteEntry, RoundTrips) {
  Hash128 key{11, 22};
  std::string bytes = encode_entry(key, sample());
  EXPECT_LT(bytes.size(), 1000u);  // compressed
  auto back = decode_entry(bytes, key);
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->compile_time_us, 1234u);
  EXPECT_EQ(back->payload, "payload");
  ASSERT_EQ(back->outputs.size(), 2u);
  EXPECT_EQ(back->outputs[0].bytes, sample().outputs[0].bytes);
  EXPECT_EQ(back->outputs[1].role, "depfile");
  EXPECT_EQ(back->err, "warning\n");
}

TEST(RemoteEntry, RefusesAnythingWrong) {
  Hash128 key{11, 22};
  std::string bytes = encode_entry(key, sample());
  EXPECT_FALSE(decode_entry(bytes, Hash128{11, 23}).ok());  // swapped between keys
  for (size_t at : {size_t(0), size_t(5), size_t(30), size_t(45), bytes.size() - 3}) {
    std::string bad = bytes;
    bad[at] ^= 0x20;
    EXPECT_FALSE(decode_entry(bad, key).ok()) << "flip at " << at;
  }
  EXPECT_FALSE(decode_entry(bytes.substr(0, bytes.size() - 1), key).ok());
  EXPECT_FALSE(decode_entry(bytes + "x", key).ok());
  EXPECT_FALSE(decode_entry("", key).ok());
  EXPECT_FALSE(decode_entry("-ERR something", key).ok());
  RemoteEntry no_object = sample();
  no_object.outputs.erase(no_object.outputs.begin());
  EXPECT_FALSE(decode_entry(encode_entry(key, no_object), key).ok());
}

}  // namespace
}  // namespace lexpack::cache::remote
