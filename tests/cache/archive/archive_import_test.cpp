// Import is all or nothing, and what an archive claims costs nothing until
// it is proven: a damaged record after many blobs stores nothing, and a huge
// claimed entry on a small sparse file is refused without its size in memory.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <random>

#include "archive_forge.h"
#include "cache/archive/archive.h"
#include "cache/store.h"
#include "tests/support/open_store.h"
#include "tests/support/test_dir.h"

namespace lexpack::cache {
namespace {

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(ArchiveImport, DamagedRecordAfterManyBlobsImportsNothing) {
  lexpack::testing::TestDir tmp;
  // More than one import batch (64 MiB) of valid blobs, then a record with a
  // valid checksum that does not decode.
  std::mt19937_64 rng(7);
  std::string archive = testing::archive_header();
  uint64_t count = 0;
  for (int i = 0; i < 5; ++i) {
    std::string blob(17u << 20, '\0');
    for (size_t j = 0; j < blob.size(); j += 8) blob[j] = static_cast<char>(rng());
    testing::archive_entry(&archive, 1, testing::blob_payload(blob));
    ++count;
  }
  testing::archive_entry(&archive, 4, std::string(16, '\x01') + "not an action record");
  ++count;
  testing::archive_entry(&archive, 6, testing::end_payload(count));
  write_file(tmp.at("a.lpa"), archive);
  archive.clear();

  auto store = lexpack::testing::open_store(tmp.at("cache"));
  ASSERT_TRUE(store);
  auto r = import_archive(*store, tmp.at("a.lpa"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("damaged action record"), std::string::npos) << r.message();
  EXPECT_NE(r.message().find("nothing imported"), std::string::npos) << r.message();
  auto stats = store->stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->blobs, 0u) << "the message says nothing was imported";
  EXPECT_EQ(stats->blob_bytes, 0u);
}

// The 16 index bytes of hash_bytes(text): lo then hi, little-endian.
std::string hash_key_bytes(const std::string& text) {
  Hash128 h = hash_bytes(text);
  std::string out;
  testing::put_le(&out, h.lo, 8);
  testing::put_le(&out, h.hi, 8);
  return out;
}

uint64_t vm_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmSize:", 0) == 0) return std::stoull(line.substr(7)) * 1024;
  }
  return 0;
}

TEST(ArchiveImport, HugeClaimOnASparseFileCostsNoMemory) {
  lexpack::testing::TestDir tmp;
  // A blob entry claiming 4 GiB (the most allowed) on a sparse file whose
  // checksum is wrong: the file holds a few KiB of real bytes.
  const uint64_t claimed = 4ull << 30;
  std::string head = testing::archive_header();
  testing::put_le(&head, 1, 4);
  testing::put_le(&head, claimed, 8);
  head += std::string(4096, 'x');
  const std::string path = tmp.at("sparse.lpa");
  write_file(path, head);
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(16 + 12 + claimed + 8 + 20 + 8)), 0);

  auto store = lexpack::testing::open_store(tmp.at("cache"));
  ASSERT_TRUE(store);
  // In a child limited to 1 GiB more address space than it has now.
  pid_t pid = ::fork();
  if (pid == 0) {
    uint64_t limit = vm_bytes() + (1ull << 30);
    struct rlimit rl = {limit, limit};
    ::setrlimit(RLIMIT_AS, &rl);
    try {
      auto r = import_archive(*store, path);
      if (r.ok()) ::_exit(2);
      ::_exit(r.message().find("checksum") != std::string::npos ? 0 : 3);
    } catch (...) {
      ::_exit(4);  // out of memory for what the entry claims
    }
  }
  auto start = std::chrono::steady_clock::now();
  int status = 0;
  ::waitpid(pid, &status, 0);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: imported, 3: another message, 4: out of memory";
  std::printf("refused a 4 GiB claim on a sparse file in %.2f s\n", seconds);
}

std::unique_ptr<Store> open_signed(const std::string& dir, const std::string& secret) {
  StoreOptions o;
  o.dir = dir;
  o.remote_secret = secret;
  auto s = Store::open(o);
  EXPECT_TRUE(s.ok()) << s.message();
  return s.ok() ? std::move(s.value()) : nullptr;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Re-writes an archive entry by entry with valid checksums, letting `edit`
// change payloads: what a forger without the secret can do.
std::string reforge(const std::string& archive,
                    const std::function<void(uint32_t type, std::string* payload)>& edit) {
  std::string out = archive.substr(0, 16);
  size_t pos = 16;
  while (pos + 12 <= archive.size()) {
    uint32_t type = 0;
    uint64_t length = 0;
    for (int i = 0; i < 4; ++i) type |= uint32_t(uint8_t(archive[pos + i])) << (8 * i);
    for (int i = 0; i < 8; ++i) length |= uint64_t(uint8_t(archive[pos + 4 + i])) << (8 * i);
    std::string payload = archive.substr(pos + 12, length);
    edit(type, &payload);
    testing::archive_entry(&out, type, payload);
    pos += 12 + length + 8;
  }
  return out;
}

class SignedArchive : public ::testing::Test {
 protected:
  void SetUp() override {
    auto src = open_signed(tmp_.at("src"), kSecret);
    ASSERT_TRUE(src);
    for (const char* name : {"good object", "evil object"}) {
      auto id = src->put_blob(name);
      ASSERT_TRUE(id.ok());
      ActionRecord action;
      action.outputs.push_back({"object", id.value()});
      ASSERT_TRUE(src->put_action(hash_bytes(std::string("action of ") + name), action).ok());
    }
    ASSERT_TRUE(export_archive(*src, tmp_.at("signed.lpa")).ok());
    auto plain = open_signed(tmp_.at("plain"), "");
    ASSERT_TRUE(plain);
    ASSERT_TRUE(plain->put_blob("plain").ok());
    ASSERT_TRUE(export_archive(*plain, tmp_.at("unsigned.lpa")).ok());
  }
  static constexpr const char* kSecret = "a secret of the team, 32 chars.";
  lexpack::testing::TestDir tmp_;
};

TEST_F(SignedArchive, SameSecretImportsAndChecks) {
  auto dst = open_signed(tmp_.at("dst"), kSecret);
  auto r = import_archive(*dst, tmp_.at("signed.lpa"));
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_TRUE(r->signed_archive);
  EXPECT_TRUE(r->signature_checked);
  EXPECT_EQ(r->actions, 2u);
}

TEST_F(SignedArchive, UnsignedIsRefusedWhenASecretIsSet) {
  auto dst = open_signed(tmp_.at("dst"), kSecret);
  auto r = import_archive(*dst, tmp_.at("unsigned.lpa"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("not signed"), std::string::npos) << r.message();
  EXPECT_EQ(dst->stats()->blobs, 0u);
}

TEST_F(SignedArchive, AnotherSecretIsRefused) {
  auto dst = open_signed(tmp_.at("dst"), "another secret, also 32 chars..");
  auto r = import_archive(*dst, tmp_.at("signed.lpa"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("signature does not match"), std::string::npos) << r.message();
}

TEST_F(SignedArchive, ActionPointedAtAnotherObjectIsRefused) {
  // Swap the keys of the two actions: each now names the other's object.
  // Checksums are made valid again; only the signature can tell.
  const std::string good_key = hash_key_bytes("action of good object");
  const std::string evil_key = hash_key_bytes("action of evil object");
  std::string forged =
      reforge(read_file(tmp_.at("signed.lpa")), [&](uint32_t type, std::string* payload) {
        if (type != 4) return;
        std::string key = payload->substr(0, 16);
        payload->replace(0, 16, key == good_key ? evil_key : good_key);
      });
  write_file(tmp_.at("forged.lpa"), forged);

  auto unchecked = open_signed(tmp_.at("unchecked"), "");
  auto accepted = import_archive(*unchecked, tmp_.at("forged.lpa"));
  ASSERT_TRUE(accepted.ok()) << "without a secret only integrity is checked: "
                             << accepted.message();
  EXPECT_FALSE(accepted->signature_checked);

  auto dst = open_signed(tmp_.at("dst"), kSecret);
  auto r = import_archive(*dst, tmp_.at("forged.lpa"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("signature does not match"), std::string::npos) << r.message();
  EXPECT_FALSE(dst->get_action(hash_bytes("action of good object")));
}

TEST_F(SignedArchive, SignatureCannotBeStripped) {
  // Drop the signature from the end entry: an unsigned archive, refused.
  std::string stripped =
      reforge(read_file(tmp_.at("signed.lpa")), [](uint32_t type, std::string* payload) {
        if (type == 6) payload->resize(8);
      });
  write_file(tmp_.at("stripped.lpa"), stripped);
  auto dst = open_signed(tmp_.at("dst"), kSecret);
  auto r = import_archive(*dst, tmp_.at("stripped.lpa"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("not signed"), std::string::npos) << r.message();
}

}  // namespace
}  // namespace lexpack::cache
