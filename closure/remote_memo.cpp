// The remote memo's encoding: a format tag first (a memo of another version
// reads as none), the key and search list, then every path as its
// directory's number in a table and the rest of its name.
#include "closure/remote_memo.h"

#include <algorithm>
#include <unordered_map>

#include "base/byte_codec.h"
#include "base/file_util.h"
#include "base/view_map.h"
#include "closure/remote_memo_format.h"

namespace lexpack::closure {
namespace {
void put_hash(base::VarintWriter* w, const cache::Hash128& h) {
  w->u64(h.lo);
  w->u64(h.hi);
}
bool get_hash(base::VarintReader* r, cache::Hash128* h) {
  return r->u64(&h->lo) && r->u64(&h->hi);
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

// The memo's paths, each as its directory's number in a table written
// first (0: a name without a directory) and the rest of its name: the
// closures of one project name a few hundred directories thousands of times.
class NameWriter {
 public:
  explicit NameWriter(const KeyRelocation& relocation) : relocation_(relocation) {}
  // Adds `path` (how the compiler names it) with `flags`.
  void add(std::string_view path, uint8_t flags) {
    const std::string_view name = relocation_.name_in(path, &renamed_);
    const size_t slash = name.rfind('/');
    uint64_t dir = 0;
    if (slash != std::string_view::npos) {
      const std::string_view dir_name = name.substr(0, slash);
      auto it = dirs_.find(dir_name);
      if (it == dirs_.end()) it = dirs_.emplace(std::string(dir_name), dirs_.size() + 1).first;
      dir = it->second;
    }
    body_.u64(dir);
    body_.str(slash == std::string_view::npos ? name : name.substr(slash + 1));
    body_.u8(uint8_t(flags | (!path.empty() && path[0] == '/' ? kRemoteAbsolute : 0)));
  }
  void count(uint64_t n) { body_.u64(n); }
  // The table, then what was added.
  void write(base::VarintWriter* w) {
    std::vector<std::string_view> table(dirs_.size());
    for (const auto& [dir, number] : dirs_) table[number - 1] = dir;
    w->u64(table.size());
    for (std::string_view dir : table) w->str(dir);
    w->raw(body_.take());
  }

 private:
  const KeyRelocation& relocation_;
  std::string renamed_;  // name_in's storage
  base::ViewMap<uint64_t> dirs_;
  base::VarintWriter body_;
};

// `count` names (directory number, rest, flags) into `out`, their text
// appended to *names; their views are set once all are in (decode_remote_memo).
bool get_names(base::VarintReader* r, std::string_view bytes, const std::vector<std::string>& dirs,
               std::vector<RemoteMemoView::Named>* out, std::string* names,
               std::vector<std::pair<size_t, size_t>>* spans) {
  uint64_t count = 0;
  if (!r->u64(&count) || count > bytes.size()) return false;
  out->resize(count);
  // Read in place first, then written out whole into storage sized once: a
  // closure's thousands of names are not copied again as it grows.
  struct Part {
    uint64_t dir;
    std::string_view rest;
  };
  std::vector<Part> parts(count);
  size_t total = names->size();
  for (size_t i = 0; i < count; ++i) {
    uint64_t n = 0;
    if (!r->u64(&parts[i].dir) || parts[i].dir > dirs.size() || !r->u64(&n) ||
        n > bytes.size() - r->pos()) {
      return false;
    }
    parts[i].rest = bytes.substr(r->pos(), n);
    if (!r->skip(n) || !r->u8(&(*out)[i].flags)) return false;
    total += (parts[i].dir > 0 ? dirs[parts[i].dir - 1].size() + 1 : 0) + n;
  }
  names->reserve(total);
  spans->reserve(spans->size() + count);
  for (const Part& p : parts) {
    const size_t at = names->size();
    if (p.dir > 0) {
      *names += dirs[p.dir - 1];
      *names += '/';
    }
    *names += p.rest;
    spans->emplace_back(at, names->size() - at);
  }
  return true;
}

}  // namespace

compiler::SearchList named_search_list(const compiler::SearchList& list,
                                       const KeyRelocation& relocation) {
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

std::string path_here(const std::string& name, bool absolute, const KeyRelocation& relocation) {
  std::string path = name;
  if (absolute && (name.empty() || name[0] != '/')) {
    if (!relocation.relocated) return "";
    // base::relative_to() climbed from the working directory with its
    // leading "..", then wrote the rest of the path as the compiler spelled
    // it ("a/../b" stays): climb back, and keep the rest as written.
    std::string_view rest = name;
    std::string_view base = relocation.cwd;
    while (rest == ".." || rest.starts_with("../")) {
      rest.remove_prefix(std::min<size_t>(3, rest.size()));
      const size_t slash = base.rfind('/');
      if (slash == std::string_view::npos) return "";
      base = base.substr(0, slash);
    }
    if (rest == ".") rest = {};
    path = std::string(base.empty() ? "/" : base);
    if (!rest.empty()) {
      if (path.back() != '/') path += '/';
      path += rest;
    }
  }
  if (!absolute && !name.empty() && name[0] == '/') return "";
  std::string storage;
  return relocation.name_in(path, &storage) == name ? path : "";
}

bool decode_remote_memo(std::string_view bytes, RemoteMemoView* d) {
  base::VarintReader r(bytes);
  std::string tag;
  std::vector<std::string> dirs;
  std::vector<std::pair<size_t, size_t>> spans;
  if (!r.str(&tag) || tag != kRemoteMemoTag || !get_hash(&r, &d->action_key) || !r.u64(&d->flags) ||
      !get_list(&r, bytes.size(), &d->list) || !get_strings(&r, bytes.size(), &dirs) ||
      !get_names(&r, bytes, dirs, &d->files, &d->names, &spans) || d->files.empty() ||
      !get_names(&r, bytes, dirs, &d->probes, &d->names, &spans)) {
    return false;
  }
  uint8_t has_base = 0;
  d->base_answer.reset();
  if (!r.u8(&has_base) || has_base > 1) return false;
  if (has_base) {
    compiler::SearchList& base = d->base_answer.emplace();
    if (!get_list(&r, bytes.size(), &base)) return false;
    base.memoizable = true;  // only such answers travel
  }
  if (!r.done()) return false;
  size_t k = 0;
  for (std::vector<RemoteMemoView::Named>* named : {&d->files, &d->probes}) {
    for (RemoteMemoView::Named& n : *named) {
      n.name = std::string_view(d->names).substr(spans[k].first, spans[k].second);
      ++k;
    }
  }
  return true;
}

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
                                              const cache::Hash128& action_key,
                                              const std::optional<compiler::SearchList>& base) {
  if (!relocation.base_dir.empty() && !relocation.relocated) return std::nullopt;
  if (!c.unsure.empty() || c.uses_time || !c.once_twins.empty() || c.forced_missing ||
      (c.has_computed_include && !c.computed_evaluated) || !list.memoizable || c.files.empty()) {
    return std::nullopt;
  }
  base::VarintWriter w;
  w.str(kRemoteMemoTag);
  put_hash(&w, action_key);
  w.u64((c.uses_date ? kRemoteUsesDate : 0) |
        (c.has_computed_include ? kRemoteComputedInclude : 0) |
        (c.presence_evaluated ? kRemotePresenceEvaluated : 0) |
        (c.computed_evaluated ? kRemoteComputedEvaluated : 0) |
        (relocation.relocated ? kRemoteRelocated : 0));
  put_list(&w, named_search_list(list, relocation));
  // No contents: the key the memo leads to here is checked against its own,
  // and it holds every file's content.
  NameWriter names(relocation);
  names.count(c.files.size());
  for (const ClosureFile& f : c.files) {
    if (f.opaque || f.once_twin) return std::nullopt;
    names.add(f.path, f.presence_only ? kRemotePresenceOnly : 0);
  }
  names.count(c.failed_probes.size());
  for (std::string_view p : c.failed_probes) names.add(p, 0);
  names.write(&w);
  // The base answer travels as the compiler printed it: only when it names
  // nothing the relocation would rename.
  const bool with_base = base && base->memoizable && named_search_list(*base, relocation) == *base;
  w.u8(with_base ? 1 : 0);
  if (with_base) put_list(&w, *base);
  return w.take();
}

}  // namespace lexpack::closure
