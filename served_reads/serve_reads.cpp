// Preparing served reads: every closure file becomes a page-aligned blob
// whose place (pack, offset) and stat fields go into the manifest; failed
// include probes become ENOENT entries when their directory's listing has no
// such name.
#include "served_reads/serve_reads.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "base/file_stat.h"
#include "base/file_util.h"
#include "base/process.h"
#include "served_reads/read_manifest.h"

extern char** environ;

namespace lexpack::served_reads {
namespace {

std::string dir_part(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string real_path(const std::string& path) {
  char buf[PATH_MAX];
  if (!::realpath(path.c_str(), buf)) return {};
  return buf;
}

}  // namespace

// A closure file whose stat still matches the closure's: served when its
// bytes are in a pack.
struct ServedReads::Candidate {
  const closure::ClosureFile* file;
  std::string path;
  struct stat st;
  bool symlink;
};

ServedReads::~ServedReads() {
  if (fd_ >= 0) ::close(fd_);
}

base::Status ServedReads::prepare(cache::Store* store, const closure::Closure& closure,
                                  const std::string& cwd, const std::string& plugin) {
  if (plugin.find_first_of(": ") != std::string::npos) {
    return base::Status::error("the plugin path " + plugin + " cannot go into LD_PRELOAD");
  }
  std::vector<Candidate> candidates = unchanged_files(closure);
  std::vector<std::optional<cache::BlobPlace>> places;
  if (base::Status placed = place_blobs(store, candidates, &places); !placed.ok()) return placed;
  ReadManifest m;
  m.cwd = cwd;
  add_files(candidates, places, cwd, &m);
  add_missing_probes(closure, cwd, &m);
  files_ = m.files.size();
  if (m.files.empty() && m.missing.empty()) {
    return base::Status::error("no closure file can be served");
  }
  if (base::Status sealed = seal_manifest(m); !sealed.ok()) return sealed;
  make_env(plugin);
  return base::Status();
}

std::vector<ServedReads::Candidate> ServedReads::unchanged_files(const closure::Closure& closure) {
  std::vector<Candidate> candidates;
  for (const closure::ClosureFile& f : closure.files) {
    // A precompiled header is mapped by the compiler, not read: left to the
    // filesystem.
    if (f.presence_only || f.opaque || f.content.is_zero()) continue;
    Candidate c{&f, std::string(f.path), {}, false};
    if (::lstat(c.path.c_str(), &c.st) != 0) {
      ++skipped_;
      continue;
    }
    if (S_ISLNK(c.st.st_mode)) {
      c.symlink = true;
      if (::stat(c.path.c_str(), &c.st) != 0) {
        ++skipped_;
        continue;
      }
    }
    if (!S_ISREG(c.st.st_mode) || !(base::signature_of(c.st) == f.stat)) {
      ++skipped_;
      continue;
    }
    candidates.push_back(std::move(c));
  }
  return candidates;
}

base::Status ServedReads::place_blobs(cache::Store* store, const std::vector<Candidate>& candidates,
                                      std::vector<std::optional<cache::BlobPlace>>* places) {
  // Bytes of files not yet stored page-aligned, put in one batch. A file whose
  // bytes no longer hash to the closure's content is left out.
  places->resize(candidates.size());
  std::vector<std::string> contents;
  std::vector<size_t> to_store;
  for (size_t i = 0; i < candidates.size(); ++i) {
    (*places)[i] = store->locate_blob(candidates[i].file->content);
    if ((*places)[i]) continue;
    base::Result<std::string> bytes = base::read_file(candidates[i].path);
    if (!bytes.ok() || cache::hash_bytes(*bytes) != candidates[i].file->content) continue;
    contents.push_back(std::move(*bytes));
    to_store.push_back(i);
  }
  if (!to_store.empty()) {
    std::vector<std::string_view> views(contents.begin(), contents.end());
    cache::BlobOptions aligned;
    aligned.page_aligned = true;
    auto stored = store->put_blobs(views, aligned);
    if (!stored.ok()) {
      return base::Status::error("cannot store the closure's files: " + stored.message());
    }
    for (size_t i : to_store) (*places)[i] = store->locate_blob(candidates[i].file->content);
    stored_ = to_store.size();
  }
  return base::Status();
}

void ServedReads::add_files(const std::vector<Candidate>& candidates,
                            const std::vector<std::optional<cache::BlobPlace>>& places,
                            const std::string& cwd, ReadManifest* m) {
  std::map<std::string, uint32_t> pack_index;
  std::unordered_map<std::string, std::string> real_dirs;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    if (!places[i] || places[i]->size != uint64_t(c.st.st_size)) {
      ++skipped_;
      continue;
    }
    ManifestFile f;
    std::string dir = dir_part(c.path);
    if (c.symlink) {
      f.canonical = real_path(c.path);
    } else {
      auto it = real_dirs.find(dir);
      if (it == real_dirs.end()) it = real_dirs.emplace(dir, real_path(dir)).first;
      if (!it->second.empty()) {
        const std::string& base = c.path.substr(c.path.rfind('/') + 1);
        f.canonical = it->second == "/" ? "/" + base : it->second + "/" + base;
      }
    }
    if (f.canonical.empty()) {
      ++skipped_;
      continue;
    }
    auto [it, added] = pack_index.emplace(places[i]->pack_path, uint32_t(m->packs.size()));
    if (added) {
      if (m->packs.size() >= LEXPACK_READ_MANIFEST_MAX_PACKS) {
        pack_index.erase(it);
        ++skipped_;
        continue;
      }
      m->packs.push_back({places[i]->pack_path, places[i]->pack_dev, places[i]->pack_ino});
    }
    f.names.push_back(c.path);
    std::string absolute = base::absolute_path(c.path, cwd);
    if (absolute != c.path) f.names.push_back(absolute);
    f.last_is_symlink = c.symlink;
    f.pack = it->second;
    f.blob_offset = places[i]->offset;
    f.size = places[i]->size;
    f.st = c.st;
    m->files.push_back(std::move(f));
    served_.push_back({c.path, places[i]->pack_path, places[i]->pack_dev, places[i]->pack_ino,
                       places[i]->offset, places[i]->size, c.file->content});
  }
}

void ServedReads::add_missing_probes(const closure::Closure& closure, const std::string& cwd,
                                     ReadManifest* m) {
  // A failed probe is answered ENOENT only when nothing at all has its name:
  // the resolver also fails a candidate that is a directory (<memory> next to
  // a "memory/" folder), and the compiler may still look inside that. Each
  // probed directory is listed once; a missing one makes its probes missing,
  // one that cannot be listed serves none of them.
  struct Listing {
    bool usable = false;
    bool missing = false;
    std::unordered_set<std::string> names;
  };
  std::unordered_map<std::string, Listing> listings;
  for (std::string_view probe_view : closure.failed_probes) {
    const std::string probe(probe_view);
    std::string dir = dir_part(probe);
    auto it = listings.find(dir);
    if (it == listings.end()) {
      Listing l;
      if (DIR* d = ::opendir(dir.c_str())) {
        while (const struct dirent* entry = ::readdir(d)) l.names.insert(entry->d_name);
        ::closedir(d);
        l.usable = true;
      } else {
        l.missing = l.usable = errno == ENOENT;
      }
      it = listings.emplace(dir, std::move(l)).first;
    }
    const Listing& l = it->second;
    if (!l.usable) continue;
    if (!l.missing && l.names.count(probe.substr(probe.rfind('/') + 1))) continue;
    m->missing.push_back(probe);
    std::string absolute = base::absolute_path(probe, cwd);
    if (absolute != probe) m->missing.push_back(absolute);
    ++missing_;
  }
}

base::Status ServedReads::seal_manifest(const ReadManifest& m) {
  std::string bytes = encode_read_manifest(m);
  fd_ = ::memfd_create("lexpack-read-manifest", MFD_ALLOW_SEALING);
  if (fd_ < 0) {
    return base::Status::error(std::string("memfd_create: ") + std::strerror(errno));
  }
  if (!base::write_all(fd_, bytes) ||
      ::fcntl(fd_, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
    return base::Status::error(std::string("cannot write the read manifest: ") +
                               std::strerror(errno));
  }
  return base::Status();
}

void ServedReads::make_env(const std::string& plugin) {
  std::string preload = plugin;
  for (char** e = environ; *e; ++e) {
    std::string_view entry(*e);
    if (entry.starts_with("LD_PRELOAD=")) {
      if (entry.size() > 11) preload += ":" + std::string(entry.substr(11));
      continue;
    }
    if (entry.starts_with(LEXPACK_READ_MANIFEST_ENV "=")) continue;
    env_.emplace_back(entry);
  }
  env_.push_back("LD_PRELOAD=" + preload);
  env_.push_back(std::string(LEXPACK_READ_MANIFEST_ENV "=") + std::to_string(fd_));
}

}  // namespace lexpack::served_reads
