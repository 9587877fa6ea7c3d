// The watch table against real changes: each way a resolved path can come to
// mean something else must report the closure that depends on it, and a
// change elsewhere in a watched directory must not.
#include "server/watch_table.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <set>
#include <string>

#include "tests/support/test_dir.h"

namespace lexpack::server {
namespace {

class WatchTableTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(table_.open()); }
  // Watches `paths` for reference `id`.
  void trust(uint32_t id, const std::vector<std::string>& paths) {
    table_.begin_pass({id, 1});
    for (const std::string& p : paths) ASSERT_TRUE(table_.watch_path(dir_.at(p))) << p;
  }
  std::set<uint32_t> fired() {
    std::set<uint32_t> ids;
    bool drop = false;
    table_.drain([&](TrustRef r) { ids.insert(r.id); }, &drop);
    EXPECT_FALSE(drop);
    return ids;
  }
  void sh(const std::string& command) {
    ASSERT_EQ(std::system(("cd " + testing::shell_quote(dir_.path()) + " && " + command).c_str()),
              0)
        << command;
  }

  testing::TestDir dir_;
  WatchTable table_;
};

TEST_F(WatchTableTest, FileEditedReportsItsDependentsOnly) {
  dir_.write("inc/a.h", "a");
  dir_.write("inc/b.h", "b");
  trust(1, {"inc/a.h"});
  trust(2, {"inc/b.h"});
  EXPECT_TRUE(fired().empty());
  dir_.write("inc/a.h", "A");
  EXPECT_EQ(fired(), std::set<uint32_t>{1});
  dir_.write("inc/unrelated.o", "x");  // another entry of the same directory
  EXPECT_TRUE(fired().empty());
}

// A directory is watched for its entries only: writes to a file in it that
// nothing depends on (a compiler's temporary file in /tmp, an object in the
// build directory) are not events at all.
TEST_F(WatchTableTest, WritesToAFileNothingDependsOnAreNoEvents) {
  dir_.write("inc/a.h", "a");
  dir_.write("inc/scratch.s", "x");
  trust(1, {"inc/a.h"});
  (void)table_.take_changes();
  // What the events named (the directories above this one are watched too,
  // and other programs make and remove names there meanwhile).
  auto heard = [&] {
    std::set<std::string> paths;
    for (const WatchTable::Change& c : table_.take_changes().paths) paths.insert(c.path);
    return paths;
  };
  sh("echo more >> inc/scratch.s && touch inc/scratch.s && chmod 600 inc/scratch.s");
  EXPECT_TRUE(fired().empty());
  EXPECT_EQ(heard().count(dir_.at("inc/scratch.s")), 0u);
  sh("echo new > inc/new.h");  // a name made is an event, and no dependent's
  EXPECT_TRUE(fired().empty());
  EXPECT_EQ(heard().count(dir_.at("inc/new.h")), 1u);
}

// Where a name was found missing, a chmod of its directory could turn the
// compiler's "not there" into an error: it reports the name's dependents.
// A directory that only led to a file is left to the stat rechecks.
TEST_F(WatchTableTest, AChmodOfADirectoryWhereANameWasMissingReports) {
  dir_.write("probed/.keep", "");
  dir_.write("found/a.h", "a");
  trust(1, {"probed/x.h"});
  trust(2, {"found/a.h"});
  EXPECT_TRUE(fired().empty());
  sh("chmod 700 found");
  EXPECT_TRUE(fired().empty());
  sh("chmod 700 probed");
  EXPECT_EQ(fired(), std::set<uint32_t>{1});
}

TEST_F(WatchTableTest, MissingPathAppearing) {
  dir_.write("inc/.keep", "");
  trust(1, {"inc/sub/deeper/x.h"});
  dir_.write("inc/other/x.h", "");
  EXPECT_TRUE(fired().empty());
  dir_.write("inc/sub/deeper/x.h", "");
  EXPECT_EQ(fired(), std::set<uint32_t>{1});
}

// A path whose leading directories the path before it registered adds only
// what is its own (its name in its directory, the file itself): each file of
// a closure still reports it, in whatever order the closures name them.
TEST_F(WatchTableTest, PathsSharingDirectoriesEachReportTheirOwnFile) {
  dir_.write("inc/a/x.h", "x");
  dir_.write("inc/a/y.h", "y");
  dir_.write("inc/b/z.h", "z");
  trust(1, {"inc/a/x.h", "inc/a/y.h", "inc/b/z.h"});
  trust(2, {"inc/b/z.h", "inc/a/y.h", "inc/a/x.h"});
  trust(3, {"inc/a/y.h"});
  dir_.write("inc/a/x.h", "X");
  EXPECT_EQ(fired(), (std::set<uint32_t>{1, 2}));
  trust(1, {"inc/a/x.h", "inc/a/y.h", "inc/b/z.h"});
  trust(2, {"inc/b/z.h", "inc/a/y.h", "inc/a/x.h"});
  dir_.write("inc/b/z.h", "Z");
  EXPECT_EQ(fired(), (std::set<uint32_t>{1, 2}));
  trust(1, {"inc/a/x.h", "inc/a/y.h", "inc/b/z.h"});
  trust(2, {"inc/b/z.h", "inc/a/y.h", "inc/a/x.h"});
  sh("mv inc/a inc/c");
  EXPECT_EQ(fired(), (std::set<uint32_t>{1, 2, 3}));
}

// Lookups are kept across passes: a later closure through the same paths
// must still be reported for every change, including changes to the file
// itself and changes made before its pass but read after it.
TEST_F(WatchTableTest, LookupsSharedByTwoClosuresReportBoth) {
  dir_.write("inc/a.h", "a");
  trust(1, {"inc/a.h", "inc/missing.h"});
  trust(2, {"inc/a.h", "inc/missing.h"});
  dir_.write("inc/a.h", "A");
  EXPECT_EQ(fired(), (std::set<uint32_t>{1, 2}));
  trust(1, {"inc/a.h", "inc/missing.h"});
  trust(2, {"inc/a.h", "inc/missing.h"});
  dir_.write("inc/missing.h", "");
  EXPECT_EQ(fired(), (std::set<uint32_t>{1, 2}));
}

TEST_F(WatchTableTest, KeptLookupIsForgottenWhenItsDirectoryChanges) {
  dir_.write("inc/.keep", "");
  dir_.write("other/y.h", "y");
  trust(1, {"inc/x.h"});  // missing
  sh("ln other/y.h inc/x.h");
  EXPECT_EQ(fired(), std::set<uint32_t>{1});
  // Found now, with two links: watched itself and its signature taken. A
  // lookup kept from the first pass ("missing") would miss the write below.
  trust(2, {"inc/x.h"});
  EXPECT_EQ(table_.multi_linked().size(), 1u);
  sh("printf z > other/y.h");
  EXPECT_EQ(fired(), std::set<uint32_t>{2});
}

// A directory two levels up swapped for another: the same path now leads to
// other directories, and a lookup kept from before must not stand in for
// theirs (the header below would go unwatched).
TEST_F(WatchTableTest, KeptLookupBelowASwappedDirectoryIsNotUsed) {
  dir_.write("p/inc/b.h", "1");
  dir_.write("q/inc/b.h", "2");
  trust(1, {"p/inc/b.h"});
  sh("mv p p_old && mv q p");
  EXPECT_EQ(fired(), std::set<uint32_t>{1});
  trust(2, {"p/inc/b.h"});
  dir_.write("p/inc/b.h", "3");  // in place, in the directory swapped in
  EXPECT_EQ(fired(), std::set<uint32_t>{2});
}

// A later pass through a whole path already resolved takes the earlier
// walk's dependencies (no walk of its own): every change along the path must
// still reach it, and once a change was read, the next pass walks again.
TEST_F(WatchTableTest, PathsResolvedByAnEarlierPassReportLaterOnes) {
  dir_.write("p/inc/a.h", "1");
  dir_.write("q/inc/a.h", "2");
  // (A reference stays in every list it was registered in until that list
  // reports: 1 to 5 below are reported again by a later change, as the
  // table always did; the server ignores references of an older generation.)
  trust(1, {"p/inc/a.h", "p/inc/missing.h"});
  trust(2, {"p/inc/a.h", "p/inc/missing.h"});
  trust(3, {"p/inc/a.h", "p/inc/missing.h"});
  dir_.write("p/inc/a.h", "3");
  EXPECT_EQ(fired(), (std::set<uint32_t>{1, 2, 3}));
  trust(4, {"p/inc/a.h", "p/inc/missing.h"});
  trust(5, {"p/inc/a.h", "p/inc/missing.h"});
  dir_.write("p/inc/missing.h", "");
  EXPECT_EQ(fired(), (std::set<uint32_t>{1, 2, 3, 4, 5}));
  trust(6, {"p/inc/a.h"});
  trust(7, {"p/inc/a.h"});
  sh("mv p p_old && mv q p");  // two levels up
  std::set<uint32_t> after_move = fired();
  EXPECT_TRUE(after_move.count(6) && after_move.count(7));
  trust(8, {"p/inc/a.h"});
  trust(9, {"p/inc/a.h"});
  dir_.write("p/inc/a.h", "4");  // in the directory swapped in
  EXPECT_EQ(fired(), (std::set<uint32_t>{8, 9}));
}

// A path in a directory an earlier pass walked through takes that pass's
// lookups of the directories above it: a change anywhere above must still
// reach it, and after one, the next walk looks them up anew.
TEST_F(WatchTableTest, APathInADirectoryWalkedBeforeReportsChangesAbove) {
  dir_.write("p/inc/a.h", "1");
  dir_.write("p/inc/b.h", "2");
  dir_.write("q/inc/c.h", "3");
  trust(1, {"p/inc/a.h"});
  trust(2, {"p/inc/b.h"});  // p and inc as the first pass found them
  dir_.write("p/inc/b.h", "4");
  EXPECT_EQ(fired(), std::set<uint32_t>{2});
  trust(3, {"p/inc/b.h"});
  trust(4, {"p/inc/c.h"});     // missing, from p/inc
  sh("mv p p_old && mv q p");  // two levels up
  std::set<uint32_t> after_move = fired();
  EXPECT_TRUE(after_move.count(1) && after_move.count(3) && after_move.count(4));
  trust(5, {"p/inc/c.h"});  // found now, in the directory swapped in
  dir_.write("p/inc/c.h", "5");
  EXPECT_EQ(fired(), std::set<uint32_t>{5});
}

// Paths below one missing directory: the directory made reports each of
// them.
TEST_F(WatchTableTest, PathsBelowAMissingDirectoryReportItAppearing) {
  dir_.write("inc/.keep", "");
  trust(1, {"inc/gone/deeper/x.h"});
  trust(2, {"inc/gone/y.h"});
  trust(3, {"inc/gone/deeper/z.h"});
  dir_.write("inc/other/x.h", "");
  EXPECT_TRUE(fired().empty());
  sh("mkdir inc/gone");
  EXPECT_EQ(fired(), (std::set<uint32_t>{1, 2, 3}));
}

// Paths through a symlink: retargeting the link reports every path walked
// through it, and the next walk follows the new target.
TEST_F(WatchTableTest, PathsThroughASymlinkReportItRetargeted) {
  dir_.write("one/a.h", "1");
  dir_.write("one/b.h", "1");
  dir_.write("two/b.h", "2");
  sh("ln -s one link");
  trust(1, {"link/a.h"});
  trust(2, {"link/b.h"});
  dir_.write("one/b.h", "3");
  EXPECT_EQ(fired(), std::set<uint32_t>{2});
  trust(3, {"link/b.h"});
  sh("ln -sfn two link");
  std::set<uint32_t> after = fired();
  EXPECT_TRUE(after.count(1) && after.count(3));
  trust(4, {"link/b.h"});
  dir_.write("two/b.h", "4");
  EXPECT_EQ(fired(), std::set<uint32_t>{4});
}

// A file with several links is never taken from an earlier pass: each pass
// takes its signature again.
TEST_F(WatchTableTest, PathsToAFileWithSeveralLinksAreWalkedEachPass) {
  dir_.write("inc/a.h", "a");
  sh("ln inc/a.h alias.h");
  trust(1, {"inc/a.h"});
  EXPECT_EQ(table_.multi_linked().size(), 1u);
  trust(2, {"inc/a.h"});
  EXPECT_EQ(table_.multi_linked().size(), 1u);
}

// A long-running server whose headers keep changing: each change forgets
// the kept path through that header, the next check keeps it again, and the
// index of kept paths must not grow with every round.
TEST_F(WatchTableTest, KeptPathsStayBoundedWhileFilesKeepChanging) {
  dir_.write("a/b/c/d/e/f/x.h", "0");
  for (int round = 0; round < 1500; ++round) {
    trust(uint32_t(round), {"a/b/c/d/e/f/x.h"});
    dir_.write("a/b/c/d/e/f/x.h", std::to_string(round));
    ASSERT_EQ(fired(), std::set<uint32_t>{uint32_t(round)}) << round;
  }
  EXPECT_LT(table_.chain_index_size(), 4096u + 4 * 64);
}

TEST_F(WatchTableTest, ChangeBeforeAPassReadAfterItStillReports) {
  dir_.write("inc/.keep", "");
  trust(1, {"inc/x.h"});
  dir_.write("inc/x.h", "");  // not read yet when the next pass looks x.h up
  trust(2, {"inc/x.h"});
  EXPECT_EQ(fired(), (std::set<uint32_t>{1, 2}));
}

TEST_F(WatchTableTest, WriteThroughAnotherHardLink) {
  dir_.write("inc/a.h", "a");
  sh("mkdir other && ln inc/a.h other/alias.h");
  trust(1, {"inc/a.h"});
  ASSERT_EQ(table_.multi_linked().size(), 1u);
  sh("printf B > other/alias.h");
  EXPECT_EQ(fired(), std::set<uint32_t>{1});
}

TEST_F(WatchTableTest, SymlinkRetargetedAnywhereOnThePath) {
  dir_.write("one/a.h", "1");
  dir_.write("two/a.h", "2");
  sh("mkdir -p mid && ln -s ../one mid/l && ln -s mid/l inc");
  trust(1, {"inc/a.h"});
  sh("ln -sfn ../two mid/l");
  EXPECT_EQ(fired(), std::set<uint32_t>{1});
  trust(2, {"inc/a.h"});
  dir_.write("two/a.h", "3");  // the target itself, reached through both links
  EXPECT_EQ(fired(), std::set<uint32_t>{2});
}

TEST_F(WatchTableTest, ParentDirectoryRenamed) {
  dir_.write("p/inc/a.h", "a");
  trust(1, {"p/inc/a.h"});
  sh("mv p q");
  EXPECT_EQ(fired(), std::set<uint32_t>{1});
}

TEST_F(WatchTableTest, DotDotResolvesFromTheRealDirectory) {
  dir_.write("real/sub/.keep", "");
  dir_.write("real/x.h", "x");
  dir_.write("elsewhere/x.h", "y");
  sh("mkdir -p l && ln -s ../real/sub l/s");
  // l/s/../x.h is real/x.h, not l/x.h.
  trust(1, {"l/s/../x.h"});
  dir_.write("l/x.h", "z");
  EXPECT_TRUE(fired().empty());
  dir_.write("real/x.h", "X");
  EXPECT_EQ(fired(), std::set<uint32_t>{1});
}

TEST_F(WatchTableTest, StaleGenerationIsStillReportedButForgottenAfterDrop) {
  dir_.write("inc/a.h", "a");
  trust(1, {"inc/a.h"});
  table_.forget_dependencies();
  dir_.write("inc/a.h", "b");
  EXPECT_TRUE(fired().empty());
}

// What the server's walk share learns from the events: each path named, as
// watched, with whether a directory entry changed; a watched directory
// itself removed tells no path.
TEST_F(WatchTableTest, ChangesNameEachPathAnEventWasAbout) {
  dir_.write("inc/a.h", "a");
  dir_.write("src/t.cc", "t");
  trust(1, {"inc/a.h", "src/t.cc"});
  (void)table_.take_changes();
  dir_.write("inc/a.h", "A");                               // written in place
  sh("echo x > src/t.cc.tmp && mv src/t.cc.tmp src/t.cc");  // replaced by a rename
  fired();
  WatchTable::Changes changes = table_.take_changes();
  EXPECT_FALSE(changes.unknown);
  std::set<std::string> written, entries;
  for (const WatchTable::Change& c : changes.paths) {
    (c.entry ? entries : written).insert(c.path);
  }
  EXPECT_TRUE(written.count(dir_.at("inc/a.h")));
  EXPECT_FALSE(entries.count(dir_.at("inc/a.h")));
  EXPECT_TRUE(entries.count(dir_.at("src/t.cc")));
  EXPECT_TRUE(entries.count(dir_.at("src/t.cc.tmp")));
  EXPECT_TRUE(table_.take_changes().paths.empty());  // taken once
  sh("rm -r inc");
  fired();
  EXPECT_TRUE(table_.take_changes().unknown);
}

TEST(WatchTableFilesystems, OnlyLocalTypesAreTrusted) {
  EXPECT_TRUE(WatchTable::local_filesystem(0xEF53));
  EXPECT_TRUE(WatchTable::local_filesystem(0x01021994));
  EXPECT_FALSE(WatchTable::local_filesystem(0x6969));      // NFS
  EXPECT_FALSE(WatchTable::local_filesystem(0x65735546));  // FUSE
  EXPECT_FALSE(WatchTable::local_filesystem(0x01021997));  // 9p
  EXPECT_FALSE(WatchTable::local_filesystem(0x794c7630));  // overlayfs
}

}  // namespace
}  // namespace lexpack::server
