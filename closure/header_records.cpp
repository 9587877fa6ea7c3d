// The header-eval records: each trace's inputs and ops in the varint codec,
// the files it names in a table at the front, the key's own two names
// before it (a record read under another key reads as nothing).
#include "closure/header_records.h"

#include <cstring>
#include <unordered_map>

#include "base/byte_codec.h"
#include "base/file_stat.h"
#include "cache/hash/hash.h"
#include "preprocessor/macro_table.h"

namespace lexpack::closure {
namespace {

using preprocessor::HeaderOp;
using preprocessor::HeaderTrace;
using preprocessor::Macro;

constexpr std::string_view kMagic = "lexpack-headers-2";
constexpr size_t kKeyNumbers = 6;  // after the path: see header_file_key
constexpr uint64_t kMaxCount = 1u << 24;

std::string record_key(std::string_view context, std::string_view file) {
  cache::Hasher h;
  h.field(context);
  h.field(file);
  return h.digest().hex();
}

// The stat signature at the end of a file key; false when it is not one.
bool key_signature(std::string_view key, base::StatSignature* sig) {
  int64_t numbers[kKeyNumbers];
  if (key.size() < sizeof numbers + 1 || key[key.size() - sizeof numbers - 1] != '\0') {
    return false;
  }
  std::memcpy(numbers, key.data() + key.size() - sizeof numbers, sizeof numbers);
  sig->dev = uint64_t(numbers[1]);
  sig->ino = uint64_t(numbers[2]);
  sig->size = uint64_t(numbers[3]);
  sig->mtime_ns = numbers[4];
  sig->ctime_ns = numbers[5];
  return true;
}

uint64_t digest_of(const HeaderTrace& t, const preprocessor::HeaderCache& cache);

// Writes one trace's inputs and ops, numbering the file names it holds.
class Writer {
 public:
  explicit Writer(const preprocessor::HeaderCache& cache) : cache_(cache) {}

  // False (nothing kept of it) when the trace holds what a record cannot.
  bool trace(const HeaderTrace& t, base::VarintWriter* w) {
    bad_ = false;
    const preprocessor::HeaderInputs& in = t.inputs;
    w->u64(in.macros.size());
    for (const auto& [name, macro] : in.macros) {
      w->str(name);
      w->u8(macro ? 1 : 0);
      if (macro && !this->macro(*macro, w)) return false;
    }
    w->u64(in.once.size());
    for (const auto& [id, state] : in.once) {
      w->u64(file(id));
      w->u8(uint8_t(state));
    }
    w->u64(in.queries.size());
    for (const preprocessor::HeaderInputs::Query& q : in.queries) {
      w->str(q.op);
      w->str(q.argument);
      w->u8(q.answer ? 1 : 0);
      w->i64(q.answer.value_or(0));
    }
    w->u8(in.reads_depth ? 1 : 0);
    w->u64(in.depth);
    w->u64(in.max_rel_depth);
    w->u64(t.ops.size());
    for (const HeaderOp& op : t.ops) {
      if (!this->op(op, w)) return false;
    }
    return !bad_;
  }

  const std::vector<std::string>& files() const { return files_; }

 private:
  bool op(const HeaderOp& op, base::VarintWriter* w) {
    w->u8(uint8_t(op.kind));
    w->u64(op.line);
    switch (op.kind) {
      case HeaderOp::Kind::kDefine:
        return op.macro && macro(*op.macro, w);
      case HeaderOp::Kind::kUndef:
        w->str(op.name);
        return true;
      case HeaderOp::Kind::kInclude:
      case HeaderOp::Kind::kHasInclude:
        w->str(op.name);
        w->u8(uint8_t((op.angled ? 1 : 0) | (op.next ? 2 : 0) | (op.computed ? 4 : 0)));
        w->u8(uint8_t(op.how));
        w->u64(op.answer == 0 ? 0 : file(op.answer));
        // The nested trace by its digest (0: none, or one no record holds).
        w->u64(op.kind == HeaderOp::Kind::kInclude && op.nested ? digest_of(*op.nested, cache_)
                                                                : 0);
        return !bad_;
      case HeaderOp::Kind::kPragmaOnce:
        return true;
      case HeaderOp::Kind::kModule:
        return false;
    }
    return false;
  }

  bool macro(const Macro& m, base::VarintWriter* w) {
    w->str(m.name);
    w->u8(uint8_t((m.function_like ? 1 : 0) | (m.variadic ? 2 : 0)));
    w->u64(m.params.size());
    for (const std::string& p : m.params) w->str(p);
    w->u64(m.body.size());
    for (const preprocessor::Token& t : m.body) {
      if (t.hide != 0) return false;  // a definition's tokens have no hide set
      w->u8(uint8_t(t.kind));
      w->u8(t.space_before ? 1 : 0);
      w->str(t.text);
    }
    return true;
  }

  // The file's place in the table, from 1; a number the cache cannot name
  // spoils the trace.
  uint64_t file(uint32_t id) {
    if (auto it = numbers_.find(id); it != numbers_.end()) return it->second;
    std::string name = cache_.name(id);
    if (name.empty()) {
      bad_ = true;
      return 0;
    }
    files_.push_back(std::move(name));
    return numbers_.emplace(id, files_.size()).first->second;
  }

  const preprocessor::HeaderCache& cache_;
  std::unordered_map<uint32_t, uint64_t> numbers_;
  std::vector<std::string> files_;
  bool bad_ = false;
};

// A trace as a record holds it: the files it names, then its inputs and
// ops; "" when it holds what a record cannot.
std::string trace_body(const HeaderTrace& t, const preprocessor::HeaderCache& cache) {
  Writer writer(cache);
  base::VarintWriter content;
  if (!writer.trace(t, &content)) return {};
  base::VarintWriter body;
  body.u64(writer.files().size());
  for (const std::string& f : writer.files()) body.str(f);
  body.raw(content.bytes());
  return body.take();
}

uint64_t body_digest(std::string_view body) {
  return cache::hash64(body) | 1;  // never 0, which means none
}

// The trace's digest, its body written to learn it when not known yet; 0
// when no record can hold it. Nested traces are written first (their
// digests are part of their includer's body).
uint64_t digest_of(const HeaderTrace& t, const preprocessor::HeaderCache& cache) {
  if (t.digest == 0) {
    const std::string body = trace_body(t, cache);
    if (!body.empty()) t.digest = body_digest(body);
  }
  return t.digest;
}

class Reader {
 public:
  Reader(base::VarintReader* r, preprocessor::HeaderCache& cache) : r_(*r), cache_(cache) {}

  // The trace of a body (trace_body); its nested traces are left to the
  // caller, as nested() lists them.
  std::shared_ptr<HeaderTrace> trace() {
    auto t = std::make_shared<HeaderTrace>();
    preprocessor::HeaderInputs& in = t->inputs;
    uint64_t n = 0;
    if (!count(&n)) return nullptr;
    for (uint64_t i = 0; i < n; ++i) {
      std::string name;
      if (!r_.str(&name) || name.empty()) return nullptr;
      files_.push_back(cache_.intern(name));
    }
    if (!count(&n)) return nullptr;
    in.macros.reserve(n);
    for (uint64_t i = 0; i < n; ++i) {
      std::string name;
      uint8_t defined = 0;
      if (!r_.str(&name) || !r_.u8(&defined)) return nullptr;
      if (defined) {
        std::shared_ptr<const Macro> m = macro();
        if (!m || m->name != name) return nullptr;
        in.macros.emplace_back(m->name, std::move(m));
      } else {
        in.macros.emplace_back(preprocessor::stable_macro_name(name), nullptr);
      }
    }
    if (!count(&n)) return nullptr;
    for (uint64_t i = 0; i < n; ++i) {
      uint32_t id = 0;
      uint8_t state = 0;
      if (!file(&id) || id == 0 || !r_.u8(&state) || state > 2) return nullptr;
      in.once.emplace_back(id, preprocessor::OnceState(state));
    }
    if (!count(&n)) return nullptr;
    for (uint64_t i = 0; i < n; ++i) {
      preprocessor::HeaderInputs::Query q;
      uint8_t has = 0;
      int64_t answer = 0;
      if (!r_.str(&q.op) || !r_.str(&q.argument) || !r_.u8(&has) || !r_.i64(&answer)) {
        return nullptr;
      }
      if (has) q.answer = answer;
      in.queries.push_back(std::move(q));
    }
    uint8_t reads_depth = 0;
    uint64_t depth = 0, max_rel = 0;
    if (!r_.u8(&reads_depth) || !r_.u64(&depth) || !r_.u64(&max_rel)) return nullptr;
    in.reads_depth = reads_depth != 0;
    in.depth = uint32_t(depth);
    in.max_rel_depth = uint32_t(max_rel);
    if (!count(&n)) return nullptr;
    t->ops.resize(n);
    for (HeaderOp& op : t->ops) {
      if (!this->op(&op)) return nullptr;
    }
    return t;
  }

  // Each include op whose record named a nested trace, with its digest.
  std::vector<std::pair<HeaderOp*, uint64_t>>& nested() { return nested_; }

 private:
  bool count(uint64_t* n) { return r_.u64(n) && *n <= kMaxCount; }

  bool file(uint32_t* id) {
    uint64_t i = 0;
    if (!r_.u64(&i) || i > files_.size()) return false;
    *id = i == 0 ? 0 : files_[i - 1];
    return true;
  }

  bool op(HeaderOp* op) {
    uint8_t kind = 0;
    uint64_t line = 0;
    if (!r_.u8(&kind) || !r_.u64(&line)) return false;
    op->line = uint32_t(line);
    op->kind = HeaderOp::Kind(kind);
    switch (op->kind) {
      case HeaderOp::Kind::kDefine:
        op->macro = macro();
        return op->macro != nullptr;
      case HeaderOp::Kind::kUndef:
        return r_.str(&op->name);
      case HeaderOp::Kind::kInclude:
      case HeaderOp::Kind::kHasInclude: {
        uint8_t flags = 0, how = 0;
        if (!r_.str(&op->name) || !r_.u8(&flags) || !r_.u8(&how) ||
            how > uint8_t(preprocessor::EntryKind::kImport) || !file(&op->answer)) {
          return false;
        }
        op->angled = flags & 1;
        op->next = flags & 2;
        op->computed = flags & 4;
        op->how = preprocessor::EntryKind(how);
        uint64_t nested = 0;
        if (!r_.u64(&nested)) return false;
        if (nested != 0 && op->kind == HeaderOp::Kind::kInclude && op->answer != 0) {
          nested_.emplace_back(op, nested);
        }
        return true;
      }
      case HeaderOp::Kind::kPragmaOnce:
        return true;
      case HeaderOp::Kind::kModule:
        return false;
    }
    return false;
  }

  std::shared_ptr<const Macro> macro() {
    auto m = std::make_shared<Macro>();
    uint8_t flags = 0;
    uint64_t n = 0;
    if (!r_.str(&m->name) || m->name.empty() || !r_.u8(&flags) || !count(&n)) return nullptr;
    m->function_like = flags & 1;
    m->variadic = flags & 2;
    m->params.resize(n);
    for (std::string& p : m->params) {
      if (!r_.str(&p)) return nullptr;
    }
    if (!count(&n)) return nullptr;
    m->body.resize(n);
    for (preprocessor::Token& t : m->body) {
      uint8_t kind = 0, space = 0;
      if (!r_.u8(&kind) || kind > uint8_t(preprocessor::TokenKind::kUnknown) || !r_.u8(&space) ||
          !r_.str(&t.text)) {
        return nullptr;
      }
      t.kind = preprocessor::TokenKind(kind);
      t.space_before = space != 0;
    }
    preprocessor::name_macro(m.get());
    return m;
  }

  base::VarintReader& r_;
  preprocessor::HeaderCache& cache_;
  std::vector<uint32_t> files_;
  std::vector<std::pair<HeaderOp*, uint64_t>> nested_;
};

// A decoded trace and the nested traces its record named.
struct Decoded {
  std::shared_ptr<HeaderTrace> trace;
  std::vector<std::pair<HeaderOp*, uint64_t>> nested;
};

// The answers a replay asks of `t` (count_answers), nested traces of the
// same record counted first.
void count_all(HeaderTrace* t, std::vector<Decoded>& local, std::vector<bool>& done) {
  for (size_t i = 0; i < local.size(); ++i) {
    if (local[i].trace.get() != t) continue;
    if (done[i]) return;
    done[i] = true;
    break;
  }
  for (HeaderOp& op : t->ops) {
    if (!op.nested) continue;
    for (Decoded& d : local) {
      if (d.trace == op.nested) count_all(d.trace.get(), local, done);
    }
  }
  t->answer_count = preprocessor::count_answers(*t);
}

}  // namespace

std::string header_file_key(const Resolution& r) {
  // The numbers as their bytes after the path's end: fixed width, so no
  // two differ in one and compare equal.
  const int64_t numbers[kKeyNumbers] = {int64_t(r.chain_index),   int64_t(r.stat.dev),
                                        int64_t(r.stat.ino),      int64_t(r.stat.size),
                                        int64_t(r.stat.mtime_ns), int64_t(r.stat.ctime_ns)};
  std::string key;
  key.reserve(r.path.size() + 1 + sizeof numbers);
  key.append(r.path).push_back('\0');
  key.append(reinterpret_cast<const char*>(numbers), sizeof numbers);
  return key;
}

std::string encode_header_traces(const std::vector<std::shared_ptr<const HeaderTrace>>& traces,
                                 std::string_view context, std::string_view file,
                                 const preprocessor::HeaderCache& cache) {
  std::vector<std::string> bodies;
  for (const std::shared_ptr<const HeaderTrace>& t : traces) {
    if (!t) continue;
    std::string body = trace_body(*t, cache);
    if (body.empty()) continue;
    t->digest = body_digest(body);
    bodies.push_back(std::move(body));
  }
  if (bodies.empty()) return {};
  base::VarintWriter w;
  w.raw(kMagic);
  w.str(context);
  w.str(file);
  w.u64(bodies.size());
  for (const std::string& b : bodies) w.str(b);
  return w.take();
}

std::vector<std::shared_ptr<const HeaderTrace>> decode_header_traces(
    std::string_view bytes, std::string_view context, std::string_view file,
    preprocessor::HeaderCache& cache) {
  if (bytes.substr(0, kMagic.size()) != kMagic) return {};
  base::VarintReader r(bytes.substr(kMagic.size()));
  std::string name;
  if (!r.str(&name) || name != context || !r.str(&name) || name != file) return {};
  uint64_t n = 0;
  if (!r.u64(&n) || n > preprocessor::HeaderCache::kMaxVariants) return {};
  std::vector<Decoded> decoded;
  for (uint64_t i = 0; i < n; ++i) {
    std::string body;
    if (!r.str(&body)) return {};
    base::VarintReader br(body);
    Reader reader(&br, cache);
    std::shared_ptr<HeaderTrace> t = reader.trace();
    if (!t || !br.done()) return {};
    t->digest = body_digest(body);
    decoded.push_back({std::move(t), std::move(reader.nested())});
  }
  if (!r.done()) return {};
  // Each nested trace named, from this record (a header that includes
  // itself) or from the nested header's own; one not found is left out,
  // and the replay looks that header up as it enters it.
  const uint32_t self = cache.intern(file);
  const uint32_t context_id = cache.intern(context);
  for (Decoded& d : decoded) {
    for (auto& [op, digest] : d.nested) {
      if (op->answer == self) {
        for (const Decoded& other : decoded) {
          if (other.trace != d.trace && other.trace->digest == digest) op->nested = other.trace;
        }
        continue;
      }
      for (const std::shared_ptr<const HeaderTrace>& c :
           cache.find(preprocessor::HeaderCache::key(context_id, op->answer))) {
        if (c->digest == digest) {
          op->nested = c;
          break;
        }
      }
    }
  }
  std::vector<bool> done(decoded.size(), false);
  std::vector<std::shared_ptr<const HeaderTrace>> out;
  for (Decoded& d : decoded) {
    count_all(d.trace.get(), decoded, done);
    out.push_back(d.trace);
  }
  return out;
}

std::vector<std::shared_ptr<const HeaderTrace>> StoredHeaders::load(
    std::string_view context, std::string_view file, preprocessor::HeaderCache& cache) {
  std::vector<std::shared_ptr<const HeaderTrace>> out;
  if (!store_ || context.empty() || file.empty()) return out;
  store_->visit_memo(kHeaderTable, record_key(context, file), [&](std::string_view bytes) {
    out = decode_header_traces(bytes, context, file, cache);
  });
  return out;
}

base::Status save_header_traces(cache::Store* store, preprocessor::HeaderCache& cache) {
  std::vector<preprocessor::HeaderCache::Unsaved> unsaved = cache.take_unsaved();
  if (!store || unsaved.empty()) return base::Status();
  const int64_t now = base::now_ns();
  // Settled or not, per file: a header's records name the same few.
  std::unordered_map<std::string, bool> settled;
  auto is_settled = [&](const std::string& key) {
    auto [it, fresh] = settled.emplace(key, false);
    if (fresh) {
      base::StatSignature sig;
      it->second = key_signature(key, &sig) && base::signature_is_settled(sig, now);
    }
    return it->second;
  };
  std::vector<cache::Store::MemoWrite> writes;
  for (preprocessor::HeaderCache::Unsaved& u : unsaved) {
    if (!is_settled(u.file)) continue;
    std::vector<std::shared_ptr<const HeaderTrace>> kept;
    for (std::shared_ptr<const HeaderTrace>& t : u.traces) {
      bool ok = true;
      for (const auto& [id, state] : t->inputs.once) ok = ok && is_settled(cache.name(id));
      for (const HeaderOp& op : t->ops) {
        if (op.answer != 0) ok = ok && is_settled(cache.name(op.answer));
      }
      if (ok) kept.push_back(std::move(t));
    }
    std::string bytes = encode_header_traces(kept, u.context, u.file, cache);
    if (bytes.empty()) continue;
    writes.push_back({std::string(kHeaderTable), record_key(u.context, u.file), std::move(bytes)});
  }
  if (writes.empty()) return base::Status();
  return store->put_records({}, writes);
}

}  // namespace lexpack::closure
