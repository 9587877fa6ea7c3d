// What one whole-build scan learns about files, shared by all its threads:
// each path is stat'ed, looked up in the store or lexed once per scan rather
// than once per TU. Only the scan uses it; a launcher run sees one TU.
#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "cache/store.h"
#include "ninja_integration/file_state.h"

namespace lexpack::ninja {

class ScanFileCache {
 public:
  // The stat answer recorded for `abs_path`: nullopt when none yet; an empty
  // inner optional when the path is not a regular file.
  std::optional<std::optional<cache::StatSignature>> find_stat(const std::string& abs_path);
  void put_stat(const std::string& abs_path, const std::optional<cache::StatSignature>& sig);

  // The summary recorded for `abs_path` when it was taken at `sig`.
  std::shared_ptr<const FileSummary> find_summary(const std::string& abs_path,
                                                  const cache::StatSignature& sig);
  void put_summary(const std::string& abs_path, const cache::StatSignature& sig,
                   std::shared_ptr<const FileSummary> summary);

 private:
  struct Entry {
    bool stat_known = false;
    std::optional<cache::StatSignature> stat;
    cache::StatSignature summary_sig;
    std::shared_ptr<const FileSummary> summary;
  };
  struct Shard {
    std::mutex mu;
    std::unordered_map<std::string, Entry> entries;
  };
  static constexpr size_t kShards = 64;
  Shard& shard_of(const std::string& abs_path);
  std::array<Shard, kShards> shards_;
};

}  // namespace lexpack::ninja
