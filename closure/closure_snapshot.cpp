// The snapshot's encoding (a format tag first: a snapshot of another version
// reads as none) and the one check that lets a compile take it again.
#include "closure/closure_snapshot.h"

#include <memory>

#include "base/byte_codec.h"
#include "base/file_util.h"
#include "closure/file_summary.h"
#include "lexer/scanner.h"
#include "preprocessor/macro_table.h"

namespace lexpack::closure {
namespace {

constexpr std::string_view kSnapshotTag = "lexpack-closure-snapshot-3";

// The closure's flags, then each file's.
constexpr uint64_t kUsesDate = 1, kUsesTime = 2, kComputedInclude = 4, kPresenceEvaluated = 8,
                   kComputedEvaluated = 16, kForcedMissing = 32;
constexpr uint8_t kPresenceOnly = 1, kOpaque = 2, kOnceTwin = 4, kAbsoluteIncludes = 8;

// What the snapshot says of the macros its evaluation read.
constexpr uint8_t kNoneRead = 0, kReadsKept = 1, kReadsUnknown = 2;

// A fixed name's hash, kept beside the macro reads: a build whose name hash
// differs cannot look names up in them.
uint64_t name_hash_check() {
  return preprocessor::macro_name_hash("lexpack macro reads");
}

void put_hash(base::VarintWriter* w, const cache::Hash128& h) {
  w->u64(h.lo);
  w->u64(h.hi);
}
bool get_hash(base::VarintReader* r, cache::Hash128* h) {
  return r->u64(&h->lo) && r->u64(&h->hi);
}

}  // namespace

std::string encode_closure_snapshot(const Closure& c, const cache::Hash128& action_key) {
  base::VarintWriter w;
  w.str(kSnapshotTag);
  put_hash(&w, action_key);
  put_hash(&w, c.source_preprocessing);
  put_hash(&w, c.source_inert);
  if (!c.presence_evaluated && !c.computed_evaluated) {
    w.u8(kNoneRead);
  } else if (c.macro_reads) {
    w.u8(kReadsKept);
    w.str(c.macro_reads->bits());
    w.u64(name_hash_check());
  } else {
    w.u8(kReadsUnknown);
  }
  w.u64((c.uses_date ? kUsesDate : 0) | (c.uses_time ? kUsesTime : 0) |
        (c.has_computed_include ? kComputedInclude : 0) |
        (c.presence_evaluated ? kPresenceEvaluated : 0) |
        (c.computed_evaluated ? kComputedEvaluated : 0) | (c.forced_missing ? kForcedMissing : 0));
  w.str(c.once_twins);
  w.u64(c.files.size());
  for (const ClosureFile& f : c.files) {
    w.str(f.path);
    w.u64(f.stat.dev);
    w.u64(f.stat.ino);
    w.u64(f.stat.size);
    w.i64(f.stat.mtime_ns);
    w.i64(f.stat.ctime_ns);
    put_hash(&w, f.content);
    w.u8(uint8_t((f.presence_only ? kPresenceOnly : 0) | (f.opaque ? kOpaque : 0) |
                 (f.once_twin ? kOnceTwin : 0) | (f.absolute_includes ? kAbsoluteIncludes : 0)));
    if (f.opaque) put_hash(&w, f.made_by);
  }
  const bool numbered = c.failed_probe_dirs.size() == c.failed_probes.size();
  w.u64(numbered ? c.failed_probes.size() : 0);
  for (size_t i = 0; numbered && i < c.failed_probes.size(); ++i) {
    w.str(c.failed_probes[i]);
    w.u64(c.failed_probe_dirs[i]);
  }
  return w.take();
}

bool snapshot_source_preprocessing(std::string_view bytes, cache::Hash128* source_preprocessing) {
  base::VarintReader r(bytes);
  std::string tag;
  cache::Hash128 action_key;
  return r.str(&tag) && tag == kSnapshotTag && get_hash(&r, &action_key) &&
         get_hash(&r, source_preprocessing);
}

namespace {

// The head's inert fingerprint and macro reads (a view into the bytes).
bool read_inert(base::VarintReader* r, std::string_view bytes, SnapshotInert* inert) {
  uint8_t state = 0;
  if (!get_hash(r, &inert->fingerprint) || !r->u8(&state)) return false;
  inert->reads_known = state == kNoneRead;
  inert->reads = std::nullopt;
  if (state != kReadsKept) return state == kNoneRead || state == kReadsUnknown;
  uint64_t n = 0, check = 0;
  if (!r->u64(&n) || n > bytes.size() - r->pos()) return false;
  const std::string_view bits = bytes.substr(r->pos(), n);
  if (!r->skip(n) || !r->u64(&check)) return false;
  inert->reads_known = check == name_hash_check();
  if (inert->reads_known) inert->reads = bits;
  return true;
}

}  // namespace

bool snapshot_source_inert(std::string_view bytes, SnapshotInert* inert) {
  base::VarintReader r(bytes);
  std::string tag;
  cache::Hash128 action_key, preprocessing;
  return r.str(&tag) && tag == kSnapshotTag && get_hash(&r, &action_key) &&
         get_hash(&r, &preprocessing) && read_inert(&r, bytes, inert);
}

std::optional<cache::Hash128> source_inert_fingerprint(const std::string& path,
                                                       const cache::Hash128& content,
                                                       const lexer::Kernel& kernel,
                                                       std::optional<std::string_view> reads) {
  base::Result<std::string> bytes = base::read_file(path);
  if (!bytes.ok() || cache::hash_bytes(*bytes) != content) return std::nullopt;
  lexer::ScanResult scan;
  lexer::scan_into(*bytes, kernel, &scan);
  return inert_fingerprint(scan, *bytes, names_assembler_file_read(*bytes), reads);
}

void note_source_inert(Closure* closure, const lexer::Kernel& kernel) {
  closure->source_inert = cache::Hash128();
  if (closure->files.empty() || closure->files[0].opaque) return;
  const bool none_read = !closure->presence_evaluated && !closure->computed_evaluated;
  if (!none_read && !closure->macro_reads) return;
  std::optional<std::string_view> reads;
  if (!none_read) reads = closure->macro_reads->bits();
  // The source read again: its fingerprint is of the content the closure
  // holds, or there is none.
  if (std::optional<cache::Hash128> f = source_inert_fingerprint(
          std::string(closure->files[0].path), closure->files[0].content, kernel, reads)) {
    closure->source_inert = *f;
  }
}

bool decode_closure_snapshot(std::string encoded, Closure* out, cache::Hash128* action_key) {
  // The paths are views into the bytes, the closure's storage: one
  // allocation for a closure's thousands of paths, not one each.
  auto kept = std::make_shared<const std::string>(std::move(encoded));
  const std::string_view bytes = *kept;
  base::VarintReader r(bytes);
  auto path_view = [&r, bytes](std::string_view* s) {
    uint64_t n = 0;
    if (!r.u64(&n) || n > bytes.size() - r.pos()) return false;
    *s = bytes.substr(r.pos(), n);
    return r.skip(n);
  };
  std::string tag;
  uint64_t flags = 0, files = 0, probes = 0;
  Closure c;
  SnapshotInert inert;
  if (!r.str(&tag) || tag != kSnapshotTag || !get_hash(&r, action_key) ||
      !get_hash(&r, &c.source_preprocessing) || !read_inert(&r, bytes, &inert) || !r.u64(&flags) ||
      !r.str(&c.once_twins) || !r.u64(&files) || files > bytes.size()) {
    return false;
  }
  c.source_inert = inert.fingerprint;
  if (inert.reads) {
    c.macro_reads = std::make_shared<const preprocessor::MacroReads>(std::string(*inert.reads));
  }
  c.files.reserve(files);
  for (uint64_t i = 0; i < files; ++i) {
    ClosureFile f;
    uint8_t file_flags = 0;
    if (!path_view(&f.path) || !r.u64(&f.stat.dev) || !r.u64(&f.stat.ino) || !r.u64(&f.stat.size) ||
        !r.i64(&f.stat.mtime_ns) || !r.i64(&f.stat.ctime_ns) || !get_hash(&r, &f.content) ||
        !r.u8(&file_flags)) {
      return false;
    }
    f.presence_only = file_flags & kPresenceOnly;
    f.opaque = file_flags & kOpaque;
    f.once_twin = file_flags & kOnceTwin;
    f.absolute_includes = file_flags & kAbsoluteIncludes;
    if (f.opaque && !get_hash(&r, &f.made_by)) return false;
    c.files.push_back(f);
  }
  if (!r.u64(&probes) || probes > bytes.size()) return false;
  c.failed_probes.reserve(probes);
  c.failed_probe_dirs.reserve(probes);
  for (uint64_t i = 0; i < probes; ++i) {
    std::string_view probe;
    uint64_t dir = 0;
    if (!path_view(&probe) || !r.u64(&dir) || dir > UINT32_MAX) return false;
    c.failed_probes.push_back(probe);
    c.failed_probe_dirs.push_back(uint32_t(dir));
  }
  if (!r.done() || c.files.empty()) return false;
  c.uses_date = flags & kUsesDate;
  c.uses_time = flags & kUsesTime;
  c.has_computed_include = flags & kComputedInclude;
  c.presence_evaluated = flags & kPresenceEvaluated;
  c.computed_evaluated = flags & kComputedEvaluated;
  c.forced_missing = flags & kForcedMissing;
  c.storage = std::move(kept);
  *out = std::move(c);
  return true;
}

std::optional<Closure> closure_with_new_source(std::string snapshot, ClosureMemo memo,
                                               const base::StatSignature& source_stat,
                                               const cache::Hash128& source_content,
                                               const cache::Hash128& source_preprocessing,
                                               const cache::Hash128* source_inert,
                                               const ContentLookup* content, std::string* why) {
  // Its head first: an edit of the directives (the common reason to come
  // here) is told without decoding the snapshot's thousands of paths.
  cache::Hash128 kept_preprocessing;
  if (!snapshot_source_preprocessing(snapshot, &kept_preprocessing)) {
    *why = "no closure kept for it";
    return std::nullopt;
  }
  if (kept_preprocessing.is_zero()) {
    *why = "no closure kept for it";
    return std::nullopt;
  }
  if (kept_preprocessing != source_preprocessing) {
    // Directives edited: only #define and #undef lines of macros the
    // evaluation never read, which change neither the walk nor it.
    SnapshotInert kept;
    if (!source_inert || source_inert->is_zero() || !snapshot_source_inert(snapshot, &kept) ||
        kept.fingerprint != *source_inert) {
      *why = "its directives changed";
      return std::nullopt;
    }
  }
  Closure c;
  cache::Hash128 action_key;
  if (!decode_closure_snapshot(std::move(snapshot), &c, &action_key)) {
    *why = "no closure kept for it";
    return std::nullopt;
  }
  // A #pragma once twin is keyed by how its twins split, which its new
  // signature or content may change.
  if (c.files[0].once_twin) {
    *why = "it holds #pragma once and has a twin";
    return std::nullopt;
  }
  for (size_t i = 1; i < c.files.size(); ++i) {
    if (c.files[i].content == source_content) {
      *why = "its new content is the content of " + std::string(c.files[i].path);
      return std::nullopt;
    }
  }
  // The memo is of this closure (stored with it: its action key is a hash of
  // every file and probe), and everything it records but the source holds.
  if (memo.action_key != action_key || memo.dependencies.size() != c.files.size() ||
      memo.dependencies[0].path != c.files[0].path) {
    *why = "its closure memo is of another closure";
    return std::nullopt;
  }
  memo.dependencies[0].stat = source_stat;
  memo.dependencies[0].content = source_content;
  if (std::string changed = check_closure_memo(memo, nullptr, content); !changed.empty()) {
    *why = "also " + changed;
    return std::nullopt;
  }
  c.files[0].stat = source_stat;
  c.files[0].content = source_content;
  c.source_preprocessing = source_preprocessing;
  return c;
}

}  // namespace lexpack::closure
