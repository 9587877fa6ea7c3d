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
  // An archive or link step's output stands alone: never beside an object
  // or a depfile, never twice.
  RemoteEntry mixed = sample();
  mixed.outputs.push_back({"output", "ELF"});
  EXPECT_FALSE(decode_entry(encode_entry(key, mixed), key).ok());
  RemoteEntry twice;
  twice.outputs = {{"output", "a"}, {"output", "b"}};
  EXPECT_FALSE(decode_entry(encode_entry(key, twice), key).ok());
  RemoteEntry with_depfile;
  with_depfile.outputs = {{"output", "a"}, {"depfile", "d"}};
  EXPECT_FALSE(decode_entry(encode_entry(key, with_depfile), key).ok());
}

TEST(RemoteEntry, AnArchiveOrLinkOutputRoundTrips) {
  Hash128 key{5, 6};
  RemoteEntry step;
  step.compile_time_us = 42;
  step.outputs.push_back({"output", std::string("\x7f"
                                                "ELF") +
                                        std::string(3000, 'x')});
  step.err = "warning: foo1 is old\n";
  base::Result<RemoteEntry> back = decode_entry(encode_entry(key, step), key);
  ASSERT_TRUE(back.ok()) << back.message();
  ASSERT_EQ(back->outputs.size(), 1u);
  EXPECT_EQ(back->outputs[0].role, "output");
  EXPECT_EQ(back->outputs[0].bytes, step.outputs[0].bytes);
  EXPECT_EQ(back->err, step.err);
}

TEST(RemoteEntry, SignedEntriesAreTakenOnlyWithTheirSecret) {
  Hash128 key{11, 22};
  const std::string secret = "team secret, 16+ chars";
  std::string signed_bytes = encode_entry(key, sample(), secret);
  std::string plain = encode_entry(key, sample());
  EXPECT_EQ(signed_bytes.size(), plain.size() + kEntrySignatureSize);
  auto back = decode_entry(signed_bytes, key, secret);
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->outputs[0].bytes, sample().outputs[0].bytes);
  // A reader without the secret takes it as it takes any checked entry.
  EXPECT_TRUE(decode_entry(signed_bytes, key).ok());
  // With the secret: unsigned, signed with another secret, or any byte changed
  // (the signature itself included) is refused.
  auto unsigned_entry = decode_entry(plain, key, secret);
  ASSERT_FALSE(unsigned_entry.ok());
  EXPECT_NE(unsigned_entry.message().find("not signed"), std::string::npos);
  auto other = decode_entry(encode_entry(key, sample(), "another secret of the team"), key, secret);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.message().find("signature"), std::string::npos);
  for (size_t at : {size_t(10), size_t(60), signed_bytes.size() / 2, signed_bytes.size() - 1}) {
    std::string bad = signed_bytes;
    bad[at] ^= 0x01;
    EXPECT_FALSE(decode_entry(bad, key, secret).ok()) << "flip at " << at;
  }
  // Clearing the flag and dropping the signature makes it unsigned: refused.
  std::string stripped = signed_bytes.substr(0, signed_bytes.size() - kEntrySignatureSize);
  stripped[56] = 0;
  EXPECT_FALSE(decode_entry(stripped, key, secret).ok());
  EXPECT_TRUE(decode_entry(stripped, key).ok());
}

TEST(RemoteAnswer, RoundTripsAndNeverPassesForAnEntry) {
  const Hash128 key{5, 6};
  const std::string answer = "the compiler's answer\n";
  std::string sealed = encode_answer(key, answer);
  base::Result<std::string> got = decode_answer(sealed, key);
  ASSERT_TRUE(got.ok()) << got.message();
  EXPECT_EQ(*got, answer);
  EXPECT_FALSE(decode_answer(sealed, Hash128{5, 7}).ok());
  EXPECT_FALSE(decode_entry(sealed, key).ok());
  RemoteEntry e;
  e.outputs.push_back({"object", "obj"});
  EXPECT_FALSE(decode_answer(encode_entry(key, e), key).ok());
  // Signed: taken only with the secret; a flipped byte is refused.
  std::string signed_answer = encode_answer(key, answer, "s3cret");
  EXPECT_TRUE(decode_answer(signed_answer, key, "s3cret").ok());
  EXPECT_FALSE(decode_answer(signed_answer, key, "other").ok());
  EXPECT_FALSE(decode_answer(sealed, key, "s3cret").ok());
  signed_answer[kEntryHeaderSize + 1] ^= 1;
  EXPECT_FALSE(decode_answer(signed_answer, key, "s3cret").ok());
}

}  // namespace
}  // namespace lexpack::cache::remote
