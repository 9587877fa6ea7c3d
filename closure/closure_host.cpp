// ClosureHost: how the preprocessor's questions about files (which file an
// include finds, its bytes, its key, a builtin's answer) are answered while
// a closure is evaluated.
#include "closure/closure_host.h"

#include "base/file_util.h"
#include "closure/builtin_candidates.h"
#include "closure/header_key.h"
#include "lexer/scanner.h"

namespace lexpack::closure {

preprocessor::FileHandle ClosureHost::handle(const Resolution& r) {
  auto [it, fresh] = by_inode_.try_emplace(std::make_pair(r.stat.dev, r.stat.ino), files_.size());
  if (fresh) files_.push_back({r, nullptr});
  return preprocessor::FileHandle(it->second);
}

std::optional<preprocessor::FileHandle> ClosureHost::resolve(std::string_view name, bool angled,
                                                             bool is_next,
                                                             preprocessor::FileHandle includer) {
  if (includer >= files_.size()) return std::nullopt;
  // An angled #include's answer depends on the name alone (the search
  // starts at the same place for every includer): asked once per TU, as
  // a TU's headers ask for the same few names thousands of times.
  const bool by_name = angled && !is_next;
  if (by_name) {
    if (auto it = angled_.find(name); it != angled_.end()) return it->second;
  }
  const Resolution& r = ask_(name, angled, is_next, files_[includer].where);
  std::optional<preprocessor::FileHandle> answer;
  if (r.found) answer = handle(r);
  if (by_name) angled_.emplace(std::string(name), answer);
  return answer;
}

std::optional<preprocessor::FileContent> ClosureHost::content(preprocessor::FileHandle file) {
  if (file >= files_.size()) return std::nullopt;
  File& f = files_[file];
  if (!f.loaded) {
    f.loaded = load(f.where);
    if (!f.loaded) return std::nullopt;
  }
  return preprocessor::FileContent{f.loaded->text->bytes, &f.loaded->text->scan, f.where.path,
                                   f.loaded->defines ? &*f.loaded->defines : nullptr};
}

std::string ClosureHost::file_key(preprocessor::FileHandle file) {
  return file < files_.size() ? header_key(files_[file].where) : std::string();
}

std::vector<Resolution> ClosureHost::resolutions() const {
  std::vector<Resolution> out;
  out.reserve(files_.size());
  for (const File& f : files_) out.push_back(f.where);
  return out;
}

std::optional<intmax_t> ClosureHost::builtin_query(std::string_view op, std::string_view argument) {
  std::string question = std::string(op) + "(" + std::string(argument) + ")";
  auto it = facts_.answers.find(question);
  if (it != facts_.answers.end()) return it->second;
  unknown_.insert(std::move(question));
  return std::nullopt;
}

std::shared_ptr<const LoadedFile> ClosureHost::load(const Resolution& where) {
  const std::pair<uint64_t, uint64_t> id(where.stat.dev, where.stat.ino);
  if (share_) {
    std::lock_guard lock(share_->mu);
    auto it = share_->files.find(id);
    if (it != share_->files.end() && it->second->stat == where.stat) {
      it->second->last_used.store(share_->headers->carries());
      return it->second;
    }
  }
  auto f = std::make_shared<LoadedFile>();
  f->stat = where.stat;
  if (share_ && share_->walked) f->text = share_->walked->find_lexed(where.stat);
  if (!f->text) {
    base::Result<std::string> bytes = base::read_file(where.path);
    if (!bytes.ok()) return nullptr;
    auto text = std::make_shared<LexedFile>();
    text->stat = where.stat;
    text->bytes = std::move(bytes.value());
    text->scan = lexer::scan(text->bytes, *kernel_);
    f->text = std::move(text);
  }
  if (share_) f->defines.emplace(f->text->bytes, f->text->scan);
  if (share_) {
    std::set<std::pair<std::string, std::string>> found;
    note_candidates(f->text->scan, &found);
    std::lock_guard lock(share_->mu);
    f->last_used.store(share_->headers->carries());
    share_->files[id] = f;
    share_->candidates.insert(found.begin(), found.end());
  }
  return f;
}

}  // namespace lexpack::closure
