// Gives meaning to one directive's logical line: includes, macros,
// conditionals (kept as text), pragma once, __has_include, and C++20 module
// declarations. Malformed lines become diagnostics; scanning always goes on.
#include <cstring>
#include <optional>
#include <string>

#include "lexer/chars.h"
#include "lexer/scanner_internal.h"

namespace lexpack::lexer {
namespace {

size_t skip_space(std::string_view v, size_t i) {
  while (i < v.size() && is_hspace(v[i])) ++i;
  return i;
}

size_t skip_ident(std::string_view v, size_t i) {
  if (i < v.size() && is_ident_start(v[i])) {
    const char* const end = v.data() + v.size();
    i = static_cast<size_t>(skip_ident_bytes(v.data() + i + 1, end) - v.data());
  }
  return i;
}

std::string_view rtrim(std::string_view v) {
  while (!v.empty() && is_hspace(v.back())) v.remove_suffix(1);
  return v;
}

// Skips a string or character literal in cleaned text starting at v[i].
size_t skip_literal(std::string_view v, size_t i) {
  const char quote = v[i++];
  while (i < v.size() && v[i] != quote) i += v[i] == '\\' ? 2 : 1;
  return i < v.size() ? i + 1 : v.size();
}

// The index just after the last non-space byte before v[i].
size_t space_back(std::string_view v, size_t i) {
  while (i > 0 && is_hspace(v[i - 1])) --i;
  return i;
}

// Whether the identifier at v[at] is the operand of `defined` (`defined X`
// or `defined ( X`), looking back over cleaned text.
bool operand_of_defined(std::string_view v, size_t at) {
  size_t i = space_back(v, at);
  if (i > 0 && v[i - 1] == '(') i = space_back(v, i - 1);
  constexpr std::string_view kDefined = "defined";
  if (i < kDefined.size() || v.substr(i - kDefined.size(), kDefined.size()) != kDefined) {
    return false;
  }
  i -= kDefined.size();
  return i == 0 || !is_ident_char(v[i - 1]);
}

// A proper piece of "__has_include_next" that `##` can paste into the
// operator (`CAT(__has_, include)`, `__has_inc##lude`). Every split of
// "include" leaves a piece of two bytes or more across "clud" unless c, l, u
// and d are pasted one by one; the usual pieces on their own (`__has_`,
// `next`) are left out, as `__has_##NAME` makes libstdc++'s traits.
bool is_has_include_piece(std::string_view word) {
  constexpr std::string_view kWhole = "__has_include_next";
  if (word.size() < 2 || word.size() >= kWhole.size() || word == "__has_include") return false;
  if (word.find("cl") == std::string_view::npos && word.find("lu") == std::string_view::npos &&
      word.find("ud") == std::string_view::npos) {
    return false;
  }
  return kWhole.find(word) != std::string_view::npos;
}

bool is_conditional_open(DirectiveKind k) {
  return k == DirectiveKind::kIf || k == DirectiveKind::kIfdef || k == DirectiveKind::kIfndef;
}

// The directive a name introduces, told apart by length and then by its
// bytes (one comparison per name of that length); nullopt for a name the
// scanner gives no meaning to. "pragma" gives kPragmaOnce: a pragma, which is
// one when its first word is "once".
std::optional<DirectiveKind> directive_kind(std::string_view n) {
  using K = DirectiveKind;
  auto is = [&]<size_t N>(const char(&word)[N]) { return std::memcmp(n.data(), word, N - 1) == 0; };
  std::optional<K> none;
  switch (n.size()) {
    case 2:
      return is("if") ? K::kIf : none;
    case 4:
      return is("elif") ? K::kElif : is("else") ? K::kElse : none;
    case 5:
      return is("ifdef") ? K::kIfdef : is("endif") ? K::kEndif : is("undef") ? K::kUndef : none;
    case 6:
      return is("define")   ? K::kDefine
             : is("ifndef") ? K::kIfndef
             : is("import") ? K::kImport
             : is("pragma") ? K::kPragmaOnce
                            : none;
    case 7:
      return is("include") ? K::kInclude : is("elifdef") ? K::kElifdef : none;
    case 8:
      return is("elifndef") ? K::kElifndef : none;
    case 12:
      return is("include_next") ? K::kIncludeNext : none;
    default:
      return none;
  }
}

}  // namespace

void Scanner::set_text(Directive& d, std::string_view text) {
  d.text_offset = static_cast<uint32_t>(result_.text_pool.size());
  d.text_size = static_cast<uint32_t>(text.size());
  result_.text_pool.append(text);
}

Directive& Scanner::add(DirectiveKind kind, const char* at) {
  Directive d;
  d.kind = kind;
  d.line = line_at(at);
  d.offset = static_cast<uint64_t>(at - begin_);
  result_.directives.push_back(std::move(d));
  directive_ends_.push_back(line_.end());
  return result_.directives.back();
}

const char* Scanner::parse_directive(const char* hash) {
  const char* n = skip_splices(hash + 1, end_);
  if (n < end_ && *n == '#') return n + 1;  // "##" is the paste operator
  read_line(hash + 1, LineMode::kDirective);
  parse_directive_line(hash);
  pass_line_end(hash);
  return line_.end();
}

void Scanner::parse_directive_line(const char* hash) {
  const std::string_view v = line_.view();
  const size_t name_begin = skip_space(v, 0);
  const size_t name_end = skip_ident(v, name_begin);
  const std::string_view name = v.substr(name_begin, name_end - name_begin);
  const size_t rest_index = skip_space(v, name_end);
  const std::string_view rest = rtrim(v.substr(rest_index));

  const size_t first_word_end = skip_ident(rest, 0);
  auto macro_name = [&](std::string_view what) -> std::string_view {
    if (first_word_end == 0)
      diagnose(hash, "#" + std::string(what) + " without a valid macro name");
    return rest.substr(0, first_word_end);
  };
  auto conditional = [&](DirectiveKind kind, std::string_view text) {
    if (is_conditional_open(kind)) {
      open_conditionals_.push_back({line_at(hash), static_cast<uint64_t>(hash - begin_), kind});
    } else if (open_conditionals_.empty()) {
      diagnose(hash, "#" + std::string(kind_name(kind)) + " without #if");
    } else if (kind == DirectiveKind::kEndif) {
      open_conditionals_.pop_back();
    }
    set_text(add(kind, hash), text);
  };

  const std::optional<DirectiveKind> kind = directive_kind(name);
  if (!kind) return;
  switch (*kind) {
    case DirectiveKind::kDefine: {
      const std::string_view macro = macro_name("define");
      if (macro.empty()) return;
      size_t body = first_word_end;
      if (body < rest.size() && rest[body] == '(') {
        const size_t close = rest.find(')', body);
        if (close == std::string_view::npos) {
          diagnose(hash, "missing ')' in macro parameter list of " + std::string(macro));
          body = rest.size();
        } else {
          body = close + 1;
        }
      }
      body = skip_space(rest, body);
      Directive& d = add(DirectiveKind::kDefine, hash);
      set_text(d, macro);
      const size_t body_index = rest_index + body;
      const char* body_begin = line_.orig(body_index);
      d.body_offset = static_cast<uint64_t>(body_begin - begin_);
      if (body < rest.size()) {
        d.body_size =
            static_cast<uint64_t>(line_.orig(rest_index + rest.size() - 1) + 1 - body_begin);
      }
      find_has_include(body_index);
      find_has_include_pieces(body_index);
      find_clock_macros(body_index);
      break;
    }
    case DirectiveKind::kIf:
    case DirectiveKind::kElif:
      conditional(*kind, rest);
      find_has_include(rest_index);
      find_has_include_pieces(rest_index);
      find_clock_macros(rest_index);
      break;
    case DirectiveKind::kIfdef:
    case DirectiveKind::kIfndef:
    case DirectiveKind::kElifdef:
    case DirectiveKind::kElifndef:
      conditional(*kind, macro_name(name));
      break;
    case DirectiveKind::kEndif:
    case DirectiveKind::kElse:
      conditional(*kind, {});
      break;
    case DirectiveKind::kInclude:
    case DirectiveKind::kIncludeNext:
    case DirectiveKind::kImport:
      parse_include(*kind, rest, hash);
      break;
    case DirectiveKind::kUndef: {
      const std::string_view macro = macro_name("undef");
      if (!macro.empty()) set_text(add(DirectiveKind::kUndef, hash), macro);
      break;
    }
    case DirectiveKind::kPragmaOnce:
      if (rest.substr(0, first_word_end) == "once") add(DirectiveKind::kPragmaOnce, hash);
      break;
    default:  // no directive name gives the other kinds
      break;
  }
}

void Scanner::parse_include(DirectiveKind kind, std::string_view rest, const char* hash) {
  auto spelled = [&] { return "#" + std::string(kind_name(kind)); };
  if (rest.empty()) {
    diagnose(hash, spelled() + " expects \"FILENAME\" or <FILENAME>");
    return;
  }
  if (rest[0] == '<' || rest[0] == '"') {
    const char close = rest[0] == '<' ? '>' : '"';
    const size_t end = rest.find(close, 1);
    if (end == std::string_view::npos) {
      diagnose(hash, spelled() + ": missing terminating " + std::string(1, close));
      return;
    }
    if (end == 1) {
      diagnose(hash, spelled() + ": empty file name");
      return;
    }
    Directive& d = add(kind, hash);
    set_text(d, rest.substr(1, end - 1));
    d.angled = close == '>';
    return;
  }
  Directive& d = add(kind, hash);
  set_text(d, rest);
  d.computed = true;
}

// Records __has_include(...) and __has_include_next(...) in cleaned text.
void Scanner::find_has_include(size_t from) {
  const std::string_view v = line_.view();
  // "__has_include" needs 13 bytes; most macro bodies are shorter.
  if (v.size() - from < 13) return;
  // Search for the rarer tail: '_' is common in directive lines, 'h' is not.
  static constexpr std::string_view kTail = "has_include";
  size_t i = from;
  while ((i = v.find(kTail, i)) != std::string_view::npos) {
    i += kTail.size();
    if (i < from + 2 + kTail.size() || v[i - kTail.size() - 1] != '_' ||
        v[i - kTail.size() - 2] != '_')
      continue;
    const size_t at = i - kTail.size() - 2;
    if (at > 0 && is_ident_char(v[at - 1])) continue;
    DirectiveKind kind = DirectiveKind::kHasInclude;
    if (v.substr(i, 5) == "_next") {
      kind = DirectiveKind::kHasIncludeNext;
      i += 5;
    }
    if (i < v.size() && is_ident_char(v[i])) continue;
    size_t j = skip_space(v, i);
    Directive d;
    d.kind = kind;
    if (j >= v.size() || v[j] != '(') {
      // `defined(__has_include)` asks whether the operator exists; any other
      // use without '(' is an alias (`#define HAS __has_include`) whose
      // question is asked elsewhere: reported as computed, like `HAS(x)`.
      if (operand_of_defined(v, at)) continue;
      set_text(d, v.substr(at, i - at));
      d.computed = true;
    } else if (j = skip_space(v, j + 1); j < v.size() && (v[j] == '<' || v[j] == '"')) {
      const char close = v[j] == '<' ? '>' : '"';
      const size_t end = v.find(close, j + 1);
      if (end == std::string_view::npos) {
        diagnose(line_.orig(at),
                 std::string(kind_name(kind)) + ": missing terminating " + std::string(1, close));
        return;
      }
      set_text(d, v.substr(j + 1, end - j - 1));
      d.angled = close == '>';
      i = end + 1;
    } else {
      // Computed: the tokens up to the matching ')'.
      int depth = 1;
      size_t k = j;
      while (k < v.size() && depth > 0) {
        if (v[k] == '"' || v[k] == '\'') {
          k = skip_literal(v, k);
          continue;
        }
        depth += v[k] == '(' ? 1 : v[k] == ')' ? -1 : 0;
        ++k;
      }
      set_text(d, rtrim(v.substr(j, depth == 0 ? k - 1 - j : k - j)));
      d.computed = true;
      i = k;
    }
    add_in_line(std::move(d), at);
  }
}

// Adds a directive found inside the current logical line at v[at].
void Scanner::add_in_line(Directive d, size_t at) {
  const char* at_ptr = line_.orig(at);
  d.line = line_at(at_ptr);
  d.offset = static_cast<uint64_t>(at_ptr - begin_);
  result_.directives.push_back(std::move(d));
  directive_ends_.push_back(line_.end());
}

// Identifiers that `##` could paste into __has_include (`__has_`, `include`):
// each is reported as a computed __has_include, so its question is never
// left out of a closure unnoticed.
void Scanner::find_has_include_pieces(size_t from) {
  const std::string_view v = line_.view();
  size_t i = from;
  while (i < v.size()) {
    if (v[i] == '"' || v[i] == '\'') {
      i = skip_literal(v, i);
    } else if (is_ident_start(v[i])) {
      const size_t e = skip_ident(v, i);
      const std::string_view word = v.substr(i, e - i);
      // `#include` in a body is stringized or a lone '#': no paste reaches it
      // (`##include` does).
      const size_t before = space_back(v, i);
      const bool after_hash =
          before > 0 && v[before - 1] == '#' && (before < 2 || v[before - 2] != '#');
      if (!after_hash && is_has_include_piece(word)) {
        Directive d;
        d.kind = DirectiveKind::kHasInclude;
        set_text(d, word);
        d.computed = true;
        add_in_line(std::move(d), i);
      } else if (word == "__has_include" || word == "__has_include_next") {
        // Its header name is no identifier: `<include/x.h>` holds no piece.
        size_t j = skip_space(v, e);
        if (j < v.size() && v[j] == '(') j = skip_space(v, j + 1);
        if (j < v.size() && v[j] == '<') {
          const size_t close = v.find('>', j);
          if (close != std::string_view::npos) {
            i = close + 1;
            continue;
          }
        }
      }
      i = e;
    } else if (is_digit(v[i])) {
      i = skip_ident(v, i + 1);
      if (i == v.size() || !is_ident_char(v[i])) ++i;
    } else {
      ++i;
    }
  }
}

// __DATE__, __TIME__ and __TIMESTAMP__ as identifiers in directive text.
void Scanner::find_clock_macros(size_t from) {
  // The prepass found every such identifier written in one piece; look only
  // when one is in this line, or when splices or comments were taken out of
  // it (a name split by a splice is whole only in the logical line).
  const std::string_view v = line_.view();
  bool any = false;
  if (line_.mapped_) {
    // Every name sought contains "_DATE__" or "__TIME": without either, no
    // token of the logical line can be one.
    const std::string_view tail = v.substr(from);
    any = tail.find("_DATE__") != std::string_view::npos ||
          tail.find("__TIME") != std::string_view::npos;
  }
  for (size_t h = next_hit_; !any && h < hits_.size() && hits_[h].pos < line_.end(); ++h) {
    any |= hits_[h].kind == HitKind::kDate || hits_[h].kind == HitKind::kTime ||
           hits_[h].kind == HitKind::kTimestamp;
  }
  if (!any) return;
  size_t i = from;
  while (i < v.size()) {
    if (v[i] == '"' || v[i] == '\'') {
      i = skip_literal(v, i);
    } else if (is_ident_start(v[i])) {
      const size_t e = skip_ident(v, i);
      const std::string_view word = v.substr(i, e - i);
      if (word == "__DATE__") result_.uses_date = true;
      if (word == "__TIME__") result_.uses_time = true;
      if (word == "__TIMESTAMP__") result_.uses_timestamp = true;
      i = e;
    } else if (is_digit(v[i])) {
      i = skip_ident(v, i + 1);
      if (i == v.size() || !is_ident_char(v[i])) ++i;
    } else {
      ++i;
    }
  }
}

// C++20: [export] module ...; and [export] import ...; at a logical line start.
const char* Scanner::parse_module(const char* start, const char* keyword, bool exported,
                                  HitKind kind) {
  const char* const not_a_declaration = keyword + 6;
  read_line(start, LineMode::kModule);
  const std::string_view v = line_.view();
  size_t i = 0;
  if (exported) i = skip_space(v, skip_ident(v, 0));
  i = skip_ident(v, i);  // the keyword
  i = skip_space(v, i);

  auto dotted_name = [&](size_t j, std::string* out) {
    size_t e = skip_ident(v, j);
    if (e == j) return j;
    out->append(v.substr(j, e - j));
    for (;;) {
      size_t k = skip_space(v, e);
      if (k < v.size() && v[k] == '.') {
        size_t s = skip_space(v, k + 1);
        size_t t = skip_ident(v, s);
        if (t == s) return e;
        out->push_back('.');
        out->append(v.substr(s, t - s));
        e = t;
        continue;
      }
      return e;
    }
  };
  auto partition = [&](size_t j, std::string* out) -> size_t {
    // ':' name, but not '::' and not ':(' (an Objective-C selector).
    if (j + 1 < v.size() && v[j] == ':' && v[j + 1] != ':') {
      size_t s = skip_space(v, j + 1);
      std::string part;
      size_t e = dotted_name(s, &part);
      if (e == s) return j;
      out->push_back(':');
      out->append(part);
      return e;
    }
    return j;
  };

  std::string text;
  bool angled = false;
  bool header_unit = false;
  size_t j = i;
  if (j >= v.size()) return not_a_declaration;
  if (kind == HitKind::kModule) {
    if (v[j] != ';') {
      if (is_ident_start(v[j])) {
        j = dotted_name(j, &text);
        j = skip_space(v, j);
      }
      const size_t p = partition(j, &text);
      if (p == j && text.empty()) return not_a_declaration;
      j = p;
    }
  } else {
    if (v[j] == '<' || v[j] == '"') {
      const char close = v[j] == '<' ? '>' : '"';
      const size_t end = v.find(close, j + 1);
      if (end == std::string_view::npos) return not_a_declaration;
      text = v.substr(j + 1, end - j - 1);
      angled = close == '>';
      header_unit = true;
      j = end + 1;
    } else if (is_ident_start(v[j])) {
      j = dotted_name(j, &text);
    } else {
      const size_t p = partition(j, &text);
      if (p == j) return not_a_declaration;
      j = p;
    }
  }
  // Attributes: [[...]] groups before the ';'.
  j = skip_space(v, j);
  while (j + 1 < v.size() && v[j] == '[' && v[j + 1] == '[') {
    const size_t close = v.find("]]", j + 2);
    if (close == std::string_view::npos) break;
    j = skip_space(v, close + 2);
  }
  Directive& d = add(
      kind == HitKind::kModule ? DirectiveKind::kModuleDecl : DirectiveKind::kModuleImport, start);
  set_text(d, text);
  d.angled = angled;
  d.header_unit = header_unit;
  d.exported = exported;
  if (j < v.size() && v[j] == ';') {
    const char* after = line_.orig(j) + 1;
    directive_ends_.back() = after;
    return after;
  }
  diagnose(start, std::string(kind == HitKind::kModule ? "module" : "import") +
                      " declaration without ';'");
  return line_.end();
}

}  // namespace lexpack::lexer
