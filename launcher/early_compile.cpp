// A compile started before its key, where the answer is known to be a miss:
// the translation unit's own source changed in its directives (its kept
// closure does not apply, so the closure is evaluated again), or it was never
// compiled with these arguments, and no remote can hold its entry. The
// compiler runs from the start, in this process's group as on any miss (an
// interrupted build stops it with the launcher); the key is made beside it
// (here or by the server). The result is stored only when nothing the key
// rests on was stamped at or after the compile's start on the file clock
// (changed_since_early_start): it may have been read by the compiler in one
// state and by the key in another. When the key has an entry after all (an
// edit undone, another checkout's or an imported entry, a comment edit's
// token key), the compiler and what it started are stopped and the entry
// served.
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_set>

#include "launcher/launcher_impl.h"

namespace lexpack::launcher::detail {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

// Whether a change may have stamped `s` at or after `start`. A filesystem
// that stamps whole seconds (ext3, ext4 with small inodes) puts a change
// made after the start, within the same second, before it: times that are
// both whole seconds are judged by the second the start falls in.
bool stamped_since(const base::StatSignature& s, int64_t start) {
  if (s.mtime_ns % kSecond == 0 && s.ctime_ns % kSecond == 0) start -= start % kSecond;
  return std::max(s.mtime_ns, s.ctime_ns) >= start;
}

// lstat(2): a path component swapped (a symlink made again, a directory
// renamed into place) is a new inode, or one with a new ctime.
std::optional<base::StatSignature> lstat_signature(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
  return base::signature_of(st);
}

// True when the filesystem holding `path` stamps its files with this
// kernel's clock (base::local_filesystem_type).
bool on_local_filesystem(const std::string& path) {
  struct statfs fs;
  return ::statfs(path.empty() ? "." : path.c_str(), &fs) == 0 &&
         base::local_filesystem_type(int64_t(fs.f_type));
}

// `dir` (absolute) and every directory above it, up to the root.
void add_with_ancestors(std::string dir, std::set<std::string>* dirs) {
  while (!dir.empty() && dirs->insert(dir).second && dir != "/") {
    dir = std::string(base::dir_of(dir));
  }
}

// The directories holding a closure's paths and those above them. Paths
// named in one directory (a closure's thousands of files and missing
// candidates lie in a few dozen) are made absolute once per directory as
// written: the file's own name does not move its directory, unless it is
// "." or ".." (or empty).
class DirsAbove {
 public:
  explicit DirsAbove(const std::string& cwd) : cwd_(cwd) {}

  void add(std::string_view path) {
    if (plain(path) && !seen_.insert(base::dir_of(path)).second) return;
    add_with_ancestors(std::string(base::dir_of(base::normal_path(std::string(path), cwd_))),
                       &dirs_);
  }
  // A failed probe with its directory's number in the closure (equal
  // numbers, equal directories): one path of each number is enough.
  void add_numbered(std::string_view path, uint32_t number) {
    if (number < kMaxNumber && plain(path)) {
      if (numbers_.size() <= number) numbers_.resize(size_t(number) + 1);
      if (numbers_[number]) return;
      numbers_[number] = true;
    }
    add(path);
  }
  const std::set<std::string>& dirs() const { return dirs_; }

 private:
  static constexpr uint32_t kMaxNumber = 1u << 22;
  static bool plain(std::string_view path) {
    const std::string_view name = path.substr(path.rfind('/') + 1);  // npos + 1 == 0
    return !name.empty() && name != "." && name != "..";
  }
  const std::string& cwd_;
  std::vector<bool> numbers_;
  std::unordered_set<std::string_view> seen_;  // views into the closure's paths
  std::set<std::string> dirs_;
};

}  // namespace

EarlyCompile::~EarlyCompile() {
  if (thread.joinable()) thread.join();
}

bool Launcher::early_compile_applies() const {
  if (explain_ || read_only_ || remote_ || !prefix_.empty() || cmd_.makes_pch ||
      env_flag("LEXPACK_SERVE_READS")) {
    return false;
  }
  if (const char* v = std::getenv("LEXPACK_COMPILE_EARLY"); v && std::string_view(v) == "0") {
    return false;
  }
  if (!never_compiled_ && !source_changed_) return false;
  // Its check rests on file times from this kernel's clock: not on NFS,
  // FUSE, 9p or overlayfs (a container's /usr), judged by the source, the
  // working directory and the compiler (which lives beside its headers).
  return on_local_filesystem(cmd_.source) && on_local_filesystem(cwd_) &&
         on_local_filesystem(identity_.program);
}

void Launcher::start_early_compile() {
  auto early = std::make_unique<EarlyCompile>();
  std::vector<std::string> run_argv = compile_argv(&early->own_depfile);
  if (!early->own_depfile.empty()) early->depfile_guard.emplace(early->own_depfile);
  // The directories the compile itself writes in (its outputs, the
  // compiler's temporary files): their times move during any compile, so
  // each is held to being the same directory instead.
  std::vector<std::string> written = {"/tmp", "/var/tmp", "/usr/tmp"};
  for (const char* name : {"TMPDIR", "TMP", "TEMP"}) {
    if (const char* v = std::getenv(name); v && *v) written.push_back(base::normal_path(v, cwd_));
  }
  for (const std::string* output :
       {&cmd_.output, &cmd_.depfile, &cmd_.dwo_output, &early->own_depfile}) {
    if (output->empty()) continue;
    written.push_back(std::string(base::dir_of(base::normal_path(*output, cwd_))));
  }
  for (const std::string& dir : written) {
    if (std::optional<base::StatSignature> sig = lstat_signature(dir)) {
      early->written_dirs[dir] = {sig->dev, sig->ino};
    }
  }
  // Files stamped from the compile's start on may have changed after the
  // compiler read them. The start is the file clock's next tick (at most a
  // few milliseconds away): a file written just before, within the current
  // tick (a test, a generator, a fast editor), is not refused for it.
  early->file_clock = base::next_file_clock_tick_ns();
  early->started_us = elapsed_us();
  EarlyCompile* e = early.get();
  e->thread = std::thread([e, run_argv = std::move(run_argv)] {
    e->result = base::run_captured(run_argv, false, nullptr, &e->pid);
    e->done.store(true);
  });
  early_ = std::move(early);
  note(std::string("compiling at once (") +
       (never_compiled_ ? "never compiled with these arguments"
                        : "the source's directives changed") +
       "), the key made beside it");
}

base::ProcessResult Launcher::finish_early_compile() {
  early_->thread.join();
  return std::move(early_->result);
}

bool Launcher::settle_early_compile(const cache::Hash128& key) {
  if (!early_) return false;
  // The token key is wanted either way: the result is kept under it too, so
  // that a comment edited later finds it.
  find_token_key();
  const bool entry = store_->get_action(key) || (token_key_ && store_->get_action(*token_key_)) ||
                     (!base_dir_.empty() && store_->get_action(closure::pinned_key(key, cwd_)));
  if (!entry) return true;
  // An entry answers only for a key that still holds.
  if (std::string changed = check_unchecked_memo(); !changed.empty()) {
    note("the server's closure memo out of date (" + changed + "): the compile goes on");
    return true;
  }
  stop_early_compile();
  return false;
}

void Launcher::stop_early_compile() {
  // The driver, held stopped, and what it started get SIGTERM (gcc's driver
  // then removes its temporary files); whatever they wrote is replaced by
  // the entry's outputs, each written whole under its name.
  // A key found fast may come before the compiler's start: wait for it.
  while (early_->pid.load() == 0 && !early_->done.load()) ::usleep(200);
  base::stop_process_tree(early_->pid.load());
  early_->thread.join();
  if (!early_->own_depfile.empty()) ::unlink(early_->own_depfile.c_str());
  note("compile started at once stopped: an entry may serve it");
  early_.reset();
}

LaunchResult Launcher::early_result(std::string_view why) {
  base::ProcessResult p = finish_early_compile();
  // A passthrough as any other: the compile ran as the build wrote it, and
  // nothing is stored or counted.
  LaunchResult r;
  take_finished_run(
      p, true, FinishedRunWords{}, [](std::string_view) {}, &r);
  r.compiled = p.started;
  finish_run(early_->own_depfile,
             "passthrough: " + std::string(why) + " (the compiler ran from the start)",
             [this](const std::string& line) { note(line); });
  return r;
}

std::string Launcher::changed_since_early_start(
    const std::vector<std::pair<std::string, base::StatSignature>>& outside) const {
  const int64_t start = early_->file_clock;
  DirsAbove dirs(cwd_);
  std::set<uint64_t> devices;
  std::vector<std::string> on_device;  // one path on each device met
  auto met_device = [&](uint64_t dev, const std::string& path) {
    if (devices.insert(dev).second) on_device.push_back(path);
  };
  for (const closure::ClosureFile& f : closure_.files) {
    const std::string path(f.path);
    if (stamped_since(f.stat, start)) return path;
    met_device(f.stat.dev, path);
    dirs.add(f.path);
  }
  for (const auto& [path, sig] : outside) {
    if (stamped_since(sig, start)) return path;
    met_device(sig.dev, path);
    dirs.add(path);
  }
  // A candidate found missing may have been there for the compiler (a
  // __has_include the depfile does not name), and a directory on the way to
  // a file may have been swapped: their directories' times tell.
  const bool numbered = closure_.failed_probe_dirs.size() == closure_.failed_probes.size();
  for (size_t i = 0; i < closure_.failed_probes.size(); ++i) {
    if (numbered) {
      dirs.add_numbered(closure_.failed_probes[i], closure_.failed_probe_dirs[i]);
    } else {
      dirs.add(closure_.failed_probes[i]);
    }
  }
  // In order, each directory after the one above it: below one found
  // missing, none is there either (one made since is the parent's change,
  // after the compile), and most missing candidates' directories are so.
  std::unordered_set<std::string_view> missing;  // views into dirs.dirs()
  for (const std::string& dir : dirs.dirs()) {
    if (missing.count(base::dir_of(dir)) != 0) {
      missing.insert(dir);
      continue;
    }
    std::optional<base::StatSignature> sig = lstat_signature(dir);
    if (!sig) {
      missing.insert(dir);
      continue;  // not there: nothing in it was read, found or missed
    }
    met_device(sig->dev, dir);
    if (!stamped_since(*sig, start)) continue;
    auto written = early_->written_dirs.find(dir);
    if (written == early_->written_dirs.end() ||
        written->second != std::make_pair(sig->dev, sig->ino)) {
      return dir;
    }
  }
  for (const std::string& path : on_device) {
    if (!on_local_filesystem(path)) return path + " (on a filesystem stamped by another clock)";
  }
  return {};
}

}  // namespace lexpack::launcher::detail
