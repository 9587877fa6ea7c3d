// Runs lexpack::preprocessor over one TU for the __has_include questions it
// reaches through macros. The compiler's answers (predefined macros, and
// __has_builtin-like questions the evaluation meets) come from one run of
// `compiler <args> -dM -E` over a file of those questions, remembered in the
// store per compiler identity and arguments.
#include "closure/presence_evaluation.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>

#include "base/file_stat.h"
#include "base/file_util.h"
#include "closure/builtin_candidates.h"
#include "closure/closure_host.h"
#include "closure/compiler_facts.h"
#include "closure/evaluation_share_impl.h"
#include "closure/header_key.h"
#include "closure/scan_file_cache.h"
#include "lexer/scanner.h"
#include "preprocessor/preprocessor.h"

namespace lexpack::closure {
namespace {

constexpr std::string_view kFactsTable = "compiler_facts";
constexpr std::string_view kQuestionsTable = "builtin_questions";
constexpr int kMaxRounds = 4;

bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// `word` occurs in `text` as a whole word (or is empty).
bool has_word(std::string_view text, std::string_view word) {
  for (size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
    const size_t end = at + word.size();
    if ((at == 0 || !word_char(text[at - 1])) && (end == text.size() || !word_char(text[end]))) {
      return true;
    }
  }
  return false;
}

}  // namespace

EvaluationShare::EvaluationShare() : impl(std::make_unique<Impl>()) {}

void EvaluationShare::use_walked(ScanFileCache* walked) {
  impl->walked = walked;
}
EvaluationShare::~EvaluationShare() = default;

void EvaluationShare::carry_headers(EvaluationShare* from, int64_t from_made_ns) {
  impl->headers = std::move(from->impl->headers);
  from->impl->headers = std::make_unique<preprocessor::HeaderCache>();
  impl->headers->keep_only(
      [from_made_ns](std::string_view key) { return header_key_settled(key, from_made_ns); });
  // The files' bytes and scans too (a replay enters each header: its
  // include guard is read first), each found by its signature, while used
  // as recently as the traces kept.
  const uint32_t now = impl->headers->carries();
  std::lock_guard lock(from->impl->mu);
  for (auto& [id, file] : from->impl->files) {
    if (base::signature_is_settled(file->stat, from_made_ns) &&
        file->last_used.load() + preprocessor::HeaderCache::kUnusedCarries >= now) {
      impl->files.emplace(id, file);
    }
  }
}

size_t EvaluationShare::header_traces() const {
  return impl->headers->trace_count();
}

const Resolution* stdc_predef(const std::vector<Resolution>& forced) {
  if (forced.empty()) return nullptr;
  const std::string& path = forced.front().path;
  const size_t slash = path.rfind('/');
  const std::string_view base = slash == std::string::npos
                                    ? std::string_view(path)
                                    : std::string_view(path).substr(slash + 1);
  return base == "stdc-predef.h" ? &forced.front() : nullptr;
}

CompilerPresenceEvaluator::Predef CompilerPresenceEvaluator::inspect_predef(
    const std::vector<Resolution>& forced) const {
  Predef out;
  const Resolution* predef = stdc_predef(forced);
  if (!predef) return out;
  base::Result<std::string> bytes = base::read_file(predef->path);
  out.reads_no_file = false;
  if (!bytes.ok()) return out;
  out.bytes = std::move(bytes.value());
  const lexer::ScanResult scan = lexer::scan(out.bytes, *kernel_);
  for (const lexer::Directive& d : scan.directives) {
    switch (d.kind) {
      case lexer::DirectiveKind::kInclude:
      case lexer::DirectiveKind::kIncludeNext:
      case lexer::DirectiveKind::kImport:
      case lexer::DirectiveKind::kHasInclude:
      case lexer::DirectiveKind::kHasIncludeNext:
      case lexer::DirectiveKind::kModuleImport:
        return out;
      default:
        break;
    }
  }
  out.reads_no_file = true;
  return out;
}

CompilerPresenceEvaluator::CompilerPresenceEvaluator(cache::Store* store,
                                                     const compiler::CompilerIdentity& identity,
                                                     const compiler::CompileCommand& command,
                                                     std::string cwd, const lexer::Kernel* kernel)
    : store_(store),
      identity_(identity),
      command_(command),
      cwd_(std::move(cwd)),
      kernel_(kernel) {}

namespace {

// Whether the -D values can be applied here after the compiler's answers:
// not when the stdc-predef.h the compiler reads before every file (with
// them defined) names one; then they go to the compiler.
bool defines_apart_of(const compiler::CompileCommand& command, std::string_view predef_bytes) {
  bool defines_apart = true;
  for (const compiler::CompileCommand::MacroArg& m : command.macros) {
    const std::string_view name = std::string_view(m.text).substr(0, m.text.find_first_of("=("));
    defines_apart = defines_apart && !has_word(predef_bytes, name);
  }
  return defines_apart;
}

// The key of the compiler's answers before any question is added: its
// identity, the language and the arguments that decide them.
std::string answers_base_key(const compiler::CompilerIdentity& identity,
                             const compiler::CompileCommand& command,
                             const std::vector<Resolution>& forced, bool predef_reads_no_file,
                             bool defines_apart, const MacroArguments& with_dirs) {
  cache::Hasher base;
  base.field(identity.hash.hex());
  base.field(compiler::language_name(command.language));
  if (identity.kind == compiler::CompilerKind::kGcc && predef_reads_no_file) {
    // Include directories decide gcc's answers only through the
    // stdc-predef.h it finds with them (none of whose directives reads
    // another file): that file in their place lets every target of a build
    // share one question to the compiler.
    for (const std::string& a : split_macro_arguments(command, false, defines_apart).ask) {
      base.field(a);
    }
    const Resolution* predef = stdc_predef(forced);
    base.field(predef ? predef->path : "no stdc-predef.h");
    if (predef) {
      for (uint64_t v :
           {uint64_t(predef->stat.dev), uint64_t(predef->stat.ino), uint64_t(predef->stat.size),
            uint64_t(predef->stat.mtime_ns), uint64_t(predef->stat.ctime_ns)}) {
        base.field(std::to_string(v));
      }
    }
  } else {
    for (const std::string& a : with_dirs.ask) base.field(a);
  }
  return base.digest().hex();
}

// The builtin questions TUs of `base_key` met so far: the scan's, else those the store remembers.
std::set<std::string> known_questions(EvaluationShare::Impl* share, cache::Store* store,
                                      const std::string& base_key) {
  std::set<std::string> questions;
  if (share) {
    std::lock_guard lock(share->mu);
    questions = share->questions[base_key];
  }
  if (store && questions.empty()) {
    if (std::optional<std::string> known = store->get_memo(kQuestionsTable, base_key)) {
      std::string_view rest = *known;
      while (!rest.empty()) {
        size_t end = rest.find('\n');
        questions.emplace(rest.substr(0, end));
        if (end == std::string_view::npos) break;
        rest.remove_prefix(end + 1);
      }
    }
  }
  return questions;
}

// Makes the store remember `questions` as those of `base_key`.
void remember_questions(cache::Store* store, const std::string& base_key,
                        const std::set<std::string>& questions) {
  std::string list;
  for (const std::string& q : questions) list += q + "\n";
  store->put_memo(kQuestionsTable, base_key, list);
}

// Every builtin query written in the files the scan's walks read (every
// branch of this TU's files among them) that the compiler's preprocessor
// knows, as questions.
std::set<std::string> questions_written(ScanFileCache* walked,
                                        const compiler::CompilerIdentity& identity,
                                        const compiler::CompileCommand& command) {
  std::set<std::pair<std::string, std::string>> written;
  walked->for_each_lexed([&](const LexedFile& f) { note_candidates(f.scan, &written); });
  using Dialect = preprocessor::Options::Dialect;
  const Dialect dialect = command.language == compiler::Language::kCxx   ? Dialect::kCxx
                          : command.language == compiler::Language::kAsm ? Dialect::kAssembly
                                                                         : Dialect::kC;
  const preprocessor::Options options = identity.kind == compiler::CompilerKind::kClang
                                            ? preprocessor::Options::clang(dialect)
                                            : preprocessor::Options::gcc(dialect);
  std::set<std::string> questions;
  for (const auto& [op, arg] : written) {
    auto it = options.builtins.find(op);
    if (it != options.builtins.end() && it->second == preprocessor::BuiltinKind::kQuery) {
      questions.insert(op + "(" + arg + ")");
    }
  }
  return questions;
}

// Every question of the kinds this compiler knows written in the files read
// so far that is not among `questions` (one it rejects makes the run fail,
// and it is then asked again without the questions asked ahead).
std::set<std::string> questions_ahead(EvaluationShare::Impl* share, const CompilerFacts& facts,
                                      const std::set<std::string>& questions) {
  std::set<std::string> ops;
  for (const auto& [name, kind] :
       preprocessor::Options::for_predefined(facts.predefined).builtins) {
    if (kind == preprocessor::BuiltinKind::kQuery) ops.insert(name);
  }
  std::set<std::string> ahead;
  std::lock_guard lock(share->mu);
  for (const auto& [op, arg] : share->candidates) {
    std::string q = op + "(" + arg + ")";
    if (ops.count(op) && !questions.count(q)) ahead.insert(std::move(q));
  }
  return ahead;
}

// The compiler's answers to `asked` (whose key is `facts_key`): the scan's,
// or its answers to the most questions so far when they cover `asked` (then
// *shared is set), else the store's, else those of `ask` (one compiler run
// per scan), which the store then remembers.
template <typename AskCompiler>
base::Result<CompilerFacts> find_facts(EvaluationShare::Impl* share, cache::Store* store,
                                       const std::string& base_key, const std::string& facts_key,
                                       const std::vector<std::string>& asked, AskCompiler ask,
                                       bool* shared) {
  CompilerFacts facts;
  *shared = false;
  if (share) {
    std::lock_guard lock(share->mu);
    auto it = share->facts.find(facts_key);
    if (it != share->facts.end()) facts = it->second, *shared = true;
    // Or the answers with the most questions so far, when they cover these.
    auto latest = share->latest.find(base_key);
    if (!*shared && latest != share->latest.end()) {
      bool covers = true;
      for (const std::string& q : asked) covers = covers && latest->second.answers.count(q);
      if (covers) facts = latest->second, *shared = true;
    }
  }
  if (*shared) return facts;
  std::optional<std::string> memo;
  if (store) memo = store->get_memo(kFactsTable, facts_key);
  if (memo && decode_facts(*memo, &facts)) return facts;
  base::Result<CompilerFacts> fresh = share ? share->asking.get(facts_key, ask) : ask();
  if (fresh.ok() && store) store->put_memo(kFactsTable, facts_key, encode_facts(fresh.value()));
  return fresh;
}

// Makes `facts` and `questions` the scan's, for its other TUs of `base_key`.
void share_facts(EvaluationShare::Impl* share, const std::string& base_key,
                 const std::string& facts_key, const CompilerFacts& facts, bool already_shared,
                 const std::set<std::string>& questions) {
  std::lock_guard lock(share->mu);
  if (!already_shared) share->facts.emplace(facts_key, facts);
  CompilerFacts& latest = share->latest[base_key];
  if (facts.answers.size() > latest.answers.size() || latest.predefined.empty()) latest = facts;
  std::set<std::string>& all = share->questions[base_key];
  all.insert(questions.begin(), questions.end());
}

// Defines the compiler's predefined macros in `pp`, then the command's -D
// values `defines`: "" when all went in, else what did not.
std::string predefine(preprocessor::Preprocessor* pp, const CompilerFacts& facts,
                      EvaluationShare::Impl* share, const std::vector<std::string>& defines) {
  std::string err;
  if (!share && !pp->predefine(facts.predefined, &err)) return "predefined macros: " + err;
  if (share) {
    // Parsed once per scan; TUs' tables share them (compared by identity first).
    std::shared_ptr<const std::vector<std::shared_ptr<const preprocessor::Macro>>> parsed;
    {
      std::lock_guard lock(share->mu);
      auto it = share->predefined.find(facts.predefined);
      if (it != share->predefined.end()) parsed = it->second;
    }
    if (!parsed) {
      auto fresh = std::make_shared<std::vector<std::shared_ptr<const preprocessor::Macro>>>(
          preprocessor::parse_predefined(facts.predefined, &err));
      if (!err.empty()) return "predefined macros: " + err;
      std::lock_guard lock(share->mu);
      parsed = share->predefined.emplace(facts.predefined, std::move(fresh)).first->second;
    }
    pp->predefine(*parsed);
  }
  for (const std::string& d : defines) {
    if (!pp->define(d, &err)) return "-D" + d + ": " + err;
  }
  return {};
}

// What a header's evaluations are shared by in the scan's header cache: the
// compiler, the working directory and the language; not the search
// arguments: a replay first asks every include of the header and of the
// headers it enters, and replays only where each finds the same file at the
// same place, so targets that differ only in their include directories
// share the headers they find alike.
std::string header_context(const compiler::CompilerIdentity& identity, const std::string& cwd,
                           compiler::Language language) {
  std::string context = identity.hash.hex();
  context.push_back('\0');
  context.append(cwd).push_back('\0');
  context.append(compiler::language_name(language)).push_back('\0');
  return context;
}

}  // namespace

std::string CompilerPresenceEvaluator::evaluate(const Resolution& source,
                                                const std::vector<Resolution>& forced,
                                                const Ask& ask) {
  // The compiler's answers are remembered per identity and the arguments that
  // decide them; builtin questions met so far accumulate, so most TUs of a
  // project find every answer on their first round.
  const Predef predef_file = inspect_predef(forced);
  const bool defines_apart = defines_apart_of(command_, predef_file.bytes);
  const MacroArguments with_dirs = split_macro_arguments(command_, true, defines_apart);
  const std::string base_key = answers_base_key(
      identity_, command_, forced, predef_file.reads_no_file, defines_apart, with_dirs);
  EvaluationShare::Impl* share = share_ ? share_->impl.get() : nullptr;
  std::set<std::string> questions = known_questions(share, store_, base_key);
  computed_.clear();
  entered_.clear();
  reads_.reset();
  std::string why;
  const size_t questions_remembered = questions.size();
  std::set<std::string> speculative;  // asked ahead, not met yet
  if (share && share->walked && questions.empty()) {
    // The first TU of these arguments: ask ahead every question written in
    // the files the scan's walks read with the first compiler run, instead
    // of evaluating the TU once only to learn which it asks.
    speculative = questions_written(share->walked, identity_, command_);
  }
  auto fail = [&](const std::string& error) {
    if (out_) *out_ = EvaluatedTu{false, error, {}, {}};
    return error;
  };
  for (int round = 0; round < kMaxRounds; ++round) {
    if (share && round > 0) {
      // What other TUs learned meanwhile: one set, one compiler run.
      std::lock_guard lock(share->mu);
      const std::set<std::string>& all = share->questions[base_key];
      questions.insert(all.begin(), all.end());
    }
    std::vector<std::string> asked(questions.begin(), questions.end());
    asked.insert(asked.end(), speculative.begin(), speculative.end());
    std::sort(asked.begin(), asked.end());
    cache::Hasher key;
    key.field(base_key);
    for (const std::string& q : asked) key.field(q);
    const std::string facts_key = key.digest().hex();
    bool already_shared = false;
    base::Result<CompilerFacts> found = find_facts(
        share, store_, base_key, facts_key, asked,
        [&] { return ask_compiler(identity_, command_, with_dirs.ask, asked); }, &already_shared);
    if (!found.ok() && !speculative.empty()) {
      // A question asked ahead that this compiler rejects: ask only those met.
      speculative.clear();
      --round;
      continue;
    }
    if (!found.ok()) return fail(found.message());
    const CompilerFacts facts = std::move(found.value());
    // Questions asked ahead were answered: they are known from now on.
    questions.insert(speculative.begin(), speculative.end());
    speculative.clear();
    if (share) share_facts(share, base_key, facts_key, facts, already_shared, questions);
    ClosureHost host(ask, kernel_, facts, share);
    preprocessor::Options options = preprocessor::Options::for_predefined(facts.predefined);
    options.keep_question_names = out_ != nullptr;  // else only answers are read
    preprocessor::Preprocessor pp(host, std::move(options));
    if (std::string err = predefine(&pp, facts, share, with_dirs.defines); !err.empty()) {
      return fail(err);
    }
    if (share) {
      pp.use_header_cache(share->headers.get(), header_context(identity_, cwd_, command_.language));
    }
    for (const Resolution& f : forced) {
      pp.run_file(host.handle(f), preprocessor::EntryKind::kForced);
    }
    pp.run_file(host.handle(source), preprocessor::EntryKind::kMain);
    const preprocessor::Result& result = pp.result();
    if (host.unknown().empty()) {
      if (store_ && questions.size() > questions_remembered) {
        // Asked ahead on the first round: the next scan (whose walk may read
        // no file) asks them on its first round too.
        remember_questions(store_, base_key, questions);
      }
      std::vector<Resolution> files = host.resolutions();
      const bool exact = result.exact();
      const std::string reason = exact ? std::string() : result.reason();
      if (exact) {
        for (const preprocessor::IncludeQuestion& q : result.includes) {
          if (q.computed && q.answer && *q.answer < files.size()) {
            computed_.push_back(files[*q.answer]);
          }
        }
        for (preprocessor::FileHandle h : result.unique_files()) entered_.push_back(files[h].stat);
      }
      reads_ = std::make_shared<preprocessor::MacroReads>(pp.macro_reads());
      // Its last use here: moved, not copied (thousands of entries in a big TU).
      if (out_) *out_ = EvaluatedTu{true, "", pp.take_result(), std::move(files)};
      return reason;
    }
    if (out_) *out_ = EvaluatedTu{true, "", result, host.resolutions()};
    why = result.reason();
    questions.insert(host.unknown().begin(), host.unknown().end());
    // Ask ahead every question of the same kinds written in the files read.
    if (share) speculative = questions_ahead(share, facts, questions);
    if (store_) remember_questions(store_, base_key, questions);
  }
  return why.empty() ? "builtin questions did not settle" : why;
}

}  // namespace lexpack::closure
