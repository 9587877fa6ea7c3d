// Served reads (LEXPACK_SERVE_READS=1): on a miss, the compiler reads the
// closure's files from the packs through the preloaded plugin instead of the
// filesystem. This prepares one compile: blobs, manifest, environment.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "cache/store.h"
#include "closure/dependency_closure.h"

namespace lexpack::served_reads {

struct ReadManifest;

class ServedReads {
 public:
  ServedReads() = default;
  ~ServedReads();
  ServedReads(const ServedReads&) = delete;
  ServedReads& operator=(const ServedReads&) = delete;

  // The compiler's whole environment: this process's, with the plugin added to
  // LD_PRELOAD and the manifest descriptor named.
  const std::vector<std::string>& env() const { return env_; }
  size_t files() const { return files_; }      // files served from blobs
  size_t missing() const { return missing_; }  // paths answered ENOENT
  size_t skipped() const { return skipped_; }  // closure files left to the filesystem
  size_t stored() const { return stored_; }    // files stored as blobs for this compile

  // Stores the bytes of closure files that are not page-aligned blobs yet,
  // writes the manifest into a sealed memfd the compiler inherits. A file
  // whose stat or bytes no longer match the closure is left out (read from
  // disk). An error saying why when nothing can be served.
  base::Status prepare(cache::Store* store, const closure::Closure& closure, const std::string& cwd,
                       const std::string& plugin);

  // After the compile, before its outputs are stored: true when every blob
  // served still hashes to the id the key names, read again from its pack
  // (serve_check.cpp). Bytes changed in a pack while the compiler read them
  // make it false, with *why naming the file: the object must not be stored.
  bool served_bytes_intact(std::string* why) const;

 private:
  struct Candidate;
  // The closure files to serve: those whose stat still matches the closure.
  std::vector<Candidate> unchanged_files(const closure::Closure& closure);
  // Where each candidate's bytes lie in a pack (stored there now when they
  // were not), nullopt for a file whose bytes no longer match.
  base::Status place_blobs(cache::Store* store, const std::vector<Candidate>& candidates,
                           std::vector<std::optional<cache::BlobPlace>>* places);
  // The manifest's entries: the files served, the probes answered ENOENT.
  void add_files(const std::vector<Candidate>& candidates,
                 const std::vector<std::optional<cache::BlobPlace>>& places, const std::string& cwd,
                 ReadManifest* m);
  void add_missing_probes(const closure::Closure& closure, const std::string& cwd, ReadManifest* m);
  // Writes the manifest into a sealed memfd (fd_), and the compiler's
  // environment that names it.
  base::Status seal_manifest(const ReadManifest& m);
  void make_env(const std::string& plugin);

  struct Served {
    std::string path;  // the closure file, for messages
    std::string pack_path;
    uint64_t pack_dev, pack_ino, offset, size;
    cache::BlobId id;
  };
  int fd_ = -1;
  std::vector<std::string> env_;
  std::vector<Served> served_;
  size_t files_ = 0, missing_ = 0, skipped_ = 0, stored_ = 0;
};

}  // namespace lexpack::served_reads
