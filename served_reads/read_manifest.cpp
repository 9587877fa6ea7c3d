// Encoding of the read manifest: fixed-size records, an open-addressing table
// of entry indexes keyed by FNV-1a of the path, and the strings at the end.
#include "served_reads/read_manifest.h"

#include <cstring>
#include <unordered_set>

namespace lexpack::served_reads {
namespace {

uint64_t align8(uint64_t n) {
  return (n + 7) & ~uint64_t(7);
}

class Strings {
 public:
  uint64_t add(std::string_view s) {
    uint64_t at = bytes_.size();
    bytes_.append(s);
    bytes_.push_back('\0');  // handy for the plugin, which passes some to libc
    return at;
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

void fill_stat(const struct stat& st, LexpackManifestEntry* e) {
  e->dev = uint64_t(st.st_dev);
  e->ino = uint64_t(st.st_ino);
  e->nlink = uint64_t(st.st_nlink);
  e->rdev = uint64_t(st.st_rdev);
  e->blksize = int64_t(st.st_blksize);
  e->blocks = int64_t(st.st_blocks);
  e->mode = uint32_t(st.st_mode);
  e->uid = uint32_t(st.st_uid);
  e->gid = uint32_t(st.st_gid);
  e->atime_sec = st.st_atim.tv_sec;
  e->atime_nsec = st.st_atim.tv_nsec;
  e->mtime_sec = st.st_mtim.tv_sec;
  e->mtime_nsec = st.st_mtim.tv_nsec;
  e->ctime_sec = st.st_ctim.tv_sec;
  e->ctime_nsec = st.st_ctim.tv_nsec;
}

}  // namespace

std::string encode_read_manifest(const ReadManifest& m) {
  Strings strings;
  std::vector<LexpackManifestPack> packs;
  for (const ManifestPackFile& p : m.packs) {
    LexpackManifestPack rec{};
    rec.path_offset = strings.add(p.path);
    rec.path_length = uint32_t(p.path.size());
    rec.dev = p.dev;
    rec.ino = p.ino;
    packs.push_back(rec);
  }
  std::vector<LexpackManifestEntry> entries;
  std::unordered_set<std::string_view> seen;
  for (const ManifestFile& f : m.files) {
    LexpackManifestEntry base{};
    base.kind = LEXPACK_ENTRY_FILE;
    base.canonical_offset = strings.add(f.canonical);
    base.canonical_length = uint32_t(f.canonical.size());
    base.pack = f.pack;
    base.flags = f.last_is_symlink ? LEXPACK_ENTRY_LAST_IS_SYMLINK : 0;
    base.blob_offset = f.blob_offset;
    base.size = f.size;
    fill_stat(f.st, &base);
    for (const std::string& name : f.names) {
      if (!seen.insert(name).second) continue;
      LexpackManifestEntry e = base;
      e.path_offset = strings.add(name);
      e.path_length = uint32_t(name.size());
      entries.push_back(e);
    }
  }
  for (const std::string& name : m.missing) {
    if (!seen.insert(name).second) continue;
    LexpackManifestEntry e{};
    e.kind = LEXPACK_ENTRY_MISSING;
    e.path_offset = strings.add(name);
    e.path_length = uint32_t(name.size());
    entries.push_back(e);
  }
  uint32_t slot_count = 16;
  while (slot_count < 2 * entries.size() + 1) slot_count *= 2;
  std::vector<uint32_t> slots(slot_count, 0);
  const std::string& text = strings.bytes();
  for (uint32_t i = 0; i < entries.size(); ++i) {
    uint64_t h =
        lexpack_manifest_hash(text.data() + entries[i].path_offset, entries[i].path_length);
    uint32_t s = uint32_t(h) & (slot_count - 1);
    while (slots[s] != 0) s = (s + 1) & (slot_count - 1);
    slots[s] = i + 1;
  }

  LexpackManifestHeader h{};
  std::memcpy(h.magic, LEXPACK_READ_MANIFEST_MAGIC, 8);
  h.version = LEXPACK_READ_MANIFEST_VERSION;
  h.pack_count = uint32_t(packs.size());
  h.entry_count = uint32_t(entries.size());
  h.slot_count = slot_count;
  h.packs_offset = align8(sizeof h);
  h.entries_offset = align8(h.packs_offset + packs.size() * sizeof(LexpackManifestPack));
  h.slots_offset = align8(h.entries_offset + entries.size() * sizeof(LexpackManifestEntry));
  uint64_t cwd_at = text.size();
  h.strings_offset = align8(h.slots_offset + slots.size() * sizeof(uint32_t));
  h.strings_size = text.size() + m.cwd.size() + 1;
  h.cwd_offset = h.strings_offset + cwd_at;
  h.cwd_length = uint32_t(m.cwd.size());
  h.total_size = h.strings_offset + h.strings_size;

  std::string out(h.total_size, '\0');
  std::memcpy(out.data(), &h, sizeof h);
  if (!packs.empty()) {
    std::memcpy(out.data() + h.packs_offset, packs.data(), packs.size() * sizeof packs[0]);
  }
  if (!entries.empty()) {
    std::memcpy(out.data() + h.entries_offset, entries.data(), entries.size() * sizeof entries[0]);
  }
  std::memcpy(out.data() + h.slots_offset, slots.data(), slots.size() * sizeof slots[0]);
  // Entry and pack string offsets were relative to the string area.
  auto* e = reinterpret_cast<LexpackManifestEntry*>(out.data() + h.entries_offset);
  for (size_t i = 0; i < entries.size(); ++i) {
    e[i].path_offset += h.strings_offset;
    e[i].canonical_offset += h.strings_offset;
  }
  auto* p = reinterpret_cast<LexpackManifestPack*>(out.data() + h.packs_offset);
  for (size_t i = 0; i < packs.size(); ++i) p[i].path_offset += h.strings_offset;
  std::memcpy(out.data() + h.strings_offset, text.data(), text.size());
  std::memcpy(out.data() + h.cwd_offset, m.cwd.data(), m.cwd.size());
  return out;
}

std::string_view manifest_string(std::string_view bytes, uint64_t offset, uint32_t length) {
  if (offset > bytes.size() || length > bytes.size() - offset) return {};
  return bytes.substr(offset, length);
}

const LexpackManifestEntry* find_manifest_entry(std::string_view bytes, std::string_view path) {
  LexpackManifestHeader h;
  if (bytes.size() < sizeof h) return nullptr;
  std::memcpy(&h, bytes.data(), sizeof h);
  if (std::memcmp(h.magic, LEXPACK_READ_MANIFEST_MAGIC, 8) != 0 || h.total_size != bytes.size() ||
      h.slot_count == 0 || (h.slot_count & (h.slot_count - 1)) != 0 ||
      h.slots_offset + uint64_t(h.slot_count) * 4 > bytes.size() ||
      h.entries_offset + uint64_t(h.entry_count) * sizeof(LexpackManifestEntry) > bytes.size()) {
    return nullptr;
  }
  const auto* slots = reinterpret_cast<const uint32_t*>(bytes.data() + h.slots_offset);
  const auto* entries =
      reinterpret_cast<const LexpackManifestEntry*>(bytes.data() + h.entries_offset);
  uint32_t s = uint32_t(lexpack_manifest_hash(path.data(), path.size())) & (h.slot_count - 1);
  for (uint32_t n = 0; n < h.slot_count && slots[s] != 0; ++n, s = (s + 1) & (h.slot_count - 1)) {
    if (slots[s] > h.entry_count) return nullptr;
    const LexpackManifestEntry* e = &entries[slots[s] - 1];
    if (manifest_string(bytes, e->path_offset, e->path_length) == path) return e;
  }
  return nullptr;
}

}  // namespace lexpack::served_reads
