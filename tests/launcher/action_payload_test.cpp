// The payload kept beside a cached compile: it survives encoding, damaged or
// foreign bytes are refused, and its check (decoded or still encoded) names
// the first extra file changed or gone and the first candidate that appeared
// or vanished, and nothing while all stay the same.
#include "launcher/action_payload.h"

#include <gtest/gtest.h>

#include "closure/file_state.h"
#include "lexer/kernel.h"
#include "tests/lexer/scan_test_util.h"
#include "tests/support/test_dir.h"

namespace lexpack::launcher {
namespace {

using lexer::testing::kernel;

ActionPayload sample() {
  ActionPayload p;
  p.extra_files.push_back({"gen/computed.h", cache::Hash128{0x1234, 0x5678}});
  p.extra_files.push_back({"/usr/include/\xc3\xa9t\xc3\xa9.h", cache::Hash128{~0ull, 1}});
  p.present_probes = {"inc/computed.h", "/opt/inc/x.h"};
  p.absent_probes = closure::AbsenceProof::encode({"/nonexistent-dir/a.h", "/nonexistent-dir/b.h"});
  return p;
}

void expect_same(const ActionPayload& a, const ActionPayload& b) {
  ASSERT_EQ(a.extra_files.size(), b.extra_files.size());
  for (size_t i = 0; i < a.extra_files.size(); ++i) {
    EXPECT_EQ(a.extra_files[i].path, b.extra_files[i].path);
    EXPECT_TRUE(a.extra_files[i].content == b.extra_files[i].content);
  }
  EXPECT_EQ(a.present_probes, b.present_probes);
  EXPECT_EQ(a.absent_probes, b.absent_probes);
}

TEST(ActionPayload, RoundTrip) {
  ActionPayload p = sample();
  ActionPayload back;
  ASSERT_TRUE(decode_payload(encode_payload(p), &back));
  expect_same(p, back);

  ActionPayload empty, empty_back;
  ASSERT_TRUE(decode_payload(encode_payload(empty), &empty_back));
  expect_same(empty, empty_back);
}

TEST(ActionPayload, DamagedBytesAreRefused) {
  const std::string bytes = encode_payload(sample());
  ActionPayload out;
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(decode_payload(bytes.substr(0, n), &out)) << "truncated to " << n;
  }
  EXPECT_FALSE(decode_payload(bytes + '\0', &out)) << "trailing byte";
  std::string other_format = bytes;
  other_format[other_format.find("payload-2") + 8] = '1';
  EXPECT_FALSE(decode_payload(other_format, &out));
  EXPECT_FALSE(decode_payload("", &out));
  EXPECT_FALSE(decode_payload(std::string(64, '\xff'), &out));

  closure::FileStates files(nullptr, kernel());
  std::string changed;
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(check_encoded_payload(bytes.substr(0, n), &files, "/", &changed)) << n;
  }
  EXPECT_FALSE(check_encoded_payload(other_format, &files, "/", &changed));
}

// A project whose compile read one file the scan did not reach, with one
// candidate beside it present and one missing.
struct Recorded {
  lexpack::testing::TestDir d;
  std::string payload;
  ActionPayload decoded;
  Recorded() {
    d.write("gen/computed.h", "int computed;\n");
    d.write("inc/computed.h", "int shadowed;\n");
    d.write("empty/.keep", "");
    closure::FileStates files(nullptr, kernel());
    base::StatSignature sig;
    EXPECT_TRUE(base::stat_file(d.at("gen/computed.h"), &sig));
    auto content = files.content_hash(d.at("gen/computed.h"), d.at("gen/computed.h"), sig);
    EXPECT_TRUE(content.ok()) << content.message();
    decoded.extra_files.push_back({d.at("gen/computed.h"), content.value()});
    decoded.present_probes = {d.at("inc/computed.h")};
    decoded.absent_probes = closure::AbsenceProof::encode({d.at("empty/computed.h")});
    payload = encode_payload(decoded);
  }
  // Both forms of the check must agree.
  std::string check() {
    closure::FileStates files(nullptr, kernel());
    std::string from_struct = check_payload(decoded, &files, d.path());
    closure::FileStates files2(nullptr, kernel());
    std::string encoded;
    EXPECT_TRUE(check_encoded_payload(payload, &files2, d.path(), &encoded));
    EXPECT_EQ(encoded, from_struct);
    return from_struct;
  }
};

TEST(ActionPayloadCheck, UnchangedPasses) {
  Recorded r;
  EXPECT_EQ(r.check(), "");
}

TEST(ActionPayloadCheck, ChangedExtraFileIsNamed) {
  Recorded r;
  r.d.write("gen/computed.h", "int computed2;\n");
  EXPECT_EQ(r.check(), "changed: " + r.d.at("gen/computed.h"));
}

TEST(ActionPayloadCheck, GoneExtraFileIsNamed) {
  Recorded r;
  r.d.remove("gen/computed.h");
  EXPECT_EQ(r.check(), "missing: " + r.d.at("gen/computed.h"));
}

TEST(ActionPayloadCheck, VanishedCandidateIsNamed) {
  Recorded r;
  r.d.remove("inc/computed.h");
  EXPECT_EQ(r.check(), "missing: " + r.d.at("inc/computed.h"));
}

TEST(ActionPayloadCheck, AppearedCandidateIsNamed) {
  Recorded r;
  r.d.write("empty/computed.h", "int appeared;\n");
  EXPECT_EQ(r.check(), "appeared: " + r.d.at("empty/computed.h"));
}

}  // namespace
}  // namespace lexpack::launcher
