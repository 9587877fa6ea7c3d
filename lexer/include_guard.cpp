// Include-guard detection over a finished scan: the whole file is one
// #ifndef X / #define X ... #endif (or #if !defined(X)) with only whitespace
// and comments outside it.
#include "lexer/chars.h"
#include "lexer/scanner_internal.h"

namespace lexpack::lexer {
namespace {

// "!defined(X)", "!defined X", with any spacing; X or "" when not that form.
std::string_view negated_defined(std::string_view v) {
  auto skip = [&] {
    while (!v.empty() && is_hspace(v.front())) v.remove_prefix(1);
  };
  skip();
  if (v.empty() || v.front() != '!') return {};
  v.remove_prefix(1);
  skip();
  if (v.substr(0, 7) != "defined") return {};
  v.remove_prefix(7);
  if (!v.empty() && is_ident_char(v.front())) return {};
  skip();
  const bool paren = !v.empty() && v.front() == '(';
  if (paren) {
    v.remove_prefix(1);
    skip();
  }
  size_t e = 0;
  while (e < v.size() && is_ident_char(v[e])) ++e;
  if (e == 0 || !is_ident_start(v[0])) return {};
  std::string_view name = v.substr(0, e);
  v.remove_prefix(e);
  skip();
  if (paren) {
    if (v.empty() || v.front() != ')') return {};
    v.remove_prefix(1);
    skip();
  }
  return v.empty() ? name : std::string_view{};
}

}  // namespace

bool Scanner::only_space_and_comments(const char* from, const char* to) {
  const char* q = from;
  while (q < to) {
    const char* after;
    if (is_hspace(*q) || is_newline(*q)) {
      ++q;
    } else if (*q == '\\' && is_splice(q, to, &after)) {
      q = after;
    } else if (*q == '/') {
      const char* n = skip_splices(q + 1, to);
      if (n < to && *n == '*') {
        q = skip_block_comment(n + 1);
      } else if (n < to && *n == '/') {
        q = skip_line_comment(n + 1);
      } else {
        return false;
      }
    } else {
      return false;
    }
  }
  return true;
}

void Scanner::detect_include_guard() {
  const std::vector<Directive>& ds = result_.directives;
  if (ds.empty() || !result_.diagnostics.empty()) return;
  std::string_view macro;
  if (ds[0].kind == DirectiveKind::kIfndef) {
    macro = result_.text(ds[0]);
  } else if (ds[0].kind == DirectiveKind::kIf) {
    macro = negated_defined(result_.text(ds[0]));
  }
  if (macro.empty()) return;
  int depth = 0;
  bool defined = false;
  size_t close = ds.size();
  for (size_t i = 0; i < ds.size() && close == ds.size(); ++i) {
    switch (ds[i].kind) {
      case DirectiveKind::kIf:
      case DirectiveKind::kIfdef:
      case DirectiveKind::kIfndef:
        ++depth;
        break;
      case DirectiveKind::kElif:
      case DirectiveKind::kElifdef:
      case DirectiveKind::kElifndef:
      case DirectiveKind::kElse:
        if (depth == 1) return;
        break;
      case DirectiveKind::kEndif:
        if (--depth == 0) close = i;
        break;
      case DirectiveKind::kDefine:
        if (depth == 1 && result_.text(ds[i]) == macro) defined = true;
        break;
      default:
        break;
    }
  }
  if (close != ds.size() - 1 || !defined) return;
  if (!only_space_and_comments(start_, begin_ + ds[0].offset)) return;
  if (!only_space_and_comments(directive_ends_[close], end_)) return;
  result_.include_guard = std::string(macro);
}

}  // namespace lexpack::lexer
