// Proofs that paths are still missing at the cost of one stat per directory,
// not one per path: a directory gains or loses an entry only by changing its
// own signature, and the kernel resolves a path's components in order, so a
// path under a missing directory stays missing while the deepest existing
// ancestor holds no entry for the next component.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/byte_codec.h"
#include "base/file_stat.h"
#include "base/view_map.h"
#include "closure/memo_stat_source.h"

namespace lexpack::closure {

class ScanFileCache;

// Whether `path` (relative to `cwd`, "" for this process's) is no entry at
// all: a dangling symlink is missing to stat(2) yet its target may appear
// while its directory stays the same.
bool no_entry(const std::string& path, const std::string& cwd = {});

// Directory signatures, each taken once; a directory under a missing one is
// missing without a stat (the kernel resolves components in order).
class DirSignatures {
 public:
  // stat(2) of a directory: nullopt unless it is one.
  using Stat = std::function<std::optional<base::StatSignature>(const std::string&)>;
  explicit DirSignatures(Stat stat) : stat_(std::move(stat)) {}

  const std::optional<base::StatSignature>& operator()(std::string_view dir);

 private:
  Stat stat_;
  base::ViewMap<std::optional<base::StatSignature>> sigs_;  // a string made per directory only
};

// Whether the absolute `path` may be a missing directory that its parent's
// signature vouches for: nothing there (ENOENT), or a regular file (a
// directory made in its place is a change of that file, which the memo
// checks).
bool vouchable_entry(const std::string& path);

// Missing directories grouped under their deepest existing ancestor.
class VouchedGroups {
 public:
  struct Group {
    std::string ancestor;  // "" for the working directory
    base::StatSignature stat;
    std::vector<std::string> dirs;
  };
  // `cwd`: what relative paths are relative to ("" for this process's);
  // `shared`: answers kept for the scan (each entry asked once), or null.
  explicit VouchedGroups(std::string cwd, ScanFileCache* shared = nullptr)
      : cwd_(std::move(cwd)), shared_(shared) {}

  // Puts missing `dir` under its ancestor (signatures from `dir_sig`, settled
  // by `now`); false when it cannot be vouched for (a fresh ancestor, a
  // symlink or an odd component next to it): then it is checked on its own.
  bool add(std::string_view dir, DirSignatures& dir_sig, int64_t now);

  // Stable while no more are added.
  const std::deque<Group>& groups() const { return groups_; }

 private:
  bool absent_entry(std::string_view path);

  std::deque<Group> groups_;
  base::ViewMap<size_t> index_;
  base::ViewMap<bool> entries_;
  std::string cwd_;
  ScanFileCache* shared_;
};

// That some files are missing, held as the signatures of their directories,
// encoded so that a check skips the names under every unchanged directory
// (a computed include's candidates can number tens of thousands).
// Layout: the existing directories (dir, signature, names), the vouched
// groups (ancestor, signature, missing dirs), the paths checked one by one;
// each list of names behind its byte size.
class AbsenceProof {
 public:
  // Records `missing` (paths found missing just before). Directories are
  // stat'ed now; one whose signature is too fresh to rely on is not trusted.
  static std::string encode(const std::vector<std::string>& missing);

  // False when `bytes` is no proof; else *appeared is empty while every path
  // is still missing, or "appeared: <path>". No bytes: no path.
  static bool check(std::string_view bytes, MemoStatSource* stats, std::string* appeared);
};

}  // namespace lexpack::closure
