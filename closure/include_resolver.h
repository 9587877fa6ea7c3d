// Finds the file an #include names the way gcc and clang do: the includer's
// directory for "...", then -iquote, then the bracket chain; #include_next
// goes on after the directory where the current file was found. Every
// candidate that does not exist is reported, so a header added earlier in the
// path changes the key.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/view_map.h"
#include "cache/store.h"
#include "closure/resolution.h"
#include "closure/scan_file_cache.h"
#include "compiler/identify_compiler.h"
#include "compiler/search_list.h"

namespace lexpack::closure {

class IncludeResolver {
 public:
  IncludeResolver(const compiler::SearchList& list, compiler::CompilerKind kind);
  // Also takes and records stat answers in `shared` (may be null), keyed by
  // the path made absolute against `cwd`.
  IncludeResolver(const compiler::SearchList& list, compiler::CompilerKind kind,
                  ScanFileCache* shared, std::string cwd);

  // Resolves `name`. `includer_dir` is the directory of the including file;
  // `includer_index` where that file was found. Every failed candidate of the
  // search is appended to *failed (paths), also when the answer was known.
  Resolution resolve(std::string_view name, bool angled, bool next, std::string_view includer_dir,
                     int includer_index, std::vector<std::string>* failed);
  // The same search, answered with its failed candidates; the answer is shared
  // by every asker of the same question and never changes.
  std::shared_ptr<const ScanFileCache::Answer> answer(std::string_view name, bool angled, bool next,
                                                      std::string_view includer_dir,
                                                      int includer_index);

  // Numbers the failed candidates of the answers this resolver makes from
  // now on in `ids` (ScanFileCache::candidate_ids).
  void number_candidates_in(ScanFileCache* ids) { ids_ = ids; }

  size_t chain_size() const { return chain_.size(); }
  // Tells this resolver's search context apart from others of the same scan;
  // empty without a ScanFileCache.
  const std::string& context() const { return shared_prefix_; }
  const std::vector<std::string>& chain() const { return chain_; }

 private:
  bool probe(const std::string& path, base::StatSignature* sig);
  bool dir_exists(std::string_view dir);
  // `path` (found) with each "dir/.." taken out where that names the same
  // directory, else `path` itself. A header that includes "../x.h" from a
  // subdirectory of x.h's own then finds x.h by the name it had, so an
  // include cycle through ".." ends where the walk met the file before
  // instead of growing the path until the system refuses it.
  std::string fold_dot_dots(std::string path);
  std::optional<base::StatSignature> dir_signature(const std::string& dir);
  Resolution search(std::string_view name, bool use_includer_dir, std::string_view includer_dir,
                    size_t start, std::vector<std::string>* failed);

  std::vector<std::string> chain_;  // quote dirs then bracket dirs
  size_t bracket_start_ = 0;
  compiler::CompilerKind kind_;
  ScanFileCache* shared_ = nullptr;
  ScanFileCache* ids_ = nullptr;
  std::string cwd_;
  std::string shared_prefix_;  // this resolver's context id in `shared_`
  // Without a scan's cache: each candidate's answer, asked once.
  std::unordered_map<std::string, std::optional<base::StatSignature>> probes_;
  base::ViewMap<bool> dirs_;  // directory -> exists
  // Earlier answers by (includer dir if searched, start, name): the same
  // <vector> is asked for by hundreds of headers. Without a scan's cache
  // only: with one, its answers are asked directly.
  std::unordered_map<std::string, std::shared_ptr<const ScanFileCache::Answer>> answers_;
};

}  // namespace lexpack::closure
