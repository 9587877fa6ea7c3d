// Pack files: large append-only files holding blob bytes back to back
// (internal to cache/). Each pack is mapped read-only at most once per
// process; appends from many processes are serialized by flock on the pack.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cache/cache_files.h"

namespace lexpack::cache {

inline constexpr uint64_t kPageSize = 4096;
inline constexpr uint64_t kBlobAlignment = 16;

struct PackPiece {
  std::string_view bytes;
  bool page_aligned = false;
};

class PackSet {
 public:
  // dir_fd: a handle on the packs directory (owned from now on; -1 when it
  // does not exist), so packs are never reached through a swapped directory.
  PackSet(std::string dir, int dir_fd, uint64_t pack_size, bool read_only, FileModes modes)
      : dir_(std::move(dir)),
        dir_fd_(dir_fd),
        pack_size_(pack_size),
        read_only_(read_only),
        modes_(modes) {}
  ~PackSet();
  PackSet(const PackSet&) = delete;
  PackSet& operator=(const PackSet&) = delete;

  std::string path(uint32_t pack) const;
  static std::string name(uint32_t pack);  // "pack-00000012.lpk"
  static bool parse_name(std::string_view name, uint32_t* pack);

  // Bytes [offset, offset + size) of the pack, from its one mapping. The view
  // stays valid for the life of this PackSet. Fails when the pack is missing
  // or shorter than the range.
  base::Result<std::string_view> view(uint32_t pack, uint64_t offset, uint64_t size);

  // Appends pieces at the end of the pack with one locked pwritev: each piece
  // starts 16-byte aligned, or page-aligned and zero-padded to whole pages.
  // Sets *full (and writes nothing) when they would push a non-empty pack past
  // the pack size. Returns each piece's offset.
  base::Status append(uint32_t pack, const std::vector<PackPiece>& pieces,
                      std::vector<uint64_t>* offsets, bool* full);

  // Drops the open descriptor of a pack (after it was deleted); its mappings
  // stay until this PackSet goes away, so earlier views remain valid.
  void forget(uint32_t pack);
  // Deletes a pack file (and forgets it).
  void remove(uint32_t pack);
  // The numbers of the pack files in the directory, and their sizes.
  std::vector<uint32_t> list() const;
  uint64_t file_size(uint32_t pack) const;
  // Hands the directory handle over (for a read-only PackSet replacing this one).
  int release_dir();
  // Device and inode of an open pack file (fstat of its descriptor). While
  // this PackSet holds the pack open or mapped, no other file can take them.
  base::Status file_id(uint32_t pack, uint64_t* dev, uint64_t* ino);
  // Hints the kernel to drop the cached pages of every pack file.
  void drop_page_cache();
  uint64_t pack_size() const { return pack_size_; }

 private:
  struct Mapping {
    const char* addr = nullptr;
    size_t length = 0;
  };
  struct Pack {
    int fd = -1;
    bool writable = false;
    uint64_t known_size = 0;
    std::vector<Mapping> maps;  // the last one is current; older ones kept for old views
  };
  base::Result<Pack*> open_pack(uint32_t pack, bool for_write);

  std::string dir_;
  int dir_fd_;
  uint64_t pack_size_;
  bool read_only_;
  FileModes modes_;
  std::map<uint32_t, Pack> packs_;
  std::vector<Mapping> retired_;
};

}  // namespace lexpack::cache
