// Scan memos: encoding, and the check that lets a warm scan skip include
// resolution. The check asks exactly what check_closure_memo asks (the launcher's
// fast hit path), through the scan's shared stat answers.
#include "ninja_integration/scan_memo.h"

#include "ninja_integration/byte_codec.h"
#include "ninja_integration/file_state.h"

namespace lexpack::ninja {
namespace {

constexpr std::string_view kScanMemoFormat = "lexpack-scan-memo-1";

// The stat answer for a file, asked once per scan.
std::optional<cache::StatSignature> file_stat(const std::string& path, const std::string& cwd,
                                              ScanFileCache* shared) {
  std::string relative_to_cwd;
  if (path.empty() || path[0] != '/') relative_to_cwd = absolute_path(path, cwd);
  return shared->stat_once(path, relative_to_cwd.empty() ? path : relative_to_cwd);
}

std::optional<cache::StatSignature> dir_stat(const std::string& dir, DirStatCache* dirs) {
  auto it = dirs->find(dir);
  if (it != dirs->end()) return it->second;
  std::optional<cache::StatSignature> found;
  cache::StatSignature sig;
  if (stat_dir(dir, &sig)) found = sig;
  dirs->emplace(dir, found);
  return found;
}

}  // namespace

std::string encode_scan_memo(const ScanMemo& memo) {
  ByteWriter w;
  w.str(kScanMemoFormat);
  w.str(encode_closure_memo(memo.closure));
  w.u64(memo.deps.size());
  for (size_t i = 0; i < memo.deps.size(); ++i) {
    w.str(memo.deps[i]);
    w.u64(i < memo.sizes.size() ? memo.sizes[i] : 0);
  }
  return w.take();
}

bool decode_scan_memo(std::string_view bytes, ScanMemo* memo) {
  ByteReader r(bytes);
  std::string tag, closure;
  uint64_t n = 0;
  if (!r.str(&tag) || tag != kScanMemoFormat || !r.str(&closure) ||
      !decode_closure_memo(closure, &memo->closure) || !r.u64(&n) || n > bytes.size()) {
    return false;
  }
  memo->deps.resize(n);
  memo->sizes.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (!r.str(&memo->deps[i]) || !r.u64(&memo->sizes[i])) return false;
  }
  return r.done();
}

std::string check_scan_memo(const ClosureMemo& memo, const std::string& cwd, ScanFileCache* shared,
                            DirStatCache* dirs) {
  for (const auto& d : memo.dependencies) {
    std::optional<cache::StatSignature> now = file_stat(d.path, cwd, shared);
    if (!now) return "missing: " + d.path;
    if (!(*now == d.stat)) return "changed: " + d.path;
  }
  for (const auto& d : memo.probed_dirs) {
    std::optional<cache::StatSignature> now = dir_stat(d.dir, dirs);
    if (!d.check_each && now.has_value() == d.exists && (!now || *now == d.stat)) continue;
    for (const std::string& p : d.probes) {
      if (file_stat(p, cwd, shared)) return "appeared: " + p;
    }
  }
  for (const std::string& d : memo.absent_dirs) {
    if (dir_stat(d, dirs)) return "search directory appeared: " + d;
  }
  return {};
}

}  // namespace lexpack::ninja
