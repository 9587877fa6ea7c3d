// The read manifest: every name finds its entry (hash collisions included),
// unknown names find nothing, the fields survive, and damaged bytes are refused.
#include "served_reads/read_manifest.h"

#include <gtest/gtest.h>

#include <cstring>

namespace lexpack::served_reads {
namespace {

ReadManifest sample(size_t files) {
  ReadManifest m;
  m.cwd = "/src/project";
  m.packs.push_back({"/cache/packs/pack-00000001.lpk", 11, 22});
  m.packs.push_back({"/cache/packs/pack-00000002.lpk", 11, 23});
  for (size_t i = 0; i < files; ++i) {
    ManifestFile f;
    f.names = {"inc/h" + std::to_string(i) + ".h", "/src/project/inc/h" + std::to_string(i) + ".h"};
    f.canonical = "/real/inc/h" + std::to_string(i) + ".h";
    f.pack = uint32_t(i % 2);
    f.blob_offset = 4096 * (i + 1);
    f.size = 100 + i;
    f.st.st_ino = 1000 + i;
    f.st.st_size = off_t(100 + i);
    f.st.st_mode = 0100644;
    f.st.st_mtim.tv_sec = 1700000000;
    f.st.st_mtim.tv_nsec = long(i);
    f.last_is_symlink = i == 3;
    m.files.push_back(f);
  }
  m.missing = {"inc/nothere.h", "/usr/include/nothere.h"};
  return m;
}

TEST(ReadManifest, EveryNameFindsItsEntry) {
  ReadManifest m = sample(500);
  std::string bytes = encode_read_manifest(m);
  for (size_t i = 0; i < m.files.size(); ++i) {
    for (const std::string& name : m.files[i].names) {
      const LexpackManifestEntry* e = find_manifest_entry(bytes, name);
      ASSERT_NE(e, nullptr) << name;
      EXPECT_EQ(e->kind, uint32_t(LEXPACK_ENTRY_FILE));
      EXPECT_EQ(manifest_string(bytes, e->path_offset, e->path_length), name);
      EXPECT_EQ(manifest_string(bytes, e->canonical_offset, e->canonical_length),
                m.files[i].canonical);
      EXPECT_EQ(e->pack, m.files[i].pack);
      EXPECT_EQ(e->blob_offset, m.files[i].blob_offset);
      EXPECT_EQ(e->size, m.files[i].size);
      EXPECT_EQ(e->ino, 1000 + i);
      EXPECT_EQ(e->mode, 0100644u);
      EXPECT_EQ(e->mtime_nsec, int64_t(i));
      EXPECT_EQ((e->flags & LEXPACK_ENTRY_LAST_IS_SYMLINK) != 0, i == 3);
    }
  }
  for (const std::string& name : m.missing) {
    const LexpackManifestEntry* e = find_manifest_entry(bytes, name);
    ASSERT_NE(e, nullptr) << name;
    EXPECT_EQ(e->kind, uint32_t(LEXPACK_ENTRY_MISSING));
  }
  EXPECT_EQ(find_manifest_entry(bytes, "inc/h1.hh"), nullptr);
  EXPECT_EQ(find_manifest_entry(bytes, "inc/h1"), nullptr);
  EXPECT_EQ(find_manifest_entry(bytes, ""), nullptr);
}

TEST(ReadManifest, HeaderDescribesPacksAndCwd) {
  std::string bytes = encode_read_manifest(sample(3));
  LexpackManifestHeader h;
  std::memcpy(&h, bytes.data(), sizeof h);
  EXPECT_EQ(std::string(h.magic, 8), LEXPACK_READ_MANIFEST_MAGIC);
  EXPECT_EQ(h.total_size, bytes.size());
  EXPECT_EQ(h.pack_count, 2u);
  EXPECT_EQ(h.entry_count, 3u * 2 + 2);
  EXPECT_GT(h.slot_count, h.entry_count);
  EXPECT_EQ(h.slot_count & (h.slot_count - 1), 0u);
  EXPECT_EQ(manifest_string(bytes, h.cwd_offset, h.cwd_length), "/src/project");
  LexpackManifestPack p;
  std::memcpy(&p, bytes.data() + h.packs_offset + sizeof p, sizeof p);
  EXPECT_EQ(manifest_string(bytes, p.path_offset, p.path_length), "/cache/packs/pack-00000002.lpk");
  EXPECT_EQ(p.ino, 23u);
  // Strings are NUL-terminated for the plugin.
  EXPECT_EQ(bytes[p.path_offset + p.path_length], '\0');
}

TEST(ReadManifest, DuplicateNamesKeepTheFirstEntry) {
  ReadManifest m = sample(2);
  m.files[1].names.push_back(m.files[0].names[0]);
  m.missing.push_back(m.files[0].names[1]);
  std::string bytes = encode_read_manifest(m);
  const LexpackManifestEntry* e = find_manifest_entry(bytes, m.files[0].names[0]);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->blob_offset, m.files[0].blob_offset);
  e = find_manifest_entry(bytes, m.files[0].names[1]);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->kind, uint32_t(LEXPACK_ENTRY_FILE));
}

TEST(ReadManifest, DamagedBytesFindNothing) {
  std::string bytes = encode_read_manifest(sample(4));
  EXPECT_NE(find_manifest_entry(bytes, "inc/h1.h"), nullptr);
  EXPECT_EQ(find_manifest_entry(bytes.substr(0, bytes.size() - 1), "inc/h1.h"), nullptr);
  std::string bad_magic = bytes;
  bad_magic[0] ^= 1;
  EXPECT_EQ(find_manifest_entry(bad_magic, "inc/h1.h"), nullptr);
  EXPECT_EQ(find_manifest_entry("garbage", "inc/h1.h"), nullptr);
}

TEST(ReadManifest, EmptyManifestIsValid) {
  ReadManifest m;
  m.cwd = "/";
  std::string bytes = encode_read_manifest(m);
  EXPECT_EQ(find_manifest_entry(bytes, "a.h"), nullptr);
  LexpackManifestHeader h;
  std::memcpy(&h, bytes.data(), sizeof h);
  EXPECT_EQ(h.total_size, bytes.size());
}

}  // namespace
}  // namespace lexpack::served_reads
