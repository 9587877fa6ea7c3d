// Asking a compiler who it is, once per binary: the answer is kept in the
// store's "compiler" memo keyed by path and stat signature.
#include "ninja_integration/compiler_identity.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <thread>
#include <vector>

#include "ninja_integration/byte_codec.h"
#include "ninja_integration/derived_search_list.h"
#include "ninja_integration/file_state.h"
#include "ninja_integration/process.h"
#include "ninja_integration/search_list.h"

namespace lexpack::ninja {
namespace {

constexpr std::string_view kIdentityFormat = "lexpack-compiler-2";

std::string first_line(std::string_view text) {
  size_t nl = text.find('\n');
  return std::string(text.substr(0, nl));
}

std::string memo_key(const std::string& program, const cache::StatSignature& sig) {
  ByteWriter w;
  w.str(program);
  write_signature(&w, sig);
  return w.take();
}

// The digest of a file's bytes, or of its name when it cannot be read.
// Compiler binaries are tens of MB: read through one buffer, never copied
// whole into memory.
std::string file_digest(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    cache::Hasher content;
    std::vector<char> buf(size_t(1) << 20);
    ssize_t n;
    while ((n = ::read(fd, buf.data(), buf.size())) > 0 || (n < 0 && errno == EINTR)) {
      if (n > 0) content.update(std::string_view(buf.data(), size_t(n)));
    }
    ::close(fd);
    if (n == 0) return content.digest().hex();
  }
  return "unreadable:" + path;
}

cache::Result<CompilerIdentity> ask_compiler(cache::Store* store, const std::string& program) {
  CompilerIdentity id;
  id.program = program;
  ProcessResult version = run_captured({program, "--version"}, true);
  if (!version.started) return cache::Status::error(version.error);
  id.kind = version.exit_code == 0 ? kind_from_version_text(version.out) : CompilerKind::kUnknown;
  id.version = first_line(version.out);
  if (id.kind == CompilerKind::kUnknown) return id;

  // Hashing the binaries (cc1plus is 35 MB) overlaps the questions, which
  // each run the compiler: one thread per binary.
  std::string driver_digest;
  std::thread driver([&] { driver_digest = file_digest(program); });
  // One run per language answers both its predefined macros (stdout) and
  // its search list (stderr); -I kProbeDir makes that list a base for
  // derived ones (derived_search_list.h) and does not change the macros.
  std::vector<std::vector<std::string>> questions;
  for (const char* lang : {"c", "c++"}) {
    questions.push_back(
        {program, "-x", lang, "-dM", "-E", "-v", "-I", std::string(kProbeDir), "/dev/null"});
  }
  std::vector<ProcessResult> answers;
  std::thread languages([&] { answers = run_captured_all(questions); });
  // The gcc driver runs cc1/cc1plus: their bytes decide the object.
  constexpr const char* kPrograms[] = {"cc1", "cc1plus"};
  std::string prog_digests[2];
  if (id.kind == CompilerKind::kGcc) {
    std::vector<ProcessResult> paths = run_captured_all(
        {{program, "-print-prog-name=cc1"}, {program, "-print-prog-name=cc1plus"}});
    std::vector<std::thread> hashers;
    for (size_t i = 0; i < 2; ++i) {
      std::string path = first_line(paths[i].out);
      if (paths[i].exit_code == 0 && !path.empty() && path.find('/') != std::string::npos) {
        hashers.emplace_back([&prog_digests, i, path] { prog_digests[i] = file_digest(path); });
      } else {
        prog_digests[i] = std::string("no ") + kPrograms[i];
      }
    }
    for (std::thread& t : hashers) t.join();
  }
  languages.join();
  driver.join();

  cache::Hasher h;
  h.field(kIdentityFormat);
  h.field(uint64_t(id.kind));
  h.field(version.out);
  h.field(driver_digest);
  if (id.kind == CompilerKind::kGcc) {
    for (const std::string& d : prog_digests) h.field(d);
  }
  for (const ProcessResult& a : answers) {
    for (const std::string& dir : gcc_installation_dirs(a.err)) {
      bool seen = false;
      for (const auto& w : id.watched_dirs) seen = seen || w.first == dir;
      cache::StatSignature sig;
      if (!seen && stat_dir(dir, &sig)) id.watched_dirs.emplace_back(dir, sig);
    }
  }
  SearchList probed[2];
  bool is_base[2] = {false, false};
  for (size_t i = 0; i < 2; ++i) {
    const ProcessResult& a = answers[i];
    h.field(a.exit_code == 0 ? a.out : "no macros");
    SearchList plain;
    if (a.exit_code == 0 && parse_search_list(a.err, &probed[i])) {
      probed[i].memoizable =
          duplicates_only_by_spelling(probed[i], a.err, {"-I", std::string(kProbeDir)}, id.kind);
      // The list without the probe, as asked without it, when the probe
      // displaced nothing; else the whole answer (the same facts).
      is_base[i] = !probe_dropped(a.err) && strip_probe(probed[i], &plain);
      h.field(encode_search_list(is_base[i] ? plain : probed[i]));
    } else {
      h.field("no search list");
    }
  }
  id.hash = h.digest();
  for (size_t i = 0; i < 2; ++i) {
    if (is_base[i]) {
      remember_bare_probed_list(store, id, i == 0 ? Language::kC : Language::kCxx, probed[i]);
    }
  }
  return id;
}

}  // namespace

std::vector<std::string> gcc_installation_dirs(std::string_view verbose_output) {
  constexpr std::string_view kFound = "Found candidate GCC installation: ";
  std::vector<std::string> dirs;
  auto add = [&](std::string_view dir) {
    if (dir.empty() || dir == "/") return;
    for (const std::string& d : dirs) {
      if (d == dir) return;
    }
    dirs.emplace_back(dir);
  };
  while (!verbose_output.empty()) {
    std::string_view line = take_line(&verbose_output);
    if (line.substr(0, kFound.size()) != kFound) continue;
    std::string_view install = line.substr(kFound.size());
    size_t slash = install.rfind('/');
    if (slash == std::string_view::npos || slash == 0) continue;
    std::string_view triple_dir = install.substr(0, slash);  // .../gcc/<triple>
    add(triple_dir);
    slash = triple_dir.rfind('/');
    if (slash != std::string_view::npos && slash > 0) add(triple_dir.substr(0, slash));
  }
  return dirs;
}

CompilerKind kind_from_version_text(std::string_view text) {
  std::string_view line = text.substr(0, text.find('\n'));
  if (line.find("clang version") != std::string_view::npos) return CompilerKind::kClang;
  if (text.find("Free Software Foundation") != std::string_view::npos &&
      (line.find("gcc") != std::string_view::npos || line.find("g++") != std::string_view::npos ||
       line.find("GCC") != std::string_view::npos || line.find("c++") != std::string_view::npos ||
       line.find("cc ") != std::string_view::npos)) {
    return CompilerKind::kGcc;
  }
  return CompilerKind::kUnknown;
}

cache::Result<CompilerIdentity> compiler_identity(cache::Store* store,
                                                  const std::string& compiler) {
  std::string program = find_program(compiler);
  cache::StatSignature sig;
  if (program.empty() || !stat_file(program, &sig)) {
    return cache::Status::error("compiler not found: " + compiler);
  }
  std::string key = memo_key(program, sig);
  if (store) {
    if (std::optional<std::string> memo = store->get_memo("compiler", key)) {
      ByteReader r(*memo);
      CompilerIdentity id;
      uint8_t kind = 0;
      uint64_t watched = 0;
      if (r.u8(&kind) && kind <= 2 && r.u64(&id.hash.lo) && r.u64(&id.hash.hi) &&
          r.str(&id.version) && r.u64(&watched) && watched < 1024) {
        bool holds = true;
        for (uint64_t i = 0; holds && i < watched; ++i) {
          std::string dir;
          cache::StatSignature then, now;
          holds = r.str(&dir) && read_signature(&r, &then) && stat_dir(dir, &now) && now == then;
          if (holds) id.watched_dirs.emplace_back(dir, then);
        }
        if (holds && r.done()) {
          id.kind = CompilerKind(kind);
          id.program = program;
          return id;
        }
      }
    }
  }
  cache::Result<CompilerIdentity> id = ask_compiler(store, program);
  if (!id.ok()) return id;
  cache::StatSignature after;
  const int64_t now = now_ns();
  bool settled = signature_is_settled(sig, now);
  for (const auto& [dir, dir_sig] : id->watched_dirs) {
    settled = settled && signature_is_settled(dir_sig, now);
  }
  if (store && stat_file(program, &after) && after == sig && settled) {
    ByteWriter w;
    w.u8(uint8_t(id->kind));
    w.u64(id->hash.lo);
    w.u64(id->hash.hi);
    w.str(id->version);
    w.u64(id->watched_dirs.size());
    for (const auto& [dir, dir_sig] : id->watched_dirs) {
      w.str(dir);
      write_signature(&w, dir_sig);
    }
    store->put_memo("compiler", key, w.bytes());
  }
  return id;
}

}  // namespace lexpack::ninja
