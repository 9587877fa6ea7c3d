// Macro definitions: parsing `#define` text (object-like, function-like,
// variadic) and -D arguments the way GCC and clang read them, and the table.
#include "preprocessor/macro_table.h"

#include <mutex>
#include <unordered_map>

namespace lexpack::preprocessor {
namespace {

bool is_param_ref(const Macro& m, const Token& t) {
  return t.kind == TokenKind::kIdentifier && m.param_index(t.text) >= 0;
}

bool parse_params(const Tokens& ts, size_t* i, Macro* m, std::string* err) {
  // ts[*i] is the '(' right after the name.
  size_t j = *i + 1;
  if (j < ts.size() && ts[j].is_punct(")")) {
    *i = j + 1;
    return true;
  }
  for (;;) {
    if (j >= ts.size()) break;
    if (ts[j].is_punct("...")) {
      m->params.push_back("__VA_ARGS__");
      m->variadic = true;
      ++j;
    } else if (ts[j].kind == TokenKind::kIdentifier && ts[j].text != "__VA_ARGS__") {
      if (m->param_index(ts[j].text) >= 0) {
        *err = "duplicate macro parameter \"" + ts[j].text + "\"";
        return false;
      }
      m->params.push_back(ts[j].text);
      ++j;
      if (j < ts.size() && ts[j].is_punct("...")) {
        m->variadic = true;
        ++j;
      }
    } else {
      break;
    }
    if (j < ts.size() && ts[j].is_punct(")")) {
      *i = j + 1;
      return true;
    }
    if (m->variadic || j >= ts.size() || !ts[j].is_punct(",")) break;
    ++j;
  }
  *err = "bad parameter list of macro \"" + m->name + "\"";
  return false;
}

}  // namespace

int Macro::param_index(std::string_view n) const {
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i] == n) return static_cast<int>(i);
  }
  return -1;
}

std::optional<Macro> parse_definition(std::string_view text, std::string* err) {
  Tokens ts;
  tokenize(text, &ts);
  return parse_definition_tokens(std::move(ts), err);
}

std::optional<Macro> parse_define_directive(std::string_view raw, std::string* err) {
  Tokens ts;
  tokenize(remove_splices(raw), &ts);
  if (ts.size() < 2 || !(ts[0].is_punct("#") || ts[0].is_punct("%:")) ||
      !ts[1].is_ident("define")) {
    *err = "not a #define directive";
    return std::nullopt;
  }
  ts.erase(ts.begin(), ts.begin() + 2);
  return parse_definition_tokens(std::move(ts), err);
}

std::optional<Macro> parse_definition_tokens(Tokens ts, std::string* err) {
  if (ts.empty() || ts[0].kind != TokenKind::kIdentifier) {
    *err = "macro name missing";
    return std::nullopt;
  }
  Macro m;
  m.name = ts[0].text;
  name_macro(&m);
  if (m.name == "defined") {
    *err = "\"defined\" cannot be used as a macro name";
    return std::nullopt;
  }
  size_t i = 1;
  if (i < ts.size() && ts[i].is_punct("(") && !ts[i].space_before) {
    m.function_like = true;
    if (!parse_params(ts, &i, &m, err)) return std::nullopt;
  }
  m.body.assign(ts.begin() + static_cast<std::ptrdiff_t>(i), ts.end());
  if (!m.body.empty()) m.body.front().space_before = false;
  const Tokens& b = m.body;
  if (!b.empty() && (b.front().is_punct("##") || b.back().is_punct("##"))) {
    *err = "'##' cannot appear at either end of a macro expansion";
    return std::nullopt;
  }
  if (m.function_like) {
    for (size_t k = 0; k < b.size(); ++k) {
      if ((b[k].is_punct("#") || b[k].is_punct("%:")) &&
          (k + 1 >= b.size() || !(is_param_ref(m, b[k + 1]) || b[k + 1].is_ident("__VA_OPT__")))) {
        *err = "'#' is not followed by a macro parameter";
        return std::nullopt;
      }
    }
  }
  return m;
}

std::optional<Macro> parse_command_definition(std::string_view arg, std::string* err) {
  const size_t eq = arg.find('=');
  std::string text;
  if (eq == std::string_view::npos) {
    text = std::string(arg) + " 1";
  } else {
    std::string_view value = arg.substr(eq + 1);
    value = value.substr(0, value.find_first_of("\r\n"));  // GCC stops at a line end
    text = std::string(arg.substr(0, eq)) + " " + std::string(value);
  }
  return parse_definition(text, err);
}

namespace {

// Every macro name interned in this process, never freed: a node's key stays
// where it is when the table grows.
struct InternedNames {
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::mutex mu;
  std::unordered_map<std::string, uint32_t, NameHash, std::equal_to<>> ids;

  static InternedNames& get() {
    static auto* names = new InternedNames();
    return *names;
  }
  // The entry of `name`, made when new; under mu.
  const std::pair<const std::string, uint32_t>& entry(std::string_view name) {
    auto it = ids.find(name);
    if (it == ids.end()) it = ids.emplace(std::string(name), uint32_t(ids.size() + 1)).first;
    return *it;
  }
};

}  // namespace

uint32_t intern_macro_name(std::string_view name) {
  InternedNames& names = InternedNames::get();
  std::lock_guard lock(names.mu);
  return names.entry(name).second;
}

void name_macro(Macro* m) {
  m->id = intern_macro_name(m->name);
  m->name_hash = macro_name_hash(m->name);
}

std::string_view stable_macro_name(std::string_view name) {
  InternedNames& names = InternedNames::get();
  std::lock_guard lock(names.mu);
  return names.entry(name).first;
}

const Macro* MacroTable::find(std::string_view name) const {
  const MacroName n(name);
  const std::shared_ptr<const Macro>* found = find_quiet(n);
  if (reads_) reads_->add(n.hash);
  if (observer_) observer_->looked_up(n, found);
  return found ? found->get() : nullptr;
}

const std::shared_ptr<const Macro>* MacroTable::find_quiet(MacroName name) const {
  if (macros_.empty()) return nullptr;
  return macros_.find(name);
}

void MacroTable::define(Macro macro) {
  name_macro(&macro);
  define(std::make_shared<const Macro>(std::move(macro)));
}

void MacroTable::define(std::shared_ptr<const Macro> macro) {
  // A definition not named by name_macro carries no hash.
  const MacroName n =
      macro->id != 0 ? MacroName(macro->name, macro->name_hash) : MacroName(macro->name);
  if (observer_) observer_->wrote(n);
  macros_.put(std::move(macro), n.hash);
}

void MacroTable::undefine(std::string_view name) {
  const MacroName n(name);
  if (observer_) observer_->wrote(n);
  macros_.erase(n);
}

size_t MacroTable::Slots::probe(std::string_view name, size_t hash) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (!s.macro || (s.hash == hash && s.macro->name == name)) return i;
  }
}

const std::shared_ptr<const Macro>* MacroTable::Slots::find(MacroName name) const {
  const Slot& s = slots_[probe(name.name, name.hash)];
  return s.macro ? &s.macro : nullptr;
}

void MacroTable::Slots::put(std::shared_ptr<const Macro> macro, size_t hash) {
  if ((size_ + 1) * 4 > slots_.size() * 3) grow();
  Slot& s = slots_[probe(macro->name, hash)];
  if (!s.macro) ++size_;
  s.hash = hash;
  s.macro = std::move(macro);
}

void MacroTable::Slots::erase(MacroName name) {
  if (size_ == 0) return;
  const size_t mask = slots_.size() - 1;
  size_t hole = probe(name.name, name.hash);
  if (!slots_[hole].macro) return;
  slots_[hole].macro.reset();
  --size_;
  // Moves back every later entry of the run whose home is not between the
  // hole and its place, so that no probe stops early at the hole.
  for (size_t i = (hole + 1) & mask; slots_[i].macro; i = (i + 1) & mask) {
    const size_t home = slots_[i].hash & mask;
    const bool stays = hole <= i ? (hole < home && home <= i) : (hole < home || home <= i);
    if (stays) continue;
    slots_[hole] = std::move(slots_[i]);
    hole = i;
  }
}

void MacroTable::Slots::grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.empty() ? 1024 : old.size() * 2, Slot{});
  const size_t mask = slots_.size() - 1;
  for (Slot& s : old) {
    if (!s.macro) continue;
    size_t i = s.hash & mask;
    while (slots_[i].macro) i = (i + 1) & mask;
    slots_[i] = std::move(s);
  }
}

std::vector<std::shared_ptr<const Macro>> parse_predefined(std::string_view text,
                                                           std::string* err) {
  std::vector<std::shared_ptr<const Macro>> out;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (line.substr(0, 8) != "#define ") continue;
    std::string why;
    std::optional<Macro> m = parse_definition(line.substr(8), &why);
    if (m) {
      out.push_back(std::make_shared<const Macro>(std::move(*m)));
    } else if (err->empty()) {
      *err = "predefined macro \"" + std::string(line) + "\": " + why;
    }
  }
  return out;
}

bool MacroTable::define_predefined(std::string_view text, std::string* err) {
  std::string why;
  for (std::shared_ptr<const Macro>& m : parse_predefined(text, &why)) define(std::move(m));
  if (!why.empty()) *err = why;
  return why.empty();
}

void MacroTable::set_uncertain(std::string_view name, bool uncertain) {
  if (uncertain) {
    uncertain_.insert(std::string(name));
  } else if (!uncertain_.empty()) {
    if (auto it = uncertain_.find(name); it != uncertain_.end()) uncertain_.erase(it);
  }
}

}  // namespace lexpack::preprocessor
