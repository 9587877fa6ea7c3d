// Breadth-first walk over the include graph. Each file is lexed at most once
// per path (and not at all when the file table already knows its content),
// and its includes are resolved once per search context: the nodes of the
// graph are shared by every TU of a scan, or private to one compile.
#include "closure/dependency_closure.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <string_view>

#include "base/file_util.h"
#include "base/flat_set.h"
#include "closure/absence.h"
#include "closure/include_resolver.h"
#include "closure/once_twins.h"
#include "closure/scan_file_cache.h"
#include "lexer/scanner.h"

namespace lexpack::closure {
namespace {

using Node = ScanFileCache::Node;

// Whether gcc reads its implicit stdc-predef.h: not without the standard
// include dirs (-nostdinc), for a freestanding compile (the last of
// -ffreestanding/-fno-hosted and -fhosted decides) or preprocessed input.
bool reads_stdc_predef(const compiler::CompileCommand& command) {
  bool hosted = true;
  for (const std::string& a : command.args) {
    if (a == "-nostdinc" || a == "-fpreprocessed") return false;
    if (a == "-ffreestanding" || a == "-fno-hosted") hosted = false;
    if (a == "-fhosted") hosted = true;
  }
  return hosted;
}

// Loads the node's file and resolves its directives. Only the walk that
// claimed the node calls this.
void expand(Node* n, FileStates* files, IncludeResolver* resolver, ScanFileCache* graph,
            const std::string& cwd) {
  const Resolution& where = n->where;
  base::Result<std::shared_ptr<const FileSummary>> loaded =
      files->load_shared(where.path, base::absolute_path(where.path, cwd), where.stat);
  if (!loaded.ok()) {
    n->status = loaded.status();
  } else {
    n->summary = std::move(loaded.value());
    if (graph == files->shared()) n->normal = base::normal_path(where.path, cwd);
    std::string dir(base::dir_of(where.path));
    for (const IncludeDirective& d : n->summary->includes) {
      using K = lexer::DirectiveKind;
      bool presence = d.kind == K::kHasInclude || d.kind == K::kHasIncludeNext;
      bool next = d.kind == K::kIncludeNext || d.kind == K::kHasIncludeNext;
      if (d.computed) {
        n->computed = true;
        n->computed_presence = n->computed_presence || presence;
        continue;
      }
      std::shared_ptr<const ScanFileCache::Answer> a =
          resolver->answer(d.name, d.angled, next, dir, where.chain_index);
      Node* child = nullptr;
      if (a->resolution.found) {
        child = a->node.load(std::memory_order_acquire);
        if (!child) {
          child = graph->node(resolver->context(), a->resolution);
          a->node.store(child, std::memory_order_release);
        }
      }
      const bool failed = !a->failed.empty();
      n->edges.push_back({std::move(a), child, presence, failed});
    }
  }
  {
    std::lock_guard lock(n->mu);
    n->state.store(Node::kExpanded, std::memory_order_release);
  }
  n->expanded.notify_all();
}

// A -D value can alias __has_include as a #define can (`-DHAS=__has_include`):
// its text is lexed as the #define it stands for.
std::string has_include_in_macro_args(const compiler::CompileCommand& command) {
  for (const compiler::CompileCommand::MacroArg& m : command.macros) {
    if (m.undef) continue;
    std::string line = "#define " + m.text + "\n";
    if (size_t eq = m.text.find('='); eq != std::string::npos) line[8 + eq] = ' ';
    const lexer::ScanResult r = lexer::scan(line, lexer::scalar_kernel());
    for (const lexer::Directive& d : r.directives) {
      using K = lexer::DirectiveKind;
      if (d.kind == K::kHasInclude || d.kind == K::kHasIncludeNext) return "-D" + m.text;
    }
  }
  return "";
}

// gcc takes a precompiled header, NAME.gch, in place of NAME wherever it
// looks for a file while nothing but the source and its implicit
// stdc-predef.h has been opened: the source itself, each place it looks for
// stdc-predef.h, and the first -imacros file, else the first -include file
// (gcc reads every -imacros before any -include), else the source's first
// include. What a .gch holds is not what its header says (a stale one is
// used as it is), so each one there joins the closure by its bytes (an
// opaque file); the places where none is join the failed probes, so that one
// appearing there is seen. Every forced include counts, and as which include
// comes first depends on the conditions, every include the source makes.
// clang's driver turns the first -include NAME into -include-pch when
// NAME.pch or NAME.gch is there, relative to the working directory. None of
// this while a precompiled header is being made: the compiler takes none.
//
// Here: the precompiled headers the compiler may take instead of the files
// `first_searches` found (or failed to find). Each one there joins the
// closure as an opaque file, each place with none goes to *absent; the paths
// the closure's files name live in *present.
void add_precompiled_headers(FileStates* files, const compiler::CompileCommand& command,
                             compiler::CompilerKind kind, const std::string& cwd,
                             const std::vector<const ScanFileCache::Answer*>& first_searches,
                             std::vector<std::string>* absent, std::vector<std::string>* present,
                             Closure* closure) {
  std::vector<std::string> places;
  if (kind == compiler::CompilerKind::kGcc) {
    places.push_back(command.source + ".gch");
    for (const ScanFileCache::Answer* a : first_searches) {
      for (const std::string& f : a->failed) places.push_back(f + ".gch");
      if (a->resolution.found) places.push_back(a->resolution.path + ".gch");
    }
  } else if (kind == compiler::CompilerKind::kClang) {
    // Every one: forced_includes holds the -imacros files too.
    for (const std::string& name : command.forced_includes) {
      places.push_back(name + ".pch");
      places.push_back(name + ".gch");
    }
  }
  // Asked once per shared walk (the server's), as the include candidates are.
  ScanFileCache* shared = files->shared();
  std::set<std::string_view> seen;
  for (const std::string& p : places) {
    if (!seen.insert(p).second) continue;
    const bool none =
        shared ? shared->no_entry_once(base::absolute_path(p, cwd)) : no_entry(p, cwd);
    (none ? absent : present)->push_back(p);
  }
  for (const std::string& p : *present) {
    const std::string absolute = base::absolute_path(p, cwd);
    ClosureFile f{p, {}, {}, false, {}, true};
    if (!base::stat_file(absolute, &f.stat)) {
      // A directory of them, or one that went away: not modelled.
      closure->unsure = "a precompiled header that is not one file: " + p;
      return;
    }
    base::Result<cache::Hash128> content = files->content_hash(absolute, absolute, f.stat);
    if (!content.ok()) {
      closure->unsure = "a precompiled header that cannot be read: " + content.message();
      return;
    }
    f.content = content.value();
    f.made_by = files->pch_maker(f.content);
    closure->files.push_back(f);
  }
}

bool claim(Node* n) {
  int expected = Node::kNew;
  return n->state.compare_exchange_strong(expected, Node::kClaimed, std::memory_order_acq_rel);
}

// One TU's walk over the include graph, in the steps compute_closure takes:
// the roots, the walk, the evaluation of what the walk cannot see, what
// makes the closure unsure, the precompiled headers and the failed probes.
class ClosureWalk {
 public:
  ClosureWalk(FileStates* files, const compiler::CompileCommand& command,
              const compiler::SearchList& list, compiler::CompilerKind kind, const std::string& cwd)
      : files_(files),
        command_(command),
        kind_(kind),
        cwd_(cwd),
        storage_(std::make_shared<Storage>()),
        graph_(files->shared()),
        // Without a scan the resolver keeps its answers and stat results to itself.
        resolver_(list, kind, files->shared(), cwd) {
    if (!graph_) graph_ = (storage_->own_graph = std::make_unique<ScanFileCache>()).get();
    closure_.storage = storage_;
    resolver_.number_candidates_in(graph_);
  }

  // Queues the source, then the files the compiler reads before it: gcc's
  // implicit stdc-predef.h, then -imacros/-include files, searched first in
  // the working directory. Fails when the source cannot be stat'ed.
  base::Status start() {
    base::StatSignature source_sig;
    if (!base::stat_file(command_.source, &source_sig)) {
      return base::Status::error("cannot stat source " + command_.source);
    }
    const std::string& context = resolver_.context();
    enqueue(graph_->root_node(context,
                              Resolution{true, command_.source, kFoundOutsideChain, source_sig}));
    if (std::string arg = has_include_in_macro_args(command_); !arg.empty()) {
      presence_reason_ = "__has_include through a macro of the command: " + arg;
    }
    if (kind_ == compiler::CompilerKind::kGcc && reads_stdc_predef(command_)) {
      const bool found = root("stdc-predef.h", true);
      first_searches_.push_back(storage_->roots.back().get());
      if (found) forced_.push_back(storage_->roots.back()->resolution);
    }
    for (const std::string& name : command_.forced_includes) {
      const bool found = root(name, false);
      first_searches_.push_back(storage_->roots.back().get());
      if (!found) {
        closure_.unsure = "forced include not found: " + name;
        closure_.forced_missing = true;
      } else {
        forced_.push_back(storage_->roots.back()->resolution);
      }
    }
    root_answers_ = answers_.size();
    return base::Status();
  }

  // Walks the queue from `next` on (again after an evaluation queued the
  // files computed includes name).
  base::Status walk(size_t next) {
    for (; next < queue_.size(); ++next) {
      Node* n = queue_[next];
      if (n->state.load(std::memory_order_acquire) != Node::kExpanded) {
        if (claim(n)) {
          expand(n, files_, &resolver_, graph_, cwd_);
        } else {
          // Another TU's walk is expanding it: expand the nodes queued after it
          // meanwhile (this walk needs them too; the order of expansion changes
          // nothing), then wait.
          for (size_t k = next + 1;
               k < queue_.size() && n->state.load(std::memory_order_acquire) != Node::kExpanded;
               ++k) {
            if (claim(queue_[k])) expand(queue_[k], files_, &resolver_, graph_, cwd_);
          }
          std::unique_lock lock(n->mu);
          n->expanded.wait(
              lock, [n] { return n->state.load(std::memory_order_acquire) == Node::kExpanded; });
        }
      }
      if (!n->status.ok()) return n->status;
      const std::string& path = n->where.path;
      const FileSummary& summary = *n->summary;
      if (n->path_id >= position_.size()) position_.resize(n->path_id + 1, -1);
      ClosureFile& file = closure_.files[size_t(position_[n->path_id])];
      file.content = summary.content;
      file.normal = n->normal;
      file.absolute_includes = summary.absolute_include;
      if (position_[n->path_id] == 0) closure_.source_preprocessing = summary.preprocessing;
      closure_.uses_date = closure_.uses_date || summary.uses_date;
      closure_.uses_time = closure_.uses_time || summary.uses_time;
      if (summary.assembler_reads && assembler_file_.empty()) assembler_file_ = path;
      if (summary.pragma_once) once_files_.push_back(size_t(position_[n->path_id]));
      if (n->computed_presence && presence_reason_.empty()) {
        presence_reason_ = "computed __has_include in " + path;
      }
      met_computed_ = met_computed_ || n->computed;
      for (const Node::Edge& edge : n->edges) {
        if (edge.failed) answers_.push_back(edge.answer.get());
        if (!edge.node) continue;
        if (!edge.presence) {
          enqueue(edge.node);
          continue;
        }
        add_presence_only(edge.node);
      }
    }
    return base::Status();
  }

  // A computed include is evaluated too: when the evaluation is exact, the
  // files it names join the walk (a hit then checks them through the memo);
  // else the compiler's depfile tells them (the self-check's payload).
  base::Status evaluate(PresenceEvaluator* presence) {
    const bool evaluate_anyway =
        presence && (presence->every_tu() || met_computed_) && closure_.unsure.empty();
    const bool needed = !presence_reason_.empty() && closure_.unsure.empty();
    if (!needed && !evaluate_anyway) return base::Status();
    std::string why = "evaluation not available";
    if (presence) {
      // Every question the evaluation asks is recorded like a direct
      // __has_include: its failed candidates, and the file it found.
      const PresenceEvaluator::Ask ask = [&](std::string_view name, bool angled, bool next,
                                             const Resolution& includer) -> const Resolution& {
        std::shared_ptr<const ScanFileCache::Answer> a =
            resolver_.answer(name, angled, next, base::dir_of(includer.path), includer.chain_index);
        if (!a->failed.empty()) {
          answers_.push_back(a.get());
          asked_answers_.push_back(a.get());
        }
        if (includer.path == command_.source && command_.forced_includes.empty()) {
          source_searches_.push_back(a.get());
        }
        storage_->roots.push_back(a);
        if (a->resolution.found) {
          asked_found_.push_back({a->resolution.stat.dev, a->resolution.stat.ino});
          // The node of an answer is the same for every asker (see expand).
          Node* c = a->node.load(std::memory_order_acquire);
          if (!c) {
            c = graph_->node(resolver_.context(), a->resolution);
            a->node.store(c, std::memory_order_release);
          }
          add_presence_only(c);
        }
        return a->resolution;
      };
      why = presence->evaluate(queue_[0]->where, forced_, ask);
      if (why.empty()) closure_.macro_reads = presence->macro_reads();
      closure_.presence_evaluated = why.empty() && !presence_reason_.empty();
      if (why.empty() && met_computed_) {
        // Each file a computed include named is a file of the closure, walked
        // like a direct include's. Computed includes the walk meets in them
        // were expanded by the same evaluation (it covers the whole TU).
        const size_t walked_before = queue_.size();
        for (const Resolution& r : presence->computed_includes()) {
          enqueue(graph_->node(resolver_.context(), r));
        }
        if (base::Status walked_all = walk(walked_before); !walked_all.ok()) return walked_all;
        closure_.computed_evaluated = true;
      }
      if (why.empty()) keep_evaluated(presence->entered_files());
    }
    if (!why.empty() && !presence_reason_.empty()) {
      closure_.unsure = presence_reason_ + ": " + why;
    }
    return base::Status();
  }

  // After an exact evaluation of the whole TU, the closure is what the
  // compiler reads: the files the TU entered, those its __has_include
  // questions found (presence only), and the failed candidates of the
  // searches it made and of those before the source. The walk followed
  // every #include of every branch: a file only untaken branches name is
  // no input of the compile. All is kept when the evaluator names no file,
  // or one the walk did not read.
  void keep_evaluated(const std::vector<base::StatSignature>& entered) {
    if (entered.empty()) return;
    using Id = std::pair<uint64_t, uint64_t>;
    std::vector<Id> read;
    read.reserve(entered.size());
    for (const base::StatSignature& s : entered) read.push_back({s.dev, s.ino});
    std::sort(read.begin(), read.end());
    std::sort(asked_found_.begin(), asked_found_.end());
    auto in = [](const std::vector<Id>& ids, const Id& id) {
      return std::binary_search(ids.begin(), ids.end(), id);
    };
    std::vector<ClosureFile> kept;
    std::vector<int32_t> moved(closure_.files.size(), -1);
    for (size_t i = 0; i < closure_.files.size(); ++i) {
      const ClosureFile& f = closure_.files[i];
      const Id id{f.stat.dev, f.stat.ino};
      const bool entered_it = i == 0 || in(read, id);
      if (!entered_it && !in(asked_found_, id)) continue;
      if (entered_it && f.presence_only) return;  // never walked: its content is not known
      moved[i] = int32_t(kept.size());
      kept.push_back(f);
      kept.back().presence_only = !entered_it;
    }
    closure_.files = std::move(kept);
    for (int32_t& p : position_) p = p >= 0 ? moved[size_t(p)] : p;
    std::vector<size_t> once;
    for (size_t i : once_files_) {
      if (moved[i] >= 0) once.push_back(size_t(moved[i]));
    }
    once_files_ = std::move(once);
    answers_.resize(root_answers_);
    answers_.insert(answers_.end(), asked_answers_.begin(), asked_answers_.end());
  }

  // What the walk met that the key cannot model: computed includes left
  // unevaluated, #pragma once twins gcc may merge, the assembler's own reads.
  void judge() {
    closure_.has_computed_include = met_computed_ && !closure_.computed_evaluated;
    closure_.once_twins = once_twin_partition(once_files_, &closure_);
    // The evaluation takes #pragma once by inode, as clang does; gcc merges
    // equal files of equal mtime too, and may then take other branches.
    if (!closure_.once_twins.empty() && kind_ == compiler::CompilerKind::kGcc &&
        (closure_.presence_evaluated || closure_.computed_evaluated) && closure_.unsure.empty() &&
        once_twins_merged_by_time(closure_)) {
      closure_.unsure =
          "identical #pragma once files that gcc takes as one, and conditionals "
          "evaluated as if they were two";
    }
    // The assembler reads files the preprocessor never sees: gas's .include
    // and .incbin, in assembly or in inline asm of C and C++, written in the
    // source or in a file it includes. Neither the walk nor the compiler's
    // depfile names them, so such a compile has no key.
    if (!assembler_file_.empty() && closure_.unsure.empty()) {
      closure_.unsure = "the assembler's .include or .incbin in " + assembler_file_ +
                        " reads files the preprocessor does not see";
      closure_.assembler_include = true;
    }
  }

  // The precompiled headers the compiler may take (add_precompiled_headers).
  void add_precompiled() {
    if (!closure_.unsure.empty() || command_.makes_pch) return;
    if (command_.forced_includes.empty()) {
      for (const Node::Edge& edge : queue_[0]->edges) first_searches_.push_back(edge.answer.get());
      first_searches_.insert(first_searches_.end(), source_searches_.begin(),
                             source_searches_.end());
    }
    add_precompiled_headers(files_, command_, kind_, cwd_, first_searches_, &storage_->pch_probes,
                            &storage_->pch_files, &closure_);
  }

  // Many files ask the same questions: each answer's failed candidates are
  // taken once, in the order the walk met them (the same on every run), then
  // the places where no precompiled header is. The candidates under a
  // missing directory are named once, by its shortest missing prefix
  // (ScanFileCache::absent_root).
  base::Status add_failed_probes() {
    base::FlatSet<const ScanFileCache::Answer*> seen_answers(answers_.size());
    std::vector<uint8_t> seen;  // by candidate id
    // absent_root's answer by directory number: 0 not asked yet, 1 none.
    std::vector<uintptr_t> roots;
    auto add = [&](std::string_view path, ScanFileCache::CandidateIds id) {
      if (id.dir >= roots.size()) roots.resize(id.dir + 1 + roots.size() / 2, 0);
      uintptr_t& root = roots[id.dir];
      if (root == 0) {
        const ScanFileCache::AbsentRoot* r = graph_->absent_root(id.dir, base::dir_of(path));
        root = r ? reinterpret_cast<uintptr_t>(r) : 1;
      }
      if (root != 1) {
        const auto* r = reinterpret_cast<const ScanFileCache::AbsentRoot*>(root);
        path = r->path;
        id = r->ids;
      }
      if (id.candidate >= seen.size()) seen.resize(id.candidate + 1 + seen.size() / 2, 0);
      if (seen[id.candidate]) return;
      seen[id.candidate] = 1;
      closure_.failed_probes.push_back(path);
      closure_.failed_probe_dirs.push_back(id.dir);
      closure_.failed_probe_ids.push_back(id.candidate);
    };
    for (const ScanFileCache::Answer* a : answers_) {
      if (!seen_answers.insert(a)) continue;
      if (a->failed_ids.size() != a->failed.size()) {
        return base::Status::error("internal: failed candidates without numbers");
      }
      for (size_t i = 0; i < a->failed.size(); ++i) {
        add(a->failed[i], {a->failed_ids[i], a->failed_dir_ids[i]});
      }
    }
    for (const std::string& p : storage_->pch_probes) add(p, graph_->candidate_ids(p));
    return base::Status();
  }

  Closure take() { return std::move(closure_); }

 private:
  // What the closure's failed candidates point into: the answers of the
  // roots, and for one compile (no scan) its own graph, whose nodes hold the
  // other answers. A scan's graph is shared between its TUs and outlives them.
  struct Storage {
    std::unique_ptr<ScanFileCache> own_graph;
    std::vector<std::shared_ptr<const ScanFileCache::Answer>> roots;
    std::vector<std::string> pch_probes;  // precompiled headers looked for, none there
    std::vector<std::string> pch_files;   // and those there
  };

  void enqueue(Node* n) {
    if (n->path_id >= position_.size()) position_.resize(n->path_id + 1 + position_.size() / 2, -1);
    int32_t& pos = position_[n->path_id];
    if (pos >= 0) {
      closure_.files[size_t(pos)].presence_only = false;  // filled in when its turn comes
    } else {
      pos = int32_t(closure_.files.size());
      closure_.files.push_back({n->where.path, n->where.stat, {}, false, {}});
    }
    if (walked_.insert(n)) queue_.push_back(n);
  }

  // A file a __has_include found: in the closure (unless it is already),
  // not walked.
  void add_presence_only(const Node* c) {
    if (c->path_id >= position_.size()) position_.resize(c->path_id + 1 + position_.size() / 2, -1);
    if (position_[c->path_id] < 0) {
      position_[c->path_id] = int32_t(closure_.files.size());
      closure_.files.push_back({c->where.path, c->where.stat, {}, true, {}});
    }
  }

  // A file the compiler reads before the source, queued when found.
  bool root(std::string_view name, bool angled) {
    std::shared_ptr<const ScanFileCache::Answer> a =
        resolver_.answer(name, angled, false, "", kFoundOutsideChain);
    if (!a->failed.empty()) answers_.push_back(a.get());
    storage_->roots.push_back(a);
    if (a->resolution.found) enqueue(graph_->node(resolver_.context(), a->resolution));
    return a->resolution.found;
  }

  FileStates* files_;
  const compiler::CompileCommand& command_;
  compiler::CompilerKind kind_;
  const std::string& cwd_;
  std::shared_ptr<Storage> storage_;
  Closure closure_;
  ScanFileCache* graph_;
  IncludeResolver resolver_;
  // files[] position of each path id reached, -1 for none yet: one entry per
  // path. But each node is walked: the same path found at another place in
  // the search chain has other #include_next answers.
  std::vector<int32_t> position_;
  std::vector<Node*> queue_;
  base::FlatSet<const Node*> walked_{256};
  // Every answer the walk used that has failed candidates (nodes and
  // `storage_` keep them alive).
  std::vector<const ScanFileCache::Answer*> answers_;
  size_t root_answers_ = 0;  // those of the files read before the source, first in answers_
  // What the evaluation asked: the answers with failed candidates, and the
  // files found (device and inode).
  std::vector<const ScanFileCache::Answer*> asked_answers_;
  std::vector<std::pair<uint64_t, uint64_t>> asked_found_;
  std::string presence_reason_;     // why a macro-reached __has_include needs evaluating
  std::vector<Resolution> forced_;  // as the compiler reads them, stdc-predef.h first
  // The searches gcc makes while it may still take a precompiled header.
  std::vector<const ScanFileCache::Answer*> first_searches_;
  bool met_computed_ = false;       // a computed include the walk did not follow
  std::string assembler_file_;      // the first file naming gas's .include or .incbin
  std::vector<size_t> once_files_;  // closure files holding #pragma once
  // What the source's computed includes and macro-reached questions found.
  std::vector<const ScanFileCache::Answer*> source_searches_;
};

}  // namespace

base::Result<Closure> compute_closure(FileStates* files, const compiler::CompileCommand& command,
                                      const compiler::SearchList& list, compiler::CompilerKind kind,
                                      const std::string& cwd, PresenceEvaluator* presence) {
  ClosureWalk walk(files, command, list, kind, cwd);
  if (base::Status started = walk.start(); !started.ok()) return started;
  if (base::Status walked_all = walk.walk(0); !walked_all.ok()) return walked_all;
  if (base::Status evaluated = walk.evaluate(presence); !evaluated.ok()) return evaluated;
  walk.judge();
  walk.add_precompiled();
  if (base::Status probes = walk.add_failed_probes(); !probes.ok()) return probes;
  return walk.take();
}

void expand_reachable(FileStates* files, const compiler::CompileCommand& command,
                      const compiler::SearchList& list, compiler::CompilerKind kind,
                      const std::string& cwd) {
  ScanFileCache* graph = files->shared();
  if (!graph) return;
  IncludeResolver resolver(list, kind, graph, cwd);
  resolver.number_candidates_in(graph);
  const std::string& context = resolver.context();
  std::vector<Node*> queue;
  auto reach = [&](Node* n) {
    if (!n->reached.exchange(true, std::memory_order_acq_rel)) queue.push_back(n);
  };
  base::StatSignature source_sig;
  if (!base::stat_file(command.source, &source_sig)) return;
  reach(
      graph->root_node(context, Resolution{true, command.source, kFoundOutsideChain, source_sig}));
  auto root = [&](std::string_view name, bool angled) {
    std::shared_ptr<const ScanFileCache::Answer> a =
        resolver.answer(name, angled, false, "", kFoundOutsideChain);
    if (a->resolution.found) reach(graph->node(context, a->resolution));
  };
  if (kind == compiler::CompilerKind::kGcc && reads_stdc_predef(command))
    root("stdc-predef.h", true);
  for (const std::string& name : command.forced_includes) root(name, false);
  // Each node is expanded by the call that reached it first, which then
  // reaches its children: when every call has returned, every node any of
  // them reached is expanded.
  for (size_t next = 0; next < queue.size(); ++next) {
    Node* n = queue[next];
    if (claim(n)) {
      expand(n, files, &resolver, graph, cwd);
    } else if (n->state.load(std::memory_order_acquire) != Node::kExpanded) {
      std::unique_lock lock(n->mu);
      n->expanded.wait(lock,
                       [n] { return n->state.load(std::memory_order_acquire) == Node::kExpanded; });
    }
    if (!n->status.ok()) continue;
    for (const Node::Edge& edge : n->edges) {
      if (edge.node && !edge.presence) reach(edge.node);
    }
  }
}

}  // namespace lexpack::closure
