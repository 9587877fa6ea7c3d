// Compiler identity: the kind from --version text, and the hash of a real
// compiler behind a wrapper script changing with each thing that decides the
// object (the driver's bytes, its predefined macros, its search list) and
// nothing else; the store's memo answers without running the compiler while
// the binary stays the same.
#include "compiler/identify_compiler.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "base/process.h"
#include "tests/support/test_dir.h"

namespace lexpack::compiler {
namespace {

using lexpack::testing::TestDir;

TEST(KindFromVersionText, GccClangAndOthers) {
  EXPECT_EQ(kind_from_version_text("g++ (Debian 12.2.0-14) 12.2.0\nCopyright (C) 2022 Free "
                                   "Software Foundation, Inc.\n"),
            CompilerKind::kGcc);
  EXPECT_EQ(kind_from_version_text("gcc (GCC) 13.1.0\nCopyright (C) 2023 Free Software "
                                   "Foundation, Inc.\n"),
            CompilerKind::kGcc);
  EXPECT_EQ(kind_from_version_text("Debian clang version 14.0.6\nTarget: x86_64-pc-linux-gnu\n"),
            CompilerKind::kClang);
  EXPECT_EQ(kind_from_version_text("clang version 17.0.0\n"), CompilerKind::kClang);
  // gcc's first line alone, without its copyright line, is not enough.
  EXPECT_EQ(kind_from_version_text("g++ (Debian 12.2.0-14) 12.2.0\n"), CompilerKind::kUnknown);
  EXPECT_EQ(kind_from_version_text("icpx (Intel) 2023\n"), CompilerKind::kUnknown);
  EXPECT_EQ(kind_from_version_text(""), CompilerKind::kUnknown);
  // "clang version" on a later line does not make a clang.
  EXPECT_EQ(kind_from_version_text("mycc 1.0\nbased on clang version 14\n"),
            CompilerKind::kUnknown);
}

class WrappedGcc : public ::testing::Test {
 protected:
  void SetUp() override {
    if (base::find_program("g++").empty()) GTEST_SKIP() << "g++ not installed";
    // Every run appends a line to runs.log; $LEXPACK_TEST_EXTRA adds
    // arguments without changing the wrapper's bytes.
    write_wrapper("");
  }
  void write_wrapper(const std::string& comment) {
    dir_.write("bin/g++", "#!/bin/sh\n# " + comment + "\necho run >> '" + dir_.at("runs.log") +
                              "'\nexec g++ $LEXPACK_TEST_EXTRA \"$@\"\n");
    ASSERT_EQ(::chmod(dir_.at("bin/g++").c_str(), 0755), 0);
  }
  size_t runs() const {
    if (!dir_.exists("runs.log")) return 0;
    std::string log = dir_.read("runs.log");
    return size_t(std::count(log.begin(), log.end(), '\n'));
  }
  cache::Hash128 hash_with(const char* extra) {
    if (extra) {
      setenv("LEXPACK_TEST_EXTRA", extra, 1);
    } else {
      unsetenv("LEXPACK_TEST_EXTRA");
    }
    auto id = compiler_identity(nullptr, dir_.at("bin/g++"));
    unsetenv("LEXPACK_TEST_EXTRA");
    EXPECT_TRUE(id.ok()) << id.message();
    return id.ok() ? id->hash : cache::Hash128{};
  }
  TestDir dir_;
};

TEST_F(WrappedGcc, KindVersionAndAStableHash) {
  auto id = compiler_identity(nullptr, dir_.at("bin/g++"));
  ASSERT_TRUE(id.ok()) << id.message();
  EXPECT_EQ(id->kind, CompilerKind::kGcc);
  EXPECT_EQ(id->program, dir_.at("bin/g++"));
  base::ProcessResult version = base::run_captured({"g++", "--version"}, true);
  EXPECT_EQ(id->version, version.out.substr(0, version.out.find('\n')));
  EXPECT_FALSE(id->hash.is_zero());
  EXPECT_EQ(hash_with(nullptr), id->hash);
}

TEST_F(WrappedGcc, HashFollowsWhatDecidesTheObject) {
  const cache::Hash128 plain = hash_with(nullptr);
  // Another predefined macro.
  EXPECT_NE(hash_with("-DLEXPACK_TEST_MACRO=1"), plain);
  // Another default search list (the directory exists so the compiler keeps it).
  dir_.write("after/.keep", "");
  const std::string after = "-idirafter" + dir_.at("after");
  EXPECT_NE(hash_with(after.c_str()), plain);
  // An argument that changes neither leaves the identity as it was.
  EXPECT_EQ(hash_with("-Wall"), plain);
  // The driver's bytes, though it behaves the same.
  write_wrapper("edited");
  EXPECT_NE(hash_with(nullptr), plain);
}

TEST_F(WrappedGcc, StoreMemoAnswersUntilTheBinaryChanges) {
  sleep(2);  // a settled signature: the identity is remembered
  cache::StoreOptions options;
  options.dir = dir_.at("cache");
  auto store = cache::Store::open(options);
  ASSERT_TRUE(store.ok()) << store.message();
  auto first = compiler_identity(store->get(), dir_.at("bin/g++"));
  ASSERT_TRUE(first.ok()) << first.message();
  const size_t asked = runs();
  EXPECT_GT(asked, 0u);
  auto again = compiler_identity(store->get(), dir_.at("bin/g++"));
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(runs(), asked) << "the memo should answer without running the compiler";
  EXPECT_EQ(again->hash, first->hash);
  EXPECT_EQ(again->kind, CompilerKind::kGcc);
  EXPECT_EQ(again->version, first->version);

  write_wrapper("edited");
  auto edited = compiler_identity(store->get(), dir_.at("bin/g++"));
  ASSERT_TRUE(edited.ok()) << edited.message();
  EXPECT_GT(runs(), asked) << "a changed binary must be asked again";
  EXPECT_NE(edited->hash, first->hash);
}

// A specs file the driver reads (here found through LIBRARY_PATH) changes
// what it runs, though not its macros or search lists for the questions
// the identity asks: its bytes are part of the identity.
TEST(CompilerIdentity, TheSpecsFileTheDriverReadsIsPartOfIt) {
  if (base::find_program("g++").empty()) GTEST_SKIP() << "needs g++";
  TestDir dir;
  auto identity_with_specs = [&](const std::string& specs) {
    dir.write("specs", specs);
    ::setenv("LIBRARY_PATH", dir.path().c_str(), 1);
    auto id = compiler_identity(nullptr, "g++");
    ::unsetenv("LIBRARY_PATH");
    EXPECT_TRUE(id.ok()) << id.message();
    return id.ok() ? id->hash : cache::Hash128{};
  };
  const cache::Hash128 m = identity_with_specs("*link:\n+ -lm\n");
  const cache::Hash128 pthread = identity_with_specs("*link:\n+ -lpthread\n");
  auto none = compiler_identity(nullptr, "g++");
  ASSERT_TRUE(none.ok()) << none.message();
  EXPECT_NE(m, pthread);
  EXPECT_NE(m, none->hash);
  EXPECT_FALSE(library_path_has_specs());
}

TEST(CompilerIdentity, OtherProgramsAreUnknownAndMissingOnesAnError) {
  TestDir dir;
  dir.write("bin/cc", "#!/bin/sh\necho 'not a compiler'\n");
  ASSERT_EQ(::chmod(dir.at("bin/cc").c_str(), 0755), 0);
  auto id = compiler_identity(nullptr, dir.at("bin/cc"));
  ASSERT_TRUE(id.ok()) << id.message();
  EXPECT_EQ(id->kind, CompilerKind::kUnknown);
  EXPECT_EQ(id->version, "not a compiler");

  auto missing = compiler_identity(nullptr, dir.at("bin/no-such-cc"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("compiler not found"), std::string::npos);
}

}  // namespace
}  // namespace lexpack::compiler
