// Measures what packs buy: reading every listed file one by one (open, fstat,
// read, close) against reading the same bytes from the store, warm and with
// the page cache dropped, best of a few passes each, in wall time and in this
// thread's CPU time. Prints one key=value line per figure.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cache/store.h"

namespace {

using Clock = std::chrono::steady_clock;
using lexpack::cache::BlobId;
using lexpack::cache::Store;
using lexpack::cache::StoreOptions;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// CPU time of this thread: what a pass costs without the time other
// processes held the CPU (for cold passes it leaves out the I/O waits).
double thread_cpu_seconds() {
  struct timespec ts;
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

bool read_file(const std::string& path, std::string* out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  bool ok = ::fstat(fd, &st) == 0;
  if (ok) {
    out->resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < out->size()) {
      ssize_t n = ::read(fd, out->data() + done, out->size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    out->resize(done);
  }
  ::close(fd);
  return ok;
}

void drop_cache(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

// One pass of open/fstat/read/close over every file; returns a checksum so
// the reads cannot be optimized away.
uint64_t fs_pass(const std::vector<std::string>& files, std::vector<char>* buffer) {
  uint64_t sum = 0;
  for (const auto& path : files) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st;
    if (::fstat(fd, &st) == 0) {
      size_t size = static_cast<size_t>(st.st_size);
      if (buffer->size() < size) buffer->resize(size);
      ssize_t n = ::read(fd, buffer->data(), size);
      if (n > 0) sum += static_cast<unsigned char>((*buffer)[static_cast<size_t>(n) - 1]) + n;
    }
    ::close(fd);
  }
  return sum;
}

// The same bytes from the store: lookup, hash check, copy out.
uint64_t store_pass(Store& store, const std::vector<BlobId>& ids, std::vector<char>* buffer,
                    size_t* misses) {
  uint64_t sum = 0;
  for (const auto& id : ids) {
    auto bytes = store.get_blob(id);
    if (!bytes) {
      ++*misses;
      continue;
    }
    if (buffer->size() < bytes->size()) buffer->resize(bytes->size());
    std::memcpy(buffer->data(), bytes->data(), bytes->size());
    if (!bytes->empty()) sum += static_cast<unsigned char>(bytes->back()) + bytes->size();
  }
  return sum;
}

int usage() {
  std::fprintf(stderr,
               "usage: lexpack-bench-store --files-from LIST [--dir CACHE_DIR] [--passes N]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string list, dir;
  int passes = 5;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--files-from" && i + 1 < argc) {
      list = argv[++i];
    } else if (arg == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else if (arg == "--passes" && i + 1 < argc) {
      passes = std::atoi(argv[++i]);
      if (passes < 1) {
        std::fprintf(stderr, "lexpack-bench-store: error: --passes %s: need a count of 1 or more\n",
                     argv[i]);
        return 2;
      }
    } else {
      return usage();
    }
  }
  if (list.empty()) return usage();
  std::ifstream in(list);
  if (!in) {
    std::fprintf(stderr, "lexpack-bench-store: error: %s: cannot read the file list\n",
                 list.c_str());
    return 1;
  }
  std::vector<std::string> files;
  std::vector<std::string> contents;
  uint64_t total_bytes = 0;
  for (std::string line; std::getline(in, line);) {
    std::string bytes;
    if (line.empty() || !read_file(line, &bytes)) continue;
    total_bytes += bytes.size();
    files.push_back(line);
    contents.push_back(std::move(bytes));
  }
  if (files.empty()) {
    std::fprintf(stderr, "lexpack-bench-store: error: %s: no readable files listed\n",
                 list.c_str());
    return 1;
  }
  bool own_dir = dir.empty();
  if (own_dir) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "lexpack-bench-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) {
      std::fprintf(stderr, "lexpack-bench-store: error: cannot create a temporary directory\n");
      return 1;
    }
    dir = pattern;
  }
  StoreOptions options;
  options.dir = dir;
  options.auto_gc = false;
  options.max_size = ~0ull;

  std::vector<BlobId> ids;
  {
    auto opened = Store::open(options);
    if (!opened.ok()) {
      std::fprintf(stderr, "lexpack-bench-store: error: %s\n", opened.message().c_str());
      return 1;
    }
    auto& store = *opened.value();
    auto start = Clock::now();
    constexpr size_t kBatch = 2000;
    for (size_t i = 0; i < contents.size(); i += kBatch) {
      std::vector<std::string_view> views(
          contents.begin() + static_cast<long>(i),
          contents.begin() + static_cast<long>(std::min(i + kBatch, contents.size())));
      auto stored = store.put_blobs(views);
      if (!stored.ok()) {
        std::fprintf(stderr, "lexpack-bench-store: error: %s\n", stored.message().c_str());
        return 1;
      }
      ids.insert(ids.end(), stored->begin(), stored->end());
    }
    double put_s = seconds_since(start);
    auto stats = store.stats();
    std::printf("mode=store files=%zu bytes=%llu packs=%llu put_ms=%.1f\n", files.size(),
                static_cast<unsigned long long>(total_bytes),
                static_cast<unsigned long long>(stats.ok() ? stats->packs : 0), put_s * 1e3);
  }
  contents.clear();
  contents.shrink_to_fit();

  std::vector<char> buffer(1 << 20);
  std::vector<std::string> store_files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) store_files.push_back(e.path().string());
  }
  volatile uint64_t sink = 0;
  const double n = static_cast<double>(files.size());
  for (const char* mode : {"warm", "cold"}) {
    bool cold = std::strcmp(mode, "cold") == 0;
    // Each pass times the files, then the store; the best pass of each is
    // kept, so that other work on the machine does not decide the figures.
    double fs_best = 0, store_best = 0, fs_cpu_best = 0, store_cpu_best = 0;
    if (!cold) sink = sink + fs_pass(files, &buffer);  // warm: after one untimed pass
    for (int pass = 0; pass < passes; ++pass) {
      if (cold) {
        for (const auto& f : files) drop_cache(f);
      }
      auto t0 = Clock::now();
      double c0 = thread_cpu_seconds();
      sink = sink + fs_pass(files, &buffer);
      double fs_cpu_us = (thread_cpu_seconds() - c0) * 1e6 / n;
      double fs_us = seconds_since(t0) * 1e6 / n;

      // Store: a fresh handle (as a new compile process would have), the
      // packs and the index dropped from the page cache when cold; warm runs
      // after one untimed pass over that handle (packs mapped once each).
      if (cold) {
        for (const auto& f : store_files) drop_cache(f);
      }
      auto opened = Store::open(options);
      if (!opened.ok()) {
        std::fprintf(stderr, "lexpack-bench-store: error: %s\n", opened.message().c_str());
        return 1;
      }
      auto& store = *opened.value();
      size_t misses = 0;
      if (!cold) sink = sink + store_pass(store, ids, &buffer, &misses);
      auto t1 = Clock::now();
      double c1 = thread_cpu_seconds();
      sink = sink + store_pass(store, ids, &buffer, &misses);
      double store_cpu_us = (thread_cpu_seconds() - c1) * 1e6 / n;
      double store_us = seconds_since(t1) * 1e6 / n;
      if (misses) {
        std::fprintf(stderr, "lexpack-bench-store: error: %zu blobs missing from the store\n",
                     misses);
        return 1;
      }
      if (pass == 0 || fs_us < fs_best) fs_best = fs_us;
      if (pass == 0 || store_us < store_best) store_best = store_us;
      if (pass == 0 || fs_cpu_us < fs_cpu_best) fs_cpu_best = fs_cpu_us;
      if (pass == 0 || store_cpu_us < store_cpu_best) store_cpu_best = store_cpu_us;
    }
    std::printf(
        "mode=%s files=%zu passes=%d fs_us_per_file=%.2f store_us_per_file=%.2f ratio=%.1f "
        "fs_cpu_us_per_file=%.2f store_cpu_us_per_file=%.2f cpu_ratio=%.1f\n",
        mode, files.size(), passes, fs_best, store_best, fs_best / store_best, fs_cpu_best,
        store_cpu_best, fs_cpu_best / store_cpu_best);
  }
  if (own_dir) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  return 0;
}
