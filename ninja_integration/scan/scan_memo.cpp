// Scan memos: encoding, and the check that lets a warm scan skip include
// resolution. The check asks exactly what check_closure_memo asks (the launcher's
// fast hit path), through the scan's shared stat answers.
#include "ninja_integration/scan/scan_memo.h"

#include <unordered_map>

#include "base/byte_codec.h"
#include "base/file_stat.h"
#include "base/file_util.h"

namespace lexpack::scan {
namespace {

// 2: deps that are closure paths are written as their place in the closure.
constexpr std::string_view kScanMemoFormat = "lexpack-scan-memo-3";

// The scan's stat answers: files asked once per scan (shared by its
// threads), directories once per worker.
class ScanStats : public closure::MemoStatSource {
 public:
  ScanStats(const std::string& cwd, closure::ScanFileCache* shared, DirStatCache* dirs)
      : cwd_(cwd), shared_(shared), dirs_(dirs) {}

  bool stat_file(std::string_view path, base::StatSignature* sig) override {
    std::string p(path);
    std::optional<base::StatSignature> found =
        p.empty() || p[0] != '/' ? shared_->stat_once(p, base::absolute_path(p, cwd_))
                                 : shared_->stat_once(p, p);
    if (found) *sig = *found;
    return found.has_value();
  }

  bool stat_dir(std::string_view path, base::StatSignature* sig) override {
    std::string dir(path);
    auto it = dirs_->find(dir);
    if (it == dirs_->end()) {
      std::optional<base::StatSignature> found;
      if (base::StatSignature s; base::stat_dir(dir, &s)) found = s;
      it = dirs_->emplace(std::move(dir), found).first;
    }
    if (it->second) *sig = *it->second;
    return it->second.has_value();
  }

 private:
  const std::string& cwd_;
  closure::ScanFileCache* shared_;
  DirStatCache* dirs_;
};

}  // namespace

std::string encode_scan_memo(std::string_view closure_memo, const std::vector<ScanMemoDep>& deps) {
  base::VarintWriter w;
  w.reserve(kScanMemoFormat.size() + closure_memo.size() + 20 + deps.size() * 30);
  w.str(kScanMemoFormat);
  w.str(closure_memo);
  // Most deps are closure paths already absolute and normal: those are
  // written as their place in the closure, the others in full.
  w.u64(deps.size());
  for (const ScanMemoDep& d : deps) {
    w.u64(d.place);
    if (d.place == 0) w.str(d.path);
    w.u64(d.size);
  }
  return w.take();
}

bool scan_memo_closure(std::string_view bytes, std::string_view* closure) {
  // The layout encode_scan_memo() writes, the closure memo left in place.
  base::VarintReader r(bytes);
  std::string tag;
  uint64_t closure_size = 0;
  if (!r.str(&tag) || tag != kScanMemoFormat || !r.u64(&closure_size) ||
      closure_size > bytes.size() - r.pos()) {
    return false;
  }
  *closure = bytes.substr(r.pos(), closure_size);
  return true;
}

uint32_t PathTable::number(const std::string& path) {
  auto [it, added] = numbers_.emplace(path, uint32_t(paths_.size()));
  if (added) paths_.push_back(path);
  return it->second;
}

NumberedScan number_known_scan(KnownScan known, PathTable* paths) {
  NumberedScan out;
  out.deps.reserve(known.deps.size());
  for (const std::string& d : known.deps) out.deps.push_back(paths->number(d));
  out.sizes = std::move(known.sizes);
  out.sizes.resize(out.deps.size());
  out.exact = std::move(known.exact);
  return out;
}

std::string encode_known_scan(const NumberedScan& known) {
  base::VarintWriter w;
  w.u64(known.deps.size());
  for (size_t i = 0; i < known.deps.size(); ++i) {
    w.u64(known.deps[i]);
    w.u64(known.sizes[i]);
  }
  w.str(known.exact);
  return w.take();
}

bool decode_known_scan(std::string_view bytes, const std::vector<std::string>& paths,
                       KnownScan* known) {
  base::VarintReader r(bytes);
  uint64_t n = 0;
  if (!r.u64(&n) || n > bytes.size()) return false;
  known->deps.resize(n);
  known->sizes.resize(n);
  for (size_t i = 0; i < n; ++i) {
    uint64_t number = 0;
    if (!r.u64(&number) || number >= paths.size() || !r.u64(&known->sizes[i])) return false;
    known->deps[i] = paths[number];
  }
  return r.str(&known->exact) && r.done();
}

bool check_encoded_scan_memo(std::string_view bytes, const std::string& cwd,
                             closure::ScanFileCache* shared, DirStatCache* dirs,
                             std::vector<std::string>* deps, std::vector<uint64_t>* sizes) {
  std::string_view closure;
  if (!scan_memo_closure(bytes, &closure)) return false;
  base::VarintReader r(bytes);
  r.skip(size_t(closure.data() + closure.size() - bytes.data()));
  ScanStats stats(cwd, shared, dirs);
  cache::Hash128 action_key;
  bool uses_date = false;
  std::string changed;
  std::vector<std::string_view> closure_deps;
  if (!closure::check_encoded_closure_memo(closure, &stats, &action_key, &uses_date, &changed,
                                           &closure_deps) ||
      !changed.empty()) {
    return false;
  }
  uint64_t n = 0;
  if (!r.u64(&n) || n > bytes.size()) return false;
  deps->resize(n);
  sizes->resize(n);
  for (size_t i = 0; i < n; ++i) {
    uint64_t place = 0;
    if (!r.u64(&place) || place > closure_deps.size()) return false;
    if (place > 0) {
      (*deps)[i] = std::string(closure_deps[place - 1]);
    } else if (!r.str(&(*deps)[i])) {
      return false;
    }
    if (!r.u64(&(*sizes)[i])) return false;
  }
  return r.done();
}

}  // namespace lexpack::scan
