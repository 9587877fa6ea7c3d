// An identity answer holds no stat signature (they are machine-local): the
// taker checks names and contents instead, and gives the watched dirs its
// own signatures.
#include "compiler/shared_identity.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <thread>

#include "base/byte_codec.h"
#include "base/file_stat.h"
#include "base/once_map.h"
#include "base/process.h"

namespace lexpack::compiler {
namespace {

constexpr std::string_view kAnswerDomain = "lexpack compiler identity answer v3";

// The sorted entry names of `dir`, one a line; "" when it cannot be read.
std::string dir_listing(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return {};
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  std::string out = "listed\n";
  for (const std::string& n : names) out += n + "\n";
  return out;
}

bool is_directory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 || errno != ENOENT;
}

}  // namespace

std::string list_mismatch(const SearchList& list) {
  for (const auto* dirs : {&list.quote_dirs, &list.bracket_dirs}) {
    for (const std::string& d : *dirs) {
      if (!is_directory(d)) return "search dir " + d + " is no directory here";
    }
  }
  for (const std::string& d : list.missing_dirs) {
    if (exists(d)) return "search dir " + d + " exists here";
  }
  return "";
}

namespace {

std::string digest_of_fd(int fd) {
  cache::Hasher content;
  // Small enough to stay in cache between the read and the hash, and left
  // uninitialized: zeroing a large fresh buffer costs a page fault a page.
  constexpr size_t kChunk = size_t(64) << 10;
  std::unique_ptr<char[]> buf(new char[kChunk]);
  ssize_t n;
  while ((n = ::read(fd, buf.get(), kChunk)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) content.update(std::string_view(buf.get(), size_t(n)));
  }
  return n == 0 ? content.digest().hex() : std::string();
}

}  // namespace

std::string file_digest(const std::string& path) {
  // Once per file and signature in a process: the drivers of a build (cc,
  // c++) run the same cc1 and cc1plus (tens of MB), and a scan asks their
  // identities at the same moment.
  static base::OnceMap<std::string> digests;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    if (fd >= 0) ::close(fd);
    return "unreadable:" + path;
  }
  base::VarintWriter key;
  key.str(path);
  base::write_signature(&key, base::signature_of(st));
  std::string digest = digests.get(key.take(), [&] {
    std::string d = digest_of_fd(fd);
    return d.empty() ? "unreadable:" + path : d;
  });
  ::close(fd);
  return digest;
}

cache::Hash128 identity_answer_key(const std::string& program, const std::string& driver_digest) {
  char* resolved = ::realpath(program.c_str(), nullptr);
  if (!resolved || driver_digest.rfind("unreadable:", 0) == 0) {
    ::free(resolved);
    return cache::Hash128{};
  }
  cache::Hasher h;
  h.field(kAnswerDomain);
  h.field(program);
  h.field(resolved);
  ::free(resolved);
  h.field(driver_digest);
  h.field(relevant_environment());
  return h.digest();
}

std::string encode_identity_answer(const CompilerIdentity& id, const IdentityFacts& facts) {
  base::VarintWriter w;
  w.str(kAnswerDomain);
  w.u8(uint8_t(id.kind));
  w.u64(id.hash.lo);
  w.u64(id.hash.hi);
  w.str(id.version);
  w.u64(facts.programs.size());
  for (const auto& [path, digest] : facts.programs) {
    w.str(path);
    w.str(digest);
  }
  w.u64(id.watched_dirs.size());
  for (const auto& [dir, sig] : id.watched_dirs) {
    w.str(dir);
    w.str(dir_listing(dir));
  }
  for (const std::optional<SearchList>& list : facts.bare_lists) {
    w.u8(list ? 1 : 0);
    if (list) w.str(encode_search_list(*list));
  }
  w.str(id.assembler.answer);
  w.str(id.assembler.path);
  w.str(id.assembler.path.empty() ? std::string() : file_digest(id.assembler.path));
  return w.take();
}

bool accept_identity_answer(std::string_view bytes, const std::string& program,
                            CompilerIdentity* id, IdentityFacts* facts, std::string* why) {
  base::VarintReader r(bytes);
  std::string domain;
  uint8_t kind = 0;
  uint64_t programs = 0, watched = 0;
  *id = CompilerIdentity();
  *facts = IdentityFacts();
  if (!(r.str(&domain) && domain == kAnswerDomain && r.u8(&kind) && kind >= 1 && kind <= 2 &&
        r.u64(&id->hash.lo) && r.u64(&id->hash.hi) && r.str(&id->version) && r.u64(&programs) &&
        programs <= 3)) {
    *why = "malformed compiler answer";
    return false;
  }
  id->kind = CompilerKind(kind);
  id->program = program;
  // gcc's driver runs cc1 and cc1plus and reads a specs file beside them if
  // there is one: all three must be named, with the same bytes here.
  if (id->kind == CompilerKind::kGcc && programs != 3) {
    *why = "compiler answer without its cc1 programs";
    return false;
  }
  for (uint64_t i = 0; i < programs; ++i) {
    std::string path, digest;
    if (!(r.str(&path) && r.str(&digest)) || path.empty() || path[0] != '/') {
      *why = "malformed compiler answer";
      return false;
    }
    facts->programs.emplace_back(std::move(path), std::move(digest));
  }
  // cc1plus is tens of MB: the programs are hashed side by side.
  std::vector<std::string> here(facts->programs.size());
  {
    std::vector<std::thread> hashers;
    for (size_t i = 0; i < here.size(); ++i) {
      hashers.emplace_back([&, i] { here[i] = file_digest(facts->programs[i].first); });
    }
    for (std::thread& t : hashers) t.join();
  }
  for (size_t i = 0; i < here.size(); ++i) {
    if (here[i] != facts->programs[i].second) {
      *why = facts->programs[i].first + " differs here";
      return false;
    }
  }
  if (!(r.u64(&watched) && watched < 1024)) {
    *why = "malformed compiler answer";
    return false;
  }
  for (uint64_t i = 0; i < watched; ++i) {
    std::string dir, listing;
    base::StatSignature sig;
    if (!(r.str(&dir) && r.str(&listing))) {
      *why = "malformed compiler answer";
      return false;
    }
    if (listing.empty() || dir_listing(dir) != listing || !base::stat_dir(dir, &sig)) {
      *why = "the GCC installations in " + dir + " differ here";
      return false;
    }
    id->watched_dirs.emplace_back(std::move(dir), sig);
  }
  for (std::optional<SearchList>& list : facts->bare_lists) {
    uint8_t has = 0;
    std::string encoded;
    SearchList decoded;
    if (!(r.u8(&has) && has <= 1 &&
          (!has || (r.str(&encoded) && decode_search_list(encoded, &decoded))))) {
      *why = "malformed compiler answer";
      return false;
    }
    if (!has) continue;
    if (std::string m = list_mismatch(decoded); !m.empty()) {
      *why = m;
      return false;
    }
    list = std::move(decoded);
  }
  std::string as_digest;
  if (!(r.str(&id->assembler.answer) && r.str(&id->assembler.path) && r.str(&as_digest) &&
        r.done())) {
    *why = "malformed compiler answer";
    return false;
  }
  // The driver here runs the same assembler bytes (found the same way).
  const std::string as_here = base::find_program(id->assembler.answer);
  if (as_here != id->assembler.path ||
      (!as_here.empty() &&
       (file_digest(as_here) != as_digest || !base::stat_file(as_here, &id->assembler.sig)))) {
    *why = "the assembler (" + id->assembler.answer + ") differs here";
    return false;
  }
  return true;
}

}  // namespace lexpack::compiler
