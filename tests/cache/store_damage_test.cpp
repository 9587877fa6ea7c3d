// Damage the store on purpose: flipped bytes in packs and in the index file,
// truncated packs, a full disk (RLIMIT_FSIZE), a read-only directory, and
// malicious export files. Never a crash, never a wrong byte, clear reports.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "cache/archive/archive.h"
#include "cache/store.h"
#include "tests/support/test_dir.h"

namespace lexpack::cache {
namespace {

namespace fs = std::filesystem;

std::unique_ptr<Store> open_store(const std::string& dir, bool read_only = false,
                                  uint64_t pack_size = 256 << 10) {
  StoreOptions o;
  o.dir = dir;
  o.read_only = read_only;
  o.pack_size = pack_size;
  auto s = Store::open(o);
  return s.ok() ? std::move(s.value()) : nullptr;
}

std::vector<std::string> make_blobs(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    std::string s(100 + rng() % 4000, '\0');
    for (auto& c : s) c = static_cast<char>(rng());
    out.push_back(std::move(s));
  }
  return out;
}

void fill(Store& store, const std::vector<std::string>& blobs) {
  for (size_t i = 0; i < blobs.size(); ++i) {
    auto id = store.put_blob(blobs[i]);
    ASSERT_TRUE(id.ok()) << id.message();
    ActionRecord a;
    a.outputs.push_back({"object", id.value()});
    a.payload = blobs[i].substr(0, 50);
    ASSERT_TRUE(store.put_action(hash_bytes("action" + std::to_string(i)), a).ok());
    ASSERT_TRUE(store.put_memo("memo", std::to_string(i), blobs[i].substr(0, 20)).ok());
  }
}

void flip_bytes(const std::string& path, int count, std::mt19937_64& rng, uint64_t from = 0) {
  int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << path;
  struct stat st;
  ASSERT_EQ(::fstat(fd, &st), 0);
  uint64_t size = static_cast<uint64_t>(st.st_size);
  ASSERT_GT(size, from);
  for (int i = 0; i < count; ++i) {
    off_t at = static_cast<off_t>(from + rng() % (size - from));
    unsigned char c;
    ASSERT_EQ(::pread(fd, &c, 1, at), 1);
    c ^= static_cast<unsigned char>(1 + rng() % 255);
    ASSERT_EQ(::pwrite(fd, &c, 1, at), 1);
  }
  ::close(fd);
}

std::vector<std::string> pack_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir + "/packs")) out.push_back(e.path().string());
  return out;
}

// Runs fn in a child process; returns its exit code, or -signal if it died.
int in_child(const std::function<int()>& fn) {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(fn());
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

TEST(StoreDamage, FlippedPackBytesReadAsAbsentWithAReport) {
  testing::TestDir tmp;
  auto blobs = make_blobs(300, 1);
  {
    auto store = open_store(tmp.path());
    ASSERT_TRUE(store);
    fill(*store, blobs);
  }
  std::mt19937_64 rng(2);
  for (const auto& p : pack_files(tmp.path())) flip_bytes(p, 20, rng);
  auto store = open_store(tmp.path());
  ASSERT_TRUE(store);
  size_t absent = 0;
  for (const auto& b : blobs) {
    auto got = store->get_blob(hash_bytes(b));
    if (!got) {
      ++absent;
    } else {
      ASSERT_EQ(*got, b);  // never a wrong byte
    }
  }
  EXPECT_GT(absent, 0u);
  auto messages = store->take_messages();
  ASSERT_FALSE(messages.empty());
  EXPECT_NE(messages[0].find("does not match its hash"), std::string::npos) << messages[0];
  EXPECT_GE(store->stats()->counters["corrupt_blobs"], static_cast<int64_t>(absent));

  auto report = store->verify();
  ASSERT_TRUE(report.ok());
  EXPECT_FALSE(report->clean());
  EXPECT_EQ(report->bad_blobs, absent);
  EXPECT_GT(report->dangling_actions, 0u);
  auto again = store->verify();
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->clean());
  // Storing a damaged blob again repairs it.
  for (const auto& b : blobs) ASSERT_TRUE(store->put_blob(b).ok());
  for (const auto& b : blobs) ASSERT_EQ(store->get_blob(hash_bytes(b)), b);
}

TEST(StoreDamage, TruncatedPackIsReportedNotACrash) {
  testing::TestDir tmp;
  auto blobs = make_blobs(100, 3);
  {
    auto store = open_store(tmp.path());
    fill(*store, blobs);
  }
  for (const auto& p : pack_files(tmp.path())) fs::resize_file(p, fs::file_size(p) / 2);
  auto store = open_store(tmp.path());
  size_t absent = 0;
  for (const auto& b : blobs) {
    auto got = store->get_blob(hash_bytes(b));
    if (got) {
      ASSERT_EQ(*got, b);
    } else {
      ++absent;
    }
  }
  EXPECT_GT(absent, 0u);
  auto messages = store->take_messages();
  ASSERT_FALSE(messages.empty());
  EXPECT_NE(messages[0].find("past the end"), std::string::npos) << messages[0];
  auto report = store->verify();
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->bad_blobs, absent);
}

TEST(StoreDamage, FlippedIndexBytesNeverCrashOrLie) {
  testing::TestDir tmp;
  auto blobs = make_blobs(150, 4);
  const std::string pristine = tmp.at("pristine");
  {
    auto store = open_store(pristine);
    ASSERT_TRUE(store);
    fill(*store, blobs);
  }
  std::mt19937_64 rng(5);
  int resets = 0, reports = 0;
  constexpr int kTrials = 40;
  for (int trial = 0; trial < kTrials; ++trial) {
    const std::string dir = tmp.at("trial" + std::to_string(trial));
    fs::copy(pristine, dir, fs::copy_options::recursive);
    // Half the trials hit anywhere (meta pages included), half only data pages.
    flip_bytes(dir + "/index.mdb", 1 + static_cast<int>(rng() % 30), rng, trial % 2 ? 0 : 2 * 4096);
    int pipefd[2];
    ASSERT_EQ(::pipe(pipefd), 0);
    int code = in_child([&]() {
      auto store = open_store(dir);
      if (!store) return 2;
      for (size_t i = 0; i < blobs.size(); ++i) {
        auto got = store->get_blob(hash_bytes(blobs[i]));
        if (got && *got != blobs[i]) return 1;
        auto a = store->get_action(hash_bytes("action" + std::to_string(i)));
        if (a && (a->outputs.size() != 1 || a->outputs[0].blob != hash_bytes(blobs[i]) ||
                  a->payload != blobs[i].substr(0, 50))) {
          return 1;
        }
        auto m = store->get_memo("memo", std::to_string(i));
        if (m && *m != blobs[i].substr(0, 20)) return 1;
      }
      auto report = store->verify();
      if (!report.ok()) return 3;
      auto clean = store->verify();
      if (!clean.ok() || !clean->clean()) return 4;
      if (!store->put_blob("still works").ok()) return 5;
      if (store->get_blob(hash_bytes("still works")) != "still works") return 5;
      std::string flags;
      for (const auto& m : store->take_messages()) {
        flags += m.find("was reset") != std::string::npos ? 'r' : 'm';
      }
      if (!report->clean()) flags += 'v';
      ssize_t ignored = ::write(pipefd[1], flags.data(), flags.size());
      (void)ignored;
      return 0;
    });
    ::close(pipefd[1]);
    char buf[4096];
    ssize_t n = ::read(pipefd[0], buf, sizeof buf);
    ::close(pipefd[0]);
    std::string flags(buf, n > 0 ? static_cast<size_t>(n) : 0);
    ASSERT_EQ(code, 0) << "trial " << trial << " (negative: killed by that signal)";
    resets += flags.find('r') != std::string::npos;
    reports += !flags.empty();
    fs::remove_all(dir);
  }
  RecordProperty("index_resets", resets);
  RecordProperty("trials_with_reports", reports);
  EXPECT_GT(reports, 0);
}

TEST(StoreDamage, FullDiskFailsWritesCleanlyAndReadsKeepWorking) {
  testing::TestDir tmp;
  auto blobs = make_blobs(50, 6);
  {
    auto store = open_store(tmp.path());
    fill(*store, blobs);
  }
  int code = in_child([&]() {
    ::signal(SIGXFSZ, SIG_IGN);
    uint64_t biggest = 0;
    for (const auto& e : fs::recursive_directory_iterator(tmp.path())) {
      if (e.is_regular_file()) biggest = std::max<uint64_t>(biggest, e.file_size());
    }
    struct rlimit limit = {biggest + 100000, biggest + 100000};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) return 10;
    // Big packs, so the active one grows past the limit.
    auto store = open_store(tmp.path(), false, 64 << 20);
    if (!store) return 2;
    auto more = make_blobs(400, 7);
    int failed = 0;
    for (const auto& b : more) {
      auto id = store->put_blob(b);
      if (!id.ok()) {
        ++failed;
        if (id.message().find("File too large") == std::string::npos) return 3;
      } else if (store->get_blob(id.value()) != b) {
        return 4;
      }
    }
    if (failed == 0) return 5;
    for (const auto& b : blobs) {
      if (store->get_blob(hash_bytes(b)) != b) return 6;
    }
    return 0;
  });
  ASSERT_EQ(code, 0);
  auto store = open_store(tmp.path());
  auto report = store->verify();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->clean());
  for (const auto& b : blobs) EXPECT_EQ(store->get_blob(hash_bytes(b)), b);
}

TEST(StoreDamage, ReadOnlyDirectoryServesReadsAndRefusesWrites) {
  testing::TestDir tmp;
  const std::string dir = tmp.at("cache");
  auto blobs = make_blobs(50, 8);
  {
    auto store = open_store(dir);
    fill(*store, blobs);
  }
  ::chmod(tmp.path().c_str(), 0755);
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    ::chmod(e.path().c_str(), e.is_directory() ? 0555 : 0444);
  }
  ::chmod(dir.c_str(), 0555);
  int code = in_child([&]() {
    // Root ignores permissions: drop to an unprivileged user first.
    if (::geteuid() == 0 && ::setuid(65534) != 0) return 10;
    auto store = open_store(dir);
    if (!store) return 2;
    for (const auto& b : blobs) {
      if (store->get_blob(hash_bytes(b)) != b) return 3;
    }
    if (!store->get_action(hash_bytes("action0"))) return 4;
    auto put = store->put_blob("new bytes");
    if (put.ok() || put.message().find("read-only") == std::string::npos) return 5;
    if (store->put_memo("t", "k", "v").ok()) return 6;
    if (store->clear().ok()) return 7;
    return 0;
  });
  for (const auto& e : fs::recursive_directory_iterator(dir)) ::chmod(e.path().c_str(), 0755);
  ::chmod(dir.c_str(), 0755);
  ASSERT_EQ(code, 0);
  // An explicitly read-only handle behaves the same.
  auto ro = open_store(dir, true);
  ASSERT_TRUE(ro);
  EXPECT_EQ(ro->get_blob(hash_bytes(blobs[0])), blobs[0]);
  EXPECT_FALSE(ro->put_blob("x").ok());
}

// Writes an archive entry the way a forger with the format would.
void entry(std::string* out, uint32_t type, const std::string& payload, uint64_t claimed = 0) {
  auto le = [&](uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
  };
  le(type, 4);
  le(claimed ? claimed : payload.size(), 8);
  out->append(payload);
  Hasher h;
  h.field(static_cast<uint64_t>(type));
  h.field(payload);
  le(h.digest().lo, 8);
}

std::string header() {
  return std::string("LXPKARC\n\x01\0\0\0\0\0\0\0", 16);
}

std::string end(uint64_t count) {
  std::string s;
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>(count >> (8 * i)));
  return s;
}

TEST(StoreDamage, MaliciousArchivesAreRejected) {
  testing::TestDir tmp;
  auto blobs = make_blobs(20, 9);
  {
    auto src = open_store(tmp.at("src"));
    fill(*src, blobs);
    ASSERT_TRUE(export_archive(*src, tmp.at("good.lpa")).ok());
  }
  std::string good;
  {
    std::ifstream in(tmp.at("good.lpa"), std::ios::binary);
    good.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto dst = open_store(tmp.at("dst"));
  ASSERT_TRUE(dst);
  auto try_import = [&](const std::string& bytes) {
    std::ofstream(tmp.at("bad.lpa"), std::ios::binary) << bytes;
    return import_archive(*dst, tmp.at("bad.lpa"));
  };

  // Truncated anywhere.
  for (size_t cut = 0; cut < good.size(); cut += 1 + good.size() / 97) {
    auto r = try_import(good.substr(0, cut));
    ASSERT_FALSE(r.ok()) << "cut at " << cut;
    EXPECT_NE(r.message().find("bad.lpa"), std::string::npos) << r.message();
  }
  // A flipped byte anywhere past the header.
  std::mt19937_64 rng(10);
  for (int i = 0; i < 50; ++i) {
    std::string bad = good;
    bad[16 + rng() % (bad.size() - 16)] ^= 0x20;
    ASSERT_FALSE(try_import(bad).ok());
  }
  // Trailing garbage, not an archive, empty.
  EXPECT_FALSE(try_import(good + "x").ok());
  EXPECT_FALSE(try_import("hello").ok());
  EXPECT_FALSE(try_import("").ok());
  // A blob whose bytes do not match its id, with a valid entry checksum.
  {
    std::string a = header();
    entry(&a, 1, std::string(16, '\x11') + "payload");
    entry(&a, 6, end(1));
    auto r = try_import(a);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find("does not match its hash"), std::string::npos) << r.message();
  }
  // A huge claimed size.
  {
    std::string a = header();
    entry(&a, 1, "tiny", 1ull << 62);
    auto r = try_import(a);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find("more than the file holds"), std::string::npos) << r.message();
  }
  // Unknown entry types and a lying end count.
  {
    std::string a = header();
    entry(&a, 99, "x");
    entry(&a, 6, end(1));
    EXPECT_FALSE(try_import(a).ok());
    std::string b = header();
    entry(&b, 6, end(5));
    EXPECT_FALSE(try_import(b).ok());
  }
  // Nothing of the above reached the index.
  auto stats = dst->stats();
  EXPECT_EQ(stats->actions, 0u);
  EXPECT_EQ(stats->memos, 0u);
  // Path tricks: a file record naming a path outside the cache is only an
  // index entry; import never creates or touches that path.
  {
    const std::string outside = tmp.at("outside.txt");
    std::string rec;
    auto le = [&](uint64_t v) {
      for (int i = 0; i < 8; ++i) rec.push_back(static_cast<char>(v >> (8 * i)));
    };
    std::string path = "../../" + outside;
    le(path.size());
    rec += path;
    for (int i = 0; i < 5 + 4; ++i) le(0);
    std::string a = header();
    entry(&a, 3, rec);
    entry(&a, 6, end(1));
    auto r = try_import(a);
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_FALSE(fs::exists(outside));
    EXPECT_TRUE(dst->get_file(path));
  }
  // The good archive still imports after all that.
  auto r = try_import(good);
  ASSERT_TRUE(r.ok()) << r.message();
  for (const auto& b : blobs) EXPECT_EQ(dst->get_blob(hash_bytes(b)), b);
  auto report = dst->verify();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->clean());
}

}  // namespace
}  // namespace lexpack::cache
