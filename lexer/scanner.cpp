// The main loop of the directive scanner. Code is skipped with the kernel's
// find_any4 over the only bytes that can change state there ('#', '/', and
// quotes); comments and literals are skipped the same way. Line starts are
// found by looking back from a candidate, so newlines are never candidates.
#include "lexer/scanner.h"

#include <algorithm>
#include <cstring>

#include "lexer/chars.h"
#include "lexer/scanner_internal.h"

namespace lexpack::lexer {

namespace {

// Two byte tests pick the candidates, each rare in real headers (about one
// position in 300 to 400 passes): [@DPT] with [EGeg] three bytes on finds
// DATE, TIME and Prag; 'o' with [tu] two bytes on finds port (of import)
// and modu.
constexpr QuadSearch kPrepassSearch = {
    {make_quad("DATE"), make_quad("TIME"), make_quad("Prag"), make_quad("port"), make_quad("modu")},
    5,
    {{{0, 3}, {0x14, 0x22}, {'T', 'g'}}, {{1, 3}, {0, 0x01}, {'o', 'u'}}},
    2};
static_assert(kPrepassSearch.covers());

}  // namespace

const QuadSearch& prepass_search() {
  return kPrepassSearch;
}

ScanResult scan(std::string_view bytes, const Kernel& kernel) {
  ScanResult result;
  scan_into(bytes, kernel, &result);
  return result;
}

void scan_into(std::string_view bytes, const Kernel& kernel, ScanResult* out) {
  thread_local ScanScratch scratch;
  Scanner(bytes, kernel, out, &scratch).run();
}

Scanner::Scanner(std::string_view bytes, const Kernel& kernel, ScanResult* out,
                 ScanScratch* scratch)
    : begin_(bytes.data()),
      end_(bytes.data() + bytes.size()),
      start_(bytes.data()),
      kernel_(kernel),
      result_(*out),
      hits_(scratch->hits),
      line_pos_(bytes.data()),
      open_conditionals_(scratch->open_conditionals),
      directive_ends_(scratch->directive_ends),
      line_(scratch->line) {
  if (bytes.size() >= 3 && std::memcmp(begin_, "\xEF\xBB\xBF", 3) == 0) start_ += 3;
  // Every field of the result starts empty; the vectors keep their memory.
  result_.directives.clear();
  result_.text_pool.clear();
  result_.diagnostics.clear();
  result_.include_guard.clear();
  result_.uses_date = result_.uses_time = result_.uses_timestamp = false;
  hits_.clear();
  open_conditionals_.clear();
  directive_ends_.clear();
  line_.reset();
}

void Scanner::run() {
  // Headers average about one directive per 100 bytes; reserving avoids most
  // regrowth of the vectors for typical files.
  const size_t expected = static_cast<size_t>(end_ - begin_) / 128 + 8;
  result_.directives.reserve(expected);
  directive_ends_.reserve(expected);
  result_.text_pool.reserve(expected * 24);
  find_hits();
  static constexpr char kCodeBytes[4] = {'#', '/', '"', '\''};
  const char* p = start_;
  while (p < end_) {
    const char* c = kernel_.find_any4(p, end_, kCodeBytes);
    while (next_hit_ < hits_.size() && hits_[next_hit_].pos < p) ++next_hit_;
    if (next_hit_ < hits_.size() && hits_[next_hit_].pos < c) {
      p = on_hit(hits_[next_hit_++]);
      continue;
    }
    if (c == end_) break;
    switch (*c) {
      case '#':
        p = on_hash(c);
        break;
      case '/':
        p = on_slash(c);
        break;
      case '"':
        p = on_double_quote(c);
        break;
      default:
        p = on_single_quote(c);
        break;
    }
  }
  for (const OpenConditional& open : open_conditionals_) {
    result_.diagnostics.push_back(
        {open.line, open.offset,
         std::string("unterminated #") + std::string(kind_name(open.kind)) + " at end of file"});
  }
  detect_include_guard();
}

// The prepass: whole identifiers that matter outside directives. They are rare,
// so one quad search (kPrepassSearch) finds them all and the main loop checks
// each one's context.
void Scanner::find_hits() {
  // Whether `word` (n bytes) starts `back` bytes before f as a whole
  // identifier; no pointer outside the input is formed.
  auto word_at = [&](const char* f, size_t back, const char* word, size_t n) {
    if (static_cast<size_t>(f - start_) < back) return false;
    const char* w = f - back;
    return static_cast<size_t>(end_ - w) >= n && std::memcmp(w, word, n) == 0 &&
           (w == start_ || !is_ident_char(w[-1])) && (w + n == end_ || !is_ident_char(w[n]));
  };
  const char* p = start_;
  while (p < end_) {
    const char* f = kernel_.find_quad(p, end_, kPrepassSearch);
    if (f == end_) break;
    p = f + 1;
    switch (f[0]) {
      case 'D':
        if (word_at(f, 2, "__DATE__", 8)) hits_.push_back({f - 2, HitKind::kDate, 8});
        break;
      case 'T':
        if (word_at(f, 2, "__TIME__", 8)) hits_.push_back({f - 2, HitKind::kTime, 8});
        if (word_at(f, 2, "__TIMESTAMP__", 13)) hits_.push_back({f - 2, HitKind::kTimestamp, 13});
        break;
      case 'P':
        if (word_at(f, 1, "_Pragma", 7)) hits_.push_back({f - 1, HitKind::kPragma, 7});
        break;
      case 'p':
        if (word_at(f, 2, "import", 6)) hits_.push_back({f - 2, HitKind::kImport, 6});
        break;
      default:
        if (word_at(f, 0, "module", 6)) hits_.push_back({f, HitKind::kModule, 6});
        break;
    }
  }
  std::sort(hits_.begin(), hits_.end(), [](const Hit& a, const Hit& b) { return a.pos < b.pos; });
}

uint32_t Scanner::line_at(const char* p) {
  if (p >= line_pos_) {
    if (p - line_pos_ <= 16) {
      // A few bytes (often none: the line counter was moved past the previous
      // directive's line end) are counted here, cheaper than a kernel call.
      for (const char* q = line_pos_; q < p; ++q) {
        line_no_ += *q == '\n' || (*q == '\r' && (q + 1 == p || q[1] != '\n'));
      }
    } else {
      line_no_ += static_cast<uint32_t>(kernel_.count_lines(line_pos_, p));
    }
  } else {
    line_no_ -= static_cast<uint32_t>(kernel_.count_lines(p, line_pos_));
  }
  line_pos_ = p;
  return line_no_;
}

// After a directive line free of splices and comments: when the line counter
// stands on that line, move it past the line end, so the next directive's line
// number counts only the bytes after it.
void Scanner::pass_line_end(const char* line_start) {
  const char* e = line_.end();
  if (line_.mapped_ || e == end_ || line_pos_ < line_start || line_pos_ > e) return;
  line_pos_ = (*e == '\r' && e + 1 < end_ && e[1] == '\n') ? e + 2 : e + 1;
  ++line_no_;
}

void Scanner::diagnose(const char* p, std::string message) {
  result_.diagnostics.push_back(
      {line_at(p), static_cast<uint64_t>(p - begin_), std::move(message)});
}

// The start of the horizontal whitespace and splices that end just before p.
const char* Scanner::skip_space_back(const char* p) const {
  const char* q = p;
  for (;;) {
    while (q > start_ && is_hspace(q[-1])) --q;
    if (q == start_ || !is_newline(q[-1])) return q;
    const char* s = line_end_start(q, start_);
    while (s > start_ && is_hspace(s[-1])) --s;
    if (s == start_ || s[-1] != '\\') return q;
    q = s - 1;
  }
}

// True when only whitespace, splices and comments that themselves start a
// logical line precede `p` on its logical line.
bool Scanner::at_line_start(const char* p) const {
  const char* q = p;
  for (;;) {
    while (q > start_ && is_hspace(q[-1])) --q;
    if (q == start_) return true;
    if (q == last_comment_end_) return last_comment_at_line_start_;
    if (!is_newline(q[-1])) return false;
    const char* nl = line_end_start(q, start_);
    const char* s = nl;
    while (s > start_ && is_hspace(s[-1])) --s;
    if (s > start_ && s[-1] == '\\') {
      q = s - 1;  // a splice: the logical line goes on before it
      continue;
    }
    return true;
  }
}

const char* Scanner::on_hash(const char* p) {
  if (!at_line_start(p)) return p + 1;
  return parse_directive(p);
}

const char* Scanner::on_slash(const char* p) {
  const char* n = skip_splices(p + 1, end_);
  if (n == end_) return end_;
  if (*n == '*') {
    const bool at_start = at_line_start(p);
    const char* after = skip_block_comment(n + 1);
    last_comment_end_ = after;
    last_comment_at_line_start_ = at_start;
    return after;
  }
  if (*n == '/') return skip_line_comment(n + 1);
  return p + 1;
}

const char* Scanner::skip_block_comment(const char* p) {
  static constexpr char kSlash[4] = {'/', '/', '/', '/'};
  const char* const body = p;
  const char* q = p;
  for (;;) {
    const char* f = kernel_.find_any4(q, end_, kSlash);
    if (f == end_) {
      diagnose(body - 2, "unterminated /* comment");
      return end_;
    }
    // Look back over splices for the '*' that closes the comment.
    const char* b = f;
    while (b > body && is_newline(b[-1])) {
      const char* nl = line_end_start(b, body);
      const char* s = nl;
      while (s > body && is_hspace(s[-1])) --s;
      if (s > body && s[-1] == '\\') {
        b = s - 1;
      } else {
        break;
      }
    }
    if (b > body && b[-1] == '*') return f + 1;
    q = f + 1;
  }
}

const char* Scanner::skip_line_comment(const char* p) {
  static constexpr char kNewline[4] = {'\n', '\r', '\n', '\r'};
  const char* q = p;
  for (;;) {
    const char* f = kernel_.find_any4(q, end_, kNewline);
    if (f == end_) return end_;
    const char* s = f;
    while (s > p && is_hspace(s[-1])) --s;
    if (s > p && s[-1] == '\\') {  // a splice continues the comment
      q = (*f == '\r' && f + 1 < end_ && f[1] == '\n') ? f + 2 : f + 1;
      continue;
    }
    return f;
  }
}

// Skips an ordinary string or character literal starting at the quote `p`.
// An unterminated literal ends at the line end.
const char* Scanner::skip_quoted(const char* p, char quote) {
  const char needles[4] = {quote, '\\', '\n', '\r'};
  const char* q = p + 1;
  for (;;) {
    const char* f = kernel_.find_any4(q, end_, needles);
    if (f == end_) return end_;
    if (*f == quote) return f + 1;
    if (*f == '\\') {
      const char* after;
      if (is_splice(f, end_, &after)) {
        q = after;
      } else {
        q = f + 2 <= end_ ? f + 2 : end_;
      }
      continue;
    }
    return f;  // line end: unterminated
  }
}

const char* Scanner::on_double_quote(const char* p) {
  // A raw string's prefix is R, u8R, uR, UR or LR, as a whole token.
  if (p > start_ && p[-1] == 'R') {
    const char* r = p - 1;
    auto token_start = [&](const char* s) { return s == start_ || !is_ident_char(s[-1]); };
    bool raw = token_start(r);
    if (!raw && r - 1 >= start_ && (r[-1] == 'u' || r[-1] == 'U' || r[-1] == 'L'))
      raw = token_start(r - 1);
    if (!raw && r - 2 >= start_ && r[-1] == '8' && r[-2] == 'u') raw = token_start(r - 2);
    if (raw) return skip_raw_string(p);
  }
  return skip_quoted(p, '"');
}

const char* Scanner::skip_raw_string(const char* quote) {
  const char* d = quote + 1;
  const char* q = d;
  while (q < end_ && q - d <= 16 && *q != '(') {
    if (*q == ' ' || *q == ')' || *q == '\\' || *q == '\t' || *q == '\v' || *q == '\f' ||
        is_newline(*q))
      break;
    ++q;
  }
  if (q == end_ || *q != '(' || q - d > 16) {
    diagnose(quote, "invalid raw string delimiter");
    return skip_quoted(quote, '"');
  }
  const std::string_view delim(d, q - d);
  static constexpr char kParen[4] = {')', ')', ')', ')'};
  const char* s = q + 1;
  for (;;) {
    const char* f = kernel_.find_any4(s, end_, kParen);
    if (f == end_) {
      diagnose(quote, "unterminated raw string literal");
      return end_;
    }
    if (static_cast<size_t>(end_ - f) >= delim.size() + 2 &&
        std::memcmp(f + 1, delim.data(), delim.size()) == 0 && f[1 + delim.size()] == '"')
      return f + 2 + delim.size();
    s = f + 1;
  }
}

const char* Scanner::on_single_quote(const char* p) {
  // A digit separator when the token before it is a pp-number (1'000, 0x1'f).
  const char* t = p;
  while (t > start_ && (is_ident_char(t[-1]) || t[-1] == '.')) --t;
  const bool number = t < p && (is_digit(*t) || (*t == '.' && t + 1 < p && is_digit(t[1])));
  if (!number) return skip_quoted(p, '\'');
  const char* q = p;
  while (q < end_) {
    if (is_ident_char(*q) || *q == '.') {
      ++q;
    } else if (*q == '\'' && q + 1 < end_ && is_ident_char(q[1])) {
      q += 2;
    } else if ((*q == '+' || *q == '-') &&
               (q[-1] == 'e' || q[-1] == 'E' || q[-1] == 'p' || q[-1] == 'P')) {
      ++q;
    } else {
      break;
    }
  }
  return q == p ? p + 1 : q;
}

const char* Scanner::on_hit(const Hit& hit) {
  const char* after = hit.pos + hit.size;
  switch (hit.kind) {
    case HitKind::kDate:
      result_.uses_date = true;
      return after;
    case HitKind::kTime:
      result_.uses_time = true;
      return after;
    case HitKind::kTimestamp:
      result_.uses_timestamp = true;
      return after;
    case HitKind::kPragma: {
      // _Pragma ( "once" )
      const char* q = after;
      auto skip = [&] {
        while (q < end_ && is_hspace(*q)) ++q;
      };
      skip();
      if (q < end_ && *q == '(') {
        ++q;
        skip();
        if (end_ - q >= 6 && std::memcmp(q, "\"once\"", 6) == 0) {
          q += 6;
          skip();
          if (q < end_ && *q == ')') {
            add(DirectiveKind::kPragmaOnce, hit.pos);
            directive_ends_.back() = q + 1;
            return q + 1;
          }
        }
      }
      return after;
    }
    case HitKind::kImport:
    case HitKind::kModule: {
      if (at_line_start(hit.pos)) return parse_module(hit.pos, hit.pos, false, hit.kind);
      const char* q = skip_space_back(hit.pos);
      const char* e = q - 6;
      if (q < hit.pos && e >= start_ && std::memcmp(e, "export", 6) == 0 &&
          (e == start_ || !is_ident_char(e[-1])) && at_line_start(e))
        return parse_module(e, hit.pos, true, hit.kind);
      return after;
    }
  }
  return after;
}

}  // namespace lexpack::lexer
