// One TU's scan: its scan memo when nothing it rests on changed, else its
// walk over every branch, then the evaluation that tells which branches are
// taken (or the compiler, where only the compiler can tell).
#include "scan/tu_scanner.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <set>
#include <unordered_map>

#include "base/file_util.h"
#include "base/run_on_threads.h"
#include "closure/action_key.h"
#include "closure/closure_memo.h"
#include "compiler/derived_search_list.h"
#include "scan/compiler_deps.h"

namespace lexpack::scan {
namespace {

// The record beside a TU's scan memo (kExactMemoTable): whether its deps are
// exact (and why not), and the lines of its module directives in taken
// branches.
std::string encode_exact(const TuScan& tu) {
  std::string out = tu.exact ? "1" : "0";
  out += tu.modules_exact ? '1' : '0';
  for (uint32_t line : tu.module_lines) out += std::to_string(line) + ',';
  return out + '\n' + tu.inexact;
}

bool decode_exact(std::string_view bytes, TuScan* tu) {
  size_t nl = bytes.find('\n');
  if (bytes.size() < 2 || nl == std::string_view::npos) return false;
  tu->exact = bytes[0] == '1';
  tu->modules_exact = bytes[1] == '1';
  uint32_t line = 0;
  for (size_t i = 2; i < nl; ++i) {
    char c = bytes[i];
    if (c == ',') {
      tu->module_lines.push_back(line);
      line = 0;
    } else if (c >= '0' && c <= '9') {
      line = line * 10 + uint32_t(c - '0');
    } else {
      return false;
    }
  }
  tu->inexact.assign(bytes.substr(nl + 1));
  return true;
}

// Why scannable() said no: a step that compiles nothing (a link) is no news.
std::string not_scanned(const compiler::CompileCommand& cmd) {
  if (!cmd.compiles) return "not a compile: " + cmd.uncacheable;
  std::string why = "cannot scan: " + cmd.uncacheable;
  if (!cmd.uncacheable_detail.empty()) why += " (" + cmd.uncacheable_detail + ")";
  return why;
}

// The closure's files by their normal paths, and the sizes of the files the
// evaluation reached that the walk did not.
struct ReachedFiles {
  const std::vector<closure::ClosureFile>* files = nullptr;
  std::deque<std::string> made;  // normal paths the graph did not hold
  std::vector<std::string_view> normal;
  std::vector<uint32_t> order;                               // the source first, the rest sorted
  std::unordered_map<std::string_view, uint32_t> by_normal;  // walk file number
  std::unordered_map<std::string_view, uint64_t> outside;    // size of the others
};

// Each file the compiler reads, once, by its normal path (the shared graph
// made it once per file); the source first, the rest sorted.
void number_reached(const std::vector<closure::ClosureFile>& reached, const std::string& dir,
                    ReachedFiles* r) {
  r->files = &reached;
  r->normal.resize(reached.size());
  r->order.reserve(reached.size());
  for (uint32_t i = 0; i < reached.size(); ++i) {
    if (reached[i].presence_only) continue;
    r->normal[i] = reached[i].normal;
    if (r->normal[i].empty())
      r->normal[i] = r->made.emplace_back(base::normal_path(std::string(reached[i].path), dir));
    r->order.push_back(i);
  }
  auto by_path = [r](uint32_t a, uint32_t b) { return r->normal[a] < r->normal[b]; };
  auto same_path = [r](uint32_t a, uint32_t b) { return r->normal[a] == r->normal[b]; };
  if (!r->order.empty()) std::sort(r->order.begin() + 1, r->order.end(), by_path);
  r->order.erase(std::unique(r->order.begin(), r->order.end(), same_path), r->order.end());
}

// The deps of a TU the evaluation answered for: what it entered, by the
// walk's file numbers; a file it reached that the walk did not (a computed
// include's) is added. Sets whether `tu` is exact and its module lines.
std::vector<std::string> deps_from_evaluation(const closure::EvaluatedTu& evaluated,
                                              compiler::CompilerKind kind, const std::string& dir,
                                              ReachedFiles* r, TuScan* tu) {
  const preprocessor::Result& result = evaluated.result;
  tu->exact = result.exact();
  if (!tu->exact) tu->inexact = result.reason();
  if (tu->exact) {
    tu->modules_exact = true;
    std::optional<preprocessor::FileHandle> main;
    for (const preprocessor::FileEntry& f : result.files) {
      if (f.how == preprocessor::EntryKind::kMain) main = f.file;
    }
    for (const preprocessor::ModuleLine& m : result.modules) {
      if (m.file == main) tu->module_lines.push_back(m.line);
    }
  }
  for (uint32_t i : r->order) r->by_normal.emplace(r->normal[i], i);
  std::vector<uint32_t> entered;
  std::vector<std::string_view> entered_normal;
  // clang's -M also names each file a __has_include found.
  std::vector<preprocessor::FileHandle> listed = result.unique_files();
  if (kind == compiler::CompilerKind::kClang) {
    for (const preprocessor::IncludeQuestion& q : result.has_includes) {
      if (q.answer) listed.push_back(*q.answer);
    }
  }
  for (preprocessor::FileHandle h : listed) {
    if (h >= evaluated.handles.size()) continue;
    const std::string& path = evaluated.handles[h].path;
    std::string_view n = r->made.emplace_back(base::normal_path(path, dir));
    auto it = r->by_normal.find(n);
    if (it == r->by_normal.end()) {
      // Not in the walk's answer: reached only through a computed include.
      // Its stat is in the closure (the question was recorded).
      entered_normal.push_back(n);
      r->outside.emplace(n, evaluated.handles[h].stat.size);
    } else {
      entered.push_back(it->second);
    }
  }
  // Where the evaluation only met conditions it could not decide, it
  // took every branch of those (and of any condition their macros
  // reach): what it entered is a superset still, narrower than the
  // walk's, which takes every branch of every condition.
  bool every_branch_of_the_unknown = !result.exact();
  for (const preprocessor::InexactReason& why : result.inexact) {
    every_branch_of_the_unknown =
        every_branch_of_the_unknown && why.kind == preprocessor::Inexact::kUncertainCondition;
  }
  std::vector<uint32_t>& order = r->order;
  if (tu->exact || every_branch_of_the_unknown) {
    // The source first (the evaluation enters stdc-predef.h before it).
    std::vector<uint32_t> kept;
    if (!order.empty()) kept.push_back(order[0]);
    for (uint32_t i : entered) {
      if (i != order[0]) kept.push_back(i);
    }
    auto by_path = [r](uint32_t a, uint32_t b) { return r->normal[a] < r->normal[b]; };
    std::sort(kept.begin() + (kept.empty() ? 0 : 1), kept.end(), by_path);
    order = std::move(kept);
  }
  std::vector<std::string> dep_paths;
  dep_paths.reserve(order.size() + entered_normal.size());
  for (uint32_t i : order) dep_paths.emplace_back(r->normal[i]);
  for (std::string_view n : entered_normal) {
    if (std::find(dep_paths.begin(), dep_paths.end(), n) == dep_paths.end())
      dep_paths.emplace_back(n);
  }
  if (!dep_paths.empty()) std::sort(dep_paths.begin() + 1, dep_paths.end());
  return dep_paths;
}

// The sizes of the files this TU reads, for the scan's totals.
void note_dep_sizes(const TuScan& tu, ReachedFiles* r, FileSizes* sizes) {
  if (r->by_normal.empty()) {
    for (uint32_t i : r->order) r->by_normal.emplace(r->normal[i], i);
  }
  for (std::string_view d : tu.deps) {
    uint64_t size = 0;
    if (auto it = r->by_normal.find(d); it != r->by_normal.end()) {
      size = (*r->files)[it->second].stat.size;
    } else if (auto o = r->outside.find(d); o != r->outside.end()) {
      size = o->second;
    } else if (base::StatSignature sig; base::stat_file(std::string(d), &sig)) {
      size = sig.size;
    }
    note_size(sizes, d, size);
  }
}

// Stores the TU's scan memo and the record beside it under `key`; true when
// stored (a closure that cannot be memoized is not).
bool remember_scan(cache::Store* store, const TuScan& tu, const std::string& key,
                   const closure::Closure& closure, const compiler::SearchList& list,
                   closure::FileStates* files, const std::string& dir, ReachedFiles* r) {
  // A file a configure has just written is recorded by its content: the
  // next scan, right after, checks it so instead of scanning again.
  std::optional<std::string> closure_memo = closure::encode_closure_memo(
      closure, list, {}, files->shared(), dir, closure::YoungFiles::kCheckedByContent);
  if (!closure_memo) return false;
  const std::vector<closure::ClosureFile>& reached = *r->files;
  std::vector<ScanMemoDep> deps;
  deps.reserve(tu.deps.size());
  for (std::string_view d : tu.deps) {
    if (auto it = r->by_normal.find(d); it != r->by_normal.end()) {
      uint32_t i = it->second;
      deps.push_back(
          {r->normal[i], reached[i].stat.size, r->normal[i] == reached[i].path ? i + 1 : 0});
    } else {
      deps.push_back({d, r->outside[d], 0});
    }
  }
  store->put_memo(kScanMemoTable, key, encode_scan_memo(*closure_memo, deps));
  store->put_memo(kExactMemoTable, key, encode_exact(tu));
  return true;
}

}  // namespace

void note_size(FileSizes* sizes, std::string_view path, uint64_t size) {
  if (sizes->find(path) == sizes->end()) sizes->emplace(path, size);
}

void Scanner::share_files(std::shared_ptr<closure::ScanFileCache> walked) {
  walked->keep_lexed();
  share_.use_walked(walked.get());
  walked_ = std::move(walked);
}

std::optional<TuScan> Scanner::scan(const CompdbEntry& e, closure::FileStates* files,
                                    DirStatCache* dirs, FileSizes* sizes, Pass pass) {
  TuScan tu;
  tu.directory = e.directory;
  tu.source = e.file;
  compiler::CompileCommand cmd = compiler::parse_compile_command(e.argv);
  tu.output = e.output.empty() ? cmd.output : e.output;
  if (!scannable(cmd)) {
    tu.compiles = cmd.compiles;
    return skip(tu, not_scanned(cmd));
  }
  auto identity = identity_of(cmd.compiler, e.directory);
  if (!identity.ok()) return skip(tu, identity.message());
  if (identity->kind == compiler::CompilerKind::kUnknown) return skip(tu, "not gcc or clang");
  // A warm scan: nothing the last closure of this TU rests on has changed.
  cache::Hash128 tu_key;
  if (store_) tu_key = closure::translation_unit_key(*identity, cmd, e.directory);
  if (store_ && walked_ && files->shared() == walked_.get() && pass == Pass::kWalk) {
    std::optional<TuScan> remembered = answer_from_memo(tu, e, tu_key.hex(), files, dirs, sizes);
    if (remembered) return remembered;
  }
  auto list = search_list_of(*identity, cmd, e.directory, search_key(*identity, cmd, e.directory));
  if (!list.ok()) return skip(tu, list.message());
  if (pass == Pass::kWalk) {
    // Every branch, without evaluating: the shared graph, each file read
    // and lexed once. Errors are the second pass's to report.
    closure::expand_reachable(files, cmd, *list, identity->kind, e.directory);
    return std::nullopt;
  }
  // The walk counts every branch; the evaluation of the TU's conditionals
  // and computed includes, run inside it, tells which are taken.
  closure::CompilerPresenceEvaluator evaluator(store_, *identity, cmd, e.directory, kernel_);
  closure::EvaluatedTu evaluated;
  evaluator.evaluate_every_tu(&share_, &evaluated);
  auto closure =
      closure::compute_closure(files, cmd, *list, identity->kind, e.directory, &evaluator);
  if (!closure.ok()) return skip(tu, closure.message());
  ReachedFiles reached;
  number_reached(closure->files, e.directory, &reached);
  bool remember = true;
  std::vector<std::string> dep_paths;  // the answer, owned by tu once made
  if (evaluated.ran && !evaluated.result.needs_compiler()) {
    dep_paths = deps_from_evaluation(evaluated, identity->kind, e.directory, &reached, &tu);
  } else if (closure->forced_missing && closure->has_computed_include) {
    // Its files are not all known, and the compiler would fail on the
    // command as well: nothing to ask until the file is made.
    return skip(tu, "cannot tell its dependencies: " + closure->unsure);
  } else if (evaluated.ran || closure->has_computed_include) {
    // A computed include the evaluation could not expand: only the
    // compiler can say which files this TU reads.
    std::string why = evaluated.ran ? evaluated.result.reason() : evaluated.error;
    auto asked = compiler_deps(store_, *identity, cmd, e.directory, *closure, *list);
    if (!asked.ok()) {
      return skip(tu, "cannot tell its dependencies (" + why + "): " + asked.message());
    }
    dep_paths = std::move(asked.value());
    if (dep_paths.size() > 1) std::sort(dep_paths.begin() + 1, dep_paths.end());
    tu.exact = true;
    tu.from_compiler = true;
    tu.inexact = why;
    remember = false;
  } else {
    // The evaluation did not run (its error), or was not started because
    // the walk could not be trusted (its reason: a forced include that is
    // not there yet, say).
    const std::string& why = evaluated.error.empty() ? closure->unsure : evaluated.error;
    tu.inexact = why.empty() ? "not evaluated" : "not evaluated: " + why;
    dep_paths.reserve(reached.order.size());
    for (uint32_t i : reached.order) dep_paths.emplace_back(reached.normal[i]);
  }
  if (closure->assembler_include) {
    // What the preprocessor reads, as `gcc -M` lists it; the assembler
    // reads more.
    tu.exact = false;
    tu.from_compiler = false;
    tu.inexact = closure->unsure;
    remember = false;
  }
  own_deps(&tu, std::move(dep_paths));
  note_dep_sizes(tu, &reached, sizes);
  if (store_ && remember &&
      remember_scan(store_, tu, tu_key.hex(), *closure, *list, files, e.directory, &reached)) {
    tu.remembered = true;
  }
  return tu;
}

std::optional<TuScan> Scanner::answer_from_memo(const TuScan& tu, const CompdbEntry& e,
                                                const std::string& key, closure::FileStates* files,
                                                DirStatCache* dirs, FileSizes* sizes) {
  std::vector<std::string_view> deps;  // kept by files->shared(), which is walked_
  std::vector<uint64_t> dep_sizes;
  std::optional<std::string> exact = store_->get_memo(kExactMemoTable, key);
  bool held = false;
  TuScan remembered = tu;  // tu itself is left as it is when the memo does not hold
  // Checked where the store leaves it, not copied (a memo holds every
  // dependency's path).
  // A file recorded by its content (written just before the memo was).
  const closure::ContentLookup content = closure::content_lookup(files, e.directory);
  bool settled = false;
  if (exact && decode_exact(*exact, &remembered)) {
    store_->visit_memo(kScanMemoTable, key, [&](std::string_view bytes) {
      held = check_encoded_scan_memo(bytes, e.directory, files->shared(), dirs, &deps, &dep_sizes,
                                     &content, &settled);
    });
  }
  // A file the memo holds by its content has settled: scanned again, the
  // memo is made with its signature (and a group memo can be made of it).
  if (!held || settled) return std::nullopt;
  for (size_t i = 0; i < deps.size(); ++i) note_size(sizes, deps[i], dep_sizes[i]);
  remembered.deps = std::move(deps);
  remembered.deps_owner = walked_;
  remembered.from_memo = true;
  remembered.remembered = true;
  return remembered;
}

void Scanner::ask_ahead(const std::vector<CompdbEntry>& entries, const std::vector<size_t>& group,
                        const std::string& dir) {
  std::vector<compiler::CompileCommand> cmds;
  for (size_t i : group) cmds.push_back(compiler::parse_compile_command(entries[i].argv));
  ask_identities(cmds, dir);
  std::vector<std::function<void()>> tasks;
  // First the base questions (the search arguments without -I) the lists
  // can be derived from: commands of different targets usually share one.
  const bool derive = !compiler::search_path_environment_set();
  std::set<std::string> asked;
  for (const compiler::CompileCommand& cmd : cmds) {
    if (!scannable(cmd) || !derive) continue;
    base::Result<compiler::CompilerIdentity> id = identity_of(cmd.compiler, dir);
    compiler::IncludeSplit split;
    if (!id.ok() || id->kind == compiler::CompilerKind::kUnknown ||
        !compiler::split_include_dirs(cmd.search_args, &split) ||
        !compiler::include_dirs_distinct(split)) {
      continue;
    }
    std::string key = base_key(*id, cmd.language, split.rest, dir);
    if (!asked.insert(key).second) continue;
    tasks.push_back([this, id = *id, lang = cmd.language, rest = std::move(split.rest), &dir] {
      base_of(id, lang, rest, dir);
    });
  }
  run_all(&tasks);
  // Then every list: derived from its base where that is exact, else asked.
  asked.clear();
  for (const compiler::CompileCommand& cmd : cmds) {
    if (!scannable(cmd)) continue;
    base::Result<compiler::CompilerIdentity> id = identity_of(cmd.compiler, dir);
    if (!id.ok() || id->kind == compiler::CompilerKind::kUnknown) continue;
    std::string key = search_key(*id, cmd, dir);
    if (!asked.insert(key).second) continue;
    tasks.push_back([this, id = *id, &cmd, &dir, key] { search_list_of(id, cmd, dir, key); });
  }
  run_all(&tasks);
}

void Scanner::ask_identities(const std::vector<compiler::CompileCommand>& cmds,
                             const std::string& dir) {
  std::set<std::string> compilers;
  for (const compiler::CompileCommand& cmd : cmds) {
    if (scannable(cmd)) compilers.insert(cmd.compiler);
  }
  std::vector<std::function<void()>> tasks;
  for (const std::string& c : compilers) tasks.push_back([this, &c, &dir] { identity_of(c, dir); });
  run_all(&tasks);
}

std::optional<std::string> Scanner::group_key(const std::vector<CompdbEntry>& entries,
                                              const std::vector<size_t>& group,
                                              const std::string& dir,
                                              std::vector<std::string>* tu_keys) {
  std::vector<compiler::CompileCommand> cmds;
  cmds.reserve(group.size());
  for (size_t i : group) cmds.push_back(compiler::parse_compile_command(entries[i].argv));
  ask_identities(cmds, dir);
  cache::Hasher h;
  h.field(kGroupKeyFormat);
  h.field(dir);
  h.field(group.size());
  for (size_t k = 0; k < group.size(); ++k) {
    const CompdbEntry& e = entries[group[k]];
    const compiler::CompileCommand& cmd = cmds[k];
    if (!scannable(cmd)) return std::nullopt;
    base::Result<compiler::CompilerIdentity> id = identity_of(cmd.compiler, e.directory);
    if (!id.ok() || id->kind == compiler::CompilerKind::kUnknown) return std::nullopt;
    cache::Hash128 tu_key = closure::translation_unit_key(*id, cmd, e.directory);
    h.field(tu_key.lo);
    h.field(tu_key.hi);
    h.field(e.file);
    h.field(e.output.empty() ? cmd.output : e.output);
    tu_keys->push_back(tu_key.hex());
  }
  return h.digest().hex();
}

void Scanner::run_all(std::vector<std::function<void()>>* tasks) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t k; (k = next.fetch_add(1)) < tasks->size();) (*tasks)[k]();
  };
  base::run_on_threads(int(std::min(tasks->size(), kMaxQuestionsAtOnce)), work);
  tasks->clear();
}

std::optional<TuScan> Scanner::from_known(
    const CompdbEntry& e, std::string_view bytes,
    const std::shared_ptr<const std::vector<std::string>>& paths, FileSizes* sizes) {
  NumberedScan known;
  TuScan tu;
  if (!decode_numbered_scan(bytes, paths->size(), &known) || !decode_exact(known.exact, &tu)) {
    return std::nullopt;
  }
  tu.directory = e.directory;
  tu.source = e.file;
  tu.output = e.output.empty() ? compiler::parse_compile_command(e.argv).output : e.output;
  tu.deps.reserve(known.deps.size());
  for (uint32_t number : known.deps) tu.deps.push_back((*paths)[number]);
  tu.deps_owner = paths;
  for (size_t i = 0; i < tu.deps.size(); ++i) note_size(sizes, tu.deps[i], known.sizes[i]);
  tu.from_memo = true;
  tu.remembered = true;
  return tu;
}

TuScan Scanner::skip(TuScan tu, std::string why) {
  tu.skipped = why.empty() ? "unknown reason" : std::move(why);
  return tu;
}
base::Result<compiler::CompilerIdentity> Scanner::identity_of(const std::string& compiler,
                                                              const std::string& dir) {
  bool relative = compiler.find('/') != std::string::npos && compiler[0] != '/';
  std::string key = relative ? dir + '\0' + compiler : compiler;
  return identities_.get(key, [&] { return compiler::compiler_identity(store_, compiler); });
}
std::string Scanner::question_key(const compiler::CompilerIdentity& identity,
                                  compiler::Language language, const std::vector<std::string>& args,
                                  const std::string& cwd) {
  std::string key = identity.hash.hex();
  key.push_back('\0');
  key.append(cwd).push_back('\0');
  key.append(compiler::language_name(language)).push_back('\0');
  for (const std::string& a : args) key.append(a).push_back('\0');
  return key;
}
std::string Scanner::search_key(const compiler::CompilerIdentity& identity,
                                const compiler::CompileCommand& cmd, const std::string& cwd) {
  return question_key(identity, cmd.language, cmd.search_args, cwd);
}
base::Result<compiler::SearchList> Scanner::search_list_of(
    const compiler::CompilerIdentity& identity, const compiler::CompileCommand& cmd,
    const std::string& cwd, const std::string& key) {
  return search_lists_.get(key, [&] {
    compiler::BaseLookup bases = [&](const std::vector<std::string>& rest) {
      return base_of(identity, cmd.language, rest, cwd);
    };
    return compiler::search_list_for(store_, identity, cmd, cwd, &bases);
  });
}
std::string Scanner::base_key(const compiler::CompilerIdentity& identity,
                              compiler::Language language, const std::vector<std::string>& rest,
                              const std::string& cwd) {
  // No argument, no relative path: one answer for every directory.
  return question_key(identity, language, rest, rest.empty() ? std::string() : cwd);
}
base::Result<compiler::SearchList> Scanner::base_of(const compiler::CompilerIdentity& identity,
                                                    compiler::Language language,
                                                    const std::vector<std::string>& rest,
                                                    const std::string& cwd) {
  return bases_.get(base_key(identity, language, rest, cwd), [&] {
    return compiler::probed_base_search_list(store_, identity, language, rest, cwd);
  });
}

}  // namespace lexpack::scan
