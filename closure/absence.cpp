// Missing-path proofs: see absence.h.
#include "closure/absence.h"

#include <sys/stat.h>

#include <cerrno>
#include <map>

#include "base/file_stat.h"
#include "base/file_util.h"
#include "closure/file_state.h"
#include "closure/scan_file_cache.h"

namespace lexpack::closure {

bool no_entry(const std::string& path, const std::string& cwd) {
  struct stat st;
  const std::string at = cwd.empty() ? path : base::absolute_path(path, cwd);
  // ENOTDIR: a regular file stands where a directory of the path would be
  // (a built program named like an include directory). Nothing can be
  // opened there either, and a directory made in its place is a change of
  // that file, which the memo checks.
  return ::lstat(at.c_str(), &st) != 0 && (errno == ENOENT || errno == ENOTDIR);
}

const std::optional<base::StatSignature>& DirSignatures::operator()(std::string_view dir) {
  auto it = sigs_.find(dir);
  if (it != sigs_.end()) return it->second;
  std::optional<base::StatSignature> sig;
  if (dir.empty() || dir == "/" || (*this)(base::dir_of(dir))) sig = stat_(std::string(dir));
  return sigs_.emplace(std::string(dir), sig).first->second;
}

bool VouchedGroups::add(std::string_view dir, DirSignatures& dir_sig, int64_t now) {
  // Views into `dir` (its ancestors are its prefixes): strings are made
  // only for what is kept.
  std::string_view missing = dir;
  while (true) {
    const std::string_view parent = base::dir_of(missing);
    if (parent == missing) return false;  // "/" itself: never missing
    const std::optional<base::StatSignature>& sig = dir_sig(parent);
    if (!sig) {
      if (parent.empty()) return false;  // the working directory is gone
      missing = parent;
      continue;
    }
    if (!base::signature_is_settled(*sig, now) || !absent_entry(missing)) return false;
    auto it = index_.find(parent);
    if (it == index_.end()) {
      it = index_.emplace(std::string(parent), groups_.size()).first;
      groups_.push_back({std::string(parent), *sig, {}});
    }
    groups_[it->second].dirs.emplace_back(dir);
    return true;
  }
}

bool VouchedGroups::absent_entry(std::string_view path) {
  auto it = entries_.find(path);
  if (it != entries_.end()) return it->second;
  std::string_view last = path.substr(base::dir_of(path).size());
  if (!last.empty() && last[0] == '/') last.remove_prefix(1);
  bool ok = false;
  if (!last.empty() && last != "." && last != "..") {
    const std::string at =
        cwd_.empty() ? std::string(path) : base::absolute_path(std::string(path), cwd_);
    ok = shared_ && at[0] == '/' ? shared_->vouchable_once(at) : vouchable_entry(at);
  }
  entries_.emplace(std::string(path), ok);
  return ok;
}

bool vouchable_entry(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 ? S_ISREG(st.st_mode) : errno == ENOENT;
}

namespace {

// A list of strings behind its byte size, so a reader can skip it whole.
void write_names(base::VarintWriter* w, const std::vector<std::string>& names) {
  base::VarintWriter inner;
  inner.u64(names.size());
  for (const std::string& n : names) inner.str(n);
  w->str(inner.take());
}

}  // namespace

std::string AbsenceProof::encode(const std::vector<std::string>& missing) {
  const int64_t now = base::now_ns();
  DirSignatures dir_sig([](const std::string& dir) -> std::optional<base::StatSignature> {
    base::StatSignature s;
    if (!base::stat_dir(dir, &s)) return std::nullopt;
    return s;
  });
  struct Dir {
    std::string dir;
    base::StatSignature stat;
    std::vector<std::string> names;
  };
  std::vector<Dir> dirs;
  std::map<std::string, size_t> dir_index;
  std::vector<std::string> each;
  VouchedGroups vouched("");
  for (const std::string& path : missing) {
    std::string dir(base::dir_of(path));
    const std::optional<base::StatSignature>& sig = dir_sig(dir);
    std::string_view name = std::string_view(path).substr(dir.size());
    if (!name.empty() && name[0] == '/') name.remove_prefix(1);
    if (sig && base::signature_is_settled(*sig, now) && !name.empty() && no_entry(path)) {
      auto [it, fresh] = dir_index.emplace(dir, dirs.size());
      if (fresh) dirs.push_back({dir, *sig, {}});
      dirs[it->second].names.emplace_back(name);
    } else if (sig || !vouched.add(dir, dir_sig, now)) {
      each.push_back(path);
    }
  }
  base::VarintWriter w;
  w.u64(dirs.size());
  for (const Dir& d : dirs) {
    w.str(d.dir);
    base::write_signature(&w, d.stat);
    write_names(&w, d.names);
  }
  w.u64(vouched.groups().size());
  for (const VouchedGroups::Group& g : vouched.groups()) {
    w.str(g.ancestor);
    base::write_signature(&w, g.stat);
    write_names(&w, g.dirs);
  }
  write_names(&w, each);
  return w.take();
}

bool AbsenceProof::check(std::string_view bytes, MemoStatSource* stats, std::string* out) {
  auto file_exists = [&](const std::string& path) {
    base::StatSignature sig;
    return stats ? stats->stat_file(path, &sig) : base::stat_file(path, &sig);
  };
  auto dir_stat = [&](const std::string& dir, base::StatSignature* sig) {
    return stats ? stats->stat_dir(dir, sig) : base::stat_dir(dir, sig);
  };
  // Calls `each` on every name of the list at the reader, or skips it.
  auto names = [bytes](base::VarintReader* r, bool read, const auto& each) {
    uint64_t size = 0;
    if (!r->u64(&size) || size > bytes.size() - r->pos()) return false;
    const std::string_view blob = bytes.substr(r->pos(), size);
    if (!r->skip(size)) return false;
    if (!read) return true;
    base::VarintReader inner(blob);
    uint64_t n = 0;
    if (!inner.u64(&n) || n > blob.size()) return false;
    std::string name;
    for (uint64_t i = 0; i < n; ++i) {
      if (!inner.str(&name)) return false;
      if (each(name)) return true;
    }
    return inner.done();
  };
  out->clear();
  if (bytes.empty()) return true;  // nothing was missing
  base::VarintReader r(bytes);
  std::string appeared;
  for (int section = 0; section < 2; ++section) {
    uint64_t count = 0;
    if (!r.u64(&count) || count > bytes.size()) return false;
    for (uint64_t i = 0; i < count && appeared.empty(); ++i) {
      std::string dir;
      base::StatSignature then, now;
      if (!r.str(&dir) || !base::read_signature(&r, &then)) return false;
      const bool same = dir_stat(dir, &now) && now == then;
      bool ok = section == 0 ? names(&r, !same,
                                     [&](const std::string& name) {
                                       std::string path = base::join_path(dir, name);
                                       if (file_exists(path)) appeared = "appeared: " + path;
                                       return !appeared.empty();
                                     })
                             : names(&r, !same, [&](const std::string& missing_dir) {
                                 if (dir_stat(missing_dir, &now)) {
                                   appeared = "appeared: " + missing_dir;
                                 }
                                 return !appeared.empty();
                               });
      if (!ok) return false;
    }
    if (!appeared.empty()) break;
  }
  if (appeared.empty() && !names(&r, true, [&](const std::string& path) {
        if (file_exists(path)) appeared = "appeared: " + path;
        return !appeared.empty();
      })) {
    return false;
  }
  if (appeared.empty() && !r.done()) return false;
  *out = std::move(appeared);
  return true;
}

}  // namespace lexpack::closure
