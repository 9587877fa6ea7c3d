// Scanning every TU of a build: workers take entries from a shared counter,
// each with its own FileStates over one locked store and one scan-wide file
// cache (each header stat'ed and loaded once per scan), and keep the closure
// as absolute normalized paths so that builds and ninja's records compare.
#include "scan/build_scan.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>

#include <unistd.h>

#include "base/file_util.h"
#include "base/heap_pages.h"
#include "base/json_string.h"
#include "base/once_map.h"
#include "base/run_on_threads.h"
#include "base/view_map.h"
#include "cache/batching_store.h"
#include "cache/locked_store.h"
#include "closure/action_key.h"
#include "closure/closure_memo.h"
#include "closure/dependency_closure.h"
#include "closure/file_state.h"
#include "closure/presence_evaluation.h"
#include "closure/scan_file_cache.h"
#include "compiler/compile_command.h"
#include "compiler/derived_search_list.h"
#include "compiler/identify_compiler.h"
#include "compiler/search_list.h"
#include "lexer/kernel.h"
#include "scan/compiler_deps.h"
#include "scan/scan_memo.h"

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

// Appends `s` escaped for a Make rule; plain runs are copied whole.
void append_make_escaped(std::string* out, std::string_view s) {
  size_t run = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c != ' ' && c != '#' && c != '\\' && c != '$') continue;
    out->append(s.substr(run, i - run));
    out->push_back(c == '$' ? '$' : '\\');
    run = i;
  }
  out->append(s.substr(run));
}

// Why scannable() said no: a step that compiles nothing (a link) is no news.
std::string not_scanned(const compiler::CompileCommand& cmd) {
  if (!cmd.compiles) return "not a compile: " + cmd.uncacheable;
  std::string why = "cannot scan: " + cmd.uncacheable;
  if (!cmd.uncacheable_detail.empty()) why += " (" + cmd.uncacheable_detail + ")";
  return why;
}

// Path -> size of each file a scan reached, looked up by view.
using FileSizes = base::ViewMap<uint64_t>;

void note_size(FileSizes* sizes, std::string_view path, uint64_t size) {
  if (sizes->find(path) == sizes->end()) sizes->emplace(path, size);
}

class Scanner {
 public:
  Scanner(cache::Store* store, const lexer::Kernel* kernel) : store_(store), kernel_(kernel) {}

  // The files `walked` holds are read and lexed once for the walk and the
  // evaluation of every TU.
  void share_files(std::shared_ptr<closure::ScanFileCache> walked) {
    walked->keep_lexed();
    share_.use_walked(walked.get());
    walked_ = std::move(walked);
  }

  // Asks every compiler and every search list the entries will need, all at
  // once: each question runs the compiler (tens of ms), and asked on demand
  // they stall the walk at the first TU of every target.
  void ask_ahead(const std::vector<CompdbEntry>& entries, const std::vector<size_t>& group,
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

  // The identity of every compiler `cmds` name, asked at once.
  void ask_identities(const std::vector<compiler::CompileCommand>& cmds, const std::string& dir) {
    std::set<std::string> compilers;
    for (const compiler::CompileCommand& cmd : cmds) {
      if (scannable(cmd)) compilers.insert(cmd.compiler);
    }
    std::vector<std::function<void()>> tasks;
    for (const std::string& c : compilers)
      tasks.push_back([this, &c, &dir] { identity_of(c, dir); });
    run_all(&tasks);
  }

  // The key of the group memo of the entries `group` names (all of directory
  // `dir`): every entry's translation unit key (its compiler's identity, its
  // arguments, its directory), source and output, in order. Each entry's key
  // goes to `tu_keys`. nullopt when an entry has no memo of its own (not a
  // compile, or no known compiler).
  std::optional<std::string> group_key(const std::vector<CompdbEntry>& entries,
                                       const std::vector<size_t>& group, const std::string& dir,
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

  // Runs the tasks, up to kMaxQuestionsAtOnce at a time, this thread being
  // one of the runners: when the store already holds the answers (a warm
  // scan), one question takes no new thread.
  static void run_all(std::vector<std::function<void()>>* tasks) {
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t k; (k = next.fetch_add(1)) < tasks->size();) (*tasks)[k]();
    };
    base::run_on_threads(int(std::min(tasks->size(), kMaxQuestionsAtOnce)), work);
    tasks->clear();
  }

  // An entry as the server's answer gives it (nullopt: not an answer).
  // Its deps are views into `paths`, which it keeps.
  static std::optional<TuScan> from_known(
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

  // How much of a TU's scan one call does.
  enum class Pass {
    kWalk,      // its memo, else its walk only (nullopt: left for kEvaluate)
    kEvaluate,  // after kWalk: the rest (the walk again, over the built graph)
  };

  // Scans one entry; `sizes` collects path -> size of every file a memo
  // answered for (the files of a walk are the shared graph's nodes).
  std::optional<TuScan> scan(const CompdbEntry& e, closure::FileStates* files, DirStatCache* dirs,
                             FileSizes* sizes, Pass pass) {
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
      std::vector<std::string_view> deps;  // kept by files->shared(), which is walked_
      std::vector<uint64_t> dep_sizes;
      const std::string key = tu_key.hex();
      std::optional<std::string> exact = store_->get_memo(kExactMemoTable, key);
      bool held = false;
      TuScan remembered = tu;  // tu itself is left as it is when the memo does not hold
      // Checked where the store leaves it, not copied (a memo holds every
      // dependency's path).
      if (exact && decode_exact(*exact, &remembered)) {
        store_->visit_memo(kScanMemoTable, key, [&](std::string_view bytes) {
          held =
              check_encoded_scan_memo(bytes, e.directory, files->shared(), dirs, &deps, &dep_sizes);
        });
      }
      if (held) {
        for (size_t i = 0; i < deps.size(); ++i) note_size(sizes, deps[i], dep_sizes[i]);
        tu = std::move(remembered);
        tu.deps = std::move(deps);
        tu.deps_owner = walked_;
        tu.from_memo = true;
        tu.remembered = true;
        return tu;
      }
    }
    auto list =
        search_list_of(*identity, cmd, e.directory, search_key(*identity, cmd, e.directory));
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
    // The answer: each file the compiler reads, once, by its normal path (the
    // shared graph made it once per file); the source first, the rest sorted.
    const std::vector<closure::ClosureFile>& reached = closure->files;
    std::deque<std::string> made;  // normal paths the graph did not hold
    std::vector<std::string_view> normal(reached.size());
    std::vector<uint32_t> order;
    order.reserve(reached.size());
    for (uint32_t i = 0; i < reached.size(); ++i) {
      if (reached[i].presence_only) continue;
      normal[i] = reached[i].normal;
      if (normal[i].empty())
        normal[i] = made.emplace_back(base::normal_path(std::string(reached[i].path), e.directory));
      order.push_back(i);
    }
    auto by_path = [&](uint32_t a, uint32_t b) { return normal[a] < normal[b]; };
    auto same_path = [&](uint32_t a, uint32_t b) { return normal[a] == normal[b]; };
    if (!order.empty()) std::sort(order.begin() + 1, order.end(), by_path);
    order.erase(std::unique(order.begin(), order.end(), same_path), order.end());
    // What the evaluation entered, by the walk's file numbers; a file it
    // reached that the walk did not (a computed include's) is added.
    bool remember = true;
    std::vector<std::string> dep_paths;                        // the answer, owned by tu once made
    std::unordered_map<std::string_view, uint32_t> by_normal;  // walk file number
    std::unordered_map<std::string_view, uint64_t> outside;    // size of the others
    if (evaluated.ran && !evaluated.result.needs_compiler()) {
      const preprocessor::Result& r = evaluated.result;
      tu.exact = r.exact();
      if (!tu.exact) tu.inexact = r.reason();
      if (tu.exact) {
        tu.modules_exact = true;
        std::optional<preprocessor::FileHandle> main;
        for (const preprocessor::FileEntry& f : r.files) {
          if (f.how == preprocessor::EntryKind::kMain) main = f.file;
        }
        for (const preprocessor::ModuleLine& m : r.modules) {
          if (m.file == main) tu.module_lines.push_back(m.line);
        }
      }
      for (uint32_t i : order) by_normal.emplace(normal[i], i);
      std::vector<uint32_t> entered;
      std::vector<std::string_view> entered_normal;
      // clang's -M also names each file a __has_include found.
      std::vector<preprocessor::FileHandle> listed = r.unique_files();
      if (identity->kind == compiler::CompilerKind::kClang) {
        for (const preprocessor::IncludeQuestion& q : r.has_includes) {
          if (q.answer) listed.push_back(*q.answer);
        }
      }
      for (preprocessor::FileHandle h : listed) {
        if (h >= evaluated.handles.size()) continue;
        const std::string& path = evaluated.handles[h].path;
        std::string_view n = made.emplace_back(base::normal_path(path, e.directory));
        auto it = by_normal.find(n);
        if (it == by_normal.end()) {
          // Not in the walk's answer: reached only through a computed include.
          // Its stat is in the closure (the question was recorded).
          entered_normal.push_back(n);
          outside.emplace(n, evaluated.handles[h].stat.size);
        } else {
          entered.push_back(it->second);
        }
      }
      // Where the evaluation only met conditions it could not decide, it
      // took every branch of those (and of any condition their macros
      // reach): what it entered is a superset still, narrower than the
      // walk's, which takes every branch of every condition.
      bool every_branch_of_the_unknown = !r.exact();
      for (const preprocessor::InexactReason& why : r.inexact) {
        every_branch_of_the_unknown =
            every_branch_of_the_unknown && why.kind == preprocessor::Inexact::kUncertainCondition;
      }
      if (tu.exact || every_branch_of_the_unknown) {
        // The source first (the evaluation enters stdc-predef.h before it).
        std::vector<uint32_t> kept;
        if (!order.empty()) kept.push_back(order[0]);
        for (uint32_t i : entered) {
          if (i != order[0]) kept.push_back(i);
        }
        std::sort(kept.begin() + (kept.empty() ? 0 : 1), kept.end(), by_path);
        order = std::move(kept);
      }
      dep_paths.reserve(order.size() + entered_normal.size());
      for (uint32_t i : order) dep_paths.emplace_back(normal[i]);
      for (std::string_view n : entered_normal) {
        if (std::find(dep_paths.begin(), dep_paths.end(), n) == dep_paths.end())
          dep_paths.emplace_back(n);
      }
      if (!dep_paths.empty()) std::sort(dep_paths.begin() + 1, dep_paths.end());
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
      dep_paths.reserve(order.size());
      for (uint32_t i : order) dep_paths.emplace_back(normal[i]);
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
    // The sizes of the files this TU reads, for the scan's totals.
    if (by_normal.empty()) {
      for (uint32_t i : order) by_normal.emplace(normal[i], i);
    }
    for (std::string_view d : tu.deps) {
      uint64_t size = 0;
      if (auto it = by_normal.find(d); it != by_normal.end()) {
        size = reached[it->second].stat.size;
      } else if (auto o = outside.find(d); o != outside.end()) {
        size = o->second;
      } else if (base::StatSignature sig; base::stat_file(std::string(d), &sig)) {
        size = sig.size;
      }
      note_size(sizes, d, size);
    }
    if (store_ && remember) {
      std::optional<std::string> closure_memo =
          closure::encode_closure_memo(*closure, *list, {}, files->shared(), e.directory);
      if (closure_memo) {
        std::vector<ScanMemoDep> deps;
        deps.reserve(tu.deps.size());
        for (std::string_view d : tu.deps) {
          if (auto it = by_normal.find(d); it != by_normal.end()) {
            uint32_t i = it->second;
            deps.push_back(
                {normal[i], reached[i].stat.size, normal[i] == reached[i].path ? i + 1 : 0});
          } else {
            deps.push_back({d, outside[d], 0});
          }
        }
        store_->put_memo(kScanMemoTable, tu_key.hex(), encode_scan_memo(*closure_memo, deps));
        store_->put_memo(kExactMemoTable, tu_key.hex(), encode_exact(tu));
        tu.remembered = true;
      }
    }
    return tu;
  }

 private:
  static TuScan skip(TuScan tu, std::string why) {
    tu.skipped = why.empty() ? "unknown reason" : std::move(why);
    return tu;
  }
  // `compiler` as the command names it, from `dir` (the working directory):
  // a relative path with a slash names a different binary in each directory.
  base::Result<compiler::CompilerIdentity> identity_of(const std::string& compiler,
                                                       const std::string& dir) {
    bool relative = compiler.find('/') != std::string::npos && compiler[0] != '/';
    std::string key = relative ? dir + '\0' + compiler : compiler;
    return identities_.get(key, [&] { return compiler::compiler_identity(store_, compiler); });
  }
  // Each distinct search list is asked once per scan, even when several
  // threads need it at the same moment (each question runs the compiler).
  static std::string question_key(const compiler::CompilerIdentity& identity,
                                  compiler::Language language, const std::vector<std::string>& args,
                                  const std::string& cwd) {
    std::string key = identity.hash.hex();
    key.push_back('\0');
    key.append(cwd).push_back('\0');
    key.append(compiler::language_name(language)).push_back('\0');
    for (const std::string& a : args) key.append(a).push_back('\0');
    return key;
  }
  static std::string search_key(const compiler::CompilerIdentity& identity,
                                const compiler::CompileCommand& cmd, const std::string& cwd) {
    return question_key(identity, cmd.language, cmd.search_args, cwd);
  }
  base::Result<compiler::SearchList> search_list_of(const compiler::CompilerIdentity& identity,
                                                    const compiler::CompileCommand& cmd,
                                                    const std::string& cwd,
                                                    const std::string& key) {
    return search_lists_.get(key, [&] {
      compiler::BaseLookup bases = [&](const std::vector<std::string>& rest) {
        return base_of(identity, cmd.language, rest, cwd);
      };
      return compiler::search_list_for(store_, identity, cmd, cwd, &bases);
    });
  }
  // A base question's answer (derived_search_list.h), asked once per scan.
  static std::string base_key(const compiler::CompilerIdentity& identity,
                              compiler::Language language, const std::vector<std::string>& rest,
                              const std::string& cwd) {
    // No argument, no relative path: one answer for every directory.
    return question_key(identity, language, rest, rest.empty() ? std::string() : cwd);
  }
  base::Result<compiler::SearchList> base_of(const compiler::CompilerIdentity& identity,
                                             compiler::Language language,
                                             const std::vector<std::string>& rest,
                                             const std::string& cwd) {
    return bases_.get(base_key(identity, language, rest, cwd), [&] {
      return compiler::probed_base_search_list(store_, identity, language, rest, cwd);
    });
  }

  static constexpr size_t kMaxQuestionsAtOnce = 16;
  static constexpr std::string_view kGroupKeyFormat = "lexpack-scan-group-1";
  cache::Store* store_;
  const lexer::Kernel* kernel_;
  std::shared_ptr<const closure::ScanFileCache> walked_;  // share_files()
  closure::EvaluationShare share_;
  base::OnceMap<base::Result<compiler::CompilerIdentity>> identities_;
  base::OnceMap<base::Result<compiler::SearchList>> search_lists_;
  base::OnceMap<base::Result<compiler::SearchList>> bases_;
};

// Answers every entry of `group` from its group memo when nothing any of
// them rests on changed; false (the report untouched) otherwise.
bool answer_group(cache::Store* store, const std::string& key,
                  const std::vector<CompdbEntry>& entries, const std::vector<size_t>& group,
                  ScanReport* report, FileSizes* sizes) {
  KnownScans known;
  bool held = false;
  DirStatCache dirs;
  store->visit_memo(kGroupMemoTable, key, [&](std::string_view bytes) {
    held = check_encoded_group_memo(bytes, &dirs, &known);
  });
  if (!held || known.answers.size() != group.size()) return false;
  // Every TU's deps are views into this one table.
  auto paths = std::make_shared<const std::vector<std::string>>(std::move(known.paths));
  std::vector<TuScan> answered;
  answered.reserve(group.size());
  FileSizes group_sizes;
  for (size_t k = 0; k < group.size(); ++k) {
    std::optional<TuScan> tu =
        Scanner::from_known(entries[group[k]], known.answers[k], paths, &group_sizes);
    if (!tu) return false;
    answered.push_back(std::move(*tu));
  }
  for (size_t k = 0; k < group.size(); ++k) report->tus[group[k]] = std::move(answered[k]);
  sizes->merge(group_sizes);
  return true;
}

// Stores the group memo of `group` (the entries' order, each with its key in
// `tu_keys`) when every entry's memo holds this scan's answer. Each memo is
// read where the store holds it; the group memo keeps what it needs.
void remember_group(cache::Store* store, const std::string& key, const std::vector<size_t>& group,
                    const std::vector<std::string>& tu_keys, const ScanReport& report) {
  GroupMemoBuilder builder;
  for (size_t k = 0; k < group.size(); ++k) {
    const TuScan& tu = report.tus[group[k]];
    if (!tu.skipped.empty() || !tu.remembered) return;
    std::optional<std::string> exact = store->get_memo(kExactMemoTable, tu_keys[k]);
    bool added = false;
    if (exact) {
      store->visit_memo(kScanMemoTable, tu_keys[k],
                        [&](std::string_view memo) { added = builder.add(memo, *exact); });
    }
    if (!added) return;
  }
  store->put_memo(kGroupMemoTable, key, builder.encode());
}

}  // namespace

bool scannable(const compiler::CompileCommand& cmd) {
  static constexpr std::string_view kScannable[] = {
      "",
      "modules",
      "profile_or_coverage",
      "save_temps",
      "no_object_output",
      "dependencies_only",
      "preprocess_only",
  };
  if (!cmd.compiles || cmd.language == compiler::Language::kNone) return false;
  for (std::string_view r : kScannable) {
    if (cmd.uncacheable == r) return true;
  }
  return false;
}

void own_deps(TuScan* tu, std::vector<std::string> paths) {
  auto owned = std::make_shared<const std::vector<std::string>>(std::move(paths));
  tu->deps.assign(owned->begin(), owned->end());
  tu->deps_owner = std::move(owned);
}

std::vector<size_t> scan_order(const std::vector<CompdbEntry>& entries,
                               const std::vector<size_t>& group) {
  std::set<std::string> seen;
  std::vector<size_t> firsts, rest;
  for (size_t i : group) {
    const compiler::CompileCommand cmd = compiler::parse_compile_command(entries[i].argv);
    std::string key = cmd.compiler;
    key.push_back('\0');
    key.append(compiler::language_name(cmd.language));
    for (const std::string& a : closure::split_macro_arguments(cmd, false).ask)
      key.append(1, '\0').append(a);
    (seen.insert(std::move(key)).second ? firsts : rest).push_back(i);
  }
  firsts.insert(firsts.end(), rest.begin(), rest.end());
  return firsts;
}

ScanReport scan_build(const std::vector<CompdbEntry>& entries, cache::Store* store, int jobs,
                      ScanProgress* progress, const KnownScans* known) {
  auto start = std::chrono::steady_clock::now();
  ScanReport report;
  report.tus.resize(entries.size());
  std::string err;
  const lexer::Kernel* kernel = lexer::default_kernel(&err);
  // What the scan learns goes to the index in batches, not a transaction
  // per file and per TU.
  std::unique_ptr<cache::BatchingStore> batching;
  std::unique_ptr<cache::LockedStore> locked;
  if (store) {
    batching = std::make_unique<cache::BatchingStore>(store);
    locked = std::make_unique<cache::LockedStore>(batching.get());
  }
  Scanner scanner(locked.get(), kernel);
  auto graph = std::make_shared<closure::ScanFileCache>();
  closure::ScanFileCache& shared_files = *graph;
  scanner.share_files(graph);
  report.graph = graph;
  if (jobs <= 0) jobs = int(std::max(1u, std::thread::hardware_concurrency()));
  // Paths in a command are relative to its directory, and the resolver stats
  // them as given: scan one directory at a time from inside it.
  std::map<std::string, std::vector<size_t>> by_dir;
  for (size_t i = 0; i < entries.size(); ++i) by_dir[entries[i].directory].push_back(i);
  std::mutex merge_mu;
  FileSizes all_sizes;
  // The server's answers name their paths in one table, shared by their TUs.
  std::shared_ptr<const std::vector<std::string>> known_paths;
  if (known) known_paths = std::make_shared<const std::vector<std::string>>(known->paths);
  char old_cwd[4096];
  bool have_old_cwd = ::getcwd(old_cwd, sizeof old_cwd) != nullptr;
  // Adds the time since the last call to `phase`.
  auto mark = std::chrono::steady_clock::now();
  auto took = [&mark](uint64_t* phase) {
    auto now = std::chrono::steady_clock::now();
    *phase += uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(now - mark).count());
    mark = now;
  };
  ScanReport::Phases& phases = report.phases;
  for (auto& [dir, group] : by_dir) {
    took(&phases.group_memo_us);
    if (::chdir(dir.c_str()) != 0) {
      for (size_t i : group) report.tus[i].skipped = "cannot enter directory " + dir;
      continue;
    }
    // A warm scan of an unchanged group: one memo for all its TUs. No
    // worker runs yet, so the memo is read where the store holds it.
    std::vector<std::string> tu_keys;
    std::optional<std::string> group_key;
    if (locked && kernel) group_key = scanner.group_key(entries, group, dir, &tu_keys);
    if (group_key &&
        answer_group(batching.get(), *group_key, entries, group, &report, &all_sizes)) {
      report.from_group += group.size();
      if (progress) progress->tus_done += group.size();
      continue;
    }
    took(&phases.group_memo_us);
    if (kernel) scanner.ask_ahead(entries, group, dir);
    took(&phases.questions_us);
    const std::vector<size_t> in_order = group;
    group = scan_order(entries, group);
    // Two passes: first each TU's memo, else its walk over every branch
    // (the shared graph: each file read and lexed once); then the walked
    // TUs are evaluated. The first question a set of arguments asks the
    // compiler then names every builtin query written in any file a TU of
    // the scan reaches, instead of a TU that meets a new one asking again.
    std::vector<char> walked(entries.size(), 0);
    auto run_pass = [&](const std::vector<size_t>& order, Scanner::Pass pass) {
      std::atomic<size_t> next{0};
      auto work = [&] {
        base::use_huge_thread_heap_pages();
        closure::FileStates files(locked.get(), kernel);
        files.share(&shared_files);
        DirStatCache dirs;
        FileSizes sizes;
        uint64_t read_before = 0;
        for (size_t k; (k = next.fetch_add(1)) < order.size();) {
          size_t i = order[k];
          std::optional<TuScan> answered;
          if (pass == Scanner::Pass::kWalk && known && i < known->answers.size() &&
              !known->answers[i].empty()) {
            answered = Scanner::from_known(entries[i], known->answers[i], known_paths, &sizes);
          }
          if (answered) {
            report.tus[i] = std::move(*answered);
          } else if (!kernel) {
            report.tus[i].skipped = "lexer: " + err;
          } else if (std::optional<TuScan> tu =
                         scanner.scan(entries[i], &files, &dirs, &sizes, pass)) {
            report.tus[i] = std::move(*tu);
          } else {
            walked[i] = 1;  // its own slot: no other thread writes it
          }
          if (progress) {
            progress->files_read += files.files_read() - read_before;
            read_before = files.files_read();
            if (!walked[i] || pass == Scanner::Pass::kEvaluate) ++progress->tus_done;
          }
        }
        std::lock_guard lock(merge_mu);
        all_sizes.merge(sizes);
      };
      base::run_on_threads(std::min<int>(jobs, int(order.size())), work);
    };
    run_pass(group, Scanner::Pass::kWalk);
    took(&phases.walk_us);
    std::vector<size_t> rest;
    for (size_t i : group) {
      if (walked[i]) rest.push_back(i);
    }
    if (!rest.empty()) run_pass(rest, Scanner::Pass::kEvaluate);
    took(&phases.evaluate_us);
    if (group_key) remember_group(locked.get(), *group_key, in_order, tu_keys, report);
    took(&phases.remember_us);
  }
  took(&phases.group_memo_us);
  if (have_old_cwd && ::chdir(old_cwd) != 0) {
    // The scan is complete; only later relative paths would be affected.
  }
  // A failed write only costs the next scan some work; the report is whole.
  if (locked) locked->flush();
  took(&phases.write_us);
  for (const TuScan& tu : report.tus) {
    report.scanned += tu.skipped.empty();
    report.from_memo += tu.from_memo;
    if (tu.skipped.empty()) {
      report.exact += tu.exact;
      report.from_compiler += tu.from_compiler;
    }
  }
  report.unique_files = all_sizes.size();
  for (const auto& [path, size] : all_sizes) report.unique_bytes += size;
  report.elapsed_us = uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::steady_clock::now() - start)
                                   .count());
  return report;
}

void keep_until_exit(ScanReport report) {
  static auto* kept = new std::vector<ScanReport>();
  kept->push_back(std::move(report));
}

bool write_make(const ScanReport& report, const std::function<bool(std::string_view)>& sink) {
  // In pieces through one buffer: the rules of a large build are megabytes,
  // and one string of them would be written into fresh pages.
  constexpr size_t kPiece = 64 * 1024;
  std::string out;
  out.reserve(kPiece + 4096);
  auto pass_on = [&](size_t at_least) {
    if (out.size() < at_least) return true;
    bool ok = sink(out);
    out.clear();
    return ok;
  };
  for (const TuScan& tu : report.tus) {
    if (!tu.skipped.empty()) continue;
    append_make_escaped(&out, tu.output);
    out += ':';
    for (std::string_view d : tu.deps) {
      out += " \\\n  ";
      append_make_escaped(&out, d);
      if (!pass_on(kPiece)) return false;
    }
    out += '\n';
  }
  return pass_on(1);
}

std::string format_make(const ScanReport& report) {
  std::string out;
  write_make(report, [&](std::string_view piece) {
    out.append(piece);
    return true;
  });
  return out;
}

std::string format_json(const ScanReport& report) {
  std::string out = "{\"tus\": [";
  bool first = true;
  for (const TuScan& tu : report.tus) {
    if (!tu.skipped.empty()) continue;
    out += first ? "\n" : ",\n";
    first = false;
    out += "  {\"directory\": " + base::json_string(tu.directory) +
           ", \"source\": " + base::json_string(tu.source) +
           ", \"output\": " + base::json_string(tu.output) +
           ", \"exact\": " + (tu.exact ? "true" : "false");
    if (tu.from_compiler) out += ", \"from_compiler\": true";
    if (!tu.inexact.empty()) out += ", \"inexact\": " + base::json_string(tu.inexact);
    out += ", \"deps\": [";
    for (size_t i = 0; i < tu.deps.size(); ++i) {
      out += (i ? ", " : "") + base::json_string(tu.deps[i]);
    }
    out += "]}";
  }
  return out + "\n]}\n";
}

std::vector<CheckFinding> check_against_ninja(const ScanReport& report,
                                              const ninja_integration::NinjaDeps& deps,
                                              const std::string& build_dir, uint64_t* unrecorded) {
  std::vector<CheckFinding> findings;
  *unrecorded = 0;
  std::error_code ec;
  std::string base = std::filesystem::absolute(build_dir, ec).string();
  for (const TuScan& tu : report.tus) {
    if (!tu.skipped.empty()) continue;
    auto it = deps.find(tu.output);
    if (it == deps.end()) {
      ++*unrecorded;
      continue;
    }
    std::set<std::string> scanned(tu.deps.begin(), tu.deps.end());
    std::set<std::string> recorded;
    for (const std::string& d : it->second) recorded.insert(base::normal_path(d, base));
    CheckFinding f;
    f.output = tu.output;
    std::set_difference(recorded.begin(), recorded.end(), scanned.begin(), scanned.end(),
                        std::back_inserter(f.missed));
    std::set_difference(scanned.begin(), scanned.end(), recorded.begin(), recorded.end(),
                        std::back_inserter(f.extra));
    if (!f.missed.empty() || !f.extra.empty()) findings.push_back(std::move(f));
  }
  return findings;
}

}  // namespace lexpack::scan
