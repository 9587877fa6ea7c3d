// A cache directory other users can write: what they plant there (symlinks
// to a victim's files) is never followed, and a group-shared cache works for
// every member of the group, with the modes the umask setting asks for.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "as_user.h"
#include "cache/archive/archive.h"
#include "cache/store.h"
#include "tests/support/test_dir.h"

namespace lexpack::cache {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

base::Result<std::unique_ptr<Store>> open_at(const std::string& dir) {
  StoreOptions o;
  o.dir = dir;
  return Store::open(o);
}

class PlantedLinks : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_ = tmp_.at("cache");
    victim_ = tmp_.at("victim.txt");
    std::filesystem::create_directories(cache_);
    write_file(victim_, "precious\n");
  }
  // Opens the store and uses it the way every command does.
  void use_store() {
    auto store = open_at(cache_);
    if (!store.ok()) return;  // refusing is fine; writing through the link is not
    (*store)->add_counter("hits", 1);
    (*store)->put_blob("bytes");
    (*store)->stats();
  }
  lexpack::testing::TestDir tmp_;
  std::string cache_, victim_;
};

TEST_F(PlantedLinks, StatsFileLinkIsNotFollowed) {
  ASSERT_EQ(::symlink(victim_.c_str(), (cache_ + "/stats").c_str()), 0);
  use_store();
  EXPECT_EQ(read_file(victim_), "precious\n");
}

TEST_F(PlantedLinks, IndexLockLinkIsNotFollowed) {
  ASSERT_EQ(::symlink(victim_.c_str(), (cache_ + "/index.mdb-lock").c_str()), 0);
  use_store();
  EXPECT_EQ(read_file(victim_), "precious\n");
  auto store = open_at(cache_);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.message().find("symbolic link"), std::string::npos) << store.message();
}

TEST_F(PlantedLinks, IndexFileLinkIsNotFollowed) {
  // A dangling link: following it would create the file it names.
  std::string target = tmp_.at("made-through-a-link");
  ASSERT_EQ(::symlink(target.c_str(), (cache_ + "/index.mdb").c_str()), 0);
  use_store();
  EXPECT_FALSE(std::filesystem::exists(target));
}

TEST_F(PlantedLinks, LockFileLinksAreNotFollowed) {
  std::string target = tmp_.at("made-through-a-link");
  ASSERT_EQ(::symlink(target.c_str(), (cache_ + "/reset.lock").c_str()), 0);
  ASSERT_EQ(::symlink(target.c_str(), (cache_ + "/gc.lock").c_str()), 0);
  use_store();
  if (auto store = open_at(cache_); store.ok()) (*store)->gc(0);
  EXPECT_FALSE(std::filesystem::exists(target));
}

TEST_F(PlantedLinks, PackFileLinkIsNotFollowed) {
  {
    auto store = open_at(cache_);
    ASSERT_TRUE(store.ok()) << store.message();
  }
  // The first pack a fresh cache appends to.
  std::string first;
  for (const auto& e : std::filesystem::directory_iterator(cache_ + "/packs")) {
    first = e.path().string();
  }
  if (first.empty()) first = cache_ + "/packs/pack-00000001.lpk";
  std::filesystem::remove(first);
  ASSERT_EQ(::symlink(victim_.c_str(), first.c_str()), 0);
  use_store();
  EXPECT_EQ(read_file(victim_), "precious\n");
}

TEST_F(PlantedLinks, ExportTemporaryLinkIsNotFollowed) {
  auto store = open_at(cache_);
  ASSERT_TRUE(store.ok()) << store.message();
  ASSERT_TRUE((*store)->put_blob("some bytes").ok());
  std::string out = tmp_.at("cache.lxa");
  // Every name the export may pick for its temporary, for this process.
  ASSERT_EQ(::symlink(victim_.c_str(), (out + ".tmp").c_str()), 0);
  for (int i = 0; i < 3; ++i) {
    std::string name = out + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(i);
    ASSERT_EQ(::symlink(victim_.c_str(), name.c_str()), 0);
  }
  base::Status st = export_archive(**store, out);
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(read_file(victim_), "precious\n");
}

TEST_F(PlantedLinks, PacksDirLinkOwnedBySomeoneElseIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to make a symlink owned by another user";
  std::string elsewhere = tmp_.at("elsewhere");
  std::filesystem::create_directories(elsewhere);
  ASSERT_EQ(::symlink(elsewhere.c_str(), (cache_ + "/packs").c_str()), 0);
  ASSERT_EQ(::lchown((cache_ + "/packs").c_str(), 4242, 4242), 0);
  auto store = open_at(cache_);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.message().find("symbolic link"), std::string::npos) << store.message();
  EXPECT_TRUE(std::filesystem::is_empty(elsewhere));

  // Configured so: followed.
  ::setenv("LEXPACK_FOLLOW_SYMLINKS", "1", 1);
  auto allowed = open_at(cache_);
  ::unsetenv("LEXPACK_FOLLOW_SYMLINKS");
  ASSERT_TRUE(allowed.ok()) << allowed.message();
  EXPECT_TRUE((*allowed)->put_blob("bytes").ok());
}

TEST_F(PlantedLinks, CacheDirLinkOfTheUserIsFollowed) {
  std::string link = tmp_.at("link");
  ASSERT_EQ(::symlink(cache_.c_str(), link.c_str()), 0);
  auto store = open_at(link);
  ASSERT_TRUE(store.ok()) << store.message();
  EXPECT_TRUE((*store)->put_blob("bytes").ok());
}

// Two members of one group share a cache in a setgid directory, as ccache
// documents it: each must be able to read and write what the other made.
class SharedGroupCache : public ::testing::Test {
 protected:
  static constexpr gid_t kGroup = 4242;
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to run parts of the test as two users";
    ASSERT_EQ(::chmod(tmp_.path().c_str(), 0755), 0);
    shared_ = tmp_.at("shared");
    ASSERT_EQ(::mkdir(shared_.c_str(), 0775), 0);
    ASSERT_EQ(::chown(shared_.c_str(), 0, kGroup), 0);
    ASSERT_EQ(::chmod(shared_.c_str(), 02775), 0);
  }
  // Stores a blob and an action as one user, then checks the other user's.
  static int use_as_member(const std::string& dir, const std::string& mine,
                           const std::string& theirs) {
    auto store = open_at(dir);
    if (!store.ok()) return 10;
    for (const auto& m : (*store)->take_messages()) {
      if (m.find("read-only") != std::string::npos) return 11;
    }
    if (!theirs.empty() && (*store)->get_blob(hash_bytes(theirs)) != theirs) return 12;
    if (!(*store)->put_blob(mine).ok()) return 13;
    ActionRecord action;
    action.outputs.push_back({"object", hash_bytes(mine)});
    if (!(*store)->put_action(hash_bytes("action " + mine), action).ok()) return 14;
    if (!(*store)->add_counter("misses", 1).ok()) return 15;
    if (!(*store)->gc(1ull << 40).ok()) return 16;
    return 0;
  }
  void check_modes() {
    for (const auto& e : std::filesystem::recursive_directory_iterator(shared_)) {
      if (e.path().filename() == "lexpack.conf") continue;  // written by the test
      struct stat st;
      ASSERT_EQ(::lstat(e.path().c_str(), &st), 0);
      EXPECT_EQ(st.st_gid, kGroup) << e.path();
      EXPECT_TRUE(st.st_mode & S_IWGRP) << e.path() << " mode " << std::oct << st.st_mode;
      if (S_ISDIR(st.st_mode)) {
        EXPECT_TRUE(st.st_mode & S_ISGID) << e.path();
      }
    }
  }
  lexpack::testing::TestDir tmp_;
  std::string shared_;
};

TEST_F(SharedGroupCache, UmaskSettingWorksForEveryMember) {
  write_file(shared_ + "/lexpack.conf", "umask = 002\n");
  testing::TestUser alice{4243, 4243, {kGroup}, 022}, bob{4244, 4244, {kGroup}, 077};
  EXPECT_EQ(testing::run_as(alice, [&] { return use_as_member(shared_, "alice's", ""); }), 0);
  EXPECT_EQ(testing::run_as(bob, [&] { return use_as_member(shared_, "bob's", "alice's"); }), 0);
  EXPECT_EQ(testing::run_as(alice, [&] { return use_as_member(shared_, "more", "bob's"); }), 0);
  check_modes();
}

TEST_F(SharedGroupCache, ProcessUmaskIsHonouredWithoutTheSetting) {
  testing::TestUser alice{4243, 4243, {kGroup}, 002}, bob{4244, 4244, {kGroup}, 002};
  EXPECT_EQ(testing::run_as(alice, [&] { return use_as_member(shared_, "alice's", ""); }), 0);
  EXPECT_EQ(testing::run_as(bob, [&] { return use_as_member(shared_, "bob's", "alice's"); }), 0);
  check_modes();
}

TEST_F(SharedGroupCache, EnvironmentUmaskWinsOverTheProcessUmask) {
  ::setenv("LEXPACK_UMASK", "007", 1);
  testing::TestUser alice{4243, 4243, {kGroup}, 077}, bob{4244, 4244, {kGroup}, 077};
  int a = testing::run_as(alice, [&] { return use_as_member(shared_, "alice's", ""); });
  int b = testing::run_as(bob, [&] { return use_as_member(shared_, "bob's", "alice's"); });
  ::unsetenv("LEXPACK_UMASK");
  EXPECT_EQ(a, 0);
  EXPECT_EQ(b, 0);
  check_modes();
  struct stat st;
  ASSERT_EQ(::stat((shared_ + "/stats").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
}

}  // namespace
}  // namespace lexpack::cache
