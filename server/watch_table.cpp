// inotify bookkeeping of the server. A path is resolved here by hand, one
// component at a time, so that every directory the kernel would consult
// (including those a symlink leads through) is watched before it is read.
#include "server/watch_table.h"

#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <deque>

#include "base/file_stat.h"

namespace lexpack::server {
namespace {

// A file is watched for what changes its bytes or attributes; a directory
// for its entries (names made, removed, renamed) and for itself moved or
// removed. A file below it that anything depends on has a watch of its own.
// A directory watch that asked for its children's writes or attributes
// would make the kernel mark every dentry it has cached below that
// directory, negative ones included, as the watch is added (tens of
// milliseconds for a /tmp that has seen a few hundred thousand compilers'
// temporary files), and would report every write to any file in it.
// A directory's own chmod or chown: where a name was found missing, the
// directory is watched for its attributes too (kDirAttributes: a search it
// no longer allows makes the compiler fail where it found nothing); a
// directory on the way to a file only, by the stat rechecks, which find the
// file unreachable within a second (stat_recheck.h).
constexpr uint32_t kFileMask = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM |
                               IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF;
constexpr uint32_t kDirMask =
    IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF;
constexpr uint32_t kDirAttributes = kDirMask | IN_ATTRIB;
constexpr uint32_t kEntryChange = IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE |
                                  IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_UNMOUNT;
constexpr int kMaxLinks = 40;

std::deque<std::string> split(const std::string& path) {
  std::deque<std::string> parts;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    if (j > i) parts.emplace_back(path.substr(i, j - i));
    i = j + 1;
  }
  return parts;
}

std::string join(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

std::string parent(const std::string& dir) {
  size_t slash = dir.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : dir.substr(0, slash);
}

}  // namespace

WatchTable::~WatchTable() {
  if (fd_ >= 0) ::close(fd_);
}

bool WatchTable::open() {
  fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  return fd_ >= 0;
}

bool WatchTable::local_filesystem(int64_t f_type) {
  return base::local_filesystem_type(f_type);
}

void WatchTable::begin_pass(TrustRef ref) {
  ref_ = ref;
  pass_.clear();
  last_lists_.clear();
  multi_linked_.clear();
}

int WatchTable::watch(const std::string& path, bool is_dir) {
  if (fd_ < 0) return -1;
  if (is_dir) {
    auto it = path_wd_.find(path);
    if (it != path_wd_.end()) return it->second;
  }
  int wd = ::inotify_add_watch(fd_, path.c_str(),
                               (is_dir ? kDirMask | IN_ONLYDIR : kFileMask) | IN_DONT_FOLLOW);
  if (wd < 0) return -1;
  auto seen = watched_.find(wd);
  if (seen == watched_.end()) {
    struct statfs fs {};
    bool local = ::statfs(path.c_str(), &fs) == 0 && local_filesystem(int64_t(fs.f_type));
    seen = watched_.emplace(wd, local).first;
  }
  if (!seen->second) return -1;
  if (is_dir) path_wd_[path] = wd;
  wd_paths_.try_emplace(wd, Watched{path, is_dir});
  return wd;
}

bool WatchTable::watch_attributes(int wd) {
  if (attribute_wds_.count(wd)) return true;
  auto it = wd_paths_.find(wd);
  if (it == wd_paths_.end() || !it->second.is_dir) return false;
  // The same directory (IN_ONLYDIR, no link followed) gets the same watch.
  if (::inotify_add_watch(fd_, it->second.path.c_str(),
                          kDirAttributes | IN_ONLYDIR | IN_DONT_FOLLOW) != wd) {
    return false;
  }
  attribute_wds_.insert(wd);
  return true;
}

void WatchTable::note_change(const ::inotify_event& e) {
  if (changes_.unknown) return;
  auto it = wd_paths_.find(e.wd);
  const bool gone_dir = it != wd_paths_.end() && it->second.is_dir &&
                        (e.mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT)) != 0;
  if (it == wd_paths_.end() || gone_dir || changes_.paths.size() >= kMaxChanges) {
    changes_.unknown = true;
    changes_.paths.clear();
    return;
  }
  if (e.mask & IN_IGNORED) return;  // the watch's end: its cause came first
  const bool entry = (e.mask & kEntryChange) != 0;
  if (e.len > 0 && it->second.is_dir) {
    changes_.paths.push_back({join(it->second.path, e.name), entry, true});
  } else {
    changes_.paths.push_back({it->second.path, entry, false});
  }
}

WatchTable::Changes WatchTable::take_changes() {
  Changes taken = std::move(changes_);
  changes_ = Changes{};
  return taken;
}

std::vector<TrustRef>* WatchTable::depend(int wd, const std::string& name) {
  Deps& d = deps_[wd];
  std::vector<TrustRef>* list = name.empty() ? &d.all : &d.by_name[name];
  add_ref(list);
  return list;
}

void WatchTable::add_ref(std::vector<TrustRef>* list) const {
  if (list->empty() || list->back().id != ref_.id || list->back().generation != ref_.generation) {
    list->push_back(ref_);
  }
}

void WatchTable::save_chain(const std::string& path, Chain chain, std::vector<int> wds) {
  for (int wd : wds) chains_by_wd_[wd].push_back(path);
  chain_names_ += wds.size();
  live_chain_wds_ += wds.size();
  chain.wds = std::move(wds);
  chains_[path] = std::move(chain);
  if (chain_names_ > 4 * live_chain_wds_ + 4096) {
    chains_by_wd_.clear();
    for (const auto& [p, c] : chains_) {
      for (int wd : c.wds) chains_by_wd_[wd].push_back(p);
    }
    chain_names_ = live_chain_wds_;
  }
}

bool WatchTable::new_lookup(const std::string& child, const std::string& name, int wd, Lookup* l) {
  l->dir_wd = wd;
  l->dir_list = depend(wd, name);
  bool keep = true;
  struct stat st {};
  if (::lstat(child.c_str(), &st) != 0) {
    if (errno != ENOENT && errno != ENOTDIR) return false;
    l->kind = 0;
    // Missing here: a chmod of `dir` would make the name an error instead.
    if (!watch_attributes(wd)) return false;
  } else if (S_ISDIR(st.st_mode)) {
    l->kind = 1;
  } else if (S_ISREG(st.st_mode)) {
    l->kind = 2;
    // The file itself: a write through another link or an open
    // descriptor is reported to its own watch.
    l->file_wd = watch(child, false);
    if (l->file_wd < 0) return false;
    l->file_list = depend(l->file_wd, "");
    if (st.st_nlink > 1) {
      multi_linked_.push_back({child, base::signature_of(st)});
      keep = false;
    }
  } else if (S_ISLNK(st.st_mode)) {
    l->kind = 3;
    std::string target(4096, '\0');
    ssize_t n = ::readlink(child.c_str(), target.data(), target.size());
    if (n <= 0 || size_t(n) >= target.size()) return false;
    target.resize(size_t(n));
    l->link = std::move(target);
  } else {
    l->kind = 4;
  }
  if (keep) {
    Lookup kept;
    kept.kind = l->kind;
    kept.link = l->link;
    known_[child] = {std::move(kept), wd, l->file_wd};
    known_by_wd_[wd].push_back(child);
    if (l->file_wd >= 0) known_by_wd_[l->file_wd].push_back(child);
  } else {
    l->file_list = nullptr;  // not kept: a later pass takes its signature again
  }
  return true;
}

const WatchTable::Lookup* WatchTable::look_up(const std::string& dir, const std::string& name,
                                              const std::string& child) {
  auto found = pass_.find(child);
  if (found != pass_.end()) return &found->second;
  int wd = watch(dir, true);
  if (wd < 0) return nullptr;
  // Kept only while `dir` is still the directory the lookup was made in:
  // a directory swapped further up makes the same path name another one,
  // whose watch differs, and no event reaches the kept lookup's own.
  if (auto k = known_.find(child); k != known_.end() && k->second.dir_wd == wd) {
    Lookup l = k->second.lookup;
    l.dir_wd = wd;
    l.dir_list = depend(wd, name);
    if (k->second.file_wd >= 0) {
      l.file_wd = k->second.file_wd;
      l.file_list = depend(k->second.file_wd, "");
    }
    return &pass_.emplace(child, std::move(l)).first->second;
  }
  Lookup l;
  if (!new_lookup(child, name, wd, &l)) return nullptr;
  return &pass_.emplace(child, std::move(l)).first->second;
}

bool WatchTable::watch_path(const std::string& path) {
  if (path.empty() || path[0] != '/') return false;
  if (auto c = chains_.find(path); c != chains_.end()) {
    const std::vector<std::vector<TrustRef>*>& lists = c->second.lists;
    size_t same = 0;
    while (same < lists.size() && same < last_lists_.size() && lists[same] == last_lists_[same]) {
      ++same;
    }
    for (size_t k = same; k < lists.size(); ++k) add_ref(lists[k]);
    last_lists_.assign(lists.begin(), lists.end());
    return true;
  }
  // What this walk registered in, kept as the path's chain if it resolves.
  Chain chain;
  std::vector<int> wds;
  bool keep_chain = true;
  auto resolved = [&] {
    last_lists_ = chain.lists;  // each registered by the walk
    if (keep_chain) save_chain(path, std::move(chain), std::move(wds));
    return true;
  };
  std::deque<std::string> rest = split(path);
  std::string dir = "/";
  int links = 0;
  while (!rest.empty()) {
    std::string name = std::move(rest.front());
    rest.pop_front();
    if (name == ".") continue;
    if (name == "..") {
      dir = parent(dir);
      continue;
    }
    std::string child = join(dir, name);
    const Lookup* found = look_up(dir, name, child);
    if (!found) return false;
    const Lookup& l = *found;
    chain.lists.push_back(l.dir_list);
    wds.push_back(l.dir_wd);
    if (l.file_wd >= 0) {
      if (l.file_list) {
        chain.lists.push_back(l.file_list);
        wds.push_back(l.file_wd);
      } else {
        keep_chain = false;
      }
    }
    switch (l.kind) {
      case 0:
      case 2:
      case 4:
        return resolved();  // missing, or a non-directory: nothing below it resolves
      case 1:
        dir = child;
        break;
      case 3: {
        if (++links > kMaxLinks) return false;
        std::deque<std::string> target = split(l.link);
        for (auto it = target.rbegin(); it != target.rend(); ++it) rest.push_front(*it);
        if (!l.link.empty() && l.link[0] == '/') dir = "/";
        break;
      }
    }
  }
  // The path named a directory: entries added to it do not change what it
  // is, and its own renames are events on its parent.
  return resolved();
}

void WatchTable::forget_dependencies() {
  deps_.clear();
  last_lists_.clear();
  pass_.clear();
  clear_chains();
  path_wd_.clear();
  known_.clear();
  known_by_wd_.clear();
}

void WatchTable::forget_known(int wd) {
  auto it = known_by_wd_.find(wd);
  if (it == known_by_wd_.end()) return;
  for (const std::string& child : it->second) known_.erase(child);
  known_by_wd_.erase(it);
}

void WatchTable::forget_chains(int wd) {
  auto it = chains_by_wd_.find(wd);
  if (it == chains_by_wd_.end()) return;
  for (const std::string& path : it->second) {
    if (auto c = chains_.find(path); c != chains_.end()) {
      live_chain_wds_ -= c->second.wds.size();
      chains_.erase(c);
    }
  }
  chain_names_ -= it->second.size();
  chains_by_wd_.erase(it);
}

void WatchTable::clear_chains() {
  chains_.clear();
  chains_by_wd_.clear();
  chain_names_ = live_chain_wds_ = 0;
}

void WatchTable::drain_impl(void (*call)(void*, TrustRef), void* ctx, bool* drop_all) {
  if (fd_ < 0) {
    *drop_all = true;
    return;
  }
  alignas(struct inotify_event) char buf[64 * 1024];
  for (;;) {
    ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EAGAIN: the queue is empty
    for (char* p = buf; p < buf + n;) {
      auto* e = reinterpret_cast<struct inotify_event*>(p);
      p += sizeof(struct inotify_event) + e->len;
      ++events_read_;
      if (e->mask & IN_Q_OVERFLOW) {
        changes_.unknown = true;
        changes_.paths.clear();
        *drop_all = true;
        known_.clear();
        known_by_wd_.clear();
        clear_chains();
        continue;
      }
      if (e->mask & kEntryChange) path_wd_.clear();
      note_change(*e);
      if (e->mask & IN_IGNORED) {
        wd_paths_.erase(e->wd);
        attribute_wds_.erase(e->wd);
      }
      forget_known(e->wd);
      forget_chains(e->wd);
      auto it = deps_.find(e->wd);
      if (it == deps_.end()) continue;
      auto fire = [&](std::vector<TrustRef>& list) {
        for (TrustRef r : list) call(ctx, r);
        list.clear();
      };
      fire(it->second.all);
      bool whole = (e->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_UNMOUNT)) != 0;
      if (whole || e->len == 0) {
        for (auto& [name, list] : it->second.by_name) fire(list);
      } else {
        auto named = it->second.by_name.find(std::string(e->name));
        if (named != it->second.by_name.end()) fire(named->second);
      }
      if (e->mask & IN_IGNORED) {
        deps_.erase(it);
        watched_.erase(e->wd);
      }
    }
  }
}

}  // namespace lexpack::server
