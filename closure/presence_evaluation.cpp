// Runs lexpack::preprocessor over one TU for the __has_include questions it
// reaches through macros. The compiler's answers (predefined macros, and
// __has_builtin-like questions the evaluation meets) come from one run of
// `compiler <args> -dM -E` over a file of those questions, remembered in the
// store per compiler identity and arguments.
#include "closure/presence_evaluation.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>

#include "base/file_util.h"
#include "base/once_map.h"
#include "base/process.h"
#include "base/view_map.h"
#include "closure/builtin_candidates.h"
#include "closure/scan_file_cache.h"
#include "lexer/scanner.h"
#include "preprocessor/preprocessor.h"

namespace lexpack::closure {
namespace {

constexpr std::string_view kFactsTable = "compiler_facts";
constexpr std::string_view kQuestionsTable = "builtin_questions";
constexpr std::string_view kAnswerMacro = "__lexpack_answer_";
constexpr int kMaxRounds = 4;

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

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

// What the compiler says before any file is read: its -dM output (the
// answers' own macros taken out) and the answers to builtin questions.
struct CompilerFacts {
  std::string predefined;
  std::map<std::string, intmax_t> answers;  // "__has_builtin(__builtin_expect)" -> 1
};

// The text of a file that asks `questions` of the compiler's preprocessor.
std::string question_file(const std::vector<std::string>& questions) {
  std::string out;
  for (size_t i = 0; i < questions.size(); ++i) {
    const std::string macro = std::string(kAnswerMacro) + std::to_string(i);
    out += "#if " + questions[i] + "\n#define " + macro + " 1\n#else\n#define " + macro +
           " 0\n#endif\n";
  }
  return out;
}

base::Result<CompilerFacts> ask_compiler(const compiler::CompilerIdentity& identity,
                                         const compiler::CompileCommand& command,
                                         const std::vector<std::string>& arguments,
                                         const std::vector<std::string>& questions) {
  const char* tmp = getenv("TMPDIR");
  std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/lexpack-questions-XXXXXX";
  int fd = mkstemp(path.data());
  if (fd < 0) return base::Status::error("cannot create a temporary file in " + path);
  const std::string text = question_file(questions);
  const bool written = base::write_all(fd, text);
  ::close(fd);
  std::vector<std::string> argv = {identity.program};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  argv.insert(argv.end(),
              {"-dM", "-E", "-x", std::string(compiler::language_name(command.language)), path});
  // Predefined macros and builtin answers do not depend on the working
  // directory (no file of the command is read: -include is left out).
  base::ProcessResult r;
  if (written) r = base::run_captured(argv, true);
  ::unlink(path.c_str());
  if (!written) return base::Status::error("cannot write " + path);
  if (!r.started || r.exit_code != 0) {
    return base::Status::error("the compiler's -dM run failed: " + r.error + r.err.substr(0, 200));
  }
  CompilerFacts facts;
  size_t pos = 0;
  while (pos < r.out.size()) {
    size_t end = r.out.find('\n', pos);
    if (end == std::string::npos) end = r.out.size();
    std::string_view line(r.out.data() + pos, end - pos);
    pos = end + 1;
    constexpr std::string_view kDefine = "#define ";
    if (starts_with(line, std::string(kDefine) + std::string(kAnswerMacro))) {
      std::string_view rest = line.substr(kDefine.size() + kAnswerMacro.size());
      size_t space = rest.find(' ');
      if (space == std::string_view::npos) continue;
      size_t index = std::stoul(std::string(rest.substr(0, space)));
      if (index < questions.size()) facts.answers[questions[index]] = rest.substr(space + 1) == "1";
      continue;
    }
    facts.predefined.append(line).push_back('\n');
  }
  if (facts.answers.size() != questions.size()) {
    return base::Status::error("the compiler did not answer every builtin question");
  }
  return facts;
}

std::string encode_facts(const CompilerFacts& f) {
  std::string out = std::to_string(f.answers.size()) + "\n";
  for (const auto& [q, a] : f.answers) out += q + "\n" + std::to_string(a) + "\n";
  return out + f.predefined;
}

bool decode_facts(std::string_view bytes, CompilerFacts* f) {
  auto line = [&](std::string* out) {
    size_t end = bytes.find('\n');
    if (end == std::string_view::npos) return false;
    out->assign(bytes.substr(0, end));
    bytes.remove_prefix(end + 1);
    return true;
  };
  std::string count, q, a;
  if (!line(&count)) return false;
  size_t n = 0;
  for (char c : count) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + size_t(c - '0');
  }
  for (size_t i = 0; i < n; ++i) {
    if (!line(&q) || !line(&a) || (a != "0" && a != "1")) return false;
    f->answers[q] = a == "1";
  }
  f->predefined.assign(bytes);
  return true;
}

// A file by device and inode: looked up for every file a TU enters.
struct InodeHash {
  size_t operator()(const std::pair<uint64_t, uint64_t>& id) const {
    return size_t(id.second * 0x9E3779B97F4A7C15ull ^ id.first);
  }
};
template <typename V>
using ByInode = std::unordered_map<std::pair<uint64_t, uint64_t>, V, InodeHash>;

// One file's bytes and their lexer scan, as several TUs' evaluations share it.
struct LoadedFile {
  base::StatSignature stat;
  std::shared_ptr<const LexedFile> text;               // never null
  std::optional<preprocessor::ParsedDefines> defines;  // with a share
};

}  // namespace

struct EvaluationShare::Impl {
  std::mutex mu;
  ByInode<std::shared_ptr<const LoadedFile>> files;
  std::map<std::string, CompilerFacts> facts;              // by facts key
  std::map<std::string, CompilerFacts> latest;             // by base key: the most answers
  std::map<std::string, std::set<std::string>> questions;  // by base key
  // Each compiler run, once per facts key: a TU that needs the answers of a
  // run under way waits for it instead of running the compiler again.
  base::OnceMap<base::Result<CompilerFacts>> asking;
  // Builtin queries written out in the files read so far: (op, argument).
  std::set<std::pair<std::string, std::string>> candidates;
  // The files the scan's walk read and lexed (null outside a scan).
  ScanFileCache* walked = nullptr;
  // Each header's evaluations by the macro state they read (thread-safe).
  preprocessor::HeaderCache headers;
  // Predefined macros parsed once per text.
  std::map<std::string,
           std::shared_ptr<const std::vector<std::shared_ptr<const preprocessor::Macro>>>>
      predefined;
};

EvaluationShare::EvaluationShare() : impl(std::make_unique<Impl>()) {}

void EvaluationShare::use_walked(ScanFileCache* walked) {
  impl->walked = walked;
}
EvaluationShare::~EvaluationShare() = default;

namespace {

// The preprocessor's view of the files: handles over resolutions (one per
// file, by device and inode), bytes and scans read on first use, or taken
// from the scan's share.
class ClosureHost : public preprocessor::Host {
 public:
  ClosureHost(const PresenceEvaluator::Ask& ask, const lexer::Kernel* kernel,
              const CompilerFacts& facts, EvaluationShare::Impl* share)
      : ask_(ask), kernel_(kernel), facts_(facts), share_(share) {}

  preprocessor::FileHandle handle(const Resolution& r) {
    auto [it, fresh] = by_inode_.emplace(std::make_pair(r.stat.dev, r.stat.ino), files_.size());
    if (fresh) files_.push_back({r, nullptr});
    return preprocessor::FileHandle(it->second);
  }

  std::optional<preprocessor::FileHandle> resolve(std::string_view name, bool angled, bool is_next,
                                                  preprocessor::FileHandle includer) override {
    if (includer >= files_.size()) return std::nullopt;
    // An angled #include's answer depends on the name alone (the search
    // starts at the same place for every includer): asked once per TU, as
    // a TU's headers ask for the same few names thousands of times.
    const bool by_name = angled && !is_next;
    if (by_name) {
      if (auto it = angled_.find(name); it != angled_.end()) return it->second;
    }
    const Resolution& r = ask_(name, angled, is_next, files_[includer].where);
    std::optional<preprocessor::FileHandle> answer;
    if (r.found) answer = handle(r);
    if (by_name) angled_.emplace(std::string(name), answer);
    return answer;
  }

  std::optional<preprocessor::FileContent> content(preprocessor::FileHandle file) override {
    if (file >= files_.size()) return std::nullopt;
    File& f = files_[file];
    if (!f.loaded) {
      f.loaded = load(f.where);
      if (!f.loaded) return std::nullopt;
    }
    return preprocessor::FileContent{f.loaded->text->bytes, &f.loaded->text->scan, f.where.path,
                                     f.loaded->defines ? &*f.loaded->defines : nullptr};
  }

  // The path as found, where in the search, and the stat of what was read.
  std::string file_key(preprocessor::FileHandle file) override {
    if (file >= files_.size()) return {};
    const Resolution& r = files_[file].where;
    // The numbers as their bytes after the path's end: fixed width, so no
    // two differ in one and compare equal.
    const int64_t numbers[] = {int64_t(r.chain_index),   int64_t(r.stat.dev),
                               int64_t(r.stat.ino),      int64_t(r.stat.size),
                               int64_t(r.stat.mtime_ns), int64_t(r.stat.ctime_ns)};
    std::string key;
    key.reserve(r.path.size() + 1 + sizeof numbers);
    key.append(r.path).push_back('\0');
    key.append(reinterpret_cast<const char*>(numbers), sizeof numbers);
    return key;
  }

  std::vector<Resolution> resolutions() const {
    std::vector<Resolution> out;
    out.reserve(files_.size());
    for (const File& f : files_) out.push_back(f.where);
    return out;
  }

  std::optional<intmax_t> builtin_query(std::string_view op, std::string_view argument) override {
    std::string question = std::string(op) + "(" + std::string(argument) + ")";
    auto it = facts_.answers.find(question);
    if (it != facts_.answers.end()) return it->second;
    unknown_.insert(std::move(question));
    return std::nullopt;
  }

  const std::set<std::string>& unknown() const { return unknown_; }

 private:
  struct File {
    Resolution where;
    std::shared_ptr<const LoadedFile> loaded;
  };

  // The file's bytes and scan, read once per scan when there is a share (a
  // file whose stat changed since is read again).
  std::shared_ptr<const LoadedFile> load(const Resolution& where) {
    const std::pair<uint64_t, uint64_t> id(where.stat.dev, where.stat.ino);
    if (share_) {
      std::lock_guard lock(share_->mu);
      auto it = share_->files.find(id);
      if (it != share_->files.end() && it->second->stat == where.stat) return it->second;
    }
    auto f = std::make_shared<LoadedFile>();
    f->stat = where.stat;
    if (share_ && share_->walked) f->text = share_->walked->find_lexed(where.stat);
    if (!f->text) {
      base::Result<std::string> bytes = base::read_file(where.path);
      if (!bytes.ok()) return nullptr;
      auto text = std::make_shared<LexedFile>();
      text->stat = where.stat;
      text->bytes = std::move(bytes.value());
      text->scan = lexer::scan(text->bytes, *kernel_);
      f->text = std::move(text);
    }
    if (share_) f->defines.emplace(f->text->bytes, f->text->scan);
    if (share_) {
      std::set<std::pair<std::string, std::string>> found;
      note_candidates(f->text->scan, &found);
      std::lock_guard lock(share_->mu);
      share_->files[id] = f;
      share_->candidates.insert(found.begin(), found.end());
    }
    return f;
  }
  const PresenceEvaluator::Ask& ask_;
  const lexer::Kernel* kernel_;
  const CompilerFacts& facts_;
  EvaluationShare::Impl* share_;
  std::deque<File> files_;  // FileContent views point into it
  ByInode<size_t> by_inode_;
  std::unordered_map<std::string, std::optional<preprocessor::FileHandle>, base::ViewHash,
                     std::equal_to<>>
      angled_;  // see resolve
  std::set<std::string> unknown_;
};

}  // namespace

std::vector<std::string> macro_arguments(const compiler::CompileCommand& command,
                                         bool include_dirs) {
  // Include directories stay unless asked not to: gcc reads stdc-predef.h
  // through the include search before every file, so a directory holding
  // its own changes the predefined macros.
  static constexpr std::string_view kWithValue[] = {"-o",       "-MF",      "-MT", "-MQ",
                                                    "-include", "-imacros", "-x"};
  static constexpr std::string_view kJoined[] = {"-o", "-MF", "-MT", "-MQ"};
  static constexpr std::string_view kDirs[] = {"-I", "-iquote", "-isystem", "-idirafter"};
  std::vector<std::string> out;
  const std::vector<std::string>& a = command.args;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string& arg = a[i];
    bool separate = false;
    for (std::string_view v : kWithValue) separate = separate || arg == v;
    if (!include_dirs) {
      for (std::string_view v : kDirs) separate = separate || arg == v;
    }
    if (separate) {
      ++i;
      continue;
    }
    bool joined = false;
    for (std::string_view v : kJoined) joined = joined || starts_with(arg, v);
    if (!include_dirs) {
      for (std::string_view v : kDirs) joined = joined || starts_with(arg, v);
    }
    if (joined || arg == "-c" || arg == "-MD" || arg == "-MMD" || arg == "-MP" || arg == "-MG" ||
        arg == "-M" || arg == "-MM" || arg == command.source) {
      continue;
    }
    out.push_back(arg);
  }
  return out;
}

MacroArguments split_macro_arguments(const compiler::CompileCommand& command, bool include_dirs,
                                     bool defines_apart) {
  MacroArguments out;
  out.ask = macro_arguments(command, include_dirs);
  // Flags that define or undefine a macro out of the command's sight, or
  // take the next argument as their value, leave every argument in place.
  for (const std::string& a : out.ask) {
    if (starts_with(a, "-Wp,") || starts_with(a, "-X") || starts_with(a, "--define-macro") ||
        starts_with(a, "--undefine-macro")) {
      return out;
    }
  }
  bool has_undef = false;
  std::vector<std::string> defines;
  for (const compiler::CompileCommand::MacroArg& m : command.macros) {
    has_undef = has_undef || m.undef;
    if (!m.undef) defines.push_back(m.text);
  }
  defines_apart = defines_apart && !has_undef;
  std::vector<std::string> ask;
  ask.reserve(out.ask.size());
  for (size_t i = 0; i < out.ask.size(); ++i) {
    const std::string& a = out.ask[i];
    if (defines_apart && a == "-D" && i + 1 < out.ask.size()) {
      out.defines.push_back(out.ask[++i]);
    } else if (defines_apart && starts_with(a, "-D") && a.size() > 2) {
      out.defines.push_back(a.substr(2));
    } else if (!(starts_with(a, "-W") && a.size() > 2)) {
      ask.push_back(a);
    }
  }
  // Only when the defines found are the command's own, in its order.
  if (defines_apart && out.defines != defines) return {macro_arguments(command, include_dirs), {}};
  out.ask = std::move(ask);
  return out;
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

std::string CompilerPresenceEvaluator::evaluate(const Resolution& source,
                                                const std::vector<Resolution>& forced,
                                                const Ask& ask) {
  // The compiler's answers are remembered per identity and the arguments
  // that decide them; builtin questions met so far accumulate, so most TUs
  // of a project find every answer on their first round.
  cache::Hasher base;
  base.field(identity_.hash.hex());
  base.field(compiler::language_name(command_.language));
  // The -D values are applied here after the compiler's answers, unless the
  // stdc-predef.h the compiler reads before every file (with them defined)
  // names one: then they go to the compiler.
  const Predef predef_file = inspect_predef(forced);
  bool defines_apart = true;
  for (const compiler::CompileCommand::MacroArg& m : command_.macros) {
    const std::string_view name = std::string_view(m.text).substr(0, m.text.find_first_of("=("));
    defines_apart = defines_apart && !has_word(predef_file.bytes, name);
  }
  const MacroArguments with_dirs = split_macro_arguments(command_, true, defines_apart);
  if (identity_.kind == compiler::CompilerKind::kGcc && predef_file.reads_no_file) {
    // Include directories decide gcc's answers only through the
    // stdc-predef.h it finds with them (none of whose directives reads
    // another file): that file in their place lets every target of a build
    // share one question to the compiler.
    for (const std::string& a : split_macro_arguments(command_, false, defines_apart).ask) {
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
  const std::string base_key = base.digest().hex();
  EvaluationShare::Impl* share = share_ ? share_->impl.get() : nullptr;
  std::set<std::string> questions;
  if (share) {
    std::lock_guard lock(share->mu);
    questions = share->questions[base_key];
  }
  if (store_ && questions.empty()) {
    if (std::optional<std::string> known = store_->get_memo(kQuestionsTable, base_key)) {
      std::string_view rest = *known;
      while (!rest.empty()) {
        size_t end = rest.find('\n');
        questions.emplace(rest.substr(0, end));
        if (end == std::string_view::npos) break;
        rest.remove_prefix(end + 1);
      }
    }
  }
  computed_.clear();
  std::string why;
  const size_t questions_remembered = questions.size();
  std::set<std::string> speculative;  // asked ahead, not met yet
  if (share && share->walked && questions.empty()) {
    // The first TU of these arguments: ask ahead every question written in
    // the files the scan's walks read (every branch of this TU's files among
    // them) with the first compiler run, instead of evaluating the TU once
    // only to learn which it asks.
    std::set<std::pair<std::string, std::string>> written;
    share->walked->for_each_lexed([&](const LexedFile& f) { note_candidates(f.scan, &written); });
    using Dialect = preprocessor::Options::Dialect;
    const Dialect dialect = command_.language == compiler::Language::kCxx   ? Dialect::kCxx
                            : command_.language == compiler::Language::kAsm ? Dialect::kAssembly
                                                                           : Dialect::kC;
    const preprocessor::Options options = identity_.kind == compiler::CompilerKind::kClang
                                              ? preprocessor::Options::clang(dialect)
                                              : preprocessor::Options::gcc(dialect);
    for (const auto& [op, arg] : written) {
      auto it = options.builtins.find(op);
      if (it != options.builtins.end() && it->second == preprocessor::BuiltinKind::kQuery) {
        speculative.insert(op + "(" + arg + ")");
      }
    }
  }
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
    CompilerFacts facts;
    std::optional<std::string> memo;
    bool known = false;
    if (share) {
      std::lock_guard lock(share->mu);
      auto it = share->facts.find(facts_key);
      if (it != share->facts.end()) facts = it->second, known = true;
      // Or the answers with the most questions so far, when they cover these.
      auto latest = share->latest.find(base_key);
      if (!known && latest != share->latest.end()) {
        bool covers = true;
        for (const std::string& q : asked) covers = covers && latest->second.answers.count(q);
        if (covers) facts = latest->second, known = true;
      }
    }
    if (!known && store_) memo = store_->get_memo(kFactsTable, facts_key);
    if (!known && (!memo || !decode_facts(*memo, &facts))) {
      facts = CompilerFacts();
      auto ask = [&] { return ask_compiler(identity_, command_, with_dirs.ask, asked); };
      base::Result<CompilerFacts> fresh = share ? share->asking.get(facts_key, ask) : ask();
      if (!fresh.ok() && !speculative.empty()) {
        // A question asked ahead that this compiler rejects: ask only those met.
        speculative.clear();
        --round;
        continue;
      }
      if (!fresh.ok()) {
        if (out_) *out_ = EvaluatedTu{false, fresh.message(), {}, {}};
        return fresh.message();
      }
      facts = std::move(fresh.value());
      if (store_) store_->put_memo(kFactsTable, facts_key, encode_facts(facts));
    }
    // Questions asked ahead were answered: they are known from now on.
    questions.insert(speculative.begin(), speculative.end());
    speculative.clear();
    if (share) {
      std::lock_guard lock(share->mu);
      if (!known) share->facts.emplace(facts_key, facts);
      CompilerFacts& latest = share->latest[base_key];
      if (facts.answers.size() > latest.answers.size() || latest.predefined.empty()) latest = facts;
      std::set<std::string>& all = share->questions[base_key];
      all.insert(questions.begin(), questions.end());
    }
    ClosureHost host(ask, kernel_, facts, share);
    preprocessor::Preprocessor pp(host, preprocessor::Options::for_predefined(facts.predefined));
    std::string err;
    if (!share && !pp.predefine(facts.predefined, &err)) {
      if (out_) *out_ = EvaluatedTu{false, "predefined macros: " + err, {}, {}};
      return "predefined macros: " + err;
    }
    if (share) {
      // Parsed once per scan; each TU's table shares the definitions, and
      // the header cache compares them by identity first.
      std::shared_ptr<const std::vector<std::shared_ptr<const preprocessor::Macro>>> parsed;
      {
        std::lock_guard lock(share->mu);
        auto it = share->predefined.find(facts.predefined);
        if (it != share->predefined.end()) parsed = it->second;
      }
      if (!parsed) {
        auto fresh = std::make_shared<std::vector<std::shared_ptr<const preprocessor::Macro>>>(
            preprocessor::parse_predefined(facts.predefined, &err));
        if (!err.empty()) {
          if (out_) *out_ = EvaluatedTu{false, "predefined macros: " + err, {}, {}};
          return "predefined macros: " + err;
        }
        std::lock_guard lock(share->mu);
        parsed = share->predefined.emplace(facts.predefined, std::move(fresh)).first->second;
      }
      pp.predefine(*parsed);
    }
    for (const std::string& d : with_dirs.defines) {
      if (!pp.define(d, &err)) {
        if (out_) *out_ = EvaluatedTu{false, "-D" + d + ": " + err, {}, {}};
        return "-D" + d + ": " + err;
      }
    }
    if (share) {
      // The compiler, the working directory and the language; not the
      // search arguments: a replay first asks every include of the header
      // and of the headers it enters, and replays only where each finds the
      // same file at the same place, so targets that differ only in their
      // include directories share the headers they find alike.
      std::string context = identity_.hash.hex();
      context.push_back('\0');
      context.append(cwd_).push_back('\0');
      context.append(compiler::language_name(command_.language)).push_back('\0');
      pp.use_header_cache(&share->headers, context);
    }
    for (const Resolution& f : forced)
      pp.run_file(host.handle(f), preprocessor::EntryKind::kForced);
    pp.run_file(host.handle(source), preprocessor::EntryKind::kMain);
    const preprocessor::Result& result = pp.result();
    if (host.unknown().empty()) {
      if (store_ && questions.size() > questions_remembered) {
        // Questions asked ahead on the first round: the next scan, whose
        // walk may read no file, asks them on its first round too.
        std::string list;
        for (const std::string& q : questions) list += q + "\n";
        store_->put_memo(kQuestionsTable, base_key, list);
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
      }
      // The last use of the result here: moved, not copied (thousands of
      // entries in a TU of a big project).
      if (out_) *out_ = EvaluatedTu{true, "", pp.take_result(), std::move(files)};
      return reason;
    }
    if (out_) *out_ = EvaluatedTu{true, "", result, host.resolutions()};
    why = result.reason();
    questions.insert(host.unknown().begin(), host.unknown().end());
    if (share) {
      // Ask ahead every question of the same kinds written in the files read.
      // Every query this compiler knows (one it rejects makes the run fail,
      // and it is then asked again without the questions asked ahead).
      std::set<std::string> ops;
      for (const auto& [name, kind] :
           preprocessor::Options::for_predefined(facts.predefined).builtins) {
        if (kind == preprocessor::BuiltinKind::kQuery) ops.insert(name);
      }
      std::lock_guard lock(share->mu);
      for (const auto& [op, arg] : share->candidates) {
        std::string q = op + "(" + arg + ")";
        if (ops.count(op) && !questions.count(q)) speculative.insert(std::move(q));
      }
    }
    if (store_) {
      std::string list;
      for (const std::string& q : questions) list += q + "\n";
      store_->put_memo(kQuestionsTable, base_key, list);
    }
  }
  return why.empty() ? "builtin questions did not settle" : why;
}

}  // namespace lexpack::closure
