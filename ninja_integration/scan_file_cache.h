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
#include <vector>

#include "cache/store.h"
#include "ninja_integration/file_state.h"
#include "ninja_integration/include_resolver.h"

namespace lexpack::ninja {

class ScanFileCache {
 public:
  // The stat answer recorded for `abs_path`: nullopt when none yet; an empty
  // inner optional when the path is not a regular file.
  std::optional<std::optional<cache::StatSignature>> find_stat(const std::string& abs_path);
  void put_stat(const std::string& abs_path, const std::optional<cache::StatSignature>& sig);
  // stat_file() of `path` (relative to the working directory), asked once per
  // scan under `abs_path`; nullopt when it is not a regular file.
  std::optional<cache::StatSignature> stat_once(const std::string& path,
                                                const std::string& abs_path);

  // The summary recorded for `abs_path` when it was taken at `sig`.
  std::shared_ptr<const FileSummary> find_summary(const std::string& abs_path,
                                                  const cache::StatSignature& sig);
  void put_summary(const std::string& abs_path, const cache::StatSignature& sig,
                   std::shared_ptr<const FileSummary> summary);

  // One search's outcome and the candidates it found missing, so that a TU
  // that asks the same question reports the same failed probes.
  struct Answer {
    Resolution resolution;
    std::vector<std::string> failed;
  };
  // A small number for one (working directory, compiler kind, search chain).
  uint64_t context_id(const std::string& context);
  std::shared_ptr<const Answer> find_answer(const std::string& key);
  void put_answer(const std::string& key, std::shared_ptr<const Answer> answer);

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
  std::mutex contexts_mu_;
  std::unordered_map<std::string, uint64_t> contexts_;
  struct AnswerShard {
    std::mutex mu;
    std::unordered_map<std::string, std::shared_ptr<const Answer>> answers;
  };
  std::array<AnswerShard, kShards> answer_shards_;
};

}  // namespace lexpack::ninja
