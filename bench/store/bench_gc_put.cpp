// How long a put can take when it finds the cache over its size limit: fills
// a cache past the limit without eviction, then puts one blob at a time with
// automatic eviction on and prints the slowest put with and without eviction
// work in it. Prints one key=value line per figure.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "cache/store.h"

namespace {

using Clock = std::chrono::steady_clock;
using lexpack::cache::Store;
using lexpack::cache::StoreOptions;

std::string random_blob(std::mt19937_64& rng, size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i + 8 <= n; i += 8) {
    uint64_t v = rng();
    std::memcpy(&s[i], &v, 8);
  }
  return s;
}

struct Sizes {
  uint64_t blobs = 0;
  uint64_t pack_bytes = 0;
};

Sizes sizes(Store& store) {
  auto stats = store.stats();
  return stats.ok() ? Sizes{stats->blobs, stats->pack_bytes} : Sizes{};
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t pack_mib = 16;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--pack-mib" && i + 1 < argc) {
      pack_mib = std::strtoull(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: lexpack-bench-gc-put [--pack-mib N]\n");
      return 2;
    }
  }
  if (pack_mib == 0) {
    std::fprintf(stderr, "lexpack-bench-gc-put: error: --pack-mib: need 1 or more\n");
    return 2;
  }
  std::string pattern = (std::filesystem::temp_directory_path() / "lexpack-bench-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) {
    std::fprintf(stderr, "lexpack-bench-gc-put: error: cannot create a temporary directory\n");
    return 1;
  }
  const std::string dir = pattern;
  constexpr size_t kBlob = 4096;
  const uint64_t pack = pack_mib << 20;
  StoreOptions options;
  options.dir = dir;
  options.pack_size = pack;
  options.max_size = 10 * pack;  // evicting from 12 packs down to 9: 3 packs of recent blobs
  options.auto_gc = false;
  std::mt19937_64 rng(42);
  int status = 0;
  {
    auto opened = Store::open(options);
    if (!opened.ok()) {
      std::fprintf(stderr, "lexpack-bench-gc-put: error: %s\n", opened.message().c_str());
      return 1;
    }
    auto& store = *opened.value();
    for (uint64_t filled = 0; filled < 11 * pack; filled += 256 * kBlob) {
      std::vector<std::string> blobs;
      for (int i = 0; i < 256; ++i) blobs.push_back(random_blob(rng, kBlob));
      std::vector<std::string_view> views(blobs.begin(), blobs.end());
      auto stored = store.put_blobs(views);
      if (!stored.ok()) {
        std::fprintf(stderr, "lexpack-bench-gc-put: error: %s\n", stored.message().c_str());
        return 1;
      }
    }
  }
  options.auto_gc = true;
  auto opened = Store::open(options);
  if (!opened.ok()) {
    std::fprintf(stderr, "lexpack-bench-gc-put: error: %s\n", opened.message().c_str());
    return 1;
  }
  auto& store = *opened.value();
  // Puts of new blobs until the active pack rolls over and the eviction that
  // starts then is finished.
  double worst_evicting = 0, worst_plain = 0, total_ms = 0;
  uint64_t puts = 0, evicting_puts = 0;
  const uint64_t limit = 2 * pack / kBlob;
  for (uint64_t i = 0; i < limit; ++i) {
    Sizes before = sizes(store);
    std::string blob = random_blob(rng, kBlob);
    auto t = Clock::now();
    auto put = store.put_blob(blob);
    double ms = std::chrono::duration<double>(Clock::now() - t).count() * 1e3;
    if (!put.ok()) {
      std::fprintf(stderr, "lexpack-bench-gc-put: error: %s\n", put.message().c_str());
      status = 1;
      break;
    }
    ++puts;
    total_ms += ms;
    // Eviction work drops blobs, drops packs, or copies blobs forward.
    Sizes after = sizes(store);
    if (after.blobs != before.blobs + 1 || after.pack_bytes < before.pack_bytes ||
        after.pack_bytes > before.pack_bytes + 2 * kBlob) {
      ++evicting_puts;
      worst_evicting = std::max(worst_evicting, ms);
    } else {
      worst_plain = std::max(worst_plain, ms);
    }
  }
  auto stats = store.stats();
  std::printf(
      "mode=gc_put pack_mib=%llu blob_bytes=%zu puts=%llu evicting_puts=%llu "
      "worst_evicting_put_ms=%.1f worst_plain_put_ms=%.1f mean_put_ms=%.3f "
      "ratio_worst_evicting_over_plain=%.1f packs_after=%llu\n",
      static_cast<unsigned long long>(pack_mib), kBlob, static_cast<unsigned long long>(puts),
      static_cast<unsigned long long>(evicting_puts), worst_evicting, worst_plain,
      puts ? total_ms / static_cast<double>(puts) : 0.0,
      worst_plain > 0 ? worst_evicting / worst_plain : 0.0,
      static_cast<unsigned long long>(stats.ok() ? stats->packs : 0));
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return status;
}
