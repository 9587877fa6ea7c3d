// The page walker behind check_lmdb_pages(); see index_check.h. It knows the
// LMDB 0.9 on-disk layout: 16-byte page headers, two meta pages, B+trees of
// branch/leaf pages with 8-byte node headers, overflow pages for big values.
#include "cache/index_check.h"

#include <cstring>
#include <string_view>
#include <vector>

namespace lexpack::cache {

namespace {

constexpr uint64_t kHeader = 16;
constexpr uint32_t kMagic = 0xBEEFC0DE;
constexpr uint32_t kDataVersion = 1;
constexpr uint64_t kInvalidPage = ~0ull;
constexpr int kMaxDepth = 32;
constexpr uint16_t kBranch = 0x01, kLeaf = 0x02, kOverflow = 0x04;
constexpr uint16_t kBigData = 0x01, kSubData = 0x02;
constexpr uint64_t kDbSize = 48;
constexpr size_t kMetaSize = 136;  // MDB_meta up to and including mm_txnid

template <typename T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

struct Db {
  uint16_t flags = 0;
  uint16_t depth = 0;
  uint64_t entries = 0;
  uint64_t root = kInvalidPage;
};

Db read_db(const char* p) {
  Db db;
  db.flags = load<uint16_t>(p + 4);
  db.depth = load<uint16_t>(p + 6);
  db.entries = load<uint64_t>(p + 32);
  db.root = load<uint64_t>(p + 40);
  return db;
}

// LMDB's order of keys: bytewise, except the free list's native integer
// transaction ids (MDB_INTEGERKEY).
bool less(std::string_view a, std::string_view b, bool integer) {
  if (integer && a.size() == 8 && b.size() == 8) {
    return load<uint64_t>(a.data()) < load<uint64_t>(b.data());
  }
  return a < b;
}

class Walker {
 public:
  Walker(const char* map, uint64_t psize, uint64_t last) : map_(map), psize_(psize), last_(last) {
    live_.assign(last + 1, false);
  }

  // Checks the tree rooted at `root`; free_list: values are page lists.
  bool tree(uint64_t root, bool main, bool free_list, const char* name) {
    if (root == kInvalidPage) return true;
    return page(root, 0, main, free_list, name, nullptr, nullptr);
  }

  bool free_pages_unused() {
    for (uint64_t p : free_) {
      if (p < 2 || p > last_ || live_[p])
        return fail("free list names live page " + std::to_string(p));
    }
    return true;
  }

  const std::string& problem() const { return problem_; }

 private:
  bool fail(std::string why) {
    if (problem_.empty()) problem_ = std::move(why);
    return false;
  }

  bool claim(uint64_t p, const char* name) {
    if (p < 2 || p > last_)
      return fail(std::string(name) + ": page number " + std::to_string(p) + " out of range");
    if (live_[p]) return fail(std::string(name) + ": page " + std::to_string(p) + " is used twice");
    live_[p] = true;
    return true;
  }

  bool value(const char* data, uint64_t size, bool free_list, const char* name) {
    if (!free_list) return true;
    // A free-list value: a count followed by that many page numbers.
    if (size < 8 || size % 8 != 0) return fail(std::string(name) + ": bad free-list entry size");
    uint64_t n = load<uint64_t>(data);
    if (n != size / 8 - 1)
      return fail(std::string(name) + ": free-list count does not match its size");
    for (uint64_t i = 1; i <= n; ++i) free_.push_back(load<uint64_t>(data + 8 * i));
    return true;
  }

  // Every key of the page must lie in [*low, *high) (a missing bound is open)
  // and keys must rise within the page, as LMDB's binary search assumes.
  bool page(uint64_t p, int depth, bool main, bool free_list, const char* name,
            const std::string_view* low, const std::string_view* high) {
    if (depth > kMaxDepth) return fail(std::string(name) + ": tree too deep");
    if (!claim(p, name)) return false;
    const char* pg = map_ + p * psize_;
    if (load<uint64_t>(pg) != p)
      return fail(std::string(name) + ": page " + std::to_string(p) + " names itself differently");
    uint16_t flags = load<uint16_t>(pg + 10);
    uint16_t lower = load<uint16_t>(pg + 12);
    uint16_t upper = load<uint16_t>(pg + 14);
    bool branch = flags == kBranch, leaf = flags == kLeaf;
    if (!branch && !leaf)
      return fail(std::string(name) + ": page " + std::to_string(p) + " has bad flags");
    if (lower < kHeader || lower > upper || upper > psize_ || (lower - kHeader) % 2 != 0) {
      return fail(std::string(name) + ": page " + std::to_string(p) + " has bad bounds");
    }
    uint64_t keys = (lower - kHeader) / 2;
    std::string_view previous;
    uint64_t node_bytes = 0;  // nodes are packed from `upper` to the page end
    if (branch && keys < 2)
      return fail(std::string(name) + ": branch page with fewer than two children");
    for (uint64_t i = 0; i < keys; ++i) {
      uint64_t off = load<uint16_t>(pg + kHeader + 2 * i);
      if (off < upper || off + 8 > psize_)
        return fail(std::string(name) + ": node offset out of its page");
      const char* node = pg + off;
      uint64_t lo = load<uint16_t>(node), hi = load<uint16_t>(node + 2);
      uint16_t nflags = load<uint16_t>(node + 4);
      uint64_t ksize = load<uint16_t>(node + 6);
      if (off + 8 + ksize > psize_) return fail(std::string(name) + ": key runs past its page");
      std::string_view key(node + 8, ksize);
      uint64_t body = branch ? 0 : ((nflags & kBigData) ? 8 : (lo | (hi << 16)));
      node_bytes += (8 + ksize + body + 1) & ~1ull;
      bool first_of_branch = branch && i == 0;  // its key is unused
      if (!first_of_branch) {
        bool rising = (branch ? i == 1 : i == 0) || less(previous, key, free_list);
        if (!rising || (low && less(key, *low, free_list)) ||
            (high && !less(key, *high, free_list))) {
          return fail(std::string(name) + ": keys out of order in page " + std::to_string(p));
        }
        previous = key;
      }
      if (branch) {
        uint64_t child = lo | (hi << 16) | (static_cast<uint64_t>(nflags) << 32);
        std::string_view child_low = first_of_branch ? std::string_view() : key;
        std::string_view child_high;
        bool has_high = i + 1 < keys;
        if (has_high) {
          uint64_t next = load<uint16_t>(pg + kHeader + 2 * (i + 1));
          if (next < upper || next + 8 > psize_)
            return fail(std::string(name) + ": node offset out of its page");
          uint64_t next_size = load<uint16_t>(pg + next + 6);
          if (next + 8 + next_size > psize_)
            return fail(std::string(name) + ": key runs past its page");
          child_high = std::string_view(pg + next + 8, next_size);
        }
        if (!page(child, depth + 1, main, free_list, name, first_of_branch ? low : &child_low,
                  has_high ? &child_high : high)) {
          return false;
        }
        continue;
      }
      uint64_t dsize = lo | (hi << 16);
      const char* data = node + 8 + ksize;
      if (nflags & ~(kBigData | kSubData))
        return fail(std::string(name) + ": unexpected node flags");
      if (nflags & kBigData) {
        if (off + 8 + ksize + 8 > psize_)
          return fail(std::string(name) + ": overflow reference past its page");
        uint64_t ov = load<uint64_t>(data);
        if (ov < 2 || ov > last_) return fail(std::string(name) + ": overflow page out of range");
        const char* op = map_ + ov * psize_;
        uint64_t pages = load<uint32_t>(op + 12);
        if (load<uint64_t>(op) != ov || load<uint16_t>(op + 10) != kOverflow || pages == 0 ||
            ov + pages - 1 > last_ || dsize > pages * psize_ - kHeader) {
          return fail(std::string(name) + ": bad overflow page " + std::to_string(ov));
        }
        for (uint64_t k = 0; k < pages; ++k) {
          if (!claim(ov + k, name)) return false;
        }
        if (!value(op + kHeader, dsize, free_list, name)) return false;
        continue;
      }
      if (off + 8 + ksize + dsize > psize_)
        return fail(std::string(name) + ": value runs past its page");
      if (nflags & kSubData) {
        if (!main || dsize != kDbSize) return fail(std::string(name) + ": bad named-table record");
        Db sub = read_db(data);
        std::string sub_name(node + 8, ksize);
        if (sub.flags != 0) return fail("table " + sub_name + ": unexpected flags");
        if (!tree(sub.root, false, false, sub_name.c_str())) return false;
        continue;
      }
      if (!value(data, dsize, free_list, name)) return false;
    }
    if (node_bytes != psize_ - upper) {
      return fail(std::string(name) + ": node sizes do not add up in page " + std::to_string(p));
    }
    return true;
  }

  const char* map_;
  uint64_t psize_;
  uint64_t last_;
  std::vector<bool> live_;
  std::vector<uint64_t> free_;
  std::string problem_;
};

}  // namespace

std::string check_lmdb_pages(const char* map, uint64_t file_size, uint64_t txnid, bool* stale) {
  *stale = false;
  if (file_size < 2 * kHeader + 200) return "the file is too short for its meta pages";
  const uint64_t psize = load<uint32_t>(map + kHeader + 24);  // the free table's md_pad
  if (psize < 512 || psize > 65536 || (psize & (psize - 1)) != 0 || file_size < 2 * psize) {
    return "bad page size in the meta page";
  }
  // A writer rewrites the older meta page while we look (two commits make
  // ours the older one). Work on a copy, and trust it only if the page still
  // holds the same bytes after the walk: otherwise the snapshot is stale, not
  // damaged (our read transaction keeps its pages, never its meta page).
  const char* live_meta = map + (txnid & 1) * psize + kHeader;
  char meta[kMetaSize];
  std::memcpy(meta, live_meta, kMetaSize);
  const auto still_same = [&] { return std::memcmp(meta, live_meta, kMetaSize) == 0; };
  if (load<uint64_t>(meta + 128) != txnid || !still_same()) {
    *stale = true;
    return "";
  }
  if (load<uint32_t>(meta) != kMagic || load<uint32_t>(meta + 4) != kDataVersion) {
    return still_same() ? "bad meta page magic or version" : (*stale = true, "");
  }
  const uint64_t last = load<uint64_t>(meta + 120);
  if (last < 1 || last >= file_size / psize) {
    return still_same() ? "the meta page's last page lies past the end of the file"
                        : (*stale = true, "");
  }
  Walker walker(map, psize, last);
  if (!walker.tree(read_db(meta + 24).root, false, true, "free list") ||
      !walker.tree(read_db(meta + 72).root, true, false, "main table") ||
      !walker.free_pages_unused()) {
    if (!still_same()) *stale = true;
    return *stale ? "" : walker.problem();
  }
  return "";
}

}  // namespace lexpack::cache
