// Asking a compiler who it is, once per binary: the answer is kept in the
// store's "compiler" memo keyed by path and stat signature.
#include "ninja_integration/compiler_identity.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "ninja_integration/byte_codec.h"
#include "ninja_integration/file_state.h"
#include "ninja_integration/process.h"
#include "ninja_integration/search_list.h"

namespace lexpack::ninja {
namespace {

constexpr std::string_view kIdentityFormat = "lexpack-compiler-1";

std::string first_line(std::string_view text) {
  size_t nl = text.find('\n');
  return std::string(text.substr(0, nl));
}

std::string memo_key(const std::string& program, const cache::StatSignature& sig) {
  ByteWriter w;
  w.str(program);
  w.u64(sig.dev);
  w.u64(sig.ino);
  w.u64(sig.size);
  w.i64(sig.mtime_ns);
  w.i64(sig.ctime_ns);
  return w.take();
}

// Hashes a file's bytes into `h`; a file that cannot be read hashes its name.
// Compiler binaries are tens of MB: read through one reused buffer (the same
// digest as hashing the whole file at once), never copied whole into memory.
void hash_file(cache::Hasher* h, const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    cache::Hasher content;
    std::vector<char> buf(size_t(1) << 20);
    ssize_t n;
    while ((n = ::read(fd, buf.data(), buf.size())) > 0 || (n < 0 && errno == EINTR)) {
      if (n > 0) content.update(std::string_view(buf.data(), size_t(n)));
    }
    ::close(fd);
    if (n == 0) {
      h->field(content.digest().hex());
      return;
    }
  }
  h->field("unreadable:" + path);
}

cache::Result<CompilerIdentity> ask_compiler(const std::string& program) {
  CompilerIdentity id;
  id.program = program;
  ProcessResult version = run_captured({program, "--version"}, true);
  if (!version.started) return cache::Status::error(version.error);
  id.kind = version.exit_code == 0 ? kind_from_version_text(version.out) : CompilerKind::kUnknown;
  id.version = first_line(version.out);
  if (id.kind == CompilerKind::kUnknown) return id;

  cache::Hasher h;
  h.field(kIdentityFormat);
  h.field(uint64_t(id.kind));
  h.field(version.out);
  hash_file(&h, program);
  // The remaining questions are independent: ask them all at once.
  std::vector<std::vector<std::string>> questions;
  if (id.kind == CompilerKind::kGcc) {
    // The driver runs cc1/cc1plus: their bytes decide the object.
    for (const char* prog : {"cc1", "cc1plus"})
      questions.push_back({program, std::string("-print-prog-name=") + prog});
  }
  const size_t first_lang = questions.size();
  for (const char* lang : {"c", "c++"}) {
    questions.push_back({program, "-x", lang, "-dM", "-E", "/dev/null"});
    questions.push_back({program, "-x", lang, "-E", "-v", "/dev/null"});
  }
  std::vector<ProcessResult> answers = run_captured_all(questions);
  for (size_t i = 0; i < first_lang; ++i) {
    std::string path = first_line(answers[i].out);
    if (answers[i].exit_code == 0 && !path.empty() && path.find('/') != std::string::npos) {
      hash_file(&h, path);
    } else {
      h.field("no " + questions[i][1].substr(std::string_view("-print-prog-name=").size()));
    }
  }
  for (size_t i = first_lang; i < answers.size(); i += 2) {
    const ProcessResult& macros = answers[i];
    const ProcessResult& dirs = answers[i + 1];
    h.field(macros.exit_code == 0 ? macros.out : "no macros");
    SearchList list;
    if (dirs.exit_code == 0 && parse_search_list(dirs.err, &list)) {
      h.field(encode_search_list(list));
    } else {
      h.field("no search list");
    }
  }
  id.hash = h.digest();
  return id;
}

}  // namespace

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
      if (r.u8(&kind) && kind <= 2 && r.u64(&id.hash.lo) && r.u64(&id.hash.hi) &&
          r.str(&id.version) && r.done()) {
        id.kind = CompilerKind(kind);
        id.program = program;
        return id;
      }
    }
  }
  cache::Result<CompilerIdentity> id = ask_compiler(program);
  if (!id.ok()) return id;
  cache::StatSignature after;
  if (store && stat_file(program, &after) && after == sig && signature_is_settled(sig, now_ns())) {
    ByteWriter w;
    w.u8(uint8_t(id->kind));
    w.u64(id->hash.lo);
    w.u64(id->hash.hi);
    w.str(id->version);
    store->put_memo("compiler", key, w.bytes());
  }
  return id;
}

}  // namespace lexpack::ninja
