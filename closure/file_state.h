// What the launcher knows about one file: its stat signature, content hash
// and the include-like directives the lexer found in it. Backed by the store's
// file table so that an unchanged file costs one stat, no read and no lexing.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/file_stat.h"
#include "base/status.h"
#include "cache/hash/hash.h"
#include "cache/store.h"
#include "closure/file_summary.h"
#include "lexer/kernel.h"

namespace lexpack::closure {

class ScanFileCache;

// The error of a file whose signature is not the one it was read by: it
// changed since that signature was taken (a write under way, or an answer
// kept from before a change), and whether an error is that one.
base::Status changed_while_read(const std::string& path);
bool is_changed_while_read(const base::Status& status);

// Loads file summaries, from the store's file table when the stat signature
// still matches, else by reading, hashing and lexing the file (and recording
// the result when the signature is settled). `store` may be null.
class FileStates {
 public:
  FileStates(cache::Store* store, const lexer::Kernel* kernel) : store_(store), kernel_(kernel) {}

  // `path` as the compiler names it; `key_path` absolute, for the file table.
  base::Result<FileSummary> load(const std::string& path, const std::string& key_path,
                                 const base::StatSignature& sig);
  // The same, without copying a summary another TU of the scan already loaded.
  base::Result<std::shared_ptr<const FileSummary>> load_shared(const std::string& path,
                                                               const std::string& key_path,
                                                               const base::StatSignature& sig);

  // Shares summaries and stat answers with the other threads of one scan.
  void share(ScanFileCache* cache) { shared_ = cache; }
  ScanFileCache* shared() const { return shared_; }

  // Only the content hash (used for files the scan did not reach).
  base::Result<cache::Hash128> content_hash(const std::string& path, const std::string& key_path,
                                            const base::StatSignature& sig);

  // The compile that made a precompiled header with these bytes, when
  // lexpack made it (pch_maker.h); zero otherwise.
  cache::Hash128 pch_maker(const cache::Hash128& content) const;

  uint64_t files_read() const { return files_read_; }

 private:
  cache::Store* store_;
  const lexer::Kernel* kernel_;
  ScanFileCache* shared_ = nullptr;
  uint64_t files_read_ = 0;
};

}  // namespace lexpack::closure
