// The directive driver: walks each entered file's directive stream with a
// stack of conditional groups, evaluates conditions, applies #define/#undef
// and follows includes. A group whose condition is unknown has every branch
// processed as a fallback; macros (re)defined there become uncertain, and a
// later condition or computed include that reads one is not trusted either.
#include "preprocessor/preprocessor.h"

#include <algorithm>
#include <thread>
#include <unordered_set>

#include "preprocessor/expression.h"
#include "preprocessor/file_walk.h"

namespace lexpack::preprocessor {
namespace {

using lexer::Directive;
using lexer::DirectiveKind;
using State = ConditionResult::State;
using detail::Frame;

Options with_builtins(std::initializer_list<const char*> objects,
                      std::initializer_list<const char*> queries) {
  Options o;
  for (const char* n : objects) o.builtins[n] = BuiltinKind::kObject;
  for (const char* n : queries) o.builtins[n] = BuiltinKind::kQuery;
  o.builtins["__has_include"] = BuiltinKind::kHasInclude;
  o.builtins["__has_include_next"] = BuiltinKind::kHasInclude;
  return o;
}

constexpr std::initializer_list<const char*> kObjectBuiltins = {
    "__FILE__",      "__LINE__",          "__COUNTER__",   "__DATE__",      "__TIME__",
    "__TIMESTAMP__", "__INCLUDE_LEVEL__", "__BASE_FILE__", "__FILE_NAME__", "_Pragma"};

// One #define of `bytes`, parsed; nullopt with *err when it does not parse.
std::optional<Macro> parse_one_define(std::string_view bytes, const Directive& d,
                                      std::string* err) {
  const uint64_t end = std::max<uint64_t>(d.body_offset + d.body_size, d.offset);
  if (end > bytes.size() || d.offset > bytes.size()) {
    *err = "#define outside the file's bytes";
    return std::nullopt;
  }
  return parse_define_directive(bytes.substr(d.offset, end - d.offset), err);
}

}  // namespace

ParsedDefines::ParsedDefines(std::string_view bytes, const lexer::ScanResult& scan)
    : bytes_(bytes),
      scan_(&scan),
      size_(scan.directives.size()),
      slots_(std::make_unique<Slot[]>(scan.directives.size())) {}

std::shared_ptr<const Macro> ParsedDefines::get(size_t index, std::string* err) const {
  if (index >= size_ || scan_->directives[index].kind != DirectiveKind::kDefine) {
    *err = "not a #define";
    return nullptr;
  }
  Slot& slot = slots_[index];
  if (slot.state.load(std::memory_order_acquire) != kParsed) {
    uint8_t expected = kNotParsed;
    if (slot.state.compare_exchange_strong(expected, kParsing, std::memory_order_acquire)) {
      std::optional<Macro> m = parse_one_define(bytes_, scan_->directives[index], &slot.error);
      if (m) slot.macro = std::make_shared<const Macro>(std::move(*m));
      slot.state.store(kParsed, std::memory_order_release);
    } else {
      while (slot.state.load(std::memory_order_acquire) != kParsed) std::this_thread::yield();
    }
  }
  if (!slot.macro) *err = slot.error;
  return slot.macro;
}

Options Options::gcc(Dialect dialect) {
  // Assembly has none of the query operators (only __has_include).
  if (dialect == Dialect::kAssembly) return with_builtins(kObjectBuiltins, {});
  return with_builtins(kObjectBuiltins, {"__has_builtin", "__has_attribute", "__has_cpp_attribute",
                                         "__has_c_attribute"});
}

Options Options::clang(Dialect dialect) {
  // C++ has __has_cpp_attribute, C and assembly __has_c_attribute.
  const char* attribute = dialect == Dialect::kCxx ? "__has_cpp_attribute" : "__has_c_attribute";
  return with_builtins(
      kObjectBuiltins,
      {"__has_builtin", "__has_attribute", attribute, "__has_feature", "__has_extension",
       "__has_warning", "__is_identifier", "__has_declspec_attribute", "__is_target_arch",
       "__is_target_os", "__is_target_vendor", "__is_target_environment", "__building_module"});
}

Options Options::for_predefined(std::string_view text) {
  const Dialect dialect =
      text.find("#define __cplusplus ") != std::string_view::npos     ? Dialect::kCxx
      : text.find("#define __ASSEMBLER__ ") != std::string_view::npos ? Dialect::kAssembly
                                                                      : Dialect::kC;
  return text.find("#define __clang__ ") != std::string_view::npos ? clang(dialect) : gcc(dialect);
}

void Preprocessor::Run::process() {
  const lexer::ScanResult& scan = *content_.scan;
  auto active = [&] { return frames_.empty() || frames_.back().active; };
  for (const Directive& d : scan.directives) {
    line_ = d.line;
    switch (d.kind) {
      case DirectiveKind::kIf:
      case DirectiveKind::kIfdef:
      case DirectiveKind::kIfndef: {
        Frame f;
        f.outer_active = active();
        f.done = !f.outer_active;
        frames_.push_back(f);
        if (f.outer_active) enter_branch(&frames_.back(), evaluate(d));
        break;
      }
      case DirectiveKind::kElif:
      case DirectiveKind::kElifdef:
      case DirectiveKind::kElifndef:
      case DirectiveKind::kElse: {
        if (frames_.empty()) break;  // the lexer reported it; the compiler fails
        Frame* f = &frames_.back();
        leave_branch(f);
        if (f->outer_active && !f->done)
          enter_branch(f, d.kind == DirectiveKind::kElse ? State::kTrue : evaluate(d));
        break;
      }
      case DirectiveKind::kEndif:
        if (frames_.empty()) break;
        leave_branch(&frames_.back());
        frames_.pop_back();
        break;
      default:
        if (!active()) break;
        switch (d.kind) {
          case DirectiveKind::kDefine:
            define(d);
            break;
          case DirectiveKind::kUndef: {
            const std::string_view name = scan.text(d);
            pp_.table_.undefine(name);
            pp_.table_.set_uncertain(name, pp_.fallback_depth_ > 0);
            if (own_) {
              HeaderOp op;
              op.kind = HeaderOp::Kind::kUndef;
              op.name = std::string(name);
              own_->ops.push_back(std::move(op));
            }
            break;
          }
          case DirectiveKind::kInclude:
          case DirectiveKind::kIncludeNext:
          case DirectiveKind::kImport:
            include(d);
            break;
          case DirectiveKind::kPragmaOnce: {
            pp_.set_once(file_);
            if (own_) {
              HeaderOp op;
              op.kind = HeaderOp::Kind::kPragmaOnce;
              own_->ops.push_back(std::move(op));
            }
            break;
          }
          case DirectiveKind::kModuleDecl:
          case DirectiveKind::kModuleImport: {
            ModuleLine m;
            m.file = file_;
            m.line = d.line;
            m.declaration = d.kind == DirectiveKind::kModuleDecl;
            m.exported = d.exported;
            m.header_unit = d.header_unit;
            m.angled = d.angled;
            m.fallback = pp_.fallback_depth_ > 0;
            m.name = std::string(scan.text(d));
            if (own_) {
              HeaderOp op;
              op.kind = HeaderOp::Kind::kModule;
              op.module = m;
              own_->ops.push_back(std::move(op));
            }
            pp_.result_.modules.push_back(std::move(m));
            break;
          }
          default:  // __has_include is evaluated with its condition
            break;
        }
    }
  }
  while (!frames_.empty()) {  // unterminated #if: the lexer reported it
    leave_branch(&frames_.back());
    frames_.pop_back();
  }
}

void Preprocessor::Run::enter_branch(Frame* f, State s) {
  switch (s) {
    case State::kFalse:
      f->active = false;
      return;
    case State::kTrue:
      f->active = true;
      f->fallback = f->any_fallback;
      f->done = true;
      break;
    case State::kUnknown:
    case State::kError:
      f->active = true;
      f->fallback = true;
      f->any_fallback = true;
      break;
  }
  if (f->fallback) ++pp_.fallback_depth_;
}

void Preprocessor::Run::leave_branch(Frame* f) {
  if (f->active && f->fallback) --pp_.fallback_depth_;
  f->active = false;
  f->fallback = false;
}

State Preprocessor::Run::evaluate(const Directive& d) {
  const std::string_view text = content_.scan->text(d);
  if (d.kind == DirectiveKind::kIf || d.kind == DirectiveKind::kElif) return evaluate_if(text);
  const bool want_defined = d.kind == DirectiveKind::kIfdef || d.kind == DirectiveKind::kElifdef;
  if (pp_.table_.is_uncertain(text)) {
    inexact(Inexact::kUncertainCondition,
            "\"" + std::string(text) + "\" was (un)defined in a branch taken as a fallback");
    return State::kUnknown;
  }
  const bool defined = pp_.table_.find(text) != nullptr || builtin_kind(text) != BuiltinKind::kNone;
  return defined == want_defined ? State::kTrue : State::kFalse;
}

State Preprocessor::Run::evaluate_if(std::string_view text) {
  Tokens tokens;
  tokenize(text, &tokens);
  Tokens expanded;
  if (!expander_.expand(std::move(tokens), MacroExpander::Mode::kCondition, &expanded)) {
    const std::string& e = expander_.error();
    inexact(e.rfind("unsupported", 0) == 0 ? Inexact::kUnsupported : Inexact::kConditionError,
            "#if error: " + e);
    return State::kError;
  }
  ConditionOptions options;
  options.cplusplus = pp_.table_.find("__cplusplus") != nullptr;
  options.char_is_signed = pp_.table_.find("__CHAR_UNSIGNED__") == nullptr;
  options.wchar_is_signed = pp_.table_.find("__WCHAR_UNSIGNED__") == nullptr;
  const ConditionResult r = evaluate_condition(expanded, options);
  if (r.state == State::kError) {
    inexact(Inexact::kConditionError, "#if error: " + r.error);
    return State::kError;
  }
  if (expander_.read_uncertain()) {
    inexact(Inexact::kUncertainCondition,
            "condition reads a macro of a branch taken as a fallback");
    return State::kUnknown;
  }
  if (r.state == State::kUnknown) {
    std::string what = "a value the evaluator cannot know";
    for (const Token& t : expanded) {
      if (t.kind == TokenKind::kUnknown || t.kind == TokenKind::kCounter) {
        what = t.text;
        break;
      }
    }
    inexact(Inexact::kUncertainCondition, "unknown " + what);
  }
  return r.state;
}

void Preprocessor::Run::define(const Directive& d) {
  std::string err;
  std::shared_ptr<const Macro> m;
  const size_t index = size_t(&d - content_.scan->directives.data());
  if (content_.defines && index < content_.defines->size()) {
    m = content_.defines->get(index, &err);
  } else if (std::optional<Macro> parsed = parse_one_define(content_.bytes, d, &err)) {
    m = std::make_shared<const Macro>(std::move(*parsed));
  }
  const std::string_view name = content_.scan->text(d);
  if (!m || m->name != name) {
    inexact(Inexact::kBadDirective, "#define " + std::string(name) + ": " + err);
    return;
  }
  pp_.table_.set_uncertain(name, pp_.fallback_depth_ > 0);
  if (own_) {
    HeaderOp op;
    op.kind = HeaderOp::Kind::kDefine;
    op.macro = m;
    own_->ops.push_back(std::move(op));
  }
  pp_.table_.define(std::move(m));
}

bool Preprocessor::Run::computed_name(std::string_view text, std::string* name, bool* angled) {
  Tokens tokens;
  tokenize(text, &tokens);
  Tokens expanded;
  if (!expander_.expand(std::move(tokens), MacroExpander::Mode::kPlain, &expanded)) {
    inexact(Inexact::kComputedInclude, "computed include not expanded: " + expander_.error());
    return false;
  }
  if (!expanded.empty() && expanded[0].kind == TokenKind::kString &&
      expanded[0].text.front() == '"') {
    *name = expanded[0].text.substr(1, expanded[0].text.size() - 2);
    *angled = false;
  } else if (!expanded.empty() && expanded[0].is_punct("<")) {
    size_t close = 1;
    while (close < expanded.size() && !expanded[close].is_punct(">")) ++close;
    if (close == expanded.size()) {
      inexact(Inexact::kComputedInclude, "computed include not expanded: missing '>'");
      return false;
    }
    *name = spell(expanded.data() + 1, expanded.data() + close);
    *angled = true;
  } else {
    inexact(Inexact::kComputedInclude,
            "computed include not expanded: \"" +
                spell(expanded.data(), expanded.data() + expanded.size()) + "\" is no header name");
    return false;
  }
  if (name->empty()) {
    inexact(Inexact::kComputedInclude, "computed include not expanded: empty file name");
    return false;
  }
  if (expander_.read_uncertain()) {
    inexact(Inexact::kComputedInclude,
            "computed include not expanded with certainty: it reads a macro of a branch taken "
            "as a fallback");
  }
  return true;
}

void Preprocessor::Run::include(const Directive& d) {
  IncludeQuestion q;
  q.computed = d.computed;
  q.next = d.kind == DirectiveKind::kIncludeNext;
  q.includer = file_;
  q.line = d.line;
  std::string expanded;  // a computed include's name
  std::string_view name;
  if (d.computed) {
    if (!computed_name(content_.scan->text(d), &expanded, &q.angled)) return;
    name = expanded;
  } else {
    name = content_.scan->text(d);
    q.angled = d.angled;
  }
  q.answer = pp_.host_.resolve(name, q.angled, q.next, file_);
  const std::optional<FileHandle> answer = q.answer;
  const bool angled = q.angled;
  if (d.computed || pp_.options_.keep_question_names) q.name = std::string(name);
  pp_.result_.includes.push_back(std::move(q));
  if (!answer) {
    const std::string spelled(name);
    inexact(Inexact::kMissingInclude,
            (angled ? "<" + spelled + ">" : "\"" + spelled + "\"") + " not found");
    return;
  }
  const EntryKind how = d.kind == DirectiveKind::kInclude       ? EntryKind::kInclude
                        : d.kind == DirectiveKind::kIncludeNext ? EntryKind::kIncludeNext
                                                                : EntryKind::kImport;
  if (depth_ + 1 > pp_.options_.max_include_depth) {
    inexact(Inexact::kDepthLimit, "#include nested too deeply");
    return;
  }
  if (own_) {
    HeaderOp op;
    op.kind = HeaderOp::Kind::kInclude;
    op.name = name;
    op.angled = angled;
    op.next = d.kind == DirectiveKind::kIncludeNext;
    op.computed = d.computed;
    op.how = how;
    op.line = d.line;
    op.answer = pp_.id_of(*answer);
    own_->ops.push_back(std::move(op));
  }
  std::shared_ptr<const HeaderTrace> nested = enter(pp_, *answer, how, file_, d.line, depth_ + 1);
  if (own_) own_->ops.back().nested = std::move(nested);
}

std::shared_ptr<const HeaderTrace> Preprocessor::Run::enter(
    Preprocessor& pp, FileHandle target, EntryKind how, std::optional<FileHandle> includer,
    uint32_t line, uint32_t depth, const HeaderTrace* known,
    const std::vector<std::optional<FileHandle>>* answers, size_t* next) {
  // Past the known trace's answers on every way out, so that the includer's
  // next op takes its own.
  struct SkipAnswers {
    size_t* next;
    size_t end;
    ~SkipAnswers() {
      if (next) *next = end;
    }
  } skip{known && next ? next : nullptr, known && next ? *next + known->answer_count : 0};
  FileEntry e;
  e.file = target;
  e.how = how;
  e.includer = includer;
  e.line = line;
  e.fallback = pp.fallback_depth_ > 0;
  auto once = pp.once_.find(target);
  const bool once_seen = once != pp.once_.end();
  if (pp.recorder_.active()) {
    const uint32_t id = pp.id_of(target);
    if (id == 0)
      pp.recorder_.spoil();  // a file the host cannot name
    else
      pp.recorder_.once_read(id, pp.once_state(target));
  }
  if (once_seen && once->second.certain) {
    e.processed = false;
    pp.result_.files.push_back(e);
    return nullptr;
  }
  const std::optional<FileContent> content = pp.host_.content(target);
  if (!content || !content->scan) {
    pp.result_.files.push_back(e);
    pp.result_.inexact.push_back({Inexact::kUnreadable, "cannot read an included file"});
    return nullptr;
  }
  const std::string& guard = content->scan->include_guard;
  if (!guard.empty() && pp.table_.find(guard) && !pp.table_.is_uncertain(guard)) {
    e.processed = false;
    pp.result_.files.push_back(e);
    return nullptr;
  }
  pp.result_.files.push_back(e);
  if (how == EntryKind::kImport) pp.set_once(target);
  // A file seen with #pragma once only in a fallback branch may or may not
  // have been read before: read it again, as a fallback.
  const int saved = pp.fallback_depth_;
  if (once_seen) ++pp.fallback_depth_;
  pp.recorder_.entered(depth);
  const bool shared = pp.cache_ && depth > 0 && pp.fallback_depth_ == 0 &&
                      !pp.table_.any_uncertain() && pp.id_of(target) != 0;
  if (!shared) {
    Run(pp, target, *content, depth).process();
    pp.fallback_depth_ = saved;
    return nullptr;
  }
  if (known) {
    // The includer's inputs held, and they hold this header's inputs.
    pp.cache_->used(*known);
    ++pp.replayed_;
    pp.recorder_.entered(depth + known->inputs.max_rel_depth);
    Run(pp, target, *content, depth).replay(*known, answers, next);
    pp.fallback_depth_ = saved;
    return nullptr;
  }
  const uint64_t key = HeaderCache::key(pp.cache_context_, pp.id_of(target));
  std::vector<std::optional<FileHandle>> found;
  for (const std::shared_ptr<const HeaderTrace>& trace : pp.cache_->find(key)) {
    if (!pp.applies(*trace, target, depth, &found)) continue;
    pp.cache_->used(*trace);
    ++pp.replayed_;
    pp.note_replayed(*trace, depth);
    size_t next_answer = 0;
    Run(pp, target, *content, depth).replay(*trace, &found, &next_answer);
    pp.fallback_depth_ = saved;
    return trace;
  }
  ++pp.evaluated_;
  const size_t inexact_before = pp.result_.inexact.size();
  pp.recorder_.begin(depth);
  Run run(pp, target, *content, depth);
  run.own_ = pp.recorder_.top();
  run.process();
  std::shared_ptr<HeaderTrace> trace = pp.recorder_.end();
  // Only an exact evaluation is shared: a fallback or an error is redone.
  pp.fallback_depth_ = saved;
  if (!trace || pp.result_.inexact.size() != inexact_before) return nullptr;
  trace->answer_count = count_answers(*trace);
  pp.cache_->add(key, trace);
  return trace;
}

Preprocessor::Preprocessor(Host& host, Options options)
    : host_(host), options_(std::move(options)) {
  table_.collect_reads(&reads_);
}

Preprocessor::~Preprocessor() = default;

bool Preprocessor::predefine(std::string_view text, std::string* err) {
  return table_.define_predefined(text, err);
}

void Preprocessor::predefine(const std::vector<std::shared_ptr<const Macro>>& macros) {
  for (const std::shared_ptr<const Macro>& m : macros) table_.define(m);
}

bool Preprocessor::define(std::string_view arg, std::string* err) {
  std::optional<Macro> m = parse_command_definition(arg, err);
  if (!m) return false;
  table_.set_uncertain(m->name, false);
  table_.define(std::move(*m));
  return true;
}

void Preprocessor::undefine(std::string_view name) {
  table_.undefine(name);
  table_.set_uncertain(name, false);
}

void Preprocessor::run_file(FileHandle file, EntryKind how) {
  Run::enter(*this, file, how, std::nullopt, 0, 0);
}

}  // namespace lexpack::preprocessor
