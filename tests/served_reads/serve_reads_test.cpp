// Preparing served reads for one compile: each closure file becomes an entry
// naming a page-aligned blob that holds its bytes, under every spelling the
// compiler may use; failed candidates become ENOENT entries unless something
// has their name; files changed since the walk and presence-only answers are
// left to the filesystem; the compiler's environment carries the plugin and
// the manifest's descriptor.
#include "served_reads/serve_reads.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "base/file_util.h"
#include "lexer/kernel.h"
#include "served_reads/read_manifest.h"
#include "tests/lexer/scan_test_util.h"
#include "tests/support/test_dir.h"

namespace lexpack::served_reads {
namespace {

using lexer::testing::kernel;

std::string env_value(const std::vector<std::string>& env, std::string_view name) {
  std::string prefix = std::string(name) + "=";
  std::string found;
  for (const std::string& e : env) {
    if (e.starts_with(prefix)) {
      EXPECT_TRUE(found.empty()) << name << " given twice";
      found = e.substr(prefix.size());
    }
  }
  return found;
}

// The manifest bytes the compiler would inherit.
std::string manifest_of(const ServedReads& served) {
  std::string fd_text = env_value(served.env(), LEXPACK_READ_MANIFEST_ENV);
  EXPECT_FALSE(fd_text.empty());
  int fd = std::atoi(fd_text.c_str());
  struct stat st;
  EXPECT_EQ(::fstat(fd, &st), 0);
  std::string bytes(size_t(st.st_size), '\0');
  EXPECT_EQ(::pread(fd, bytes.data(), bytes.size(), 0), ssize_t(bytes.size()));
  return bytes;
}

std::string pread_string(const std::string& path, uint64_t offset, uint64_t size) {
  int fd = ::open(path.c_str(), O_RDONLY);
  EXPECT_GE(fd, 0) << path;
  std::string bytes(size, '\0');
  EXPECT_EQ(::pread(fd, bytes.data(), size, off_t(offset)), ssize_t(size));
  ::close(fd);
  return bytes;
}

// m.cpp includes <x.h> (missing in first/, found in second/), <memory> (first/
// holds a directory of that name) and "link.h" (a symlink), and asks
// __has_include("asked.h").
struct Project {
  lexpack::testing::TestDir d;
  std::unique_ptr<cache::Store> store;
  compiler::SearchList list;
  compiler::CompileCommand cmd;
  closure::Closure closure;
  Project() {
    d.write("m.cpp",
            "#include <x.h>\n#include <memory>\n#include \"link.h\"\n"
            "#if __has_include(\"asked.h\")\n#endif\nint m;\n");
    d.write("first/memory/.keep", "");
    d.write("second/x.h", "int x;\n");
    d.write("second/memory", "int memory;\n");
    d.write("real/target.h", "int target;\n");
    d.write("asked.h", "int asked;\n");
    std::filesystem::create_symlink(d.at("real/target.h"), d.at("link.h"));
    list.bracket_dirs = {d.at("first"), d.at("second")};
    cmd = compiler::parse_compile_command({"g++", "-c", d.at("m.cpp"), "-o", d.at("m.o")});
    cache::StoreOptions options;
    options.dir = d.at("cache");
    auto opened = cache::Store::open(options);
    EXPECT_TRUE(opened.ok()) << opened.message();
    store = std::move(*opened);
    walk();
  }
  void walk() {
    closure::FileStates files(nullptr, kernel());
    auto c = closure::compute_closure(&files, cmd, list, compiler::CompilerKind::kGcc, d.path());
    EXPECT_TRUE(c.ok()) << c.message();
    closure = std::move(c.value());
  }
};

TEST(ServedReads, EveryClosureFileIsABlobWithItsBytes) {
  Project p;
  ServedReads served;
  base::Status s = served.prepare(p.store.get(), p.closure, p.d.path(), "/lib/plugin.so");
  ASSERT_TRUE(s.ok()) << s.message();
  const std::string bytes = manifest_of(served);
  struct Expect {
    std::string path, content, canonical;
    bool symlink;
  };
  std::vector<Expect> expected = {
      {p.d.at("m.cpp"), p.d.read("m.cpp"), p.d.at("m.cpp"), false},
      {p.d.at("second/x.h"), "int x;\n", p.d.at("second/x.h"), false},
      {p.d.at("second/memory"), "int memory;\n", p.d.at("second/memory"), false},
      {p.d.at("link.h"), "int target;\n", p.d.at("real/target.h"), true},
  };
  EXPECT_EQ(served.files(), expected.size());
  EXPECT_EQ(served.stored(), expected.size());
  EXPECT_EQ(served.skipped(), 0u);
  for (const Expect& e : expected) {
    const LexpackManifestEntry* entry = find_manifest_entry(bytes, e.path);
    ASSERT_NE(entry, nullptr) << e.path;
    EXPECT_EQ(entry->kind, uint32_t(LEXPACK_ENTRY_FILE)) << e.path;
    EXPECT_EQ(entry->size, e.content.size());
    EXPECT_EQ(entry->blob_offset % 4096, 0u) << e.path;
    EXPECT_EQ((entry->flags & LEXPACK_ENTRY_LAST_IS_SYMLINK) != 0, e.symlink) << e.path;
    // realpath: the test directory itself may sit behind a symlink.
    EXPECT_EQ(manifest_string(bytes, entry->canonical_offset, entry->canonical_length),
              std::filesystem::canonical(e.canonical).string());
    std::optional<cache::BlobPlace> place = p.store->locate_blob(cache::hash_bytes(e.content));
    ASSERT_TRUE(place.has_value()) << e.path;
    EXPECT_EQ(entry->blob_offset, place->offset);
    EXPECT_EQ(pread_string(place->pack_path, entry->blob_offset, entry->size), e.content);
    struct stat st;
    ASSERT_EQ(::stat(e.path.c_str(), &st), 0);
    EXPECT_EQ(entry->ino, uint64_t(st.st_ino)) << e.path;
  }
  // Presence-only answers are not read by the compiler: not served.
  EXPECT_EQ(find_manifest_entry(bytes, p.d.at("asked.h")), nullptr);

  // A second compile finds the blobs stored.
  ServedReads again;
  ASSERT_TRUE(again.prepare(p.store.get(), p.closure, p.d.path(), "/lib/plugin.so").ok());
  EXPECT_EQ(again.stored(), 0u);
  EXPECT_EQ(again.files(), expected.size());
}

TEST(ServedReads, FailedCandidatesAreMissingUnlessSomethingHasTheirName) {
  Project p;
  ServedReads served;
  ASSERT_TRUE(served.prepare(p.store.get(), p.closure, p.d.path(), "/lib/plugin.so").ok());
  const std::string bytes = manifest_of(served);
  const LexpackManifestEntry* x = find_manifest_entry(bytes, p.d.at("first/x.h"));
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->kind, uint32_t(LEXPACK_ENTRY_MISSING));
  // first/memory is a directory the compiler may look into: not ENOENT.
  EXPECT_EQ(find_manifest_entry(bytes, p.d.at("first/memory")), nullptr);
  EXPECT_GE(served.missing(), 1u);
}

TEST(ServedReads, FileChangedSinceTheWalkIsLeftToTheFilesystem) {
  Project p;
  p.d.write("second/x.h", "int x_changed_and_longer;\n");
  ServedReads served;
  ASSERT_TRUE(served.prepare(p.store.get(), p.closure, p.d.path(), "/lib/plugin.so").ok());
  EXPECT_EQ(served.skipped(), 1u);
  EXPECT_EQ(find_manifest_entry(manifest_of(served), p.d.at("second/x.h")), nullptr);
}

TEST(ServedReads, RelativeNamesAreServedUnderBothSpellings) {
  Project p;
  char old_cwd[4096];
  ASSERT_NE(::getcwd(old_cwd, sizeof old_cwd), nullptr);
  ASSERT_EQ(::chdir(p.d.path().c_str()), 0);
  p.cmd = compiler::parse_compile_command({"g++", "-c", "m.cpp", "-o", "m.o"});
  p.list.bracket_dirs = {"first", "second"};
  p.walk();
  ServedReads served;
  base::Status s = served.prepare(p.store.get(), p.closure, p.d.path(), "/lib/plugin.so");
  std::string bytes = s.ok() ? manifest_of(served) : std::string();
  ASSERT_EQ(::chdir(old_cwd), 0);
  ASSERT_TRUE(s.ok()) << s.message();
  for (const char* name : {"second/x.h", "m.cpp"}) {
    const LexpackManifestEntry* rel = find_manifest_entry(bytes, name);
    const LexpackManifestEntry* abs = find_manifest_entry(bytes, p.d.at(name));
    ASSERT_NE(rel, nullptr) << name;
    ASSERT_NE(abs, nullptr) << name;
    EXPECT_EQ(rel->blob_offset, abs->blob_offset);
  }
  const LexpackManifestEntry* missing = find_manifest_entry(bytes, "first/x.h");
  ASSERT_NE(missing, nullptr);
  EXPECT_EQ(missing->kind, uint32_t(LEXPACK_ENTRY_MISSING));
  EXPECT_NE(find_manifest_entry(bytes, p.d.at("first/x.h")), nullptr);
}

TEST(ServedReads, EnvironmentCarriesThePluginFirst) {
  Project p;
  ASSERT_EQ(setenv("LD_PRELOAD", "/lib/other.so", 1), 0);
  ASSERT_EQ(setenv(LEXPACK_READ_MANIFEST_ENV, "999", 1), 0);
  ServedReads served;
  base::Status s = served.prepare(p.store.get(), p.closure, p.d.path(), "/lib/plugin.so");
  unsetenv("LD_PRELOAD");
  unsetenv(LEXPACK_READ_MANIFEST_ENV);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(env_value(served.env(), "LD_PRELOAD"), "/lib/plugin.so:/lib/other.so");
  EXPECT_NE(env_value(served.env(), LEXPACK_READ_MANIFEST_ENV), "999");

  ServedReads bad;
  EXPECT_FALSE(bad.prepare(p.store.get(), p.closure, p.d.path(), "/lib/my plugin.so").ok());
  EXPECT_FALSE(bad.prepare(p.store.get(), p.closure, p.d.path(), "/a:/b.so").ok());
}

TEST(ServedReads, NothingToServeIsAnError) {
  Project p;
  closure::Closure nothing;
  ServedReads served;
  EXPECT_FALSE(served.prepare(p.store.get(), nothing, p.d.path(), "/lib/plugin.so").ok());
}

}  // namespace
}  // namespace lexpack::served_reads
