// Breadth-first walk over include directives. Each file is lexed at most once
// per path (and not at all when the file table already knows its content).
#include "ninja_integration/dependency_closure.h"

#include <algorithm>
#include <deque>
#include <unordered_map>

#include "ninja_integration/include_resolver.h"
#include "ninja_integration/scan_file_cache.h"

namespace lexpack::ninja {

cache::Result<Closure> compute_closure(FileStates* files, const CompileCommand& command,
                                       const SearchList& list, CompilerKind kind,
                                       const std::string& cwd) {
  Closure closure;
  IncludeResolver resolver(list, kind, files->shared(), cwd);
  std::unordered_map<std::string, size_t> index_of;  // path -> files[] position
  struct Pending {
    std::string path;
    int chain_index;
    cache::StatSignature stat;
    std::string included_by;
  };
  std::deque<Pending> queue;
  std::vector<std::string> failed;

  auto enqueue = [&](Resolution&& r, const std::string& by) {
    auto it = index_of.find(r.path);
    if (it != index_of.end()) {
      ClosureFile& f = closure.files[it->second];
      if (!f.presence_only) return;
      f.presence_only = false;  // upgraded below when its turn comes
    } else {
      index_of.emplace(r.path, closure.files.size());
      closure.files.push_back({r.path, r.stat, {}, false, by});
    }
    queue.push_back({std::move(r.path), r.chain_index, r.stat, by});
  };

  cache::StatSignature source_sig;
  if (!stat_file(command.source, &source_sig)) {
    return cache::Status::error("cannot stat source " + command.source);
  }
  enqueue(Resolution{true, command.source, kFoundOutsideChain, source_sig}, "");

  // Files the compiler reads before the source: gcc's implicit stdc-predef.h,
  // then -imacros/-include files, searched first in the working directory.
  if (kind == CompilerKind::kGcc) {
    Resolution r = resolver.resolve("stdc-predef.h", true, false, "", kFoundOutsideChain, &failed);
    if (r.found) enqueue(std::move(r), "");
  }
  for (const std::string& name : command.forced_includes) {
    Resolution r = resolver.resolve(name, false, false, "", kFoundOutsideChain, &failed);
    if (r.found) {
      enqueue(std::move(r), "");
    } else {
      closure.unsure = "forced include not found: " + name;
    }
  }

  // The include edges of one file where it was found: from the scan-wide
  // cache when there is one, else resolved here.
  ScanFileCache* shared = files->shared();
  using FileEdges = ScanFileCache::FileEdges;
  auto edges_of = [&](const Pending& p, const FileSummary& summary) {
    std::string key;
    if (shared) {
      key = resolver.context() + std::to_string(p.chain_index) + '|' + p.path;
      if (std::shared_ptr<const FileEdges> known = shared->find_edges(key)) return known;
    }
    auto e = std::make_shared<FileEdges>();
    std::string dir(dir_of(p.path));
    for (const IncludeDirective& d : summary.includes) {
      using K = lexer::DirectiveKind;
      bool presence = d.kind == K::kHasInclude || d.kind == K::kHasIncludeNext;
      bool next = d.kind == K::kIncludeNext || d.kind == K::kHasIncludeNext;
      if (d.computed) {
        e->computed = true;
        e->computed_presence = e->computed_presence || presence;
        continue;
      }
      e->edges.push_back({resolver.answer(d.name, d.angled, next, dir, p.chain_index), presence});
    }
    if (shared) shared->put_edges(key, e);
    return std::shared_ptr<const FileEdges>(std::move(e));
  };

  // Every answer the walk used (the resolver, and the scan-wide cache when
  // there is one, keep them alive).
  std::vector<const ScanFileCache::Answer*> answers;
  while (!queue.empty()) {
    Pending p = std::move(queue.front());
    queue.pop_front();
    cache::Result<std::shared_ptr<const FileSummary>> loaded =
        files->load_shared(p.path, absolute_path(p.path, cwd), p.stat);
    if (!loaded.ok()) return loaded.status();
    const FileSummary* summary = loaded->get();
    ClosureFile& file = closure.files[index_of[p.path]];
    file.content = summary->content;
    closure.uses_date = closure.uses_date || summary->uses_date;
    closure.uses_time = closure.uses_time || summary->uses_time;
    std::shared_ptr<const FileEdges> edges = edges_of(p, *summary);
    if (edges->computed_presence && closure.unsure.empty()) {
      closure.unsure = "computed __has_include in " + p.path;
    }
    closure.has_computed_include = closure.has_computed_include || edges->computed;
    for (const FileEdges::Edge& edge : edges->edges) {
      answers.push_back(edge.answer.get());
      const Resolution& r = edge.answer->resolution;
      if (!r.found) continue;
      if (edge.presence) {
        if (!index_of.count(r.path)) {
          index_of.emplace(r.path, closure.files.size());
          closure.files.push_back({r.path, r.stat, {}, true, p.path});
        }
      } else {
        enqueue(Resolution(r), p.path);
      }
    }
  }
  // Many files ask the same questions: drop repeated answers before their
  // (longer) lists of failed candidates are merged.
  std::sort(answers.begin(), answers.end());
  answers.erase(std::unique(answers.begin(), answers.end()), answers.end());
  std::vector<std::string_view> all_failed(failed.begin(), failed.end());
  for (const ScanFileCache::Answer* a : answers) {
    all_failed.insert(all_failed.end(), a->failed.begin(), a->failed.end());
  }
  std::sort(all_failed.begin(), all_failed.end());
  all_failed.erase(std::unique(all_failed.begin(), all_failed.end()), all_failed.end());
  closure.failed_probes.assign(all_failed.begin(), all_failed.end());
  return closure;
}

}  // namespace lexpack::ninja
