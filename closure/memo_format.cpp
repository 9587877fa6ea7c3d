// Writing and reading the closure memo's layout: see memo_format.h.
#include "closure/memo_format.h"

#include "base/byte_codec.h"
#include "base/file_util.h"

namespace lexpack::closure {
namespace {

// 2: probes are kept as names relative to their directory.
// 3: a probed directory that was missing keeps no names (any entry it gains
// is a change).
// 6: dependencies keep their content hash; missing probed directories are
// vouched for by their deepest existing ancestor.
// 8: a #pragma once twin keeps no content hash (any change of its signature
// is a change); a TU whose files name gas's .include/.incbin has none.
constexpr std::string_view kMemoFormat = "lexpack-closure-8";

// The path fields of the encoding as views into `bytes`.
bool read_view(base::VarintReader* r, std::string_view bytes, std::string_view* out) {
  uint64_t n = 0;
  if (!r->u64(&n) || n > bytes.size() - r->pos()) return false;
  *out = bytes.substr(r->pos(), n);
  return r->skip(n);
}

}  // namespace

std::string_view probe_name(std::string_view dir, std::string_view probe) {
  std::string_view name = probe.substr(dir.size());
  if (!name.empty() && name[0] == '/') name.remove_prefix(1);
  return name;
}

std::string encode_view(const MemoView& m, const cache::Hash128& action_key, bool uses_date) {
  // At most 10 bytes per number, 5 numbers per signature.
  size_t size = kMemoFormat.size() + 64;
  for (const auto& d : m.dependencies) size += d.path.size() + 60;
  for (const auto& d : m.probed_dirs) size += d.dir.size() + 71;
  for (std::string_view p : m.probes) size += p.size() + 10;
  for (std::string_view d : m.absent_dirs) size += d.size() + 10;
  for (std::string_view d : m.same_dirs) size += d.size() + 10;
  for (const auto& v : m.vouched) size += v.ancestor.size() + 70;
  for (std::string_view d : m.vouched_dirs) size += d.size() + 10;
  base::VarintWriter w;
  w.reserve(size);
  w.str(kMemoFormat);
  w.u64(action_key.lo);
  w.u64(action_key.hi);
  w.u8(uses_date ? 1 : 0);
  w.u64(m.dependencies.size());
  for (const auto& d : m.dependencies) {
    w.str(d.path);
    base::write_signature(&w, d.stat);
    w.u64(d.content.lo);
    w.u64(d.content.hi);
  }
  w.u64(m.probed_dirs.size());
  for (const auto& d : m.probed_dirs) {
    w.str(d.dir);
    w.u8(uint8_t((d.exists ? 1 : 0) | (d.check_each ? 2 : 0)));
    base::write_signature(&w, d.stat);
    w.u64(d.probe_count);
    for (size_t i = d.first_probe; i < d.first_probe + d.probe_count; ++i) w.str(m.probes[i]);
  }
  w.u64(m.absent_dirs.size());
  for (std::string_view d : m.absent_dirs) w.str(d);
  w.u64(m.vouched.size());
  for (const auto& v : m.vouched) {
    w.str(v.ancestor);
    base::write_signature(&w, v.stat);
    w.u64(v.dir_count);
    for (size_t k = v.first_dir; k < v.first_dir + v.dir_count; ++k) w.str(m.vouched_dirs[k]);
  }
  w.u64(m.same_dirs.size());
  for (std::string_view d : m.same_dirs) w.str(d);
  return w.take();
}

MemoView view_of(const ClosureMemo& m) {
  MemoView v;
  v.dependencies.reserve(m.dependencies.size());
  for (const auto& d : m.dependencies) v.dependencies.push_back({d.path, d.stat, d.content});
  for (const auto& d : m.probed_dirs) {
    v.probed_dirs.push_back(
        {d.dir, d.exists, d.check_each, d.stat, v.probes.size(), d.probes.size()});
    for (const std::string& p : d.probes) v.probes.push_back(probe_name(d.dir, p));
  }
  v.absent_dirs.assign(m.absent_dirs.begin(), m.absent_dirs.end());
  for (const auto& g : m.vouched) {
    v.vouched.push_back({g.ancestor, g.stat, v.vouched_dirs.size(), g.dirs.size()});
    v.vouched_dirs.insert(v.vouched_dirs.end(), g.dirs.begin(), g.dirs.end());
  }
  v.same_dirs.assign(m.same_dirs.begin(), m.same_dirs.end());
  return v;
}

std::string encode_closure_memo(const ClosureMemo& m) {
  return encode_view(view_of(m), m.action_key, m.uses_date);
}

bool decode_closure_memo(std::string_view bytes, ClosureMemo* m) {
  base::VarintReader r(bytes);
  std::string tag;
  uint8_t flags = 0;
  uint64_t n = 0;
  if (!r.str(&tag) || tag != kMemoFormat || !r.u64(&m->action_key.lo) ||
      !r.u64(&m->action_key.hi) || !r.u8(&flags) || !r.u64(&n) || n > bytes.size()) {
    return false;
  }
  m->uses_date = flags & 1;
  m->dependencies.resize(n);
  for (auto& d : m->dependencies) {
    if (!r.str(&d.path) || !base::read_signature(&r, &d.stat) || !r.u64(&d.content.lo) ||
        !r.u64(&d.content.hi)) {
      return false;
    }
  }
  if (!r.u64(&n) || n > bytes.size()) return false;
  m->probed_dirs.resize(n);
  for (auto& d : m->probed_dirs) {
    uint64_t count = 0;
    if (!r.str(&d.dir) || !r.u8(&flags) || !base::read_signature(&r, &d.stat) || !r.u64(&count) ||
        count > bytes.size()) {
      return false;
    }
    d.exists = flags & 1;
    d.check_each = flags & 2;
    d.probes.resize(count);
    for (std::string& p : d.probes) {
      std::string name;
      if (!r.str(&name)) return false;
      p = base::join_path(d.dir, name);
    }
  }
  if (!r.u64(&n) || n > bytes.size()) return false;
  m->absent_dirs.resize(n);
  for (std::string& d : m->absent_dirs) {
    if (!r.str(&d)) return false;
  }
  if (!r.u64(&n) || n > bytes.size()) return false;
  m->vouched.resize(n);
  for (auto& v : m->vouched) {
    uint64_t count = 0;
    if (!r.str(&v.ancestor) || !base::read_signature(&r, &v.stat) || !r.u64(&count) ||
        count > bytes.size()) {
      return false;
    }
    v.dirs.resize(count);
    for (std::string& d : v.dirs) {
      if (!r.str(&d)) return false;
    }
  }
  if (!r.u64(&n) || n > bytes.size() || n % 2 != 0) return false;
  m->same_dirs.resize(n);
  for (std::string& d : m->same_dirs) {
    if (!r.str(&d)) return false;
  }
  return r.done();
}

namespace {

// The format tag, the action key and the flags that start a memo.
bool read_head(base::VarintReader* r, std::string_view bytes, cache::Hash128* action_key,
               bool* uses_date) {
  std::string_view tag;
  uint8_t flags = 0;
  if (!read_view(r, bytes, &tag) || tag != kMemoFormat || !r->u64(&action_key->lo) ||
      !r->u64(&action_key->hi) || !r->u8(&flags)) {
    return false;
  }
  *uses_date = flags & 1;
  return true;
}

}  // namespace

bool parse_head(std::string_view bytes, cache::Hash128* action_key, bool* uses_date) {
  base::VarintReader r(bytes);
  return read_head(&r, bytes, action_key, uses_date);
}

bool parse_first_dependency(std::string_view bytes, MemoView::Dependency* first) {
  base::VarintReader r(bytes);
  cache::Hash128 key;
  bool uses_date = false;
  uint64_t n = 0;
  return read_head(&r, bytes, &key, &uses_date) && r.u64(&n) && n > 0 && n <= bytes.size() &&
         read_view(&r, bytes, &first->path) && base::read_signature(&r, &first->stat) &&
         r.u64(&first->content.lo) && r.u64(&first->content.hi);
}

bool parse_view(std::string_view bytes, MemoView* out, cache::Hash128* action_key,
                bool* uses_date) {
  // The same format decode_closure_memo() reads, every path left in place.
  base::VarintReader r(bytes);
  uint8_t flags = 0;
  uint64_t n = 0;
  if (!read_head(&r, bytes, action_key, uses_date) || !r.u64(&n) || n > bytes.size()) {
    return false;
  }
  MemoView& m = *out;
  m.clear();
  m.dependencies.resize(n);
  for (auto& d : m.dependencies) {
    if (!read_view(&r, bytes, &d.path) || !base::read_signature(&r, &d.stat) ||
        !r.u64(&d.content.lo) || !r.u64(&d.content.hi)) {
      return false;
    }
  }
  if (!r.u64(&n) || n > bytes.size()) return false;
  m.probed_dirs.resize(n);
  for (auto& d : m.probed_dirs) {
    uint64_t count = 0;
    if (!read_view(&r, bytes, &d.dir) || !r.u8(&flags) || !base::read_signature(&r, &d.stat) ||
        !r.u64(&count) || count > bytes.size()) {
      return false;
    }
    d.exists = flags & 1;
    d.check_each = flags & 2;
    d.first_probe = m.probes.size();
    d.probe_count = count;
    for (uint64_t i = 0; i < count; ++i) {
      std::string_view p;
      if (!read_view(&r, bytes, &p)) return false;
      m.probes.push_back(p);
    }
  }
  if (!r.u64(&n) || n > bytes.size()) return false;
  m.absent_dirs.resize(n);
  for (std::string_view& d : m.absent_dirs) {
    if (!read_view(&r, bytes, &d)) return false;
  }
  if (!r.u64(&n) || n > bytes.size()) return false;
  m.vouched.resize(n);
  for (auto& v : m.vouched) {
    uint64_t count = 0;
    if (!read_view(&r, bytes, &v.ancestor) || !base::read_signature(&r, &v.stat) ||
        !r.u64(&count) || count > bytes.size()) {
      return false;
    }
    v.first_dir = m.vouched_dirs.size();
    v.dir_count = count;
    for (uint64_t i = 0; i < count; ++i) {
      std::string_view d;
      if (!read_view(&r, bytes, &d)) return false;
      m.vouched_dirs.push_back(d);
    }
  }
  if (!r.u64(&n) || n > bytes.size() || n % 2 != 0) return false;
  m.same_dirs.resize(n);
  for (std::string_view& d : m.same_dirs) {
    if (!read_view(&r, bytes, &d)) return false;
  }
  return r.done();
}

bool closure_memo_dependencies(std::string_view bytes, std::vector<std::string_view>* paths) {
  thread_local MemoView m;
  cache::Hash128 action_key;
  bool uses_date = false;
  if (!parse_view(bytes, &m, &action_key, &uses_date)) return false;
  paths->clear();
  paths->reserve(m.dependencies.size());
  for (const auto& d : m.dependencies) paths->push_back(d.path);
  return true;
}

}  // namespace lexpack::closure
