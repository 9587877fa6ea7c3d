// The tools of a link step, asked of the driver once per binary and kept:
// the linker it runs, its search directories, and the -L directories of one
// command. A machine that never asked takes another machine's answers
// through the remote when every tool they name is here with the same bytes.
#include "link/toolchain.h"

#include <cstdlib>
#include <optional>

#include "base/byte_codec.h"
#include "base/file_stat.h"
#include "base/file_util.h"
#include "base/process.h"
#include "cache/once_across_processes.h"

namespace lexpack::link {
namespace {

constexpr uint64_t kToolchainFormat = 3;

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

}  // namespace

namespace {

// One tool the driver's answer names: the answer, the file it resolves to
// here, and that file's signature and content.
struct Tool {
  std::string answer, path;
  base::StatSignature sig;
  cache::Hash128 content;
};

// The local memo of `driver` (at `driver_sig`), when every tool it names is
// the file the answer resolves to now (PATH may name another ld than when
// asked) and unchanged.
std::optional<Toolchain> remembered(cache::Store& store, const std::string& driver,
                                    const base::StatSignature& driver_sig) {
  std::optional<std::string> memo = store.get_memo("linktool", driver);
  if (!memo) return std::nullopt;
  base::VarintReader r(*memo);
  uint64_t format = 0, n_tools = 0, n_dirs = 0;
  base::StatSignature sig;
  Toolchain t;
  bool ok = r.u64(&format) && format == kToolchainFormat && get_sig(&r, &sig) &&
            sig == driver_sig && r.u64(&n_tools) && n_tools < 8;
  for (uint64_t i = 0; ok && i < n_tools; ++i) {
    std::string answer, tool;
    base::StatSignature was, now;
    ok = r.str(&answer) && r.str(&tool) && get_sig(&r, &was) && resolve_program(answer) == tool &&
         base::stat_file(tool, &now) && now == was;
  }
  uint64_t lto = 0;
  ok = ok && r.u64(&t.identity.lo) && r.u64(&t.identity.hi) && r.u64(&lto) && lto <= 1 &&
       r.u64(&n_dirs) && n_dirs < 4096;
  t.lto = lto == 1;
  for (uint64_t i = 0; ok && i < n_dirs; ++i) {
    std::string d;
    ok = r.str(&d);
    t.search_dirs.push_back(d);
  }
  if (ok && r.done()) return t;
  return std::nullopt;
}

void remember(cache::Store& store, const std::string& driver, const base::StatSignature& driver_sig,
              const std::vector<Tool>& tools, const Toolchain& t) {
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
  w.u64(t.lto ? 1 : 0);
  w.u64(t.search_dirs.size());
  for (const std::string& d : t.search_dirs) w.str(d);
  store.put_memo("linktool", driver, w.take());
}

// The remote key of the answers of the driver at `driver` with content
// `content`, under the environment that steers where it finds its tools.
cache::Hash128 toolchain_answer_key(const std::string& driver, const cache::Hash128& content) {
  cache::Hasher h;
  h.field("link-toolchain-answer");
  h.field(kToolchainFormat);
  h.field(driver);
  h.field(content.lo);
  h.field(content.hi);
  for (const char* name : {"PATH", "COMPILER_PATH", "GCC_EXEC_PREFIX", "LIBRARY_PATH"}) {
    const char* v = std::getenv(name);
    h.field(name);
    h.field(v ? std::string_view(v) : std::string_view("\x01unset"));
  }
  return h.digest();
}

std::string encode_toolchain_answer(const std::vector<Tool>& tools, const Toolchain& t) {
  base::VarintWriter w;
  w.u64(kToolchainFormat);
  w.u64(tools.size());
  for (const Tool& tool : tools) {
    w.str(tool.answer);
    w.str(tool.path);
    w.u64(tool.content.lo);
    w.u64(tool.content.hi);
  }
  w.u64(t.identity.lo);
  w.u64(t.identity.hi);
  w.u64(t.lto ? 1 : 0);
  w.u64(t.search_dirs.size());
  for (const std::string& d : t.search_dirs) w.str(d);
  return w.take();
}

// Another machine's answers, taken when every tool they name is the file
// the answer resolves to here, with the same bytes; false with why.
bool accept_toolchain_answer(std::string_view bytes, closure::FileStates* files, Toolchain* t,
                             std::vector<Tool>* tools, std::string* why) {
  base::VarintReader r(bytes);
  uint64_t format = 0, n_tools = 0, n_dirs = 0;
  if (!r.u64(&format) || format != kToolchainFormat || !r.u64(&n_tools) || n_tools >= 8) {
    *why = "malformed";
    return false;
  }
  for (uint64_t i = 0; i < n_tools; ++i) {
    Tool tool;
    if (!r.str(&tool.answer) || !r.str(&tool.path) || !r.u64(&tool.content.lo) ||
        !r.u64(&tool.content.hi)) {
      *why = "malformed";
      return false;
    }
    if (resolve_program(tool.answer) != tool.path || !base::stat_file(tool.path, &tool.sig)) {
      *why = "'" + tool.answer + "' is not " + tool.path + " here";
      return false;
    }
    base::Result<cache::Hash128> content = files->content_hash(tool.path, tool.path, tool.sig);
    if (!content.ok() || !(*content == tool.content)) {
      *why = tool.path + " differs here";
      return false;
    }
    tools->push_back(std::move(tool));
  }
  uint64_t lto = 0;
  if (!r.u64(&t->identity.lo) || !r.u64(&t->identity.hi) || !r.u64(&lto) || lto > 1 ||
      !r.u64(&n_dirs) || n_dirs >= 4096) {
    *why = "malformed";
    return false;
  }
  t->lto = lto == 1;
  for (uint64_t i = 0; i < n_dirs; ++i) {
    std::string d;
    if (!r.str(&d)) {
      *why = "malformed";
      return false;
    }
    t->search_dirs.push_back(std::move(d));
  }
  if (!r.done()) *why = "malformed";
  return r.done();
}

// Asks the driver at `driver` (and the ld it names) what it runs and where
// it searches. gcc's LTO tools (lto-wrapper, lto1, the linker plugin: what
// the plugin runs when an input holds LTO IR, with or without -flto on the
// link line) are part of the identity where the driver has them.
base::Result<Toolchain> ask_driver(closure::FileStates* files, const std::string& driver,
                                   std::vector<Tool>* tools) {
  std::vector<base::ProcessResult> answers = base::run_captured_all({
      {driver, "-print-prog-name=ld"},
      {driver, "-print-prog-name=collect2"},
      {driver, "-print-search-dirs"},
      {driver, "-print-prog-name=lto-wrapper"},
      {driver, "-print-prog-name=lto1"},
      {driver, "-print-file-name=liblto_plugin.so"},
  });
  for (const base::ProcessResult& a : answers) {
    if (!a.started || a.exit_code != 0) {
      return base::Status::error("driver question failed: " + a.error + a.err);
    }
  }
  std::string ld = resolve_program(trim(answers[0].out));
  if (ld.empty()) return base::Status::error("the driver's ld was not found");
  base::ProcessResult verbose = base::run_captured({ld, "--verbose"}, true);
  if (!verbose.started || verbose.exit_code != 0) {
    return base::Status::error("ld --verbose failed");
  }
  Toolchain t;
  cache::Hasher h;
  h.field("toolchain");
  h.field(kToolchainFormat);
  // The driver, ld, collect2, then the LTO tools (an answer naming no file
  // here: not there).
  const std::string said[6] = {driver,
                               trim(answers[0].out),
                               trim(answers[1].out),
                               trim(answers[3].out),
                               trim(answers[4].out),
                               trim(answers[5].out)};
  int lto_tools = 0;
  for (size_t k = 0; k < 6; ++k) {
    const std::string tool = k == 0 ? driver : k == 1 ? ld : resolve_program(said[k]);
    base::StatSignature sig;
    if (tool.empty() || (k >= 3 && !base::stat_file(tool, &sig))) {
      h.field("-");
      continue;
    }
    if (!base::stat_file(tool, &sig)) return base::Status::error("cannot stat " + tool);
    base::Result<cache::Hash128> content = files->content_hash(tool, tool, sig);
    if (!content.ok()) return content.status();
    h.field(tool);
    h.field(content->lo);
    h.field(content->hi);
    if (k > 0) tools->push_back({said[k], tool, sig, *content});
    if (k >= 3) ++lto_tools;
  }
  t.lto = lto_tools == 3;
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
  return t;
}

}  // namespace

base::Result<Toolchain> driver_toolchain(cache::Store* store, closure::FileStates* files,
                                         const std::string& driver, ToolchainRemote* remote) {
  std::string path = base::find_program(driver);
  if (path.empty()) return base::Status::error("driver " + driver + " not found");
  base::StatSignature driver_sig;
  if (!base::stat_file(path, &driver_sig)) return base::Status::error("cannot stat " + path);
  if (store) {
    if (std::optional<Toolchain> t = remembered(*store, path, driver_sig)) return *t;
  }
  // The links a build runs side by side ask once: each answer hashes the
  // toolchain's programs (lto1 alone is tens of megabytes); the others take
  // what the first remembered.
  std::optional<cache::ComputeOnce> once;
  if (store) {
    once.emplace(store->dir(), "toolchain " + path);
    if (once->waited()) {
      if (std::optional<Toolchain> t = remembered(*store, path, driver_sig)) return *t;
    }
  }
  cache::Hash128 answer_key;
  if (remote && remote->tier) {
    base::Result<cache::Hash128> content = files->content_hash(path, path, driver_sig);
    if (!content.ok()) return content.status();
    answer_key = toolchain_answer_key(path, *content);
    if (std::optional<std::string> bytes =
            remote->tier->fetch_answer(answer_key, remote->count, &remote->note)) {
      Toolchain t;
      std::vector<Tool> tools;
      std::string why;
      if (accept_toolchain_answer(*bytes, files, &t, &tools, &why)) {
        remote->count("link_toolchain_answers_taken", 1);
        if (store) remember(*store, path, driver_sig, tools, t);
        return t;
      }
      remote->count("link_toolchain_answers_refused", 1);
      remote->note += "toolchain answer from the remote refused: " + why;
    }
  }
  std::vector<Tool> tools;
  base::Result<Toolchain> t = ask_driver(files, path, &tools);
  if (!t.ok()) return t;
  if (store) remember(*store, path, driver_sig, tools, *t);
  if (remote && remote->tier && remote->tier->can_write()) {
    remote->tier->upload_answer(answer_key, encode_toolchain_answer(tools, *t), remote->count,
                                &remote->note);
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

}  // namespace lexpack::link
