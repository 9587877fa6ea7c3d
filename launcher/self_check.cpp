// Depfile versus closure, by device and inode (the compiler and the scan may
// spell one path differently).
#include "launcher/self_check.h"

#include <set>
#include <utility>

#include "base/depfile_reader.h"
#include "base/file_util.h"
#include "closure/include_resolver.h"

namespace lexpack::launcher {

SelfCheckResult self_check(std::string_view depfile_text, const closure::Closure& closure,
                           const compiler::SearchList& list, closure::FileStates* files,
                           const std::string& cwd) {
  SelfCheckResult result;
  std::vector<std::string> deps;
  std::string err;
  if (!base::parse_depfile(depfile_text, &deps, &err)) {
    result.unsure = "unreadable depfile: " + err;
    return result;
  }
  std::set<std::pair<uint64_t, uint64_t>> scanned, present;
  for (const closure::ClosureFile& f : closure.files) {
    (f.presence_only ? present : scanned).insert({f.stat.dev, f.stat.ino});
  }
  std::vector<std::string> extras;
  std::set<std::string> seen;
  result.named.reserve(deps.size());
  for (const std::string& dep : deps) {
    base::StatSignature sig;
    if (!base::stat_file(dep, &sig)) {
      result.unsure = "depfile names a file that is gone: " + dep;
      return result;
    }
    result.named.emplace_back(dep, sig);
    if (scanned.count({sig.dev, sig.ino}) || !seen.insert(dep).second) continue;
    base::Result<cache::Hash128> content =
        files->content_hash(dep, base::absolute_path(dep, cwd), sig);
    if (!content.ok()) {
      result.unsure = content.message();
      return result;
    }
    extras.push_back(dep);
    result.payload.extra_files.push_back({dep, content.value()});
    result.outside.emplace_back(dep, sig);
    // clang lists a file it only asked __has_include about: its content is
    // kept with the entry all the same, but the scan did not miss it.
    bool only_asked = present.count({sig.dev, sig.ino}) > 0;
    if (!closure.has_computed_include && !only_asked) result.disagreements.push_back(dep);
  }
  if (extras.empty()) return result;

  // The names under which the compiler may have searched for each extra
  // file, tried in every directory it may have searched: a superset of its
  // real candidates, so any file appearing or vanishing there is noticed.
  std::set<std::string> dirs = {""};
  std::vector<std::string> search = list.quote_dirs;
  search.insert(search.end(), list.bracket_dirs.begin(), list.bracket_dirs.end());
  for (const std::string& d : search) dirs.insert(d);
  for (const closure::ClosureFile& f : closure.files)
    dirs.insert(std::string(base::dir_of(f.path)));
  for (const std::string& e : extras) dirs.insert(std::string(base::dir_of(e)));
  std::set<std::string> probes;
  for (const std::string& extra : extras) {
    std::set<std::string> names;
    if (extra[0] != '/') names.insert(extra);
    for (const std::string& d : dirs) {
      if (d.empty()) continue;
      std::string prefix = d.back() == '/' ? d : d + "/";
      if (extra.size() > prefix.size() && extra.compare(0, prefix.size(), prefix) == 0) {
        names.insert(extra.substr(prefix.size()));
      }
    }
    if (names.empty()) {
      result.unsure = "cannot tell how the compiler found " + extra;
      return result;
    }
    for (const std::string& name : names) {
      for (const std::string& d : dirs) {
        std::string candidate = base::join_path(d, name);
        if (candidate != extra) probes.insert(candidate);
      }
    }
  }
  std::vector<std::string> missing;
  for (const std::string& p : probes) {
    base::StatSignature sig;
    if (!base::stat_file(p, &sig)) {
      missing.push_back(p);
      continue;
    }
    result.payload.present_probes.push_back(p);
    result.outside.emplace_back(p, sig);
  }
  result.payload.absent_probes = closure::AbsenceProof::encode(missing);
  return result;
}

}  // namespace lexpack::launcher
