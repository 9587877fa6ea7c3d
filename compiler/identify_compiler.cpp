// Asking a compiler who it is, once per binary: the answer is kept in the
// store's "compiler" memo keyed by path and stat signature.
#include "compiler/identify_compiler.h"

#include <sys/stat.h>

#include <cstdlib>
#include <thread>
#include <vector>

#include "base/byte_codec.h"
#include "base/file_stat.h"
#include "base/process.h"
#include "cache/once_across_processes.h"
#include "compiler/derived_search_list.h"
#include "compiler/search_list.h"
#include "compiler/shared_identity.h"

namespace lexpack::compiler {
namespace {

constexpr std::string_view kIdentityFormat = "lexpack-compiler-4";

std::string first_line(std::string_view text) {
  size_t nl = text.find('\n');
  return std::string(text.substr(0, nl));
}

std::string memo_key(const std::string& program, const base::StatSignature& sig) {
  base::VarintWriter w;
  w.str(kIdentityFormat);  // an identity hashed another way is asked again
  w.str(program);
  base::write_signature(&w, sig);
  return w.take();
}

// The digest of the specs file the driver reads, wherever it finds it
// (`where`: its answer to -print-file-name=specs; the name alone when there
// is none): it changes what the driver passes to cc1, and so its search
// lists for some flags (compiler/derived_search_list.h).
std::string specs_digest(const base::ProcessResult& where) {
  const std::string specs = first_line(where.out);
  return where.exit_code == 0 && !specs.empty() && specs[0] == '/' ? file_digest(specs)
                                                                   : "no specs file";
}

// Asks `program`; `facts` gets what another machine checks before taking
// the answer. `driver_digest` is the driver's, when known already.
// Every question at once, before the driver says what it is: each runs a
// process (cc1 and cc1plus tens of ms), and the answers of a driver that
// turns out not to be gcc or clang are dropped. One run per language
// answers both its predefined macros (stdout) and its search list (stderr);
// -I kProbeDir makes that list a base for derived ones
// (derived_search_list.h) and does not change the macros.
base::Result<CompilerIdentity> ask_compiler(cache::Store* store, const std::string& program,
                                            std::string driver_digest, IdentityFacts* facts) {
  CompilerIdentity id;
  id.program = program;
  std::vector<std::vector<std::string>> questions;
  for (const char* lang : {"c", "c++"}) {
    questions.push_back(
        {program, "-x", lang, "-dM", "-E", "-v", "-I", std::string(kProbeDir), "/dev/null"});
  }
  std::vector<base::ProcessResult> answers;
  std::thread languages([&] { answers = base::run_captured_all(questions); });
  // Hashing the binaries (cc1plus is 35 MB) overlaps the questions: one
  // thread per binary.
  std::thread driver([&] {
    if (driver_digest.empty()) driver_digest = file_digest(program);
  });
  // The gcc driver runs cc1/cc1plus: their bytes decide the object.
  constexpr const char* kPrograms[] = {"cc1", "cc1plus"};
  std::string prog_digests[2], prog_paths[2];
  std::vector<base::ProcessResult> first =
      base::run_captured_all({{program, "--version"},
                              {program, "-print-prog-name=cc1"},
                              {program, "-print-prog-name=cc1plus"},
                              {program, "-print-file-name=specs"},
                              {program, "-print-prog-name=as"}});
  const base::ProcessResult& version = first[0];
  if (version.started) {
    id.kind = version.exit_code == 0 ? kind_from_version_text(version.out) : CompilerKind::kUnknown;
    id.version = first_line(version.out);
  }
  if (id.kind == CompilerKind::kGcc) {
    std::vector<std::thread> hashers;
    for (size_t i = 0; i < 2; ++i) {
      const base::ProcessResult& where = first[i + 1];
      std::string path = first_line(where.out);
      if (where.exit_code == 0 && !path.empty() && path.find('/') != std::string::npos) {
        prog_paths[i] = path;
        hashers.emplace_back([&prog_digests, i, path] { prog_digests[i] = file_digest(path); });
      } else {
        prog_digests[i] = std::string("no ") + kPrograms[i];
      }
    }
    for (std::thread& t : hashers) t.join();
  }
  std::string as_digest = "no assembler";
  if (id.kind != CompilerKind::kUnknown && first[4].exit_code == 0) {
    id.assembler.answer = first_line(first[4].out);
    id.assembler.path = base::find_program(id.assembler.answer);  // as the driver runs it
    if (!id.assembler.path.empty() && base::stat_file(id.assembler.path, &id.assembler.sig)) {
      as_digest = file_digest(id.assembler.path);
    } else {
      id.assembler.path.clear();
    }
  }
  languages.join();
  driver.join();
  if (!version.started) return base::Status::error(version.error);
  if (id.kind == CompilerKind::kUnknown) return id;

  cache::Hasher h;
  h.field(kIdentityFormat);
  h.field(uint64_t(id.kind));
  h.field(version.out);
  h.field(driver_digest);
  // The assembler by its bytes only: where it lies differs between machines.
  h.field(as_digest);
  if (id.kind == CompilerKind::kGcc) {
    for (const std::string& d : prog_digests) h.field(d);
    h.field(specs_digest(first[3]));
    // gcc looks for its specs file among its library prefixes, cc1plus's own
    // directory only where the programs are not kept apart in libexec/
    // (Debian's layout). Elsewhere the answer does not travel.
    if (!prog_paths[0].empty() && !prog_paths[1].empty() &&
        prog_paths[1].find("/libexec/") == std::string::npos) {
      for (size_t i = 0; i < 2; ++i) facts->programs.emplace_back(prog_paths[i], prog_digests[i]);
      // The specs file's digest (or that it cannot be read) is checked by a
      // taker too.
      std::string specs = prog_paths[1].substr(0, prog_paths[1].rfind('/')) + "/specs";
      facts->programs.emplace_back(specs, file_digest(specs));
    }
  }
  for (const base::ProcessResult& a : answers) {
    for (const std::string& dir : gcc_installation_dirs(a.err)) {
      bool seen = false;
      for (const auto& w : id.watched_dirs) seen = seen || w.first == dir;
      base::StatSignature sig;
      if (!seen && base::stat_dir(dir, &sig)) id.watched_dirs.emplace_back(dir, sig);
    }
  }
  SearchList probed[2];
  bool is_base[2] = {false, false};
  for (size_t i = 0; i < 2; ++i) {
    const base::ProcessResult& a = answers[i];
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
    if (is_base[i] && probed[i].memoizable) facts->bare_lists[i] = probed[i];
    if (is_base[i]) {
      remember_bare_probed_list(
          store, id, i == 0 ? compiler::Language::kC : compiler::Language::kCxx, probed[i]);
    }
  }
  return id;
}

}  // namespace

namespace {

// The remembered identity of `program`, while every directory it watches
// keeps its signature.
std::optional<CompilerIdentity> remembered_identity(cache::Store* store, const std::string& program,
                                                    const std::string& key) {
  std::optional<std::string> memo = store->get_memo("compiler", key);
  if (!memo) return std::nullopt;
  base::VarintReader r(*memo);
  CompilerIdentity id;
  uint8_t kind = 0;
  uint64_t watched = 0;
  if (!(r.u8(&kind) && kind <= 2 && r.u64(&id.hash.lo) && r.u64(&id.hash.hi) &&
        r.str(&id.version) && r.u64(&watched) && watched < 1024)) {
    return std::nullopt;
  }
  for (uint64_t i = 0; i < watched; ++i) {
    std::string dir;
    base::StatSignature then, now;
    if (!(r.str(&dir) && base::read_signature(&r, &then) && base::stat_dir(dir, &now) &&
          now == then)) {
      return std::nullopt;
    }
    id.watched_dirs.emplace_back(dir, then);
  }
  // The assembler the driver would run now must be the file asked then,
  // unchanged: PATH may name another, or binutils may have been updated.
  if (!(r.str(&id.assembler.answer) && r.str(&id.assembler.path) &&
        base::read_signature(&r, &id.assembler.sig) && r.done())) {
    return std::nullopt;
  }
  if (base::find_program(id.assembler.answer) != id.assembler.path) return std::nullopt;
  if (!id.assembler.path.empty()) {
    base::StatSignature now;
    if (!base::stat_file(id.assembler.path, &now) || !(now == id.assembler.sig)) {
      return std::nullopt;
    }
  }
  id.kind = CompilerKind(kind);
  id.program = program;
  return id;
}

// The identity another machine stored for the same driver bytes, once it
// holds here; its bare search lists are remembered like asked ones.
std::optional<CompilerIdentity> fetched_identity(cache::Store* store, const std::string& program,
                                                 const cache::Hash128& key, RemoteAnswers* remote) {
  std::optional<std::string> bytes = remote->tier->fetch_answer(key, remote->count, &remote->note);
  if (!bytes) return std::nullopt;
  CompilerIdentity id;
  IdentityFacts facts;
  std::string why;
  if (!accept_identity_answer(*bytes, program, &id, &facts, &why)) {
    remote->count("remote_answers_refused", 1);
    remote->note += "compiler answer from the remote refused: " + why + "; ";
    return std::nullopt;
  }
  if (id.kind == CompilerKind::kClang) {
    // clang reads configuration files (beside its binary, in its system and
    // user config dirs) that change its macros and search lists and that no
    // answer names: it is asked on every machine.
    remote->count("remote_answers_refused", 1);
    remote->note += "compiler answer from the remote refused: clang's configuration files; ";
    return std::nullopt;
  }
  for (size_t i = 0; i < 2; ++i) {
    if (facts.bare_lists[i]) {
      remember_bare_probed_list(store, id,
                                i == 0 ? compiler::Language::kC : compiler::Language::kCxx,
                                *facts.bare_lists[i]);
    }
  }
  remote->note += "compiler identity from the remote; ";
  return id;
}

}  // namespace

bool library_path_has_specs() {
  const char* v = std::getenv("LIBRARY_PATH");
  if (!v) return false;
  std::string_view rest = v;
  while (true) {
    size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    struct stat st;
    if (::stat(((dir.empty() ? std::string(".") : dir) + "/specs").c_str(), &st) == 0) return true;
    if (colon == std::string_view::npos) return false;
    rest.remove_prefix(colon + 1);
  }
}

base::Result<CompilerIdentity> compiler_identity(cache::Store* store, const std::string& compiler,
                                                 RemoteAnswers* remote) {
  std::string program = base::find_program(compiler);
  base::StatSignature sig;
  if (program.empty() || !base::stat_file(program, &sig)) {
    return base::Status::error("compiler not found: " + compiler);
  }
  std::string key = memo_key(program, sig);
  if (store) {
    if (std::optional<CompilerIdentity> id = remembered_identity(store, program, key)) return *id;
  }
  // The first compiles of a fresh cache (ninja -j N) ask the compiler once:
  // the others wait for the first and read its memo.
  std::optional<cache::ComputeOnce> once;
  if (store) {
    once.emplace(store->dir(), "compiler " + key);
    if (once->waited()) {
      if (std::optional<CompilerIdentity> id = remembered_identity(store, program, key)) return *id;
    }
  }
  // Another machine's answer for the same driver bytes, when a remote is
  // there (never with search-path variables set: their lists are not shared).
  std::string driver_digest;
  cache::Hash128 remote_key{};
  if (remote && !remote->tier && remote->open_tier) remote->tier = remote->open_tier();
  if (remote && remote->tier && !search_path_environment_set() && !library_path_has_specs()) {
    driver_digest = file_digest(program);
    remote_key = identity_answer_key(program, driver_digest);
  }
  const bool shareable = !(remote_key == cache::Hash128{});
  std::optional<CompilerIdentity> fetched;
  if (shareable) fetched = fetched_identity(store, program, remote_key, remote);
  IdentityFacts facts;
  base::Result<CompilerIdentity> id = fetched ? base::Result<CompilerIdentity>(*fetched)
                                              : ask_compiler(store, program, driver_digest, &facts);
  if (!id.ok()) return id;
  if (shareable && !fetched && id->kind == CompilerKind::kGcc && facts.programs.size() == 3 &&
      remote->tier->can_write()) {
    remote->tier->upload_answer(remote_key, encode_identity_answer(*id, facts), remote->count,
                                &remote->note);
  }
  base::StatSignature after;
  const int64_t now = base::now_ns();
  bool settled = base::signature_is_settled(sig, now);
  for (const auto& [dir, dir_sig] : id->watched_dirs) {
    settled = settled && base::signature_is_settled(dir_sig, now);
  }
  if (!id->assembler.path.empty()) {
    settled = settled && base::signature_is_settled(id->assembler.sig, now);
  }
  if (store && base::stat_file(program, &after) && after == sig && settled) {
    base::VarintWriter w;
    w.u8(uint8_t(id->kind));
    w.u64(id->hash.lo);
    w.u64(id->hash.hi);
    w.str(id->version);
    w.u64(id->watched_dirs.size());
    for (const auto& [dir, dir_sig] : id->watched_dirs) {
      w.str(dir);
      base::write_signature(&w, dir_sig);
    }
    w.str(id->assembler.answer);
    w.str(id->assembler.path);
    base::write_signature(&w, id->assembler.sig);
    store->put_memo("compiler", key, w.bytes());
  }
  return id;
}

std::string refused_by_compiler(const compiler::CompileCommand& command, CompilerKind kind,
                                std::string* why) {
  if (command.makes_pch && kind == CompilerKind::kClang) {
    *why = "clang's precompiled header records the times of the headers it holds";
    return "precompiled_header";
  }
  // Variables that make the compiler write a file beside the object (a
  // dependency list, clang's option, header and diagnostics logs), which a
  // hit would not write.
  for (const char* name : {"DEPENDENCIES_OUTPUT", "SUNPRO_DEPENDENCIES", "CC_PRINT_OPTIONS",
                           "CC_PRINT_HEADERS", "CC_LOG_DIAGNOSTICS"}) {
    if (std::getenv(name)) {  // clang takes an empty value as set
      *why = std::string(name) + " makes the compiler write a file a hit would not";
      return "side_output_environment";
    }
  }
  return "";
}

}  // namespace lexpack::compiler
