// Include search, mirroring gcc's search_path_head/_cpp_find_file and
// clang's HeaderSearch::LookupFile for the plain (non-framework) case.
#include "closure/include_resolver.h"

#include <filesystem>

#include "base/file_stat.h"
#include "base/file_util.h"
#include "closure/scan_file_cache.h"

namespace lexpack::closure {

IncludeResolver::IncludeResolver(const compiler::SearchList& list, compiler::CompilerKind kind)
    : kind_(kind) {
  chain_ = list.quote_dirs;
  bracket_start_ = chain_.size();
  chain_.insert(chain_.end(), list.bracket_dirs.begin(), list.bracket_dirs.end());
}

IncludeResolver::IncludeResolver(const compiler::SearchList& list, compiler::CompilerKind kind,
                                 ScanFileCache* shared, std::string cwd)
    : IncludeResolver(list, kind) {
  shared_ = shared;
  cwd_ = std::move(cwd);
  if (shared_) {
    std::string context = cwd_;
    context.push_back('\0');
    context.push_back(kind_ == compiler::CompilerKind::kGcc ? 'g' : 'c');
    context.append(std::to_string(bracket_start_)).push_back('\0');
    for (const std::string& dir : chain_) context.append(dir).push_back('\0');
    shared_prefix_ = std::to_string(shared_->context_id(context)) + "|";
  }
}

bool IncludeResolver::probe(const std::string& path, base::StatSignature* sig) {
  if (shared_) {
    // The scan's cache keeps the first answer for each path: nothing to
    // remember here (a candidate is seldom probed twice by one resolver).
    if (!dir_exists(base::dir_of(path))) return false;
    std::optional<base::StatSignature> found =
        shared_->stat_once(path, base::absolute_path(path, cwd_));
    if (!found) return false;
    *sig = *found;
    return true;
  }
  auto it = probes_.find(path);
  if (it == probes_.end()) {
    std::optional<base::StatSignature> found;
    if (!dir_exists(base::dir_of(path))) {
      // Nothing under a missing directory exists: no stat per name. Most
      // failed candidates are of this kind (<bits/...> tried in each -I dir).
    } else if (base::StatSignature s; base::stat_file(path, &s)) {
      found = s;
    }
    it = probes_.emplace(path, found).first;
  }
  if (!it->second) return false;
  *sig = *it->second;
  return true;
}

bool IncludeResolver::dir_exists(std::string_view dir) {
  if (dir.empty() || dir == "/") return true;
  auto it = dirs_.find(dir);
  if (it != dirs_.end()) return it->second;
  std::string key(dir);
  // The kernel resolves components in order: under a missing directory
  // nothing exists, so Boost's includer-relative candidates
  // (.../detail/boost/mpl/...) cost no stat once their first missing
  // component is known. Existing parents are stat'ed once each.
  const std::string_view parent = base::dir_of(dir);
  bool exists = parent == dir || dir_exists(parent);
  if (exists) {
    exists = shared_ ? shared_->dir_stat_once(key, base::absolute_path(key, cwd_)).has_value()
                     : base::is_directory(key);
  }
  dirs_.emplace(std::move(key), exists);
  return exists;
}

std::optional<base::StatSignature> IncludeResolver::dir_signature(const std::string& dir) {
  const std::string d = dir.empty() ? std::string(".") : dir;
  if (shared_) return shared_->dir_stat_once(d, base::absolute_path(d, cwd_));
  base::StatSignature sig;
  if (!base::stat_dir(d, &sig)) return std::nullopt;
  return sig;
}

std::string IncludeResolver::fold_dot_dots(std::string path) {
  const size_t up = path.find("/../");
  if (up == std::string::npos) return path;
  std::string folded = std::filesystem::path(path).lexically_normal().string();
  if (folded == path || folded.empty()) return path;
  // The kernel resolves "dir/.." through dir, which may be a symlink to
  // elsewhere: keep the fold only where both name one directory.
  const std::optional<base::StatSignature> was = dir_signature(std::string(base::dir_of(path)));
  const std::optional<base::StatSignature> is = dir_signature(std::string(base::dir_of(folded)));
  if (!was || !is || was->dev != is->dev || was->ino != is->ino) return path;
  return folded;
}

Resolution IncludeResolver::resolve(std::string_view name, bool angled, bool next,
                                    std::string_view includer_dir, int includer_index,
                                    std::vector<std::string>* failed) {
  std::shared_ptr<const ScanFileCache::Answer> a =
      answer(name, angled, next, includer_dir, includer_index);
  failed->insert(failed->end(), a->failed.begin(), a->failed.end());
  return a->resolution;
}

std::shared_ptr<const ScanFileCache::Answer> IncludeResolver::answer(std::string_view name,
                                                                     bool angled, bool next,
                                                                     std::string_view includer_dir,
                                                                     int includer_index) {
  bool use_includer_dir = !angled;
  size_t start = angled ? bracket_start_ : 0;
  if (next) {
    if (includer_index >= 0) {
      use_includer_dir = false;
      start = size_t(includer_index) + 1;
    } else if (includer_index == kFoundInIncluderDir && kind_ == compiler::CompilerKind::kGcc) {
      // gcc: the includer's own dir is followed by the quote chain.
      use_includer_dir = false;
      start = 0;
    }
    // Otherwise (the main file, or clang and a file found relative to its
    // includer) #include_next behaves as #include.
  }
  const bool absolute = !name.empty() && name[0] == '/';
  // With a scan's cache, its answers are the only ones kept (one key made
  // per question: each TU's resolver is new, and asks most questions once).
  std::string memo_key = shared_ ? shared_prefix_ : std::string();
  memo_key.reserve(memo_key.size() + name.size() + (use_includer_dir ? includer_dir.size() : 0) +
                   12);
  if (absolute) {
    memo_key.push_back('/');  // the search list plays no part
  } else {
    memo_key.append(std::to_string(start)).push_back(use_includer_dir ? '"' : '<');
    if (use_includer_dir) memo_key.append(includer_dir).push_back('\0');
  }
  memo_key.append(name);
  if (shared_) {
    if (std::shared_ptr<const ScanFileCache::Answer> a = shared_->find_answer(memo_key)) return a;
  } else if (auto it = answers_.find(memo_key); it != answers_.end()) {
    return it->second;
  }
  auto a = std::make_shared<ScanFileCache::Answer>();
  if (name.empty()) {
    // Nothing to look for: not found, nothing probed.
  } else if (absolute) {
    a->resolution.path = std::string(name);
    a->resolution.found = probe(a->resolution.path, &a->resolution.stat);
    if (!a->resolution.found) a->failed.push_back(a->resolution.path);
  } else {
    a->resolution = search(name, use_includer_dir, includer_dir, start, &a->failed);
  }
  if (ids_) {
    a->failed_ids.reserve(a->failed.size());
    a->failed_dir_ids.reserve(a->failed.size());
    for (const std::string& f : a->failed) {
      ScanFileCache::CandidateIds id = ids_->candidate_ids(f);
      a->failed_ids.push_back(id.candidate);
      a->failed_dir_ids.push_back(id.dir);
    }
  }
  if (shared_) return shared_->put_answer(memo_key, std::move(a));
  return answers_.emplace(std::move(memo_key), std::move(a)).first->second;
}

Resolution IncludeResolver::search(std::string_view name, bool use_includer_dir,
                                   std::string_view includer_dir, size_t start,
                                   std::vector<std::string>* failed) {
  Resolution r;
  if (use_includer_dir) {
    std::string path = base::join_path(includer_dir, name);
    if (probe(path, &r.stat)) {
      r.found = true;
      r.path = fold_dot_dots(std::move(path));
      r.chain_index = kFoundInIncluderDir;
      return r;
    }
    failed->push_back(std::move(path));
  }
  for (size_t i = start; i < chain_.size(); ++i) {
    std::string path = base::join_path(chain_[i], name);
    if (probe(path, &r.stat)) {
      r.found = true;
      r.path = fold_dot_dots(std::move(path));
      r.chain_index = int(i);
      return r;
    }
    failed->push_back(std::move(path));
  }
  return r;
}

}  // namespace lexpack::closure
