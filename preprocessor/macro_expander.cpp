// Prosser's algorithm: the input is a stack of tokens; a macro name with its
// arguments is popped and its substituted replacement pushed back, so the
// rescan sees the replacement followed by the rest of the input, and hide
// sets stop a macro from expanding inside its own replacement.
#include "preprocessor/macro_expander.h"

#include <algorithm>

namespace lexpack::preprocessor {
namespace {

constexpr size_t kMaxTokens = 1 << 20;

Token placemarker() {
  Token t;
  t.kind = TokenKind::kPlacemarker;
  return t;
}

bool only_placemarkers(const Tokens& ts) {
  return std::all_of(ts.begin(), ts.end(),
                     [](const Token& t) { return t.kind == TokenKind::kPlacemarker; });
}

Token stringize(const Tokens& arg, bool space_before) {
  Token s;
  s.kind = TokenKind::kString;
  s.space_before = space_before;
  s.text = "\"";
  bool first = true;
  for (const Token& t : arg) {
    if (t.kind == TokenKind::kPlacemarker) continue;
    if (!first && t.space_before) s.text.push_back(' ');
    first = false;
    if (t.kind == TokenKind::kString || t.kind == TokenKind::kChar) {
      for (char c : t.text) {
        if (c == '"' || c == '\\') s.text.push_back('\\');
        s.text.push_back(c);
      }
    } else {
      s.text += t.text;
    }
  }
  s.text.push_back('"');
  return s;
}

}  // namespace

Token number_token(intmax_t value, bool space_before) {
  Token t;
  t.kind = TokenKind::kNumber;
  t.space_before = space_before;
  t.text = std::to_string(value);
  return t;
}

bool MacroExpander::fail(std::string message) {
  if (error_.empty()) error_ = std::move(message);
  return false;
}

void MacroExpander::count_counter(bool top, Token* t) {
  // Each expansion of __COUNTER__ adds one. Read in order on the line (at
  // the top, not in an argument expanded before its macro's body), the k-th
  // is the directive's first value plus k, for GCC and clang alike; once
  // one is met in an argument, the order is left to the compilers' rules
  // and the rest stay unknown.
  if (!top || counters_lost_ || counters_ == UINT16_MAX) {
    counters_lost_ = true;
    return;
  }
  t->kind = TokenKind::kCounter;
  t->counter = counters_++;
}

void MacroExpander::note_lookup(std::string_view name) {
  if (table_.any_uncertain() && table_.is_uncertain(name)) read_uncertain_ = true;
}

bool MacroExpander::expand(Tokens in, Mode mode, Tokens* out) {
  mode_ = mode;
  error_.clear();
  read_uncertain_ = false;
  unknown_builtin_ = false;
  counters_ = 0;
  counters_lost_ = false;
  budget_ = kMaxTokens;
  std::reverse(in.begin(), in.end());
  out->clear();
  return expand_stack(&in, true, out);
}

bool MacroExpander::expand_stack(Tokens* stack, bool top, Tokens* out) {
  while (!stack->empty()) {
    Token t = std::move(stack->back());
    stack->pop_back();
    if (t.kind != TokenKind::kIdentifier) {
      out->push_back(std::move(t));
      continue;
    }
    if (mode_ == Mode::kCondition && top) {
      if (t.text == "defined") {
        if (!operator_defined(stack, out)) return false;
        continue;
      }
      const BuiltinKind kind = hooks_.builtin_kind(t.text);
      if (kind == BuiltinKind::kHasInclude) {
        if (!operator_has_include(t, stack, out)) return false;
        continue;
      }
      if (kind == BuiltinKind::kQuery) {
        if (!operator_query(t, stack, out)) return false;
        continue;
      }
    }
    note_lookup(t.text);
    const Macro* m = table_.find(t.text);
    if (!m) {
      if (hooks_.builtin_kind(t.text) == BuiltinKind::kObject) {
        std::optional<std::string> value = hooks_.builtin_value(t.text);
        if (!value) {
          if (mode_ != Mode::kCondition) return fail("unsupported builtin macro " + t.text);
          unknown_builtin_ = true;
          t.kind = TokenKind::kUnknown;
          if (t.text == "__COUNTER__") count_counter(top, &t);
          out->push_back(std::move(t));
          continue;
        }
        Tokens v;
        tokenize(*value, &v);
        if (v.size() != 1) return fail("unsupported value of builtin macro " + t.text);
        v[0].space_before = t.space_before;
        out->push_back(std::move(v[0]));
        continue;
      }
      out->push_back(std::move(t));
      continue;
    }
    if (hide_sets_.contains(t.hide, m->id) ||
        (m->function_like && (stack->empty() || !stack->back().is_punct("(")))) {
      out->push_back(std::move(t));
      continue;
    }
    if (!expand_one(*m, std::move(t), stack)) return false;
  }
  return true;
}

bool MacroExpander::collect_args(const Macro& m, Tokens* stack, std::vector<Tokens>* args,
                                 uint32_t* rparen) {
  stack->pop_back();  // '('
  args->assign(1, Tokens{});
  int depth = 0;
  for (;;) {
    if (stack->empty()) return fail("unterminated argument list invoking macro \"" + m.name + "\"");
    Token t = std::move(stack->back());
    stack->pop_back();
    if (t.is_punct("(")) {
      ++depth;
    } else if (t.is_punct(")")) {
      if (depth == 0) {
        *rparen = t.hide;
        break;
      }
      --depth;
    } else if (t.is_punct(",") && depth == 0 && !(m.variadic && args->size() == m.params.size())) {
      args->emplace_back();
      continue;
    }
    args->back().push_back(std::move(t));
  }
  const size_t want = m.params.size();
  if (want == 0 && args->size() == 1 && args->front().empty()) args->clear();
  if (m.variadic && args->size() + 1 == want) args->emplace_back();  // no variable arguments
  if (args->size() != want) {
    return fail("macro \"" + m.name + "\" passed " + std::to_string(args->size()) +
                " arguments, but takes " + std::to_string(want));
  }
  return true;
}

bool MacroExpander::expand_one(const Macro& m, Token name, Tokens* stack) {
  std::vector<Tokens> args;
  uint32_t hide = hide_sets_.add(name.hide, m.id);
  if (m.function_like) {
    uint32_t rparen = 0;
    if (!collect_args(m, stack, &args, &rparen)) return false;
    hide = hide_sets_.add(hide_sets_.intersect(name.hide, rparen), m.id);
    // Which arguments a compiler expands (clang expands a variadic one to
    // decide __VA_OPT__) decides how many times a __COUNTER__ in them counts.
    for (size_t i = 0; mode_ == Mode::kCondition && !counters_lost_ && i < args.size(); ++i) {
      counters_lost_ = std::any_of(args[i].begin(), args[i].end(),
                                   [](const Token& t) { return t.kind == TokenKind::kIdentifier; });
    }
  }
  std::vector<std::optional<Tokens>> expanded(args.size());
  Tokens result;
  if (!substitute(m, args, &expanded, 0, m.body.size(), &result)) return false;
  if (result.size() > budget_) return fail("macro expansion too large");
  budget_ -= result.size();
  bool first = true;
  for (auto it = result.rbegin(); it != result.rend(); ++it) {
    if (it->kind == TokenKind::kPlacemarker) continue;
    it->hide = hide_sets_.unite(it->hide, hide);
  }
  result.erase(std::remove_if(result.begin(), result.end(),
                              [](const Token& t) { return t.kind == TokenKind::kPlacemarker; }),
               result.end());
  for (Token& t : result) {
    if (first) t.space_before = name.space_before;
    first = false;
  }
  stack->insert(stack->end(), std::make_move_iterator(result.rbegin()),
                std::make_move_iterator(result.rend()));
  return true;
}

bool MacroExpander::substitute(const Macro& m, const std::vector<Tokens>& args,
                               std::vector<std::optional<Tokens>>* expanded, size_t begin,
                               size_t end, Tokens* out) {
  const Tokens& body = m.body;
  const size_t start = out->size();
  out->reserve(start + (end - begin));
  bool pending_paste = false;
  Tokens element;  // what one body token stands for; its memory reused token after token
  for (size_t i = begin; i < end; ++i) {
    const Token& b = body[i];
    if (b.is_punct("##") || b.is_punct("%:%:")) {
      pending_paste = true;
      continue;
    }
    const bool before_paste =
        i + 1 < end && (body[i + 1].is_punct("##") || body[i + 1].is_punct("%:%:"));
    element.clear();
    const int p = m.function_like && b.kind == TokenKind::kIdentifier ? m.param_index(b.text) : -1;
    if (m.function_like && (b.is_punct("#") || b.is_punct("%:"))) {
      const int q = i + 1 < end ? m.param_index(body[i + 1].text) : -1;
      if (q < 0) return fail("unsupported '#' operand in macro \"" + m.name + "\"");
      element.push_back(stringize(args[q], b.space_before));
      ++i;
    } else if (m.variadic && b.is_ident("__VA_OPT__")) {
      size_t close = i + 1;
      int depth = 0;
      for (; close < end; ++close) {
        if (body[close].is_punct("(")) ++depth;
        if (body[close].is_punct(")") && --depth == 0) break;
      }
      if (i + 1 >= end || !body[i + 1].is_punct("(") || close >= end)
        return fail("bad __VA_OPT__ in macro \"" + m.name + "\"");
      const Tokens* va = expanded_arg(args, expanded, args.size() - 1);
      if (!va) return false;
      if (!only_placemarkers(*va)) {
        if (!substitute(m, args, expanded, i + 2, close, &element)) return false;
        if (!element.empty()) element.front().space_before = b.space_before;
      }
      i = close;
    } else if (p >= 0) {
      const bool raw = pending_paste || before_paste;
      if (raw && pending_paste && m.variadic && p + 1 == static_cast<int>(args.size()) &&
          out->size() > start && out->back().is_punct(",") && i >= 2 && body[i - 2].is_punct(",")) {
        // GNU: `, ## __VA_ARGS__` drops the comma when there are no variable arguments.
        if (args[p].empty()) out->pop_back();
        element = args[p];
        if (!element.empty()) element.front().space_before = b.space_before;
        out->insert(out->end(), element.begin(), element.end());
        pending_paste = false;
        continue;
      }
      if (raw) {
        element = args[p];
      } else {
        const Tokens* e = expanded_arg(args, expanded, static_cast<size_t>(p));
        if (!e) return false;
        element = *e;
      }
      if (!element.empty()) element.front().space_before = b.space_before;
    } else {
      // Any other token stands for itself: pasted onto the one before, or copied.
      if (pending_paste && out->size() > start) {
        if (!paste(&out->back(), b)) return false;
      } else {
        out->push_back(b);
      }
      pending_paste = false;
      continue;
    }
    if (element.empty()) element.push_back(placemarker());
    size_t from = 0;
    if (pending_paste && out->size() > start) {
      if (!paste(&out->back(), element.front())) return false;
      from = 1;
    }
    pending_paste = false;
    out->insert(out->end(), std::make_move_iterator(element.begin() + static_cast<long>(from)),
                std::make_move_iterator(element.end()));
  }
  return true;
}

const Tokens* MacroExpander::expanded_arg(const std::vector<Tokens>& args,
                                          std::vector<std::optional<Tokens>>* expanded,
                                          size_t index) {
  std::optional<Tokens>& e = (*expanded)[index];
  if (!e) {
    Tokens pre = args[index];
    std::reverse(pre.begin(), pre.end());
    Tokens result;
    if (!expand_stack(&pre, false, &result)) return nullptr;
    e = std::move(result);
  }
  return &*e;
}

bool MacroExpander::paste(Token* lhs, const Token& rhs) {
  if (rhs.kind == TokenKind::kPlacemarker) return true;
  if (lhs->kind == TokenKind::kPlacemarker) {
    const bool space = lhs->space_before;
    *lhs = rhs;
    lhs->space_before = space;
    return true;
  }
  const std::string text = lhs->text + rhs.text;
  Tokens ts;
  tokenize(text, &ts);
  if (ts.size() != 1 || ts[0].text != text)
    return fail("pasting \"" + lhs->text + "\" and \"" + rhs.text +
                "\" does not give a valid preprocessing token");
  lhs->kind = ts[0].kind;
  lhs->text = text;
  lhs->hide = hide_sets_.unite(lhs->hide, rhs.hide);
  return true;
}

bool MacroExpander::balanced_group(Tokens* stack, const std::string& what, Tokens* inner) {
  if (stack->empty() || !stack->back().is_punct("(")) return fail("missing '(' after " + what);
  stack->pop_back();
  int depth = 0;
  for (;;) {
    if (stack->empty()) return fail("missing ')' after " + what);
    Token t = std::move(stack->back());
    stack->pop_back();
    if (t.is_punct("(")) ++depth;
    if (t.is_punct(")") && depth-- == 0) return true;
    inner->push_back(std::move(t));
  }
}

bool MacroExpander::operator_defined(Tokens* stack, Tokens* out) {
  const bool space = !out->empty();
  bool paren = false;
  if (!stack->empty() && stack->back().is_punct("(")) {
    paren = true;
    stack->pop_back();
  }
  if (stack->empty() || stack->back().kind != TokenKind::kIdentifier)
    return fail("operator \"defined\" requires an identifier");
  const std::string name = std::move(stack->back().text);
  stack->pop_back();
  if (paren) {
    if (stack->empty() || !stack->back().is_punct(")"))
      return fail("missing ')' after \"defined\"");
    stack->pop_back();
  }
  note_lookup(name);
  const bool defined =
      table_.find(name) != nullptr || hooks_.builtin_kind(name) != BuiltinKind::kNone;
  out->push_back(number_token(defined ? 1 : 0, space));
  return true;
}

bool MacroExpander::operator_has_include(const Token& name, Tokens* stack, Tokens* out) {
  Tokens inner;
  if (!balanced_group(stack, name.text, &inner)) return false;
  Tokens header;
  if (inner.size() == 1 &&
      (inner[0].kind == TokenKind::kHeaderName || inner[0].kind == TokenKind::kString)) {
    header = std::move(inner);
  } else {
    std::reverse(inner.begin(), inner.end());
    if (!expand_stack(&inner, false, &header)) return false;
  }
  std::string file;
  bool angled = false;
  if (header.size() == 1 && header[0].kind == TokenKind::kHeaderName) {
    file = header[0].text.substr(1, header[0].text.size() - 2);
    angled = true;
  } else if (header.size() == 1 && header[0].kind == TokenKind::kString &&
             header[0].text.front() == '"') {
    file = header[0].text.substr(1, header[0].text.size() - 2);
  } else if (header.size() >= 2 && header.front().is_punct("<") && header.back().is_punct(">")) {
    file = spell(header.data() + 1, header.data() + header.size() - 1);
    angled = true;
  } else {
    return fail("operator \"" + name.text + "\" requires a header-name");
  }
  if (file.empty()) return fail("empty filename in " + name.text);
  const bool found = hooks_.has_include(file, angled, name.text == "__has_include_next");
  out->push_back(number_token(found ? 1 : 0, name.space_before));
  return true;
}

bool MacroExpander::operator_query(const Token& name, Tokens* stack, Tokens* out) {
  Tokens inner;
  if (!balanced_group(stack, name.text, &inner)) return false;
  for (const Token& t : inner) {
    if (t.kind == TokenKind::kIdentifier) note_lookup(t.text);
    if (t.kind == TokenKind::kIdentifier && table_.find(t.text)) {
      // The compilers differ on expanding these arguments; do not guess.
      unknown_builtin_ = true;
      Token u = name;
      u.kind = TokenKind::kUnknown;
      out->push_back(std::move(u));
      return true;
    }
  }
  const std::string argument = spell(inner.data(), inner.data() + inner.size());
  std::optional<intmax_t> answer = hooks_.builtin_query(name.text, argument);
  if (answer) {
    out->push_back(number_token(*answer, name.space_before));
  } else {
    unknown_builtin_ = true;
    Token u = name;
    u.kind = TokenKind::kUnknown;
    u.text += "(" + argument + ")";
    out->push_back(std::move(u));
  }
  return true;
}

}  // namespace lexpack::preprocessor
