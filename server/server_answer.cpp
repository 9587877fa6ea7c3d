// One request answered: drain inotify, find a compile's entry, validate a
// closure the store remembers (by stat under its watches, so that no event
// since means it still holds), answer `lexpack scan` and a build's prepare;
// and the closure checks left for moments when nothing waits. A compile's
// answer itself is compile_answer.cpp.
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/file_stat.h"
#include "base/file_util.h"
#include "base/process.h"
#include "cache/config/config.h"
#include "cache/hash/hash.h"
#include "cache/remote/remote_tier.h"
#include "closure/action_key.h"
#include "closure/closure_memo.h"
#include "compiler/identify_compiler.h"
#include "compiler/shared_identity.h"
#include "scan/build_scan.h"
#include "server/server_state.h"

namespace lexpack::server {

void SharedStats::start_check(const std::string& cwd, uint64_t epoch) {
  if (epoch != epoch_) clear();
  epoch_ = epoch;
  cwd_ = cwd;
}

bool SharedStats::stat_once(Answers* answers, std::string_view path, base::StatSignature* sig,
                            bool (*stat)(const std::string&, base::StatSignature*)) {
  // Absolute paths (most) are looked up as they are, without a copy.
  std::string made;
  std::string_view key = path;
  if (path.empty() || path[0] != '/') {
    made = base::absolute_path(std::string(path), cwd_);
    key = made;
  }
  auto it = answers->find(key);
  if (it == answers->end()) {
    std::string name(key);
    std::optional<base::StatSignature> found;
    if (base::StatSignature s; stat(name, &s)) found = s;
    it = answers->emplace(std::move(name), found).first;
  }
  if (it->second) *sig = *it->second;
  return it->second.has_value();
}

bool SharedStats::stat_file(std::string_view path, base::StatSignature* sig) {
  return stat_once(&files_, path, sig, [](const std::string& p, base::StatSignature* s) {
    return base::stat_file(p, s);
  });
}

bool SharedStats::stat_dir(std::string_view path, base::StatSignature* sig) {
  return stat_once(&dirs_, path, sig, base::stat_dir);
}

bool write_new_file(const std::string& path, std::string_view bytes,
                    std::optional<launcher::Stamped>* stamped) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) return false;
  bool ok = base::write_all(fd, bytes);
  if (ok && stamped) *stamped = launcher::stamp_for_vouching(fd);
  if (::close(fd) != 0) ok = false;
  if (!ok) ::unlink(path.c_str());
  return ok;
}

bool Server::init(std::string* err) {
  kernel_ = lexer::default_kernel(err);
  if (!kernel_) return false;
  files_ = std::make_unique<closure::FileStates>(store_.get(), kernel_);
  if (!watches_.open()) {
    *err = std::string("inotify: ") + std::strerror(errno);
    return false;
  }
  mounts_fd_ = ::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
  own_view_known_ =
      ::stat("/proc/self/ns/mnt", &own_mnt_) == 0 && ::stat("/proc/self/root", &own_root_) == 0;
  return true;
}

void Server::drop_all_trust() {
  ++drops_;
  for (Entry& e : entries_) e.trusted = false;
  watches_.forget_dependencies();
}

void Server::drain() {
  bool drop = false;
  watches_.drain(
      [this](TrustRef r) {
        if (r.id < entries_.size() && entries_[r.id].generation == r.generation) {
          entries_[r.id].trusted = false;
        }
      },
      &drop);
  // A mount or unmount can put other files under a watched path without any
  // event: trust nothing from before it (nor anything when it cannot be told).
  struct pollfd mounts {};
  mounts.fd = mounts_fd_;
  mounts.events = POLLPRI;
  if (mounts_fd_ < 0 || ::poll(&mounts, 1, 0) != 0) drop = true;
  if (drop) drop_all_trust();
}

void Server::apply_client(const Request& req) {
  ::clearenv();
  env_ = req.env;
  for (std::string& e : env_) {
    if (e.find('=') != std::string::npos) ::putenv(e.data());
  }
  ::umask(req.umask);
}

base::Result<compiler::CompilerIdentity> shared_compiler_identity(cache::Store* store,
                                                                  const std::string& compiler) {
  std::unique_ptr<cache::remote::RemoteTier> tier;
  compiler::RemoteAnswers answers;
  answers.open_tier = [&tier]() -> cache::remote::RemoteTier* {
    std::string error;
    tier = cache::remote::RemoteTier::open(cache::load_config(""), &error);
    return tier.get();
  };
  return compiler::compiler_identity(store, compiler, &answers);
}

base::Result<compiler::CompilerIdentity> IdentityMemo::get(cache::Store* store,
                                                           const std::string& compiler,
                                                           const std::string& cwd) {
  // A relative path with a slash names a different binary in each directory.
  bool relative = compiler.find('/') != std::string::npos && compiler[0] != '/';
  std::string key = relative ? cwd + '\0' + compiler : compiler;
  auto it = known_.find(key);
  if (it == known_.end()) {
    it = known_.emplace(std::move(key), shared_compiler_identity(store, compiler)).first;
  }
  return it->second;
}

std::optional<uint32_t> Server::entry_of(const std::string& cwd,
                                         const compiler::CompileCommand& cmd,
                                         const std::string& base_dir, std::string* why,
                                         IdentityMemo* identities) {
  if (!cmd.uncacheable.empty()) {
    *why = "uncacheable";
    return std::nullopt;
  }
  auto identity = identities ? identities->get(store_.get(), cmd.compiler, cwd)
                             : shared_compiler_identity(store_.get(), cmd.compiler);
  if (!identity.ok() || identity->kind == compiler::CompilerKind::kUnknown) {
    *why = "compiler unknown";
    return std::nullopt;
  }
  if (std::string sentence;
      !compiler::refused_by_compiler(cmd, identity->kind, &sentence).empty()) {
    *why = "uncacheable";
    return std::nullopt;
  }
  // Named as the launcher names its closure memo: the compiler found on the
  // client's PATH, the arguments, the working directory, every variable that
  // reaches a compile (CPATH, LANG, SOURCE_DATE_EPOCH, ...) and, for a
  // relocated entry, the base_dir. Variables no compile reads (a build's own
  // bookkeeping, a shell's) name the same entry, so `lexpack ninja` can have
  // its build's entries checked before the compiles come.
  cache::Hash128 tu = closure::translation_unit_key(*identity, cmd, cwd, base_dir);
  auto [it, added] = index_.emplace(tu.hex(), uint32_t(entries_.size()));
  if (added) {
    entries_.push_back({});
    entries_.back().tu = tu.hex();
  }
  return it->second;
}

const std::string& Server::client_base_dir() {
  BaseDirSource source;
  if (const char* v = std::getenv("LEXPACK_BASE_DIR")) source.variable = v;
  if (base::StatSignature sig;
      base::stat_file(store_->dir() + "/" + cache::kConfigFileName, &sig)) {
    source.file = sig;
  }
  if (!base_dir_source_ || !(*base_dir_source_ == source)) {
    base_dir_ = cache::load_config("").base_dir;
    base_dir_source_ = source;
  }
  return base_dir_;
}

bool Server::others_waiting() const {
  struct pollfd p {};
  p.fd = listener_;
  p.events = POLLIN;
  return listener_ >= 0 && ::poll(&p, 1, 0) > 0;
}

void Server::queue_trust(uint32_t id, const std::string& cwd) {
  Entry& e = entries_[id];
  e.cwd = cwd;
  if (e.queued) return;
  e.queued = true;
  to_trust_.push_back(id);
}

void Server::learn(const Request& req) {
  if (req.argv.empty() || req.cwd.empty() || req.cwd[0] != '/' || ::chdir(req.cwd.c_str()) != 0) {
    return;
  }
  apply_client(req);
  compiler::CompileCommand cmd = compiler::parse_compile_command(req.argv);
  std::string why;
  if (std::optional<uint32_t> id = entry_of(req.cwd, cmd, client_base_dir(), &why);
      id && !entries_[*id].trusted) {
    queue_trust(*id, req.cwd);
  }
}

void Server::idle_work() {
  if (!to_vouch_.empty()) {
    vouch({}, true);
    return;
  }
  if (spares_.wants_work()) {
    spares_.make_wanted();
    return;
  }
  if (to_trust_.empty()) return;
  uint32_t id = to_trust_.front();
  to_trust_.pop_front();
  Entry& e = entries_[id];
  e.queued = false;
  if (e.trusted || ::chdir(e.cwd.c_str()) != 0) return;
  drain();
  std::string why;
  build_trust(id, e.cwd, &why);
}

bool Server::build_scan_trust(uint32_t id, const std::string& cwd, std::string* why,
                              closure::ScanFileCache* files, scan::DirStatCache* dirs) {
  Entry& e = entries_[id];
  std::string bytes;
  scan::KnownScan known;
  if (!store_->visit_memo(scan::kScanMemoTable, e.tu,
                          [&](std::string_view b) { bytes.assign(b); }) ||
      !store_->visit_memo(scan::kExactMemoTable, e.tu,
                          [&](std::string_view b) { known.exact.assign(b); })) {
    *why = "no scan memo";
    return false;
  }
  std::string_view inner;
  closure::ClosureMemo memo;
  if (!scan::scan_memo_closure(bytes, &inner) || !closure::decode_closure_memo(inner, &memo)) {
    *why = "scan memo unreadable";
    return false;
  }
  if (!watch_memo(id, memo, cwd, why)) return false;
  std::vector<std::string_view> deps;  // kept by `files`
  if (!scan::check_encoded_scan_memo(bytes, cwd, files, dirs, &deps, &known.sizes)) {
    *why = "scan memo out of date";
    return false;
  }
  note_rechecks(&e, memo, cwd);
  known.deps.assign(deps.begin(), deps.end());
  e.known = scan::number_known_scan(std::move(known), &scan_paths_);
  return trusted_after_check(id, why);
}

Reply Server::scan_answers(const Request& req) {
  Reply r;
  r.kind = ReplyKind::kInfo;
  r.answers.resize(req.compiles.size());
  apply_client(req);
  drain();
  size_t known = 0;
  bool busy = false;
  IdentityMemo identities;
  const auto deadline = std::chrono::steady_clock::now() + kBatchCheckBudget;
  // Stat answers shared by this request's checks (see SharedStats).
  std::unique_ptr<closure::ScanFileCache> files;
  scan::DirStatCache dirs;
  uint64_t epoch = 0;
  for (size_t i = 0; i < req.compiles.size(); ++i) {
    const Request::Compile& c = req.compiles[i];
    if (c.argv.empty() || c.cwd.empty() || c.cwd[0] != '/' || ::chdir(c.cwd.c_str()) != 0) continue;
    compiler::CompileCommand cmd = compiler::parse_compile_command(c.argv);
    // A build's other steps (links, packaging, custom commands) are not
    // compiles: their program is never asked who it is (it would run with
    // the compiler's questions for arguments).
    if (!scan::scannable(cmd)) continue;
    auto identity = identities.get(store_.get(), cmd.compiler, c.cwd);
    if (!identity.ok() || identity->kind == compiler::CompilerKind::kUnknown) continue;
    // Named as `lexpack scan` names its memos (no base_dir: a scan's
    // answer names this checkout's files).
    std::string tu = closure::translation_unit_key(*identity, cmd, c.cwd).hex();
    auto [it, added] = index_.emplace("scan " + tu, uint32_t(entries_.size()));
    if (added) {
      entries_.push_back({});
      entries_.back().tu = tu;
    }
    uint32_t id = it->second;
    std::string why;
    // A compile waiting is answered first, and the scan waits at most this
    // long: it checks what is left itself (on all cores).
    busy = busy || others_waiting() || std::chrono::steady_clock::now() > deadline;
    if (!entries_[id].trusted && !busy) {
      if (!files || epoch != stat_epoch()) {
        files = std::make_unique<closure::ScanFileCache>();
        dirs.clear();
        epoch = stat_epoch();
      }
      build_scan_trust(id, c.cwd, &why, files.get(), &dirs);
    }
    if (entries_[id].trusted &&
        (!compiler::same_dirs_hold(entries_[id].same_dirs) || !rechecked(&entries_[id]))) {
      entries_[id].trusted = false;  // the scan checks its memo itself
    }
    if (!entries_[id].trusted) continue;
    r.answers[i] = scan::encode_known_scan(entries_[id].known);
    ++known;
    ++scan_answers_;
  }
  if (known > 0) r.paths = scan_paths_.paths();
  r.info = std::to_string(known) + " of " + std::to_string(req.compiles.size()) +
           " scans answered from memory";
  return r;
}

}  // namespace lexpack::server
