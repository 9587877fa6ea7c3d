// The recorded files of a link: the files it read come from the linker's own
// dependency file; the missing candidates before each searched library are
// derived here, so that a library appearing earlier in the search changes
// the key.
#include "link/link_inputs.h"

#include <cctype>
#include <cstdlib>
#include <set>
#include <unordered_map>

#include "base/byte_codec.h"
#include "base/file_stat.h"
#include "base/file_util.h"
#include "base/process.h"

namespace lexpack::link {
namespace {

std::string_view base_of(std::string_view p) {
  size_t slash = p.rfind('/');
  return slash == std::string_view::npos ? p : p.substr(slash + 1);
}

// "libX.so" <-> "libX.a" (X one letter or more); empty for other names.
std::string sibling_of(std::string_view name) {
  if (name.size() > 5 && name.substr(0, 3) == "lib") {
    if (name.size() > 6 && name.substr(name.size() - 3) == ".so") {
      return std::string(name.substr(0, name.size() - 3)) + ".a";
    }
    if (name.substr(name.size() - 2) == ".a") {
      return std::string(name.substr(0, name.size() - 2)) + ".so";
    }
  }
  return {};
}

}  // namespace

std::vector<std::string> recorded_paths(const std::vector<std::string>& read,
                                        const std::vector<std::string>& dirs, bool script) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add = [&](std::string p) {
    if (seen.insert(p).second) out.push_back(std::move(p));
  };
  for (const std::string& r : read) add(r);
  // `r` found as `name` in dirs[found]: the same name in each directory
  // searched before, and the .so/.a sibling up to its own.
  auto searched = [&](size_t found, const std::string& name) {
    if (script) add(name);  // the working directory comes first
    std::string sibling = sibling_of(base_of(name));
    std::string sibling_path = sibling.empty() ? "" : base::join_path(base::dir_of(name), sibling);
    for (size_t i = 0; i <= found; ++i) {
      if (i < found) add(base::join_path(dirs[i], name));
      if (!sibling.empty()) add(base::join_path(dirs[i], sibling_path));
    }
  };
  for (const std::string& r : read) {
    std::string_view dir = base::dir_of(r);
    for (size_t i = 0; i < dirs.size(); ++i) {
      std::string_view d = dirs[i];
      if (d.size() > 1 && d.back() == '/') d.remove_suffix(1);
      if (d == dir) {
        searched(i, std::string(base_of(r)));
        break;
      }
      // With a script, "dir/sub/x.ld" may have been found as sub/x.ld.
      if (script && !d.empty() && r.size() > d.size() + 1 &&
          std::string_view(r).substr(0, d.size()) == d && r[d.size()] == '/') {
        searched(i, r.substr(d.size() + 1));
      }
    }
  }
  return out;
}

base::Status hash_path_states(const std::vector<std::string>& paths, const std::string& cwd,
                              closure::FileStates* files, cache::Hasher* h, int64_t* newest_ns,
                              std::vector<std::string>* states) {
  if (states) states->clear();
  for (const std::string& p : paths) {
    h->field(p);
    base::StatSignature sig;
    bool is_dir = false;
    if (!base::stat_file(p, &sig, &is_dir)) {
      h->field("absent");
      if (states) states->push_back("absent");
      continue;
    }
    if (is_dir) {
      h->field("directory");
      if (states) states->push_back("directory");
      continue;
    }
    // Normalized ("./libx.so" as ld names a file found through -L.), as the
    // hits that vouch for the files they write record them.
    base::Result<cache::Hash128> content = files->content_hash(p, base::normal_path(p, cwd), sig);
    if (!content.ok()) return content.status();
    h->field(content->lo);
    h->field(content->hi);
    if (states) states->push_back(content->hex());
    if (newest_ns) *newest_ns = std::max({*newest_ns, sig.mtime_ns, sig.ctime_ns});
  }
  return base::Status();
}

std::string encode_path_states(const std::vector<std::string>& paths,
                               const std::vector<std::string>& states) {
  base::VarintWriter w;
  w.u64(paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    w.str(paths[i]);
    w.str(i < states.size() ? states[i] : std::string());
  }
  return w.take();
}

std::vector<std::string> changed_paths(std::string_view stored,
                                       const std::vector<std::string>& now_paths,
                                       const std::vector<std::string>& now_states) {
  std::unordered_map<std::string, std::string> was;
  base::VarintReader r(stored);
  uint64_t n = 0;
  if (!r.u64(&n) || n > stored.size()) return {};
  for (uint64_t i = 0; i < n; ++i) {
    std::string path, state;
    if (!r.str(&path) || !r.str(&state)) return {};
    was.emplace(std::move(path), std::move(state));
  }
  std::vector<std::string> changed;
  for (size_t i = 0; i < now_paths.size() && i < now_states.size(); ++i) {
    auto it = was.find(now_paths[i]);
    const std::string& before = it == was.end() ? std::string("absent") : it->second;
    if (before != now_states[i]) changed.push_back(now_paths[i]);
  }
  return changed;
}

std::string encode_records(const std::vector<std::vector<std::string>>& records) {
  base::VarintWriter w;
  w.u64(records.size());
  for (const std::vector<std::string>& paths : records) {
    w.u64(paths.size());
    for (const std::string& p : paths) w.str(p);
  }
  return w.take();
}

bool decode_records(std::string_view bytes, std::vector<std::vector<std::string>>* records) {
  base::VarintReader r(bytes);
  uint64_t n = 0;
  if (!r.u64(&n) || n > bytes.size()) return false;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t m = 0;
    if (!r.u64(&m) || m > bytes.size()) return false;
    std::vector<std::string> paths;
    for (uint64_t j = 0; j < m; ++j) {
      std::string p;
      if (!r.str(&p)) return false;
      paths.push_back(std::move(p));
    }
    records->push_back(std::move(paths));
  }
  return r.done();
}

bool is_lto_temporary(std::string_view path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return false;
  std::string_view name = path.substr(slash + 1), dir = path.substr(0, slash);
  if (name.size() < 11 || !name.starts_with("cc") || name[8] != '.' || !name.ends_with(".o")) {
    return false;
  }
  for (char c : name.substr(2, 6)) {
    if (!std::isalnum(static_cast<unsigned char>(c))) return false;
  }
  auto trimmed = [](std::string_view d) {
    while (d.size() > 1 && d.back() == '/') d.remove_suffix(1);
    return d;
  };
  dir = trimmed(dir);
  for (const char* name : {"TMPDIR", "TMP", "TEMP"}) {
    const char* v = std::getenv(name);
    if (v && *v && trimmed(v) == dir) return true;
  }
  return dir == "/tmp" || dir == "/var/tmp" || dir == "/usr/tmp";
}

bool archive_is_deterministic(std::string_view bytes) {
  if (bytes.substr(0, 8) != "!<arch>\n") return false;
  size_t pos = 8;
  auto field_is_zero = [](std::string_view f) {
    size_t i = 0;
    while (i < f.size() && f[i] == ' ') ++i;
    if (i == f.size() || f[i] != '0') return false;
    for (++i; i < f.size(); ++i) {
      if (f[i] != ' ') return false;
    }
    return true;
  };
  while (pos < bytes.size()) {
    if (bytes.size() - pos < 60) return false;
    std::string_view hdr = bytes.substr(pos, 60);
    if (hdr.substr(58, 2) != "`\n") return false;
    // GNU ar's table of member names longer than 15 bytes ("//") has no
    // date, owner or mode by format: its fields are blank.
    bool name_table = hdr.substr(0, 16) == "//              ";
    auto blank = [](std::string_view f) { return f.find_first_not_of(' ') == f.npos; };
    if (name_table) {
      if (!blank(hdr.substr(16, 32))) return false;
    } else if (!field_is_zero(hdr.substr(16, 12)) || !field_is_zero(hdr.substr(28, 6)) ||
               !field_is_zero(hdr.substr(34, 6))) {
      return false;
    }
    uint64_t size = 0;
    std::string_view sz = hdr.substr(48, 10);
    for (char c : sz) {
      if (c == ' ') break;
      if (c < '0' || c > '9') return false;
      size = size * 10 + uint64_t(c - '0');
    }
    pos += 60;
    if (size > bytes.size() - pos) return false;
    pos += size + (size & 1);
  }
  return true;
}

}  // namespace lexpack::link
