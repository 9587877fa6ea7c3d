// Asking the compiler (-M) for a TU's dependencies, and remembering the
// answer: keyed by the compiler, the arguments, the working directory and
// every file of the TU's closure with its content; reused only while each
// file the answer names keeps its stat signature and no file appeared that
// could be found before one of them.
#include "scan/compiler_deps.h"

#include <algorithm>
#include <set>

#include "base/file_stat.h"
#include "base/file_util.h"
#include "base/process.h"
#include "closure/absence.h"

namespace lexpack::scan {
namespace {

constexpr std::string_view kTable = "compiler_deps";
constexpr std::string_view kAbsentTable = "compiler_deps_absent";

std::string memo_key(const compiler::CompilerIdentity& identity,
                     const std::vector<std::string>& args, const std::string& cwd,
                     const closure::Closure& walk) {
  cache::Hasher h;
  h.field(identity.hash.hex());
  h.field(cwd);
  for (const std::string& a : args) h.field(a);
  h.field("closure");
  for (const closure::ClosureFile& f : walk.files) {
    h.field(f.path);
    h.field(f.presence_only ? std::string("presence") : f.content.hex());
  }
  h.field("probes");
  for (std::string_view p : walk.failed_probes) h.field(p);
  return h.digest().hex();
}

std::string encode(const std::vector<std::string>& deps,
                   const std::vector<base::StatSignature>& stats) {
  std::string out;
  for (size_t i = 0; i < deps.size(); ++i) {
    const base::StatSignature& s = stats[i];
    out += std::to_string(s.dev) + ' ' + std::to_string(s.ino) + ' ' + std::to_string(s.size) +
           ' ' + std::to_string(s.mtime_ns) + ' ' + std::to_string(s.ctime_ns) + ' ' + deps[i] +
           '\n';
  }
  return out;
}

// The remembered deps when every file still has its signature.
bool decode_and_check(std::string_view bytes, std::vector<std::string>* deps) {
  while (!bytes.empty()) {
    size_t end = bytes.find('\n');
    if (end == std::string_view::npos) return false;
    std::string line(bytes.substr(0, end));
    bytes.remove_prefix(end + 1);
    base::StatSignature want;
    unsigned long long dev, ino, size;
    long long mtime, ctime;
    int used = 0;
    if (std::sscanf(line.c_str(), "%llu %llu %llu %lld %lld %n", &dev, &ino, &size, &mtime, &ctime,
                    &used) != 5 ||
        used <= 0) {
      return false;
    }
    want = {dev, ino, size, mtime, ctime};
    std::string path = line.substr(size_t(used));
    base::StatSignature now;
    if (!base::stat_file(path, &now) || !(now == want)) return false;
    deps->push_back(std::move(path));
  }
  return !deps->empty();
}

}  // namespace

std::vector<std::string> dependency_arguments(const compiler::CompileCommand& command) {
  std::vector<std::string> out;
  const std::vector<std::string>& a = command.args;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string& arg = a[i];
    if (arg == "-o" || arg == "-MF" || arg == "-MT" || arg == "-MQ") {
      ++i;
      continue;
    }
    if (arg == "-c" || arg == "-MD" || arg == "-MMD" || arg == "-MP" || arg == "-MG" ||
        arg == "-M" || arg == "-MM" || arg.rfind("-o", 0) == 0 || arg.rfind("-MF", 0) == 0 ||
        arg.rfind("-MT", 0) == 0 || arg.rfind("-MQ", 0) == 0) {
      continue;
    }
    out.push_back(arg);
  }
  out.push_back("-M");
  return out;
}

std::vector<std::string> parse_make_deps(std::string_view rule) {
  std::vector<std::string> out;
  // The target ends at the first ':' followed by a space or the end.
  size_t colon = 0;
  for (; colon < rule.size(); ++colon) {
    if (rule[colon] == ':' && (colon + 1 == rule.size() || rule[colon + 1] == ' ' ||
                               rule[colon + 1] == '\n' || rule[colon + 1] == '\\')) {
      break;
    }
  }
  std::string word;
  for (size_t i = colon + 1; i < rule.size(); ++i) {
    char c = rule[i];
    if (c == '\\' && i + 1 < rule.size() && (rule[i + 1] == ' ' || rule[i + 1] == '#')) {
      word.push_back(rule[++i]);
    } else if (c == '\\' && i + 1 < rule.size() && rule[i + 1] == '\n') {
      ++i;
      if (!word.empty()) out.push_back(std::move(word)), word.clear();
    } else if (c == '$' && i + 1 < rule.size() && rule[i + 1] == '$') {
      word.push_back(rule[++i]);
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (!word.empty()) out.push_back(std::move(word)), word.clear();
    } else {
      word.push_back(c);
    }
  }
  if (!word.empty()) out.push_back(std::move(word));
  return out;
}

base::Result<std::vector<std::string>> compiler_deps(cache::Store* store,
                                                     const compiler::CompilerIdentity& identity,
                                                     const compiler::CompileCommand& command,
                                                     const std::string& cwd,
                                                     const closure::Closure& walk,
                                                     const compiler::SearchList& list) {
  std::vector<std::string> args = dependency_arguments(command);
  const std::string key = memo_key(identity, args, cwd, walk);
  if (store) {
    std::optional<std::string> memo = store->get_memo(kTable, key);
    std::optional<std::string> absent = store->get_memo(kAbsentTable, key);
    std::vector<std::string> deps;
    std::string appeared;
    if (memo && absent && decode_and_check(*memo, &deps) &&
        closure::AbsenceProof::check(*absent, nullptr, &appeared) && appeared.empty()) {
      return deps;
    }
  }
  std::vector<std::string> argv = {identity.program};
  argv.insert(argv.end(), args.begin(), args.end());
  base::ProcessResult r = base::run_captured(argv, true);
  if (!r.started || r.exit_code != 0) {
    return base::Status::error("the compiler's -M run failed: " + r.error + r.err.substr(0, 200));
  }
  std::vector<std::string> deps;
  std::vector<base::StatSignature> stats;
  for (const std::string& d : parse_make_deps(r.out)) {
    std::string normal = base::normal_path(d, cwd);
    if (std::find(deps.begin(), deps.end(), normal) != deps.end()) continue;
    base::StatSignature s;
    if (!base::stat_file(normal, &s)) return base::Status::error("cannot stat " + normal);
    deps.push_back(std::move(normal));
    stats.push_back(s);
  }
  if (deps.empty()) return base::Status::error("the compiler's -M run named no file");
  if (store) {
    store->put_memo(kAbsentTable, key,
                    closure::AbsenceProof::encode(shadow_candidates(deps, list, cwd)));
    store->put_memo(kTable, key, encode(deps, stats));
  }
  return deps;
}

std::vector<std::string> shadow_candidates(const std::vector<std::string>& deps,
                                           const compiler::SearchList& list,
                                           const std::string& cwd) {
  auto normal_dir = [&](const std::string& d) {
    std::string n = base::normal_path(d, cwd);
    while (n.size() > 1 && n.back() == '/') n.pop_back();
    return n;
  };
  // The search, in order; a file found in the directory of the file that
  // includes it cannot be shadowed (that directory comes first), so only
  // names relative to a search directory have candidates: under each search
  // directory before it, and under the directory of any possible includer
  // (with quotes, that comes first), and under search directories that were
  // missing (wherever they come, should they appear).
  std::vector<std::string> search;
  for (const std::string& d : list.quote_dirs) search.push_back(normal_dir(d));
  for (const std::string& d : list.bracket_dirs) search.push_back(normal_dir(d));
  std::set<std::string> always;
  for (const std::string& d : list.missing_dirs) always.insert(normal_dir(d));
  for (const std::string& d : deps) {
    std::string_view parent = base::dir_of(d);
    if (!parent.empty()) always.insert(normal_dir(std::string(parent)));
  }
  std::set<std::string> deps_set(deps.begin(), deps.end());
  std::set<std::string> out;
  auto consider = [&](const std::string& dir, std::string_view name) {
    std::string candidate = base::join_path(dir, name);
    if (!deps_set.count(candidate) && !out.count(candidate) && closure::no_entry(candidate)) {
      out.insert(std::move(candidate));
    }
  };
  for (const std::string& d : deps) {
    for (size_t k = 0; k < search.size(); ++k) {
      const std::string& found_in = search[k];
      if (d.size() <= found_in.size() + 1 || d.compare(0, found_in.size(), found_in) != 0 ||
          d[found_in.size()] != '/') {
        continue;
      }
      const std::string_view name = std::string_view(d).substr(found_in.size() + 1);
      for (size_t j = 0; j < k; ++j) consider(search[j], name);
      for (const std::string& dir : always) {
        if (dir != found_in) consider(dir, name);
      }
    }
  }
  return {out.begin(), out.end()};
}

}  // namespace lexpack::scan
