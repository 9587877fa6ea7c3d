// A map split into shards, each behind its own mutex, so that threads that
// ask about different files rarely wait for each other.
#include "closure/scan_file_cache.h"

#include <sys/stat.h>

#include <cerrno>
#include <functional>

#include "base/file_util.h"
#include "closure/absence.h"

namespace lexpack::closure {

ScanFileCache::Shard& ScanFileCache::shard_of(const std::string& abs_path) {
  return shards_[cache::hash64(abs_path) % kShards];
}

std::string_view ScanFileCache::intern(std::string_view path) {
  InternPart& p = interned_[cache::hash64(path) % kShards];
  std::lock_guard lock(p.mu);
  auto it = p.paths.find(path);
  if (it == p.paths.end()) it = p.paths.emplace(path).first;
  return *it;
}

std::optional<std::optional<base::StatSignature>> ScanFileCache::find_stat(
    const std::string& abs_path) {
  Shard& s = shard_of(abs_path);
  std::lock_guard lock(s.mu);
  auto it = s.entries.find(abs_path);
  if (it == s.entries.end() || !it->second.stat_known) return std::nullopt;
  return it->second.stat;
}

void ScanFileCache::put_stat(const std::string& abs_path,
                             const std::optional<base::StatSignature>& sig) {
  Shard& s = shard_of(abs_path);
  std::lock_guard lock(s.mu);
  Entry& e = s.entries[abs_path];
  e.stat_known = true;
  e.stat = sig;
}

std::optional<base::StatSignature> ScanFileCache::stat_once(const std::string& path,
                                                            const std::string& abs_path) {
  if (auto answer = find_stat(abs_path)) return *answer;
  // The directory first: a memo records its signature with the names found
  // missing in it, so that signature must not be newer than their answers.
  std::string_view dir = base::dir_of(path);
  dir_stat_once(std::string(dir), std::string(base::dir_of(abs_path)));
  std::optional<base::StatSignature> found;
  base::StatSignature sig;
  if (base::stat_file(path, &sig)) found = sig;
  put_stat(abs_path, found);
  return found;
}

template <class T, class Ask>
T ScanFileCache::once(const std::string& abs_path, bool Entry::*known, T Entry::*value, Ask ask) {
  Shard& s = shard_of(abs_path);
  {
    std::lock_guard lock(s.mu);
    auto it = s.entries.find(abs_path);
    if (it != s.entries.end() && it->second.*known) return it->second.*value;
  }
  T answer = ask();  // outside the lock; the first answer stored stays
  std::lock_guard lock(s.mu);
  Entry& e = s.entries[abs_path];
  if (!(e.*known)) {
    e.*known = true;
    e.*value = std::move(answer);
  }
  return e.*value;
}

ScanFileCache::DirKnown ScanFileCache::ask_dir(const std::string& path) {
  DirKnown a;
  struct stat st;
  if (::stat(path.empty() ? "." : path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) a.sig = base::signature_of(st);
  } else {
    a.gone = errno == ENOENT || errno == ENOTDIR;
  }
  return a;
}

std::optional<base::StatSignature> ScanFileCache::dir_stat_once(const std::string& path,
                                                                const std::string& abs_path) {
  return dir_answer_once(path, abs_path).sig;
}

ScanFileCache::DirKnown ScanFileCache::dir_answer_once(const std::string& path,
                                                       const std::string& abs_path) {
  Shard& s = shard_of(abs_path);
  {
    std::lock_guard lock(s.mu);
    auto it = s.entries.find(abs_path);
    if (it != s.entries.end() && it->second.dir_known) return {it->second.dir, it->second.dir_gone};
  }
  const DirKnown asked = ask_dir(path);  // outside the lock; the first answer stored stays
  std::lock_guard lock(s.mu);
  Entry& e = s.entries[abs_path];
  if (!e.dir_known) {
    e.dir_known = true;
    e.dir = asked.sig;
    e.dir_gone = asked.gone;
  }
  return {e.dir, e.dir_gone};
}

std::shared_ptr<const LexedFile> ScanFileCache::find_lexed(const base::StatSignature& sig) {
  LexedPart& p = lexed_parts_[(sig.ino ^ sig.dev) % kShards];
  std::lock_guard lock(p.mu);
  auto it = p.files.find({sig.dev, sig.ino});
  if (it == p.files.end() || !(it->second->stat == sig)) return nullptr;
  return it->second;
}

void ScanFileCache::put_lexed(std::shared_ptr<const LexedFile> file) {
  const base::StatSignature& sig = file->stat;
  LexedPart& p = lexed_parts_[(sig.ino ^ sig.dev) % kShards];
  std::lock_guard lock(p.mu);
  p.files[{sig.dev, sig.ino}] = std::move(file);
}

void ScanFileCache::for_each_lexed(const std::function<void(const LexedFile&)>& fn) {
  for (LexedPart& p : lexed_parts_) {
    std::lock_guard lock(p.mu);
    for (const auto& [id, file] : p.files) fn(*file);
  }
}

bool ScanFileCache::knows(const std::string& abs_path) {
  Shard& s = shard_of(abs_path);
  std::lock_guard lock(s.mu);
  return s.entries.find(abs_path) != s.entries.end();
}

void ScanFileCache::forget_stat(const std::string& abs_path) {
  Shard& s = shard_of(abs_path);
  std::lock_guard lock(s.mu);
  auto it = s.entries.find(abs_path);
  if (it == s.entries.end()) return;
  it->second.stat_known = false;
  it->second.stat.reset();
}

void ScanFileCache::restat_dir(const std::string& abs_dir) {
  const DirKnown asked = ask_dir(abs_dir);
  Shard& s = shard_of(abs_dir);
  std::lock_guard lock(s.mu);
  Entry& e = s.entries[abs_dir];
  e.dir_known = true;
  e.dir = asked.sig;
  e.dir_gone = asked.gone;
}

bool ScanFileCache::no_entry_once(const std::string& abs_path) {
  return once(abs_path, &Entry::entry_known, &Entry::no_entry, [&] {
    // Under a directory whose answer (taken first, as a memo records it)
    // is that it is gone, no entry without a syscall: most failed
    // candidates lie under an include directory's missing subdirectory.
    const std::string parent(base::dir_of(abs_path));
    if (parent != abs_path && !parent.empty() && parent[0] == '/' &&
        dir_answer_once(parent, parent).gone) {
      return true;
    }
    return no_entry(abs_path);
  });
}

bool ScanFileCache::vouchable_once(const std::string& abs_path) {
  return once(abs_path, &Entry::vouch_known, &Entry::vouchable,
              [&] { return vouchable_entry(abs_path); });
}

bool ScanFileCache::candidate_no_entry_once(uint32_t candidate, std::string_view dir,
                                            std::string_view name) {
  const uint32_t chunk = candidate >> kAnswerChunkBits;
  if (chunk >= kAnswerChunks) return no_entry_once(base::join_path(dir, name));
  std::atomic<uint8_t>* answers = no_entry_by_candidate_[chunk].load(std::memory_order_acquire);
  if (!answers) {
    std::lock_guard lock(no_entry_chunks_mu_);
    answers = no_entry_by_candidate_[chunk].load(std::memory_order_acquire);
    if (!answers) {
      no_entry_chunks_.emplace_back(new std::atomic<uint8_t>[size_t(1) << kAnswerChunkBits]());
      answers = no_entry_chunks_.back().get();
      no_entry_by_candidate_[chunk].store(answers, std::memory_order_release);
    }
  }
  std::atomic<uint8_t>& known = answers[candidate & ((1u << kAnswerChunkBits) - 1)];
  const uint8_t was = known.load(std::memory_order_relaxed);
  if (was != 0) return was == 1;
  // Asked through the path's own entry: one answer per path for the scan,
  // whichever way it is asked.
  const bool none = no_entry_once(base::join_path(dir, name));
  known.store(none ? 1 : 2, std::memory_order_relaxed);
  return none;
}

std::shared_ptr<const FileSummary> ScanFileCache::find_summary(const std::string& abs_path,
                                                               const base::StatSignature& sig) {
  Shard& s = shard_of(abs_path);
  std::lock_guard lock(s.mu);
  auto it = s.entries.find(abs_path);
  if (it == s.entries.end() || !it->second.summary || !(it->second.summary_sig == sig)) {
    return nullptr;
  }
  return it->second.summary;
}

void ScanFileCache::put_summary(const std::string& abs_path, const base::StatSignature& sig,
                                std::shared_ptr<const FileSummary> summary) {
  Shard& s = shard_of(abs_path);
  std::lock_guard lock(s.mu);
  Entry& e = s.entries[abs_path];
  e.summary_sig = sig;
  e.summary = std::move(summary);
}

ScanFileCache::CandidateIds ScanFileCache::candidate_ids(std::string_view path) {
  std::string_view dir = base::dir_of(path);
  std::lock_guard lock(candidate_ids_mu_);
  auto id_of = [](IdMap* ids, std::string_view s) {
    auto it = ids->find(s);
    if (it == ids->end()) it = ids->emplace(std::string(s), uint32_t(ids->size())).first;
    return it->second;
  };
  return {id_of(&candidate_ids_, path), id_of(&dir_ids_, dir)};
}

const ScanFileCache::AbsentRoot* ScanFileCache::absent_root(uint32_t dir_id, std::string_view dir) {
  {
    std::lock_guard lock(absent_roots_mu_);
    if (auto it = absent_root_of_dir_.find(dir_id); it != absent_root_of_dir_.end()) {
      return it->second;
    }
  }
  // Down from the top, each prefix's directory answer (those above the
  // first gone one were taken by the search that failed under it): the
  // first one gone (ENOENT, ENOTDIR) is the root. A file on the way is
  // passed: the name below it is gone (ENOTDIR).
  std::optional<std::string> root;
  for (size_t end = dir.find('/', 1); !dir.empty() && dir[0] == '/'; end = dir.find('/', end + 1)) {
    std::string prefix(dir.substr(0, end));
    if (dir_answer_once(prefix, prefix).gone) {
      root = std::move(prefix) + '/';
      break;
    }
    if (end == std::string_view::npos) break;
  }
  std::unique_ptr<AbsentRoot> made;
  if (root) made.reset(new AbsentRoot{intern(*root), candidate_ids(*root)});
  std::lock_guard lock(absent_roots_mu_);
  auto [it, added] = absent_root_of_dir_.emplace(dir_id, made.get());
  if (added && made) absent_roots_.push_back(std::move(made));
  return it->second;
}

uint64_t ScanFileCache::context_id(const std::string& context) {
  std::lock_guard lock(contexts_mu_);
  return contexts_.emplace(context, contexts_.size()).first->second;
}

ScanFileCache::Node* ScanFileCache::node(const std::string& context, const Resolution& where) {
  return node_impl(context, where, false);
}

ScanFileCache::Node* ScanFileCache::root_node(const std::string& context, const Resolution& where) {
  return node_impl(context, where, true);
}

ScanFileCache::Node* ScanFileCache::node_impl(const std::string& context, const Resolution& where,
                                              bool root) {
  std::string key = context;
  key.append(std::to_string(where.chain_index)).push_back('|');
  key.append(where.path);
  NodePart& part = node_parts_[cache::hash64(key) % kShards];
  {
    std::lock_guard lock(part.mu);
    auto it = part.nodes.find(key);
    if (it != part.nodes.end()) {
      if (!root || it->second->where.stat == where.stat) return it->second.get();
      part.put_aside.push_back(std::move(it->second));
      part.nodes.erase(it);
    }
  }
  uint32_t id;
  {
    std::lock_guard lock(path_ids_mu_);
    id = path_ids_.emplace(context + where.path, uint32_t(path_ids_.size())).first->second;
  }
  std::lock_guard lock(part.mu);
  std::unique_ptr<Node>& slot = part.nodes[key];
  if (!slot) {
    slot = std::make_unique<Node>();
    slot->where = where;
    slot->path_id = id;
  }
  return slot.get();
}

void ScanFileCache::for_each_expanded(const std::function<void(const Node&)>& fn) {
  for (NodePart& part : node_parts_) {
    std::lock_guard lock(part.mu);
    for (const auto& [key, n] : part.nodes) {
      if (n->state.load(std::memory_order_acquire) == Node::kExpanded) fn(*n);
    }
  }
}

}  // namespace lexpack::closure
