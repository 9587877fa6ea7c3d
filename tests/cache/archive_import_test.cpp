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
#include <random>

#include "archive_forge.h"
#include "cache/store.h"
#include "temp_dir.h"

namespace lexpack::cache {
namespace {

std::unique_ptr<Store> open_store(const std::string& dir) {
  StoreOptions o;
  o.dir = dir;
  auto s = Store::open(o);
  EXPECT_TRUE(s.ok()) << s.message();
  return s.ok() ? std::move(s.value()) : nullptr;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(ArchiveImport, DamagedRecordAfterManyBlobsImportsNothing) {
  testing::TempDir tmp;
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
  write_file(tmp.sub("a.lpa"), archive);
  archive.clear();

  auto store = open_store(tmp.sub("cache"));
  ASSERT_TRUE(store);
  auto r = store->import_from(tmp.sub("a.lpa"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("damaged action record"), std::string::npos) << r.message();
  EXPECT_NE(r.message().find("nothing imported"), std::string::npos) << r.message();
  auto stats = store->stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->blobs, 0u) << "the message says nothing was imported";
  EXPECT_EQ(stats->blob_bytes, 0u);
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
  testing::TempDir tmp;
  // A blob entry claiming 4 GiB (the most allowed) on a sparse file whose
  // checksum is wrong: the file holds a few KiB of real bytes.
  const uint64_t claimed = 4ull << 30;
  std::string head = testing::archive_header();
  testing::put_le(&head, 1, 4);
  testing::put_le(&head, claimed, 8);
  head += std::string(4096, 'x');
  const std::string path = tmp.sub("sparse.lpa");
  write_file(path, head);
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(16 + 12 + claimed + 8 + 20 + 8)), 0);

  auto store = open_store(tmp.sub("cache"));
  ASSERT_TRUE(store);
  // In a child limited to 1 GiB more address space than it has now.
  pid_t pid = ::fork();
  if (pid == 0) {
    uint64_t limit = vm_bytes() + (1ull << 30);
    struct rlimit rl = {limit, limit};
    ::setrlimit(RLIMIT_AS, &rl);
    try {
      auto r = store->import_from(path);
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

}  // namespace
}  // namespace lexpack::cache
