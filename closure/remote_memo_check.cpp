// The checks that let another machine take a remote memo. Every one
// answers "would this machine's walk meet exactly these files and these
// absences?": when one fails the closure is evaluated as usual. What a name
// comes to here is found once per build (LocalFacts), however many memos
// give it.
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "base/file_util.h"
#include "base/run_on_threads.h"
#include "closure/absence.h"
#include "closure/action_key.h"
#include "closure/file_state.h"
#include "closure/remote_memo.h"
#include "closure/remote_memo_format.h"
#include "closure/scan_file_cache.h"

namespace lexpack::closure {

// What a name of a memo comes to here, in one working directory: found once
// and kept for every memo that gives the name.
struct LocalFacts::Impl {
  struct File {
    std::string path;                         // "" when the name does not come back to itself here
    std::optional<base::StatSignature> stat;  // nullopt: not a regular file
    std::optional<cache::Hash128> content;    // asked only for files read
    std::string error;                        // why the content is unknown
  };
  struct Probe {
    std::string path;                  // "" as for File
    const std::string* dir = nullptr;  // interned (dir_of), as encode_closure_memo() groups it
    bool absent = false;
    // The shared answers `absent` came from, after its directory's signature
    // (null: asked of the file system alone).
    const ScanFileCache* asked_through = nullptr;
    // What the action key hashes for it (the path's name under a relocation
    // that is `relocated`, as action_key() names it): made once per build,
    // not once per memo that gives the name.
    cache::Hash128 digest;
    bool relocated = false;
  };
  template <typename T>
  using ByName = std::unordered_map<std::string, T, cache::StringHash, std::equal_to<>>;
  struct InDir {
    ByName<File> files[2];  // by the name's kRemoteAbsolute flag
    ByName<Probe> probes[2];
    // What learn() marks the memos it learned here with: one number per
    // facts and working directory in the process, never another's.
    uint64_t number = next_number.fetch_add(1) + 1;
  };
  static inline std::atomic<uint64_t> next_number{0};

  cache::Store* store;
  std::mutex mutex;
  std::map<std::string, InDir, std::less<>> by_cwd;

  // What learn() marks the memos it learned in `cwd` with.
  uint64_t number_of(const std::string& cwd) {
    std::lock_guard<std::mutex> hold(mutex);
    return by_cwd[cwd].number;
  }

  // The one copy of each directory of a probe: a memo's candidates are
  // numbered by directory by address, not by hashing the name each time.
  const std::string* intern_dir(std::string_view dir) {
    std::lock_guard<std::mutex> hold(dirs_mutex);
    if (auto it = dirs.find(dir); it != dirs.end()) return &*it;
    return &*dirs.emplace(dir).first;
  }
  std::mutex dirs_mutex;
  std::unordered_set<std::string, cache::StringHash, std::equal_to<>> dirs;

  // The facts for the names of `named` from `first` on, in `cwd`: looked up
  // under one lock, the missing ones made by `make(i)` outside it (two
  // threads may both make one: the first is kept), then kept under one more.
  template <typename T, typename Make>
  std::vector<T*> facts_for(ByName<T> (InDir::*table)[2], const std::string& cwd,
                            const std::vector<RemoteMemoView::Named>& named, size_t first,
                            const Make& make) {
    std::vector<T*> out(named.size());
    std::vector<size_t> missing;
    InDir* in = nullptr;
    {
      std::lock_guard<std::mutex> hold(mutex);
      in = &by_cwd[cwd];
      for (size_t i = first; i < named.size(); ++i) {
        auto& names = (in->*table)[(named[i].flags & kRemoteAbsolute) != 0];
        if (auto it = names.find(named[i].name); it != names.end()) {
          out[i] = &it->second;
        } else {
          missing.push_back(i);
        }
      }
    }
    if (missing.empty()) return out;
    std::vector<T> made;
    made.reserve(missing.size());
    for (size_t i : missing) made.push_back(make(i));
    std::lock_guard<std::mutex> hold(mutex);
    for (size_t k = 0; k < missing.size(); ++k) {
      const RemoteMemoView::Named& n = named[missing[k]];
      auto& names = (in->*table)[(n.flags & kRemoteAbsolute) != 0];
      out[missing[k]] = &names.try_emplace(std::string(n.name), std::move(made[k])).first->second;
    }
    return out;
  }
  // The same, from a memo's learned facts when `learned` (they are this
  // table's, in `cwd`: LocalFacts::learn).
  template <typename T, typename Make>
  std::vector<T*> learned_or_found(bool learned, const std::vector<void*>& facts,
                                   ByName<T> (InDir::*table)[2], const std::string& cwd,
                                   const std::vector<RemoteMemoView::Named>& named, size_t first,
                                   const Make& make) {
    if (!learned || facts.size() != named.size()) return facts_for(table, cwd, named, first, make);
    std::vector<T*> out;
    out.reserve(facts.size());
    for (void* f : facts) out.push_back(static_cast<T*>(f));
    return out;
  }
  // The content of `path` (as the compiler names it) at `sig`, recorded in
  // the file table under `abs`.
  base::Result<cache::Hash128> hash(const std::string& path, const std::string& abs,
                                    const base::StatSignature& sig);
};

LocalFacts::LocalFacts(cache::Store* store) : impl_(std::make_shared<Impl>()) {
  impl_->store = store;
}
LocalFacts::~LocalFacts() = default;

base::Result<cache::Hash128> LocalFacts::Impl::hash(const std::string& path, const std::string& abs,
                                                    const base::StatSignature& sig) {
  std::optional<cache::FileRecord> rec;
  if (store) rec = store->get_file(abs);
  if (rec && rec->stat == sig) return rec->content;
  // Read where the compiler reads it ("dir/../x.h" through a symlink is not
  // the lexically normal path).
  base::Result<std::string> read = base::read_file(path);
  if (!read.ok()) return read.status();
  base::StatSignature after;
  if (!base::stat_file(path, &after) || !(after == sig)) {
    return changed_while_read(path);
  }
  const cache::Hash128 content = cache::hash_bytes(*read);
  // Recorded as the walk records it, so the next compile reads nothing.
  if (store && base::signature_is_settled(sig, base::now_ns())) {
    store->put_file(abs, cache::FileRecord{
                             sig, content,
                             rec && rec->content == content ? rec->scan_result : cache::BlobId{}});
  }
  return content;
}

namespace {

using Facts = LocalFacts::Impl;

// The file at `path` as found here (its content only when `read`).
Facts::File find_file(Facts* facts, std::string path, bool read, const std::string& cwd,
                      ScanFileCache* shared) {
  Facts::File f;
  f.path = std::move(path);
  if (f.path.empty()) return f;
  const std::string abs = base::normal_path(f.path, cwd);
  if (shared) {
    f.stat = shared->stat_once(f.path, abs);
  } else {
    base::StatSignature sig;
    bool is_dir = false;
    if (base::stat_file(f.path, &sig, &is_dir) && !is_dir) f.stat = sig;
  }
  if (f.stat && read) {
    auto content = facts->hash(f.path, abs, *f.stat);
    if (content.ok()) {
      f.content = *content;
    } else {
      f.error = content.message();
    }
  }
  return f;
}

// The candidate named `name` as found here: missing or not.
Facts::Probe find_probe(Facts* facts, std::string_view name, bool absolute,
                        const KeyRelocation& relocation, ScanFileCache* shared) {
  Facts::Probe p;
  p.path = path_here(std::string(name), absolute, relocation);
  if (p.path.empty()) return p;
  p.dir = facts->intern_dir(base::dir_of(p.path));
  const std::string& dir = *p.dir;
  std::string renamed;
  p.digest = cache::hash_bytes(relocation.name_in(p.path, &renamed));
  p.relocated = relocation.relocated;
  if (!shared) {
    p.absent = no_entry(p.path);
    return p;
  }
  // The directory's signature before any answer about an entry in it,
  // under the names encode_closure_memo() asks them by.
  const std::string& cwd = relocation.cwd;
  if (dir.empty()) {
    shared->dir_stat_once(".", cwd.empty() ? "." : cwd);
  } else {
    shared->dir_stat_once(dir, dir[0] == '/' ? dir : base::absolute_path(dir, cwd));
  }
  p.absent = shared->no_entry_once(base::absolute_path(p.path, cwd));
  p.asked_through = shared;
  return p;
}

// The closure's strings: the source as the command names it, the rest in
// the facts, which the closure keeps alive.
struct TakenStorage {
  std::shared_ptr<Facts> facts;
  std::string source;
};

// The content of `f`, a file the memo reads: kept, or read now with
// `again` (a file met only through __has_include before). Path and stat
// never change once kept; content and error may be filled by another
// thread, so they are read under the lock.
template <typename Again>
base::Result<cache::Hash128> read_content(Facts* facts, Facts::File* f, const Again& again) {
  std::unique_lock<std::mutex> hold(facts->mutex);
  if (!f->content && f->error.empty()) {
    hold.unlock();
    Facts::File read = again();
    hold.lock();
    if (!f->content && f->error.empty()) {
      f->content = read.content;
      f->error = read.error;
    }
  }
  if (f->content) return *f->content;
  return base::Status::error(f->error.empty() ? f->path + " could not be read" : f->error);
}

// Fills `c` with the memo's files as found here, or says what differs.
// `learned`: the memo's learned facts are `facts`' in this directory.
base::Status take_files(const RemoteMemoView& d, bool learned, const KeyRelocation& relocation,
                        const compiler::CompileCommand& command, Facts* facts,
                        ScanFileCache* shared, TakenStorage* storage, Closure* c) {
  // The source as the command names it (its name must match the memo's).
  const RemoteMemoView::Named& source = d.files[0];
  storage->source = command.source;
  if (relocation.name(command.source) != source.name) {
    return base::Status::error("names " + std::string(source.name) + " differently here");
  }
  auto make = [&](size_t i) {
    const RemoteMemoView::Named& n = d.files[i];
    return find_file(facts, path_here(std::string(n.name), n.flags & kRemoteAbsolute, relocation),
                     !(n.flags & kRemotePresenceOnly), relocation.cwd, shared);
  };
  std::vector<Facts::File*> found = facts->learned_or_found(
      learned, d.learned_files, &Facts::InDir::files, relocation.cwd, d.files, 1, make);
  Facts::File own_source = find_file(facts, storage->source, !(source.flags & kRemotePresenceOnly),
                                     relocation.cwd, shared);
  found[0] = &own_source;
  c->files.reserve(d.files.size());
  for (size_t i = 0; i < d.files.size(); ++i) {
    const RemoteMemoView::Named& n = d.files[i];
    const bool read = !(n.flags & kRemotePresenceOnly);
    Facts::File* f = found[i];
    if (f->path.empty()) {
      return base::Status::error("names " + std::string(n.name) + " differently here");
    }
    if (!f->stat) return base::Status::error("missing here: " + f->path);
    ClosureFile file;
    file.presence_only = !read;
    file.path = i == 0 ? std::string_view(storage->source) : std::string_view(f->path);
    file.stat = *f->stat;
    if (read) {
      auto content = read_content(facts, f, [&] { return make(i); });
      if (!content.ok()) return content.status();
      file.content = *content;
    }
    c->files.push_back(file);
  }
  return base::Status();
}

// Fills `c` with the memo's missing candidates, each still missing here and
// numbered by its directory, and `digests` with them as the action key
// takes them, or says which one is here.
base::Status take_probes(const RemoteMemoView& d, bool learned, const KeyRelocation& relocation,
                         Facts* facts, ScanFileCache* shared, Closure* c, ProbeDigests* digests) {
  auto make = [&](size_t i) {
    return find_probe(facts, d.probes[i].name, d.probes[i].flags & kRemoteAbsolute, relocation,
                      shared);
  };
  std::vector<Facts::Probe*> found = facts->learned_or_found(
      learned, d.learned_probes, &Facts::InDir::probes, relocation.cwd, d.probes, 0, make);
  std::unordered_map<const std::string*, uint32_t> dirs;  // interned by the facts
  c->failed_probes.reserve(d.probes.size());
  c->failed_probe_dirs.reserve(d.probes.size());
  std::vector<cache::Hash128>& sorted = digests->sorted;
  sorted.clear();
  sorted.reserve(d.probes.size());
  std::string renamed;
  // Whether each was asked as the memo's encoding asks it (find_probe).
  bool asked_through_shared = shared != nullptr;
  for (size_t i = 0; i < d.probes.size(); ++i) {
    const Facts::Probe& p = *found[i];
    asked_through_shared = asked_through_shared && p.asked_through == shared;
    if (p.path.empty()) {
      return base::Status::error("names " + std::string(d.probes[i].name) + " differently here");
    }
    if (!p.absent) return base::Status::error("present here: " + p.path);
    c->failed_probes.push_back(p.path);
    c->failed_probe_dirs.push_back(dirs.emplace(p.dir, uint32_t(dirs.size())).first->second);
    sorted.push_back(p.relocated == relocation.relocated
                         ? p.digest
                         : cache::hash_bytes(relocation.name_in(p.path, &renamed)));
  }
  sort_key_digests(&sorted);
  digests->made = true;
  c->failed_probes_answered_by = asked_through_shared ? shared : nullptr;
  return base::Status();
}

}  // namespace

namespace {

// The names of a build's memos as learn() collects them: each thread
// numbers the names it meets (by kind, file or probe, and kRemoteAbsolute),
// each memo keeps its names' numbers, and the threads' numbers are merged
// into one list of every name after.
struct CollectedNames {
  struct Part {
    std::unordered_map<std::string_view, uint32_t, cache::StringHash> ids[2][2];
    // Files: kRemotePresenceOnly set means read by some memo.
    std::vector<RemoteMemoView::Named> list[2][2];
    std::vector<uint32_t> merged[2][2];  // per number, its place in `all`
    uint32_t number(int kind, int absolute, const RemoteMemoView::Named& n) {
      auto [it, fresh] = ids[kind][absolute].try_emplace(n.name, list[kind][absolute].size());
      if (fresh) list[kind][absolute].push_back({n.name, uint8_t(absolute ? kRemoteAbsolute : 0)});
      uint8_t& flags = list[kind][absolute][it->second].flags;
      flags = uint8_t(flags | (kind == 0 ? (~n.flags & kRemotePresenceOnly) : 0));
      return it->second;
    }
  };
  struct Numbered {  // per memo
    size_t part = 0;
    bool taken = false;
    std::vector<uint32_t> files, probes;
  };
  std::vector<Part> parts;
  std::vector<Numbered> numbered;
  std::vector<RemoteMemoView::Named> all[2][2];  // files, probes; by kRemoteAbsolute
};

CollectedNames collect_names(const std::vector<RemoteMemoView*>& memos, std::string_view base_dir,
                             int jobs) {
  constexpr size_t kMemosPerThread = 8;
  CollectedNames c;
  c.parts.resize(size_t(std::max(1, std::min<int>(jobs, int(memos.size() / kMemosPerThread)))));
  c.numbered.resize(memos.size());
  std::atomic<size_t> next_part{0}, next_memo{0};
  auto collect = [&] {
    const size_t me = next_part.fetch_add(1);
    CollectedNames::Part& mine = c.parts[me];
    for (size_t m; (m = next_memo.fetch_add(1)) < memos.size();) {
      const RemoteMemoView& d = *memos[m];
      if (((d.flags & kRemoteRelocated) != 0) != !base_dir.empty()) continue;
      CollectedNames::Numbered& own = c.numbered[m];
      own.part = me;
      own.taken = true;
      own.files.resize(d.files.size());  // files[0], the source, is not learned
      for (size_t i = 1; i < d.files.size(); ++i) {
        own.files[i] = mine.number(0, (d.files[i].flags & kRemoteAbsolute) != 0, d.files[i]);
      }
      own.probes.resize(d.probes.size());
      for (size_t i = 0; i < d.probes.size(); ++i) {
        own.probes[i] = mine.number(1, (d.probes[i].flags & kRemoteAbsolute) != 0, d.probes[i]);
      }
    }
  };
  base::run_on_threads(int(c.parts.size()), collect);
  for (int kind = 0; kind < 2; ++kind) {
    for (int a = 0; a < 2; ++a) {
      std::unordered_map<std::string_view, uint32_t, cache::StringHash> at;
      for (CollectedNames::Part& p : c.parts) {
        p.merged[kind][a].resize(p.list[kind][a].size());
        for (size_t i = 0; i < p.list[kind][a].size(); ++i) {
          const RemoteMemoView::Named& n = p.list[kind][a][i];
          auto [it, fresh] = at.try_emplace(n.name, c.all[kind][a].size());
          if (fresh) c.all[kind][a].push_back(n);
          c.all[kind][a][it->second].flags |= n.flags;
          p.merged[kind][a][i] = it->second;
        }
      }
    }
  }
  return c;
}

// Gives each memo `c` numbered the facts of its names (`found`, per name of
// c.all), marked with `place`.
void point_at_facts(const std::vector<RemoteMemoView*>& memos, const CollectedNames& c,
                    const std::vector<void*> (&found)[2][2], uint64_t place, int jobs) {
  std::atomic<size_t> next{0};
  auto refer = [&] {
    for (size_t m; (m = next.fetch_add(1)) < memos.size();) {
      RemoteMemoView& d = *memos[m];
      const CollectedNames::Numbered& own = c.numbered[m];
      d.learned_by = 0;
      if (!own.taken) continue;
      const CollectedNames::Part& p = c.parts[own.part];
      d.learned_files.assign(d.files.size(), nullptr);
      for (size_t i = 1; i < d.files.size(); ++i) {
        const int a = (d.files[i].flags & kRemoteAbsolute) != 0;
        d.learned_files[i] = found[0][a][p.merged[0][a][own.files[i]]];
      }
      d.learned_probes.resize(d.probes.size());
      for (size_t i = 0; i < d.probes.size(); ++i) {
        const int a = (d.probes[i].flags & kRemoteAbsolute) != 0;
        d.learned_probes[i] = found[1][a][p.merged[1][a][own.probes[i]]];
      }
      d.learned_by = place;
    }
  };
  base::run_on_threads(std::max(1, std::min<int>(jobs, int(memos.size()))), refer);
}

}  // namespace

void LocalFacts::learn(const std::vector<RemoteMemoView*>& memos, const std::string& cwd,
                       std::string_view base_dir, ScanFileCache* shared, int jobs) {
  // Each name once, read when any memo reads it: the memos shared out
  // among the threads (a build's memos give hundreds of thousands of names,
  // a few thousand of them different); then each memo gets its names'
  // facts by number, no name looked up again.
  const CollectedNames c = collect_names(memos, base_dir, jobs);
  const auto& names = c.all;
  KeyRelocation relocation;
  relocation.base_dir = std::string(base_dir);
  relocation.cwd = cwd;
  relocation.relocated = !base_dir.empty();
  // Tasks of a few dozen names each, taken by `jobs` threads.
  struct Task {
    int kind, absolute;
    size_t begin, end;
  };
  std::vector<Task> tasks;
  std::vector<void*> found[2][2];  // per name of `names`, its facts
  for (int kind = 0; kind < 2; ++kind) {
    for (int a = 0; a < 2; ++a) {
      found[kind][a].resize(names[kind][a].size());
      for (size_t begin = 0; begin < names[kind][a].size(); begin += 32) {
        tasks.push_back({kind, a, begin, std::min(names[kind][a].size(), begin + 32)});
      }
    }
  }
  Impl* facts = impl_.get();
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t t; (t = next.fetch_add(1)) < tasks.size();) {
      const Task& task = tasks[t];
      const std::vector<RemoteMemoView::Named>& all = names[task.kind][task.absolute];
      std::vector<RemoteMemoView::Named> slice(all.begin() + long(task.begin),
                                               all.begin() + long(task.end));
      void** out = found[task.kind][task.absolute].data() + task.begin;
      if (task.kind == 0) {
        auto got = facts->facts_for(&Impl::InDir::files, cwd, slice, 0, [&](size_t i) {
          return find_file(facts, path_here(std::string(slice[i].name), task.absolute, relocation),
                           slice[i].flags & kRemotePresenceOnly, cwd, shared);
        });
        std::copy(got.begin(), got.end(), out);
      } else {
        auto got = facts->facts_for(&Impl::InDir::probes, cwd, slice, 0, [&](size_t i) {
          return find_probe(facts, slice[i].name, task.absolute, relocation, shared);
        });
        std::copy(got.begin(), got.end(), out);
      }
    }
  };
  base::run_on_threads(std::max(1, std::min<int>(jobs, int(tasks.size()))), work);
  point_at_facts(memos, c, found, facts->number_of(cwd), jobs);
}

base::Result<TakenClosure> take_remote_memo(std::string_view bytes,
                                            const compiler::CompilerIdentity& identity,
                                            const compiler::CompileCommand& command,
                                            const std::string& cwd, std::string_view base_dir,
                                            const compiler::SearchList& list, LocalFacts* facts,
                                            ScanFileCache* shared) {
  RemoteMemoView d;
  if (!decode_remote_memo(bytes, &d))
    return base::Status::error("not a closure memo of this version");
  return take_remote_memo(d, identity, command, cwd, base_dir, list, facts, shared);
}

base::Result<TakenClosure> take_remote_memo(const RemoteMemoView& d,
                                            const compiler::CompilerIdentity& identity,
                                            const compiler::CompileCommand& command,
                                            const std::string& cwd, std::string_view base_dir,
                                            const compiler::SearchList& list, LocalFacts* facts,
                                            ScanFileCache* shared) {
  TakenClosure out;
  out.relocation.base_dir = std::string(base_dir);
  out.relocation.cwd = cwd;
  out.relocation.relocated = d.flags & kRemoteRelocated;
  if (!base_dir.empty() && !out.relocation.relocated) {
    return base::Status::error("its paths are absolute, and base_dir is set here");
  }
  if (!list.memoizable || named_search_list(list, out.relocation) != d.list) {
    return base::Status::error("the search list differs here");
  }
  auto storage = std::make_shared<TakenStorage>();
  storage->facts = facts->impl();
  Closure& c = out.closure;
  Facts* known = facts->impl().get();
  const bool learned = d.learned_by != 0 && d.learned_by == known->number_of(cwd);
  base::Status s =
      take_files(d, learned, out.relocation, command, known, shared, storage.get(), &c);
  ProbeDigests probes;
  if (s.ok()) s = take_probes(d, learned, out.relocation, known, shared, &c, &probes);
  if (!s.ok()) return s;
  c.uses_date = d.flags & kRemoteUsesDate;
  c.has_computed_include = d.flags & kRemoteComputedInclude;
  c.presence_evaluated = d.flags & kRemotePresenceEvaluated;
  c.computed_evaluated = d.flags & kRemoteComputedEvaluated;
  c.storage = std::move(storage);
  // The same relocation decision here, and the same key: anything else
  // means the memo is not this compile's.
  if (decide_relocation(command, cwd, c, base_dir).relocated != out.relocation.relocated) {
    return base::Status::error("its paths do not relocate here as they did");
  }
  out.key = action_key(identity, command, cwd, c, out.relocation, nullptr, &probes);
  if (out.key != d.action_key) {
    return base::Status::error("it leads to another key here (a file it names differs here)");
  }
  return out;
}

}  // namespace lexpack::closure
