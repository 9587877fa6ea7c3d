// The stable encoding of a file summary (a format tag first, so a summary
// written by another version reads as absent) and its making from a scan.
#include "closure/file_summary.h"

#include <algorithm>

#include "base/byte_codec.h"
#include "preprocessor/macro_reads.h"
#include "preprocessor/macro_table.h"

namespace lexpack::closure {
namespace {

constexpr std::string_view kSummaryTag = "lexpack-summary-4";

bool is_include_like(lexer::DirectiveKind k) {
  using K = lexer::DirectiveKind;
  return k == K::kInclude || k == K::kIncludeNext || k == K::kImport || k == K::kHasInclude ||
         k == K::kHasIncludeNext;
}

}  // namespace

std::string encode_summary(const FileSummary& s) {
  base::VarintWriter w;
  w.str(kSummaryTag);
  w.u64(s.content.lo);
  w.u64(s.content.hi);
  w.u8(uint8_t((s.uses_date ? 1 : 0) | (s.uses_time ? 2 : 0) | (s.assembler_reads ? 4 : 0) |
               (s.pragma_once ? 8 : 0)));
  w.u64(s.preprocessing.lo);
  w.u64(s.preprocessing.hi);
  w.u64(s.includes.size());
  for (const IncludeDirective& d : s.includes) {
    w.u8(uint8_t(d.kind));
    w.u8(uint8_t((d.angled ? 1 : 0) | (d.computed ? 2 : 0)));
    w.str(d.name);
  }
  return w.take();
}

bool decode_summary(std::string_view bytes, FileSummary* s) {
  base::VarintReader r(bytes);
  std::string tag;
  uint8_t flags = 0;
  uint64_t n = 0;
  if (!r.str(&tag) || tag != kSummaryTag || !r.u64(&s->content.lo) || !r.u64(&s->content.hi) ||
      !r.u8(&flags) || !r.u64(&s->preprocessing.lo) || !r.u64(&s->preprocessing.hi) || !r.u64(&n) ||
      n > bytes.size()) {
    return false;
  }
  s->uses_date = flags & 1;
  s->uses_time = flags & 2;
  s->assembler_reads = flags & 4;
  s->pragma_once = flags & 8;
  s->includes.clear();
  s->includes.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    IncludeDirective d;
    uint8_t kind = 0, f = 0;
    if (!r.u8(&kind) || !r.u8(&f) || !r.str(&d.name)) return false;
    d.kind = lexer::DirectiveKind(kind);
    if (!is_include_like(d.kind)) return false;
    d.angled = f & 1;
    d.computed = f & 2;
    s->includes.push_back(std::move(d));
  }
  s->absolute_include = names_absolute_include(*s);
  return r.done();
}

bool names_absolute_include(const FileSummary& summary) {
  for (const IncludeDirective& d : summary.includes) {
    if (!d.computed && !d.name.empty() && d.name[0] == '/') return true;
  }
  return false;
}

bool names_assembler_file_read(std::string_view bytes) {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
  auto name_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '$';
  };
  auto word_at = [&](size_t pos, std::string_view word) {
    if (bytes.size() - pos < word.size()) return false;
    for (size_t k = 0; k < word.size(); ++k) {
      if (lower(bytes[pos + k]) != word[k]) return false;
    }
    size_t end = pos + word.size();
    if (end < bytes.size() && name_char(bytes[end])) return false;  // another name
    // What gas would read next: a string, a macro or stringized argument
    // that becomes one, an escape or a line break inside a C string or
    // macro. Not punctuation (`x.include(a)`, `s.include = 1`, a quote in a
    // comment): no assembler line goes on that way.
    while (end < bytes.size() && (bytes[end] == ' ' || bytes[end] == '\t')) ++end;
    if (end == bytes.size()) return true;
    const char c = bytes[end];
    return c == '"' || c == '\\' || c == '#' || c == '/' || c == '\n' || c == '\r' ||
           (name_char(c) && c != '.');
  };
  for (size_t dot = bytes.find('.'); dot != std::string_view::npos;
       dot = bytes.find('.', dot + 1)) {
    if (word_at(dot + 1, "include") || word_at(dot + 1, "incbin")) return true;
  }
  return false;
}

namespace {

// A #define's whole span (the evaluation parses the define from the bytes).
std::string_view define_span(const lexer::Directive& d, std::string_view bytes) {
  const uint64_t end =
      std::min<uint64_t>(std::max<uint64_t>(d.body_offset + d.body_size, d.offset), bytes.size());
  const uint64_t begin = std::min<uint64_t>(d.offset, end);
  return bytes.substr(begin, end - begin);
}

// What both fingerprints hash after their tag: each directive `keep` takes
// (its kind, its line with `lines`, its text, a define's span), the
// diagnostics (their lines with `lines`), the include guard and the flags.
template <typename Keep>
void hash_directives(cache::Hasher* h, const lexer::ScanResult& scan, std::string_view bytes,
                     bool assembler_reads, bool lines, const Keep& keep) {
  for (const lexer::Directive& d : scan.directives) {
    if (!keep(d)) continue;
    h->field(uint64_t(d.kind) | (d.angled ? 0x100 : 0) | (d.computed ? 0x200 : 0) |
             (d.exported ? 0x400 : 0) | (d.header_unit ? 0x800 : 0));
    if (lines) h->field(uint64_t(d.line));
    h->field(scan.text(d));
    if (d.kind == lexer::DirectiveKind::kDefine) h->field(define_span(d, bytes));
  }
  h->field(uint64_t(scan.diagnostics.size()));
  for (const lexer::Diagnostic& g : scan.diagnostics) {
    if (lines) h->field(uint64_t(g.line));
    h->field(g.message);
  }
  h->field(scan.include_guard);
  h->field(uint64_t((scan.uses_date ? 1 : 0) | (scan.uses_time ? 2 : 0) |
                    (scan.uses_timestamp ? 4 : 0) | (assembler_reads ? 8 : 0)));
}

}  // namespace

cache::Hash128 preprocessing_fingerprint(const lexer::ScanResult& scan, std::string_view bytes,
                                         bool assembler_reads) {
  cache::Hasher h;
  h.field("preprocessing-1");
  h.field(uint64_t(scan.directives.size()));
  hash_directives(&h, scan, bytes, assembler_reads, true,
                  [](const lexer::Directive&) { return true; });
  return h.digest();
}

cache::Hash128 inert_fingerprint(const lexer::ScanResult& scan, std::string_view bytes,
                                 bool assembler_reads, std::optional<std::string_view> reads) {
  using preprocessor::MacroReads;
  const bool lines =
      reads && MacroReads::may_have_read(*reads, preprocessor::macro_name_hash("__LINE__"));
  auto inert = [&](const lexer::Directive& d) {
    if (d.kind != lexer::DirectiveKind::kDefine && d.kind != lexer::DirectiveKind::kUndef) {
      return false;
    }
    const std::string_view name = scan.text(d);
    if (name.empty()) return false;
    if (d.kind == lexer::DirectiveKind::kDefine &&
        define_span(d, bytes).find("__has_include") != std::string_view::npos) {
      return false;
    }
    return !reads || !MacroReads::may_have_read(*reads, preprocessor::macro_name_hash(name));
  };
  cache::Hasher h;
  h.field("inert-1");
  h.field(uint64_t(lines));
  hash_directives(&h, scan, bytes, assembler_reads, lines,
                  [&](const lexer::Directive& d) { return !inert(d); });
  return h.digest();
}

FileSummary summarize(const lexer::ScanResult& scan, const cache::Hash128& content,
                      std::string_view bytes) {
  FileSummary s;
  s.content = content;
  s.assembler_reads = names_assembler_file_read(bytes);
  s.uses_date = scan.uses_date;
  s.uses_time = scan.uses_time || scan.uses_timestamp;
  for (const lexer::Directive& d : scan.directives) {
    if (d.kind == lexer::DirectiveKind::kPragmaOnce) s.pragma_once = true;
    if (!is_include_like(d.kind)) continue;
    s.includes.push_back({d.kind, d.angled, d.computed, std::string(scan.text(d))});
  }
  s.preprocessing = preprocessing_fingerprint(scan, bytes, s.assembler_reads);
  s.absolute_include = names_absolute_include(s);
  return s;
}

}  // namespace lexpack::closure
