// What an EvaluationShare holds (each file's bytes, scan and parsed
// defines; the compiler's answers; the header evaluations), for the files of
// closure/ that evaluate with one: presence_evaluation.cpp and closure_host.cpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/file_stat.h"
#include "base/once_map.h"
#include "closure/compiler_facts.h"
#include "closure/presence_evaluation.h"
#include "closure/scan_file_cache.h"
#include "preprocessor/header_cache.h"
#include "preprocessor/preprocessor.h"

namespace lexpack::closure {

// A file by device and inode: looked up for every file a TU enters.
struct InodeHash {
  size_t operator()(const std::pair<uint64_t, uint64_t>& id) const {
    return size_t(id.second * 0x9E3779B97F4A7C15ull ^ id.first);
  }
};
template <typename V>
using ByInode = std::unordered_map<std::pair<uint64_t, uint64_t>, V, InodeHash>;

// One file's bytes and their lexer scan, as several TUs' evaluations share it.
struct LoadedFile {
  base::StatSignature stat;
  std::shared_ptr<const LexedFile> text;               // never null
  std::optional<preprocessor::ParsedDefines> defines;  // with a share
  // The share's HeaderCache::carries() when last loaded or found.
  mutable std::atomic<uint32_t> last_used{0};
};

struct EvaluationShare::Impl {
  std::mutex mu;
  ByInode<std::shared_ptr<const LoadedFile>> files;
  std::map<std::string, CompilerFacts> facts;              // by facts key
  std::map<std::string, CompilerFacts> latest;             // by base key: the most answers
  std::map<std::string, std::set<std::string>> questions;  // by base key
  // Each compiler run, once per facts key: a TU that needs the answers of a
  // run under way waits for it instead of running the compiler again.
  base::OnceMap<base::Result<CompilerFacts>> asking;
  // Builtin queries written out in the files read so far: (op, argument).
  std::set<std::pair<std::string, std::string>> candidates;
  // The files the scan's walk read and lexed (null outside a scan).
  ScanFileCache* walked = nullptr;
  // Each header's evaluations by the macro state they read (thread-safe).
  std::unique_ptr<preprocessor::HeaderCache> headers =
      std::make_unique<preprocessor::HeaderCache>();
  // Predefined macros parsed once per text.
  std::map<std::string,
           std::shared_ptr<const std::vector<std::shared_ptr<const preprocessor::Macro>>>>
      predefined;
};

}  // namespace lexpack::closure
