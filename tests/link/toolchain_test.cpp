// A link driver's answers through the remote: a machine that never asked a
// driver takes another machine's answers when every tool they name is here
// with the same bytes, and asks its own driver otherwise. The driver and its
// ld are small scripts that log each run, so the test sees who was asked.
#include "link/toolchain.h"

#include <gtest/gtest.h>

#include <string>

#include "base/process.h"
#include "tests/support/open_store.h"
#include "tests/support/servers.h"
#include "tests/support/test_dir.h"

namespace lexpack::link {
namespace {

using lexpack::testing::open_store;
using lexpack::testing::RedisServer;
using lexpack::testing::TestDir;

class ToolchainRemoteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (base::find_program("redis-server").empty()) GTEST_SKIP() << "redis-server not installed";
    ASSERT_TRUE(redis_.start());
    write_tools("/usr/lib");
  }
  // The driver `cc` (answers -print-prog-name and -print-search-dirs) and
  // the `ld` it names, whose default script searches `search_dir`.
  void write_tools(const std::string& search_dir) {
    const std::string log = lexpack::testing::shell_quote(dir_.at("runs.log"));
    dir_.write("tools/cc", "#!/bin/sh\necho \"cc $*\" >> " + log +
                               "\ncase \"$1\" in\n"
                               "  -print-prog-name=ld) echo " +
                               dir_.at("tools/ld") +
                               " ;;\n"
                               "  -print-prog-name=*) echo \"${1#-print-prog-name=}\" ;;\n"
                               "  -print-search-dirs) echo 'install: /opt/cc/' ;;\n"
                               "esac\n");
    dir_.write("tools/ld", "#!/bin/sh\necho \"ld $*\" >> " + log +
                               "\necho 'SEARCH_DIR(\"=" + search_dir + "\");'\n");
    ASSERT_EQ(
        ::system(("chmod +x " + lexpack::testing::shell_quote(dir_.at("tools")) + "/*").c_str()),
        0);
  }
  // driver_toolchain on the machine whose cache is `cache`.
  base::Result<Toolchain> ask(const std::string& cache, ToolchainRemote* remote) {
    cache::Config c;
    c.dir = dir_.at(cache + "-remote");
    c.remote_storage = redis_.url();
    std::string error;
    tier_ = cache::remote::RemoteTier::open(c, &error);
    EXPECT_TRUE(tier_) << error;
    remote->tier = tier_.get();
    remote->count = [this](std::string_view name, int64_t) { counted_ += std::string(name) + ";"; };
    std::unique_ptr<cache::Store> store = open_store(dir_.at(cache));
    closure::FileStates files(store.get(), nullptr);
    return driver_toolchain(store.get(), &files, dir_.at("tools/cc"), remote);
  }
  std::string runs() {
    std::string r = dir_.exists("runs.log") ? dir_.read("runs.log") : "";
    if (!r.empty()) dir_.remove("runs.log");
    return r;
  }

  TestDir dir_;
  RedisServer redis_;
  std::unique_ptr<cache::remote::RemoteTier> tier_;
  std::string counted_;
};

TEST_F(ToolchainRemoteTest, AnotherMachineTakesTheAnswersAndRunsNothing) {
  ToolchainRemote a;
  base::Result<Toolchain> asked = ask("cache-a", &a);
  ASSERT_TRUE(asked.ok()) << asked.message();
  EXPECT_NE(runs().find("ld --verbose"), std::string::npos);
  EXPECT_EQ(asked->search_dirs, std::vector<std::string>{"/usr/lib"});

  ToolchainRemote b;
  base::Result<Toolchain> taken = ask("cache-b", &b);
  ASSERT_TRUE(taken.ok()) << taken.message();
  EXPECT_EQ(runs(), "");
  EXPECT_EQ(taken->identity, asked->identity);
  EXPECT_EQ(taken->search_dirs, asked->search_dirs);
  EXPECT_NE(counted_.find("link_toolchain_answers_taken"), std::string::npos) << counted_;
  // Remembered on B: the next step asks neither the remote nor the driver.
  counted_.clear();
  ToolchainRemote again;
  ASSERT_TRUE(ask("cache-b", &again).ok());
  EXPECT_EQ(runs(), "");
  EXPECT_EQ(counted_, "");
}

TEST_F(ToolchainRemoteTest, ALinkerThatDiffersHereIsAskedNotTaken) {
  ToolchainRemote a;
  base::Result<Toolchain> asked = ask("cache-a", &a);
  ASSERT_TRUE(asked.ok()) << asked.message();
  runs();
  // On C the same driver names an ld with other bytes (another search dir).
  write_tools("/opt/lib");
  ToolchainRemote c;
  base::Result<Toolchain> own = ask("cache-c", &c);
  ASSERT_TRUE(own.ok()) << own.message();
  EXPECT_NE(runs().find("ld --verbose"), std::string::npos);
  EXPECT_NE(c.note.find("toolchain answer from the remote refused: " + dir_.at("tools/ld") +
                        " differs here"),
            std::string::npos)
      << c.note;
  EXPECT_EQ(own->search_dirs, std::vector<std::string>{"/opt/lib"});
  EXPECT_NE(own->identity, asked->identity);
}

// gcc's LTO tools are part of the identity: another lto1, lto-wrapper or
// linker plugin is another toolchain, and one missing makes it no LTO
// toolchain (an LTO link through it is not cached).
TEST(ToolchainTest, LtoToolsAreInTheIdentity) {
  TestDir dir;
  dir.write("tools/cc",
            "#!/bin/sh\ncase \"$1\" in\n"
            "  -print-prog-name=ld) echo " +
                dir.at("tools/ld") +
                " ;;\n"
                "  -print-prog-name=lto-wrapper) echo " +
                dir.at("tools/lto-wrapper") +
                " ;;\n"
                "  -print-prog-name=lto1) echo " +
                dir.at("tools/lto1") +
                " ;;\n"
                "  -print-prog-name=*) echo \"${1#-print-prog-name=}\" ;;\n"
                "  -print-file-name=*) echo " +
                dir.at("tools/") +
                "\"${1#-print-file-name=}\" ;;\n"
                "  -print-search-dirs) echo 'install: /opt/cc/' ;;\n"
                "esac\n");
  dir.write("tools/ld", "#!/bin/sh\necho 'SEARCH_DIR(\"=/usr/lib\");'\n");
  for (const char* tool : {"lto-wrapper", "lto1", "liblto_plugin.so"}) {
    dir.write(std::string("tools/") + tool, std::string("#!/bin/sh\n# ") + tool + "\n");
  }
  ASSERT_EQ(::system(("chmod +x " + lexpack::testing::shell_quote(dir.at("tools")) + "/*").c_str()),
            0);
  std::unique_ptr<cache::Store> store = open_store(dir.at("cache"));
  auto ask = [&] {
    closure::FileStates files(store.get(), nullptr);
    return driver_toolchain(store.get(), &files, dir.at("tools/cc"));
  };
  base::Result<Toolchain> first = ask();
  ASSERT_TRUE(first.ok()) << first.message();
  EXPECT_TRUE(first->lto);
  base::Result<Toolchain> again = ask();  // from the memo
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->identity, first->identity);
  EXPECT_TRUE(again->lto);

  dir.write("tools/lto1", "#!/bin/sh\n# another lto1\n");
  base::Result<Toolchain> other = ask();
  ASSERT_TRUE(other.ok()) << other.message();
  EXPECT_NE(other->identity, first->identity);
  EXPECT_TRUE(other->lto);

  dir.remove("tools/liblto_plugin.so");
  base::Result<Toolchain> without = ask();
  ASSERT_TRUE(without.ok()) << without.message();
  EXPECT_FALSE(without->lto);
  EXPECT_NE(without->identity, other->identity);
}

}  // namespace
}  // namespace lexpack::link
