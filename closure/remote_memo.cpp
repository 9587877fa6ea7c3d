// The remote memo's encoding (a format tag first: a memo of another version
// reads as none) and the checks that let another machine take it. Every
// check answers "would this machine's walk meet exactly these files and
// these absences?": when one fails the closure is evaluated as usual.
#include "closure/remote_memo.h"

#include <cerrno>
#include <deque>
#include <memory>

#include "base/byte_codec.h"
#include "base/file_util.h"
#include "base/relocation.h"
#include "closure/action_key.h"

namespace lexpack::closure {
namespace {

constexpr std::string_view kRemoteMemoTag = "lexpack-remote-memo-1";

constexpr uint64_t kUsesDate = 1;
constexpr uint64_t kComputedInclude = 2;
constexpr uint64_t kPresenceEvaluated = 4;
constexpr uint64_t kComputedEvaluated = 8;
constexpr uint64_t kRelocated = 16;
constexpr uint8_t kPresenceOnly = 1;
constexpr uint8_t kAbsolute = 2;

void put_hash(base::VarintWriter* w, const cache::Hash128& h) {
  w->u64(h.lo);
  w->u64(h.hi);
}
bool get_hash(base::VarintReader* r, cache::Hash128* h) {
  return r->u64(&h->lo) && r->u64(&h->hi);
}

// `list` with every directory named as `relocation` names paths.
compiler::SearchList named_list(const compiler::SearchList& list, const KeyRelocation& relocation) {
  compiler::SearchList out = list;
  for (std::vector<std::string>* dirs : {&out.quote_dirs, &out.bracket_dirs, &out.missing_dirs}) {
    for (std::string& d : *dirs) d = relocation.name(d);
  }
  for (compiler::SearchList::SameDir& s : out.same_dirs) {
    s.dropped = relocation.name(s.dropped);
    s.kept = relocation.name(s.kept);
  }
  return out;
}

void put_strings(base::VarintWriter* w, const std::vector<std::string>& v) {
  w->u64(v.size());
  for (const std::string& s : v) w->str(s);
}
bool get_strings(base::VarintReader* r, size_t limit, std::vector<std::string>* v) {
  uint64_t n = 0;
  if (!r->u64(&n) || n > limit) return false;
  v->resize(n);
  for (std::string& s : *v) {
    if (!r->str(&s)) return false;
  }
  return true;
}

void put_list(base::VarintWriter* w, const compiler::SearchList& list) {
  put_strings(w, list.quote_dirs);
  put_strings(w, list.bracket_dirs);
  put_strings(w, list.missing_dirs);
  w->u64(list.same_dirs.size());
  for (const compiler::SearchList::SameDir& s : list.same_dirs) {
    w->str(s.dropped);
    w->str(s.kept);
  }
}
bool get_list(base::VarintReader* r, size_t limit, compiler::SearchList* list) {
  uint64_t same = 0;
  if (!get_strings(r, limit, &list->quote_dirs) || !get_strings(r, limit, &list->bracket_dirs) ||
      !get_strings(r, limit, &list->missing_dirs) || !r->u64(&same) || same > limit) {
    return false;
  }
  list->same_dirs.resize(same);
  for (compiler::SearchList::SameDir& s : list->same_dirs) {
    if (!r->str(&s.dropped) || !r->str(&s.kept)) return false;
  }
  return true;
}

// One path of the memo: its name and whether the compiler named it absolute.
void put_name(base::VarintWriter* w, std::string_view path, const KeyRelocation& relocation,
              uint8_t flags) {
  w->str(relocation.name(path));
  w->u8(uint8_t(flags | (!path.empty() && path[0] == '/' ? kAbsolute : 0)));
}

// The path this machine's compiler gives a file the memo names `name`; ""
// when the name does not come back to itself here.
std::string path_here(const std::string& name, bool absolute, const KeyRelocation& relocation) {
  std::string path = name;
  if (absolute && (name.empty() || name[0] != '/')) {
    if (!relocation.relocated) return "";
    path = base::normal_path(name, relocation.cwd);
  }
  if (!absolute && !name.empty() && name[0] == '/') return "";
  return relocation.name(path) == name ? path : "";
}

struct Decoded {
  cache::Hash128 action_key;
  uint64_t flags = 0;
  compiler::SearchList list;
  struct Named {
    std::string name;
    uint8_t flags = 0;
    cache::Hash128 content;
  };
  std::vector<Named> files, probes;
};

bool decode(std::string_view bytes, Decoded* d) {
  base::VarintReader r(bytes);
  std::string tag;
  uint64_t files = 0, probes = 0;
  if (!r.str(&tag) || tag != kRemoteMemoTag || !get_hash(&r, &d->action_key) || !r.u64(&d->flags) ||
      !get_list(&r, bytes.size(), &d->list) || !r.u64(&files) || files == 0 ||
      files > bytes.size()) {
    return false;
  }
  d->files.resize(files);
  for (Decoded::Named& f : d->files) {
    if (!r.str(&f.name) || !r.u8(&f.flags) || !get_hash(&r, &f.content)) return false;
  }
  if (!r.u64(&probes) || probes > bytes.size()) return false;
  d->probes.resize(probes);
  for (Decoded::Named& p : d->probes) {
    if (!r.str(&p.name) || !r.u8(&p.flags)) return false;
  }
  return r.done();
}

// Fills `c` with the memo's files as found here, or says what differs.
base::Status take_files(const Decoded& d, const KeyRelocation& relocation,
                        const compiler::CompileCommand& command, FileContents* contents,
                        std::deque<std::string>* paths, Closure* c) {
  for (size_t i = 0; i < d.files.size(); ++i) {
    const Decoded::Named& f = d.files[i];
    std::string path = i == 0 ? command.source : path_here(f.name, f.flags & kAbsolute, relocation);
    if (path.empty() || relocation.name(path) != f.name) {
      return base::Status::error("names " + f.name + " differently here");
    }
    ClosureFile file;
    file.presence_only = f.flags & kPresenceOnly;
    bool is_dir = false;
    if (!base::stat_file(path, &file.stat, &is_dir) || is_dir) {
      return base::Status::error("missing here: " + path);
    }
    if (!file.presence_only) {
      auto content = contents->content(base::normal_path(path, relocation.cwd), file.stat);
      if (!content.ok()) return content.status();
      if (*content != f.content) return base::Status::error("changed here: " + path);
      file.content = *content;
    }
    file.path = paths->emplace_back(std::move(path));
    c->files.push_back(file);
  }
  return base::Status();
}

// Fills `c` with the memo's missing candidates, each still missing here and
// numbered by its directory, or says which one is here.
base::Status take_probes(const Decoded& d, const KeyRelocation& relocation,
                         std::deque<std::string>* paths, Closure* c) {
  std::unordered_map<std::string, uint32_t> dirs;
  for (const Decoded::Named& p : d.probes) {
    std::string path = path_here(p.name, p.flags & kAbsolute, relocation);
    if (path.empty()) return base::Status::error("names " + p.name + " differently here");
    struct stat st;
    if (::stat(path.c_str(), &st) == 0 || (errno != ENOENT && errno != ENOTDIR)) {
      return base::Status::error("present here: " + path);
    }
    std::string dir(base::dir_of(base::normal_path(path, relocation.cwd)));
    const uint32_t number = dirs.emplace(dir, uint32_t(dirs.size())).first->second;
    c->failed_probes.push_back(paths->emplace_back(std::move(path)));
    c->failed_probe_dirs.push_back(number);
  }
  return base::Status();
}

}  // namespace

cache::Hash128 remote_memo_key(const compiler::CompilerIdentity& identity,
                               const compiler::CompileCommand& command, const std::string& cwd,
                               std::string_view base_dir) {
  KeyRelocation relocation;
  relocation.base_dir = std::string(base_dir);
  relocation.cwd = cwd;
  relocation.relocated = !base_dir.empty();
  cache::Hasher h;
  h.field(kRemoteMemoTag);
  h.field(identity.hash.lo);
  h.field(identity.hash.hi);
  const std::vector<std::string> args = relocated_args(command, relocation);
  h.field(args.size());
  for (const std::string& a : args) h.field(a);
  h.field(relocation.name(command.source));
  h.field(compiler::relevant_environment());
  h.field(base_dir.empty() ? cwd : std::string("-"));
  return h.digest();
}

std::optional<std::string> encode_remote_memo(const Closure& c, const compiler::SearchList& list,
                                              const KeyRelocation& relocation,
                                              const cache::Hash128& action_key) {
  if (!relocation.base_dir.empty() && !relocation.relocated) return std::nullopt;
  if (!c.unsure.empty() || c.uses_time || !c.once_twins.empty() || c.forced_missing ||
      (c.has_computed_include && !c.computed_evaluated) || !list.memoizable || c.files.empty()) {
    return std::nullopt;
  }
  base::VarintWriter w;
  w.str(kRemoteMemoTag);
  put_hash(&w, action_key);
  w.u64((c.uses_date ? kUsesDate : 0) | (c.has_computed_include ? kComputedInclude : 0) |
        (c.presence_evaluated ? kPresenceEvaluated : 0) |
        (c.computed_evaluated ? kComputedEvaluated : 0) | (relocation.relocated ? kRelocated : 0));
  put_list(&w, named_list(list, relocation));
  w.u64(c.files.size());
  for (const ClosureFile& f : c.files) {
    if (f.opaque || f.once_twin) return std::nullopt;
    put_name(&w, f.path, relocation, f.presence_only ? kPresenceOnly : 0);
    put_hash(&w, f.content);
  }
  w.u64(c.failed_probes.size());
  for (std::string_view p : c.failed_probes) put_name(&w, p, relocation, 0);
  return w.take();
}

base::Result<cache::Hash128> FileContents::content(const std::string& path,
                                                   const base::StatSignature& sig) {
  {
    std::lock_guard<std::mutex> hold(mutex_);
    auto it = known_.find(path);
    if (it != known_.end() && it->second.first == sig) return it->second.second;
  }
  cache::Hash128 content;
  std::optional<cache::FileRecord> rec;
  if (store_) rec = store_->get_file(path);
  if (rec && rec->stat == sig) {
    content = rec->content;
  } else {
    base::Result<std::string> read = base::read_file(path);
    if (!read.ok()) return read.status();
    base::StatSignature after;
    if (!base::stat_file(path, &after) || !(after == sig)) {
      return base::Status::error(path + " changed while it was read");
    }
    content = cache::hash_bytes(*read);
  }
  std::lock_guard<std::mutex> hold(mutex_);
  known_[path] = {sig, content};
  return content;
}

base::Result<TakenClosure> take_remote_memo(std::string_view bytes,
                                            const compiler::CompilerIdentity& identity,
                                            const compiler::CompileCommand& command,
                                            const std::string& cwd, std::string_view base_dir,
                                            const compiler::SearchList& list,
                                            FileContents* contents) {
  Decoded d;
  if (!decode(bytes, &d)) return base::Status::error("not a closure memo of this version");
  TakenClosure out;
  out.relocation.base_dir = std::string(base_dir);
  out.relocation.cwd = cwd;
  out.relocation.relocated = d.flags & kRelocated;
  if (!base_dir.empty() && !out.relocation.relocated) {
    return base::Status::error("its paths are absolute, and base_dir is set here");
  }
  if (!list.memoizable || named_list(list, out.relocation) != d.list) {
    return base::Status::error("the search list differs here");
  }
  auto paths = std::make_shared<std::deque<std::string>>();
  Closure& c = out.closure;
  if (base::Status s = take_files(d, out.relocation, command, contents, paths.get(), &c); !s.ok()) {
    return s;
  }
  if (base::Status s = take_probes(d, out.relocation, paths.get(), &c); !s.ok()) return s;
  c.uses_date = d.flags & kUsesDate;
  c.has_computed_include = d.flags & kComputedInclude;
  c.presence_evaluated = d.flags & kPresenceEvaluated;
  c.computed_evaluated = d.flags & kComputedEvaluated;
  c.storage = std::move(paths);
  // The same relocation decision here, and the same key: anything else
  // means the memo is not this compile's.
  if (decide_relocation(command, cwd, c, base_dir).relocated != out.relocation.relocated) {
    return base::Status::error("its paths do not relocate here as they did");
  }
  out.key = action_key(identity, command, cwd, c, out.relocation);
  if (out.key != d.action_key) return base::Status::error("it leads to another key here");
  return out;
}

}  // namespace lexpack::closure
