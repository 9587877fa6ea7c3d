// Scan memos: encoding, and the check that lets a warm scan skip include
// resolution. The check asks exactly what check_closure_memo asks (the launcher's
// fast hit path), through the scan's shared stat answers.
#include "scan/scan_memo.h"

#include <algorithm>
#include <unordered_map>

#include "base/byte_codec.h"
#include "base/file_stat.h"
#include "base/file_util.h"

namespace lexpack::scan {
namespace {

// 2: deps that are closure paths are written as their place in the closure.
constexpr std::string_view kScanMemoFormat = "lexpack-scan-memo-3";
constexpr std::string_view kGroupMemoFormat = "lexpack-scan-group-1";

// stat_dir() of `path`, asked once per `dirs`.
bool stat_dir_once(DirStatCache* dirs, std::string_view path, base::StatSignature* sig) {
  std::string dir(path);
  auto it = dirs->find(dir);
  if (it == dirs->end()) {
    std::optional<base::StatSignature> found;
    if (base::StatSignature s; base::stat_dir(dir, &s)) found = s;
    it = dirs->emplace(std::move(dir), found).first;
  }
  if (it->second) *sig = *it->second;
  return it->second.has_value();
}

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
    return stat_dir_once(dirs_, path, sig);
  }

 private:
  const std::string& cwd_;
  closure::ScanFileCache* shared_;
  DirStatCache* dirs_;
};

// The stat answers of a group memo's check: it names each file once, so
// each is stat'ed as given (relative to the working directory), without
// the scan's shared table; directories once.
class PlainStats : public closure::MemoStatSource {
 public:
  explicit PlainStats(DirStatCache* dirs) : dirs_(dirs) {}

  bool stat_file(std::string_view path, base::StatSignature* sig) override {
    path_.assign(path);
    return base::stat_file(path_, sig);
  }

  bool stat_dir(std::string_view path, base::StatSignature* sig) override {
    return stat_dir_once(dirs_, path, sig);
  }

 private:
  DirStatCache* dirs_;
  std::string path_;
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

uint32_t PathTable::number(std::string_view path) {
  if (auto it = numbers_.find(path); it != numbers_.end()) return it->second;
  uint32_t number = uint32_t(paths_.size());
  numbers_.emplace(std::string(path), number);
  paths_.emplace_back(path);
  return number;
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

bool decode_numbered_scan(std::string_view bytes, size_t paths, NumberedScan* known) {
  base::VarintReader r(bytes);
  uint64_t n = 0;
  if (!r.u64(&n) || n > bytes.size()) return false;
  known->deps.resize(n);
  known->sizes.resize(n);
  for (size_t i = 0; i < n; ++i) {
    uint64_t number = 0;
    if (!r.u64(&number) || number >= paths || !r.u64(&known->sizes[i])) return false;
    known->deps[i] = uint32_t(number);
  }
  return r.str(&known->exact) && r.done();
}

bool decode_known_scan(std::string_view bytes, const std::vector<std::string>& paths,
                       KnownScan* known) {
  NumberedScan numbered;
  if (!decode_numbered_scan(bytes, paths.size(), &numbered)) return false;
  known->deps.clear();
  known->deps.reserve(numbered.deps.size());
  for (uint32_t number : numbered.deps) known->deps.push_back(paths[number]);
  known->sizes = std::move(numbered.sizes);
  known->exact = std::move(numbered.exact);
  return true;
}

namespace {

// The deps and sizes that follow the closure memo in a scan memo, closure
// paths named by their place in `closure_deps`: `emit(path, size)` for each,
// the path a view into the memo.
template <class Emit>
bool read_memo_deps(base::VarintReader* r, std::string_view bytes,
                    const std::vector<std::string_view>& closure_deps, Emit emit) {
  uint64_t n = 0;
  if (!r->u64(&n) || n > bytes.size()) return false;
  for (size_t i = 0; i < n; ++i) {
    uint64_t place = 0, size = 0, length = 0;
    std::string_view path;
    if (!r->u64(&place) || place > closure_deps.size()) return false;
    if (place > 0) {
      path = closure_deps[place - 1];
    } else if (r->u64(&length) && length <= bytes.size() - r->pos()) {
      path = bytes.substr(r->pos(), length);
      r->skip(length);
    } else {
      return false;
    }
    if (!r->u64(&size)) return false;
    emit(path, size);
  }
  return r->done();
}

// A reader past the closure memo of scan memo `bytes`, and that memo.
bool open_scan_memo(std::string_view bytes, base::VarintReader* r, std::string_view* closure) {
  if (!scan_memo_closure(bytes, closure)) return false;
  r->skip(size_t(closure->data() + closure->size() - bytes.data()));
  return true;
}

}  // namespace

bool check_encoded_scan_memo(std::string_view bytes, const std::string& cwd,
                             closure::ScanFileCache* shared, DirStatCache* dirs,
                             std::vector<std::string_view>* deps, std::vector<uint64_t>* sizes,
                             const closure::ContentLookup* content, bool* settled) {
  base::VarintReader r(bytes);
  std::string_view closure;
  if (!open_scan_memo(bytes, &r, &closure)) return false;
  ScanStats stats(cwd, shared, dirs);
  cache::Hash128 action_key;
  bool uses_date = false;
  std::string changed;
  std::vector<std::string_view> closure_deps;
  std::vector<closure::MemoRefresh> refresh;
  if (!closure::check_encoded_closure_memo(closure, &stats, &action_key, &uses_date, &changed,
                                           &closure_deps, content, settled ? &refresh : nullptr) ||
      !changed.empty()) {
    return false;
  }
  if (settled) {
    const int64_t now = base::now_ns();
    *settled = std::any_of(refresh.begin(), refresh.end(), [&](const closure::MemoRefresh& f) {
      return f.kind == closure::MemoRefresh::Kind::kDependency &&
             base::signature_is_settled(f.stat, now);
    });
  }
  deps->clear();
  sizes->clear();
  return read_memo_deps(&r, bytes, closure_deps, [&](std::string_view path, uint64_t size) {
    deps->push_back(shared->intern(path));
    sizes->push_back(size);
  });
}

bool GroupMemoBuilder::add(std::string_view scan_memo, std::string_view exact) {
  base::VarintReader r(scan_memo);
  std::string_view closure_bytes;
  thread_local std::vector<std::string_view> closure_deps;
  if (!open_scan_memo(scan_memo, &r, &closure_bytes) ||
      !closure::closure_memo_dependencies(closure_bytes, &closure_deps)) {
    return false;
  }
  NumberedScan known;
  std::vector<std::string_view> deps;
  if (!read_memo_deps(&r, scan_memo, closure_deps, [&](std::string_view path, uint64_t size) {
        deps.push_back(path);
        known.sizes.push_back(size);
      })) {
    return false;
  }
  if (!closures_.add(closure_bytes)) return false;
  known.deps.reserve(deps.size());
  for (std::string_view d : deps) known.deps.push_back(paths_.number(d));
  known.exact.assign(exact);
  answers_.push_back(encode_known_scan(known));
  return true;
}

std::string GroupMemoBuilder::encode() const {
  base::VarintWriter w;
  w.str(kGroupMemoFormat);
  w.str(closures_.encode());
  w.u64(paths_.paths().size());
  for (const std::string& p : paths_.paths()) w.str(p);
  w.u64(answers_.size());
  for (const std::string& a : answers_) w.str(a);
  return w.take();
}

bool check_encoded_group_memo(std::string_view bytes, DirStatCache* dirs, KnownScans* known) {
  base::VarintReader r(bytes);
  std::string tag;
  std::string_view closure;
  uint64_t closure_size = 0;
  if (!r.str(&tag) || tag != kGroupMemoFormat || !r.u64(&closure_size) ||
      closure_size > bytes.size() - r.pos()) {
    return false;
  }
  closure = bytes.substr(r.pos(), closure_size);
  r.skip(closure_size);
  PlainStats stats(dirs);
  cache::Hash128 action_key;
  bool uses_date = false;
  std::string changed;
  if (!closure::check_encoded_closure_memo(closure, &stats, &action_key, &uses_date, &changed,
                                           nullptr) ||
      !changed.empty()) {
    return false;
  }
  uint64_t n = 0;
  if (!r.u64(&n) || n > bytes.size()) return false;
  known->paths.resize(n);
  for (std::string& p : known->paths) {
    if (!r.str(&p)) return false;
  }
  if (!r.u64(&n) || n > bytes.size()) return false;
  known->answers.resize(n);
  for (std::string& a : known->answers) {
    if (!r.str(&a)) return false;
  }
  return r.done();
}

}  // namespace lexpack::scan
