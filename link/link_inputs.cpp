// Tool identities, the linker's search directories and the recorded files of
// a link. The files a link read come from the linker's own dependency file;
// the missing candidates before each searched library are derived here, so
// that a library appearing earlier in the search changes the key.
#include "link/link_inputs.h"

#include <set>

#include "base/byte_codec.h"
#include "base/file_stat.h"
#include "base/file_util.h"
#include "base/process.h"

namespace lexpack::link {
namespace {

constexpr uint64_t kToolchainFormat = 2;

void put_sig(base::VarintWriter* w, const base::StatSignature& s) {
  w->u64(s.dev);
  w->u64(s.ino);
  w->u64(s.size);
  w->i64(s.mtime_ns);
  w->i64(s.ctime_ns);
}

bool get_sig(base::VarintReader* r, base::StatSignature* s) {
  return r->u64(&s->dev) && r->u64(&s->ino) && r->u64(&s->size) && r->i64(&s->mtime_ns) &&
         r->i64(&s->ctime_ns);
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

// The program a driver answer names ("ld", or an absolute path), or empty
// when the driver only echoed the name back and nothing by that name exists.
std::string resolve_program(const std::string& answer) {
  return base::find_program(answer);
}

// Splits one line of -### output into words ("..." quoted, backslash escapes).
std::vector<std::string> split_words(std::string_view line) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false, quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '\\' && i + 1 < line.size()) {
        cur.push_back(line[++i]);
      } else if (c == '"') {
        quoted = false;
      } else {
        cur.push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
      in_word = true;
    } else if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(cur);
      cur.clear();
      in_word = false;
    } else {
      cur.push_back(c);
      in_word = true;
    }
  }
  if (in_word) words.push_back(cur);
  return words;
}

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

base::Result<Toolchain> driver_toolchain(cache::Store* store, closure::FileStates* files,
                                         const std::string& driver) {
  std::string path = base::find_program(driver);
  if (path.empty()) return base::Status::error("driver " + driver + " not found");
  base::StatSignature driver_sig;
  if (!base::stat_file(path, &driver_sig)) return base::Status::error("cannot stat " + path);
  if (store) {
    if (std::optional<std::string> memo = store->get_memo("linktool", path)) {
      base::VarintReader r(*memo);
      uint64_t format = 0, n_tools = 0, n_dirs = 0;
      base::StatSignature sig;
      Toolchain t;
      bool ok = r.u64(&format) && format == kToolchainFormat && get_sig(&r, &sig) &&
                sig == driver_sig && r.u64(&n_tools) && n_tools < 8;
      // Each tool is the file the driver's answer runs now (PATH may name
      // another ld than when asked), unchanged.
      for (uint64_t i = 0; ok && i < n_tools; ++i) {
        std::string answer, tool;
        base::StatSignature was, now;
        ok = r.str(&answer) && r.str(&tool) && get_sig(&r, &was) &&
             resolve_program(answer) == tool && base::stat_file(tool, &now) && now == was;
      }
      ok = ok && r.u64(&t.identity.lo) && r.u64(&t.identity.hi) && r.u64(&n_dirs) && n_dirs < 4096;
      for (uint64_t i = 0; ok && i < n_dirs; ++i) {
        std::string d;
        ok = r.str(&d);
        t.search_dirs.push_back(d);
      }
      if (ok && r.done()) return t;
    }
  }
  std::vector<base::ProcessResult> answers = base::run_captured_all({
      {path, "-print-prog-name=ld"},
      {path, "-print-prog-name=collect2"},
      {path, "-print-search-dirs"},
  });
  for (const base::ProcessResult& a : answers) {
    if (!a.started || a.exit_code != 0) {
      return base::Status::error("driver question failed: " + a.error + a.err);
    }
  }
  std::string ld = resolve_program(trim(answers[0].out));
  if (ld.empty()) return base::Status::error("the driver's ld was not found");
  std::string collect2 = resolve_program(trim(answers[1].out));
  base::ProcessResult verbose = base::run_captured({ld, "--verbose"}, true);
  if (!verbose.started || verbose.exit_code != 0) {
    return base::Status::error("ld --verbose failed");
  }
  Toolchain t;
  cache::Hasher h;
  h.field("toolchain");
  h.field(kToolchainFormat);
  struct Tool {
    std::string answer, path;
    base::StatSignature sig;
  };
  std::vector<Tool> tools;
  const std::string said[3] = {path, trim(answers[0].out), trim(answers[1].out)};
  const std::string found[3] = {path, ld, collect2};
  for (size_t k = 0; k < 3; ++k) {
    const std::string& tool = found[k];
    if (tool.empty()) {
      h.field("-");
      continue;
    }
    base::StatSignature sig;
    if (!base::stat_file(tool, &sig)) return base::Status::error("cannot stat " + tool);
    base::Result<cache::Hash128> content = files->content_hash(tool, tool, sig);
    if (!content.ok()) return content.status();
    h.field(tool);
    h.field(content->lo);
    h.field(content->hi);
    if (k > 0) tools.push_back({said[k], tool, sig});
  }
  h.field(answers[2].out);
  // SEARCH_DIR("=/usr/lib"); ... in ld's default script; "=" is the sysroot.
  std::string_view text = verbose.out;
  for (size_t at = text.find("SEARCH_DIR(\""); at != std::string_view::npos;
       at = text.find("SEARCH_DIR(\"", at + 1)) {
    size_t start = at + 12;
    size_t end = text.find('"', start);
    if (end == std::string_view::npos) break;
    std::string dir(text.substr(start, end - start));
    if (!dir.empty() && dir[0] == '=') dir.erase(0, 1);
    t.search_dirs.push_back(dir);
    h.field(dir);
  }
  t.identity = h.digest();
  if (store) {
    base::VarintWriter w;
    w.u64(kToolchainFormat);
    put_sig(&w, driver_sig);
    w.u64(tools.size());
    for (const Tool& tool : tools) {
      w.str(tool.answer);
      w.str(tool.path);
      put_sig(&w, tool.sig);
    }
    w.u64(t.identity.lo);
    w.u64(t.identity.hi);
    w.u64(t.search_dirs.size());
    for (const std::string& d : t.search_dirs) w.str(d);
    store->put_memo("linktool", path, w.take());
  }
  return t;
}

base::Result<cache::Hash128> program_identity(closure::FileStates* files, const std::string& name) {
  std::string path = base::find_program(name);
  if (path.empty()) return base::Status::error(name + " not found");
  base::StatSignature sig;
  if (!base::stat_file(path, &sig)) return base::Status::error("cannot stat " + path);
  return files->content_hash(path, path, sig);
}

base::Result<std::vector<std::string>> driver_link_dirs(const std::string& driver,
                                                        const std::vector<std::string>& args) {
  std::vector<std::string> argv = {driver, "-###"};
  argv.insert(argv.end(), args.begin(), args.end());
  base::ProcessResult p = base::run_captured(argv, true);
  if (!p.started || p.exit_code != 0) return base::Status::error("-### failed: " + p.err);
  // The linker command is the last line that starts with a space.
  std::string_view text = p.err;
  std::string_view last;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? text.npos : nl - pos);
    if (!line.empty() && line[0] == ' ') last = line;
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  if (last.empty()) return base::Status::error("no linker command in -### output");
  std::vector<std::string> words = split_words(last);
  std::vector<std::string> dirs;
  for (size_t i = 1; i < words.size(); ++i) {
    if (words[i] == "-L" && i + 1 < words.size()) {
      dirs.push_back(words[++i]);
    } else if (words[i].size() > 2 && words[i].compare(0, 2, "-L") == 0) {
      dirs.push_back(words[i].substr(2));
    }
  }
  return dirs;
}

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
                              closure::FileStates* files, cache::Hasher* h, int64_t* newest_ns) {
  for (const std::string& p : paths) {
    h->field(p);
    base::StatSignature sig;
    bool is_dir = false;
    if (!base::stat_file(p, &sig, &is_dir)) {
      h->field("absent");
      continue;
    }
    if (is_dir) {
      h->field("directory");
      continue;
    }
    // Normalized ("./libx.so" as ld names a file found through -L.), as the
    // hits that vouch for the files they write record them.
    base::Result<cache::Hash128> content = files->content_hash(p, base::normal_path(p, cwd), sig);
    if (!content.ok()) return content.status();
    h->field(content->lo);
    h->field(content->hi);
    if (newest_ns) *newest_ns = std::max({*newest_ns, sig.mtime_ns, sig.ctime_ns});
  }
  return base::Status();
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
