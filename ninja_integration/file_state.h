// What the launcher knows about one file: its stat signature, content hash
// and the include-like directives the lexer found in it. Backed by the store's
// file table so that an unchanged file costs one stat, no read and no lexing.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cache/hash.h"
#include "cache/status.h"
#include "cache/store.h"
#include "lexer/kernel.h"
#include "lexer/scan_result.h"

namespace lexpack::ninja {

class ScanFileCache;

// The signature fields of a stat(2) answer.
cache::StatSignature signature_of(const struct stat& st);

// stat(2) of `path`, following symlinks. False when the path does not exist
// or is not a regular file (`*is_dir` tells a directory apart when given).
bool stat_file(const std::string& path, cache::StatSignature* sig, bool* is_dir = nullptr);
bool stat_dir(const std::string& path, cache::StatSignature* sig);
// True when `path` names a directory (following symlinks).
bool is_directory(const std::string& path);

// Nanoseconds since the epoch, real-time clock.
int64_t now_ns();

// A signature whose mtime and ctime are at least a second older than `now`:
// a later write to the file cannot leave the signature unchanged.
bool signature_is_settled(const cache::StatSignature& sig, int64_t now);

// The include-like directives of one file, in source order.
struct IncludeDirective {
  lexer::DirectiveKind kind{};  // kInclude, kIncludeNext, kImport, kHasInclude, kHasIncludeNext
  bool angled = false;
  bool computed = false;
  std::string name;
  bool operator==(const IncludeDirective&) const = default;
};

struct FileSummary {
  cache::Hash128 content;
  std::vector<IncludeDirective> includes;
  bool uses_date = false;
  bool uses_time = false;  // __TIME__ or __TIMESTAMP__
  bool operator==(const FileSummary&) const = default;
};

// Stable encoding of a summary for the store (starts with a format tag).
std::string encode_summary(const FileSummary& summary);
bool decode_summary(std::string_view bytes, FileSummary* summary);

// The summary of a scan result.
FileSummary summarize(const lexer::ScanResult& scan, const cache::Hash128& content);

// Loads file summaries, from the store's file table when the stat signature
// still matches, else by reading, hashing and lexing the file (and recording
// the result when the signature is settled). `store` may be null.
class FileStates {
 public:
  FileStates(cache::Store* store, const lexer::Kernel* kernel) : store_(store), kernel_(kernel) {}

  // `path` as the compiler names it; `key_path` absolute, for the file table.
  cache::Result<FileSummary> load(const std::string& path, const std::string& key_path,
                                  const cache::StatSignature& sig);
  // The same, without copying a summary another TU of the scan already loaded.
  cache::Result<std::shared_ptr<const FileSummary>> load_shared(const std::string& path,
                                                                const std::string& key_path,
                                                                const cache::StatSignature& sig);

  // Shares summaries and stat answers with the other threads of one scan.
  void share(ScanFileCache* cache) { shared_ = cache; }
  ScanFileCache* shared() const { return shared_; }

  // Only the content hash (used for files the scan did not reach).
  cache::Result<cache::Hash128> content_hash(const std::string& path, const std::string& key_path,
                                             const cache::StatSignature& sig);

  uint64_t files_read() const { return files_read_; }

 private:
  cache::Store* store_;
  const lexer::Kernel* kernel_;
  ScanFileCache* shared_ = nullptr;
  uint64_t files_read_ = 0;
};

// Reads a whole file. False with *err set on failure.
bool read_file(const std::string& path, std::string* bytes, std::string* err);

// `path` made absolute against `cwd` (no normalization).
std::string absolute_path(const std::string& path, const std::string& cwd);

// `path` made absolute against `dir` and lexically normalized, exactly as
// std::filesystem::path::lexically_normal() gives it.
std::string normal_path(const std::string& path, const std::string& dir);

}  // namespace lexpack::ninja
