// The per-TU memo of `lexpack scan`: one TU's closure memo (every dependency's
// stat signature and every probed directory) with the answer the scan gave, so
// a warm scan checks stats instead of resolving every include again.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/view_map.h"
#include "closure/closure_memo.h"
#include "closure/scan_file_cache.h"

namespace lexpack::scan {

// The scan memo of each TU (by translation unit key), and beside it whether
// its deps are exact (and why not) and its module lines (scan_command.cpp).
constexpr std::string_view kScanMemoTable = "scan";
constexpr std::string_view kExactMemoTable = "scan_exact";

// One dependency in a TU's scan answer.
struct ScanMemoDep {
  std::string_view path;  // absolute, normalized
  uint64_t size = 0;
  // 1-based place of `path` among the closure memo's dependencies (stored as
  // that number), 0 when it is not one of them (stored in full).
  uint64_t place = 0;
};
// The memo: the TU's encoded closure memo and the scan's answer, `deps` with
// the source first.
std::string encode_scan_memo(std::string_view closure_memo, const std::vector<ScanMemoDep>& deps);

// Per-thread stat answers for directories, shared by the TUs one worker checks.
using DirStatCache = std::unordered_map<std::string, std::optional<base::StatSignature>>;

// A warm scan's question on the encoded memo, checked where it lies (no
// string built per dependency or probe): true when every signature recorded
// still holds, with the memo's deps (kept by `shared`, ScanFileCache::intern)
// and sizes; false when something changed or `bytes` is not a scan memo.
// `content` answers for a file the memo records by its content (written just
// before the memo was: closure::YoungFiles::kCheckedByContent), and *settled
// (when given) tells whether one of those is now settled: the memo may then
// be made again with its signature.
bool check_encoded_scan_memo(std::string_view bytes, const std::string& cwd,
                             closure::ScanFileCache* shared, DirStatCache* dirs,
                             std::vector<std::string_view>* deps, std::vector<uint64_t>* sizes,
                             const closure::ContentLookup* content = nullptr,
                             bool* settled = nullptr);

// The encoded closure memo inside a scan memo (what `lexpack server` watches
// for that TU); false when `bytes` is not a scan memo.
bool scan_memo_closure(std::string_view bytes, std::string_view* closure);

// A TU's warm-scan answer as `lexpack server` keeps it and sends it: the
// memo's deps and sizes, checked, and the exact record beside the memo.
struct KnownScan {
  std::vector<std::string> deps;
  std::vector<uint64_t> sizes;
  std::string exact;
};
// The paths of one reply's answers, each written once (a build's TUs share
// most of their files): answers name them by number.
class PathTable {
 public:
  uint32_t number(std::string_view path);
  const std::vector<std::string>& paths() const { return paths_; }

 private:
  std::vector<std::string> paths_;
  base::ViewMap<uint32_t> numbers_;
};
// A KnownScan whose deps are numbered in a PathTable already.
struct NumberedScan {
  std::vector<uint32_t> deps;
  std::vector<uint64_t> sizes;
  std::string exact;
};
NumberedScan number_known_scan(KnownScan known, PathTable* paths);
std::string encode_known_scan(const NumberedScan& known);
// The numbers encode_known_scan() wrote, each below `paths` (the size of the
// table they name).
bool decode_numbered_scan(std::string_view bytes, size_t paths, NumberedScan* known);
bool decode_known_scan(std::string_view bytes, const std::vector<std::string>& paths,
                       KnownScan* known);
// What a server answered for the entries of a scan: per entry, its encoded
// KnownScan (empty when it knows none), and the paths they name.
struct KnownScans {
  std::vector<std::string> answers;
  std::vector<std::string> paths;
};

// The memo of one directory's TUs taken together (by a key of all their
// translation unit keys, scan_command.cpp): the union of their closure
// memos and each TU's answer. A warm scan of an unchanged build checks it
// instead of one memo per TU, so each file is checked once, not once per TU
// that reads it.
constexpr std::string_view kGroupMemoTable = "scan_group";

// Makes a group memo from its TUs' scan memos, added in the entries' order.
class GroupMemoBuilder {
 public:
  // Adds one TU's scan memo and the exact record beside it; false (nothing
  // added) when `scan_memo` is not a scan memo. Neither need outlive the call.
  bool add(std::string_view scan_memo, std::string_view exact);
  std::string encode() const;

 private:
  closure::ClosureMemoUnion closures_;
  PathTable paths_;
  std::vector<std::string> answers_;
};

// The check of check_encoded_scan_memo() on the union, from inside the
// group's directory (relative paths are stat'ed as given): true when every
// signature recorded still holds, with each TU's answer (encode_known_scan)
// in `known`, in the order the memo was made; false when something changed
// or `bytes` is not a group memo.
bool check_encoded_group_memo(std::string_view bytes, DirStatCache* dirs, KnownScans* known);

}  // namespace lexpack::scan
