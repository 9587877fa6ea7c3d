// Breadth-first walk over the include graph. Each file is lexed at most once
// per path (and not at all when the file table already knows its content),
// and its includes are resolved once per search context: the nodes of the
// graph are shared by every TU of a scan, or private to one compile.
#include "closure/dependency_closure.h"

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
  std::set<std::string_view> seen;
  for (const std::string& p : places) {
    if (seen.insert(p).second) (no_entry(p, cwd) ? absent : present)->push_back(p);
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
    closure->files.push_back(f);
  }
}

bool claim(Node* n) {
  int expected = Node::kNew;
  return n->state.compare_exchange_strong(expected, Node::kClaimed, std::memory_order_acq_rel);
}

}  // namespace

base::Result<Closure> compute_closure(FileStates* files, const compiler::CompileCommand& command,
                                      const compiler::SearchList& list, compiler::CompilerKind kind,
                                      const std::string& cwd, PresenceEvaluator* presence) {
  // What the closure's failed candidates point into: the answers of the
  // roots, and for one compile (no scan) its own graph, whose nodes hold the
  // other answers. A scan's graph is shared between its TUs and outlives them.
  struct Storage {
    std::unique_ptr<ScanFileCache> own_graph;
    std::vector<std::shared_ptr<const ScanFileCache::Answer>> roots;
    std::vector<std::string> pch_probes;  // precompiled headers looked for, none there
    std::vector<std::string> pch_files;   // and those there
  };
  auto storage = std::make_shared<Storage>();
  Closure closure;
  ScanFileCache* shared = files->shared();
  ScanFileCache* graph = shared;
  if (!graph) graph = (storage->own_graph = std::make_unique<ScanFileCache>()).get();
  closure.storage = storage;
  // Without a scan the resolver keeps its answers and stat results to itself.
  IncludeResolver resolver(list, kind, shared, cwd);
  resolver.number_candidates_in(graph);
  // files[] position of each path id reached, -1 for none yet: one entry per
  // path. But each node is walked: the same path found at another place in
  // the search chain has other #include_next answers.
  std::vector<int32_t> position;
  std::vector<Node*> queue;
  base::FlatSet<const Node*> walked(256);
  // Every answer the walk used that has failed candidates (nodes and
  // `storage` keep them alive).
  std::vector<const ScanFileCache::Answer*> answers;

  auto enqueue = [&](Node* n) {
    if (n->path_id >= position.size()) position.resize(n->path_id + 1 + position.size() / 2, -1);
    int32_t& pos = position[n->path_id];
    if (pos >= 0) {
      closure.files[size_t(pos)].presence_only = false;  // filled in when its turn comes
    } else {
      pos = int32_t(closure.files.size());
      closure.files.push_back({n->where.path, n->where.stat, {}, false, {}});
    }
    if (walked.insert(n)) queue.push_back(n);
  };

  base::StatSignature source_sig;
  if (!base::stat_file(command.source, &source_sig)) {
    return base::Status::error("cannot stat source " + command.source);
  }
  const std::string& context = resolver.context();
  enqueue(graph->node(context, Resolution{true, command.source, kFoundOutsideChain, source_sig}));

  // Files the compiler reads before the source: gcc's implicit stdc-predef.h,
  // then -imacros/-include files, searched first in the working directory.
  auto root = [&](std::string_view name, bool angled) {
    std::shared_ptr<const ScanFileCache::Answer> a =
        resolver.answer(name, angled, false, "", kFoundOutsideChain);
    if (!a->failed.empty()) answers.push_back(a.get());
    storage->roots.push_back(a);
    if (a->resolution.found) enqueue(graph->node(context, a->resolution));
    return a->resolution.found;
  };
  std::string presence_reason;  // why a macro-reached __has_include needs evaluating
  if (std::string arg = has_include_in_macro_args(command); !arg.empty()) {
    presence_reason = "__has_include through a macro of the command: " + arg;
  }
  std::vector<Resolution> forced;  // as the compiler reads them, stdc-predef.h first
  // The searches gcc makes while it may still take a precompiled header.
  std::vector<const ScanFileCache::Answer*> first_searches;
  if (kind == compiler::CompilerKind::kGcc && reads_stdc_predef(command)) {
    const bool found = root("stdc-predef.h", true);
    first_searches.push_back(storage->roots.back().get());
    if (found) forced.push_back(storage->roots.back()->resolution);
  }
  for (const std::string& name : command.forced_includes) {
    const bool found = root(name, false);
    first_searches.push_back(storage->roots.back().get());
    if (!found) {
      closure.unsure = "forced include not found: " + name;
      closure.forced_missing = true;
    } else {
      forced.push_back(storage->roots.back()->resolution);
    }
  }
  bool met_computed = false;       // a computed include the walk did not follow
  std::string assembler_file;      // the first file naming gas's .include or .incbin
  std::vector<size_t> once_files;  // closure files holding #pragma once
  // What the source's computed includes and macro-reached questions found.
  std::vector<const ScanFileCache::Answer*> source_searches;
  // Walks the queue from `next` on (again after an evaluation queued the
  // files computed includes name).
  auto walk = [&](size_t next) -> base::Status {
    for (; next < queue.size(); ++next) {
      Node* n = queue[next];
      if (n->state.load(std::memory_order_acquire) != Node::kExpanded) {
        if (claim(n)) {
          expand(n, files, &resolver, graph, cwd);
        } else {
          // Another TU's walk is expanding it: expand the nodes queued after it
          // meanwhile (this walk needs them too; the order of expansion changes
          // nothing), then wait.
          for (size_t k = next + 1;
               k < queue.size() && n->state.load(std::memory_order_acquire) != Node::kExpanded;
               ++k) {
            if (claim(queue[k])) expand(queue[k], files, &resolver, graph, cwd);
          }
          std::unique_lock lock(n->mu);
          n->expanded.wait(
              lock, [n] { return n->state.load(std::memory_order_acquire) == Node::kExpanded; });
        }
      }
      if (!n->status.ok()) return n->status;
      const std::string& path = n->where.path;
      const FileSummary& summary = *n->summary;
      if (n->path_id >= position.size()) position.resize(n->path_id + 1, -1);
      ClosureFile& file = closure.files[size_t(position[n->path_id])];
      file.content = summary.content;
      file.normal = n->normal;
      closure.uses_date = closure.uses_date || summary.uses_date;
      closure.uses_time = closure.uses_time || summary.uses_time;
      if (summary.assembler_reads && assembler_file.empty()) assembler_file = path;
      if (summary.pragma_once) once_files.push_back(size_t(position[n->path_id]));
      if (n->computed_presence && presence_reason.empty()) {
        presence_reason = "computed __has_include in " + path;
      }
      met_computed = met_computed || n->computed;
      for (const Node::Edge& edge : n->edges) {
        if (edge.failed) answers.push_back(edge.answer.get());
        if (!edge.node) continue;
        if (!edge.presence) {
          enqueue(edge.node);
          continue;
        }
        Node* c = edge.node;
        if (c->path_id >= position.size())
          position.resize(c->path_id + 1 + position.size() / 2, -1);
        if (position[c->path_id] < 0) {
          position[c->path_id] = int32_t(closure.files.size());
          closure.files.push_back({c->where.path, c->where.stat, {}, true, {}});
        }
      }
    }
    return base::Status();
  };
  if (base::Status walked_all = walk(0); !walked_all.ok()) return walked_all;
  // A computed include is evaluated too: when the evaluation is exact, the
  // files it names join the walk (a hit then checks them through the memo);
  // else the compiler's depfile tells them (the self-check's payload).
  const bool evaluate_anyway =
      presence && (presence->every_tu() || met_computed) && closure.unsure.empty();
  if ((!presence_reason.empty() && closure.unsure.empty()) || evaluate_anyway) {
    std::string why = "evaluation not available";
    if (presence) {
      // Every question the evaluation asks is recorded like a direct
      // __has_include: its failed candidates, and the file it found.
      const PresenceEvaluator::Ask ask = [&](std::string_view name, bool angled, bool next,
                                             const Resolution& includer) -> const Resolution& {
        std::shared_ptr<const ScanFileCache::Answer> a =
            resolver.answer(name, angled, next, base::dir_of(includer.path), includer.chain_index);
        if (!a->failed.empty()) answers.push_back(a.get());
        if (includer.path == command.source && command.forced_includes.empty()) {
          source_searches.push_back(a.get());
        }
        storage->roots.push_back(a);
        if (a->resolution.found) {
          // The node of an answer is the same for every asker (see expand).
          Node* c = a->node.load(std::memory_order_acquire);
          if (!c) {
            c = graph->node(context, a->resolution);
            a->node.store(c, std::memory_order_release);
          }
          if (c->path_id >= position.size()) position.resize(c->path_id + 1, -1);
          if (position[c->path_id] < 0) {
            position[c->path_id] = int32_t(closure.files.size());
            closure.files.push_back({c->where.path, c->where.stat, {}, true, {}});
          }
        }
        return a->resolution;
      };
      why = presence->evaluate(queue[0]->where, forced, ask);
      closure.presence_evaluated = why.empty() && !presence_reason.empty();
      if (why.empty() && met_computed) {
        // Each file a computed include named is a file of the closure, walked
        // like a direct include's. Computed includes the walk meets in them
        // were expanded by the same evaluation (it covers the whole TU).
        const size_t walked_before = queue.size();
        for (const Resolution& r : presence->computed_includes()) {
          enqueue(graph->node(context, r));
        }
        if (base::Status walked_all = walk(walked_before); !walked_all.ok()) return walked_all;
        closure.computed_evaluated = true;
      }
    }
    if (!why.empty() && !presence_reason.empty()) closure.unsure = presence_reason + ": " + why;
  }
  closure.has_computed_include = met_computed && !closure.computed_evaluated;
  closure.once_twins = once_twin_partition(once_files, &closure);
  // The evaluation takes #pragma once by inode, as clang does; gcc merges
  // equal files of equal mtime too, and may then take other branches.
  if (!closure.once_twins.empty() && kind == compiler::CompilerKind::kGcc &&
      (closure.presence_evaluated || closure.computed_evaluated) && closure.unsure.empty() &&
      once_twins_merged_by_time(closure)) {
    closure.unsure =
        "identical #pragma once files that gcc takes as one, and conditionals "
        "evaluated as if they were two";
  }
  // The assembler reads files the preprocessor never sees: gas's .include
  // and .incbin, in assembly or in inline asm of C and C++, written in the
  // source or in a file it includes. Neither the walk nor the compiler's
  // depfile names them, so such a compile has no key.
  if (!assembler_file.empty() && closure.unsure.empty()) {
    closure.unsure = "the assembler's .include or .incbin in " + assembler_file +
                     " reads files the preprocessor does not see";
    closure.assembler_include = true;
  }
  if (closure.unsure.empty() && !command.makes_pch) {
    if (command.forced_includes.empty()) {
      for (const Node::Edge& edge : queue[0]->edges) first_searches.push_back(edge.answer.get());
      first_searches.insert(first_searches.end(), source_searches.begin(), source_searches.end());
    }
    add_precompiled_headers(files, command, kind, cwd, first_searches, &storage->pch_probes,
                            &storage->pch_files, &closure);
  }
  // Many files ask the same questions: each answer's failed candidates are
  // taken once, in the order the walk met them (the same on every run).
  base::FlatSet<const ScanFileCache::Answer*> seen_answers(answers.size());
  std::vector<uint8_t> seen;  // by candidate id
  for (const ScanFileCache::Answer* a : answers) {
    if (!seen_answers.insert(a)) continue;
    if (a->failed_ids.size() != a->failed.size()) {
      return base::Status::error("internal: failed candidates without numbers");
    }
    for (size_t i = 0; i < a->failed.size(); ++i) {
      uint32_t id = a->failed_ids[i];
      if (id >= seen.size()) seen.resize(id + 1 + seen.size() / 2, 0);
      if (seen[id]) continue;
      seen[id] = 1;
      closure.failed_probes.push_back(a->failed[i]);
      closure.failed_probe_dirs.push_back(a->failed_dir_ids[i]);
      closure.failed_probe_ids.push_back(id);
    }
  }
  for (const std::string& p : storage->pch_probes) {
    const ScanFileCache::CandidateIds id = graph->candidate_ids(p);
    if (id.candidate >= seen.size()) seen.resize(id.candidate + 1 + seen.size() / 2, 0);
    if (seen[id.candidate]) continue;
    seen[id.candidate] = 1;
    closure.failed_probes.push_back(p);
    closure.failed_probe_dirs.push_back(id.dir);
    closure.failed_probe_ids.push_back(id.candidate);
  }
  return closure;
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
  reach(graph->node(context, Resolution{true, command.source, kFoundOutsideChain, source_sig}));
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
