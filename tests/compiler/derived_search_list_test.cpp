// Derived search lists against the compilers' own: whenever derivation
// accepts a command, its list must be exactly what g++ or clang++ prints for
// that command, and the cases where a compiler drops or moves a -I dir must
// be refused (asked instead).
#include "compiler/derived_search_list.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>

#include <cstdlib>
#include <filesystem>

#include "base/process.h"
#include "compiler/identify_compiler.h"
#include "compiler/search_list.h"
#include "tests/support/test_dir.h"

namespace lexpack::compiler {
namespace {

using testing::TestDir;

TEST(DerivedSearchList, SplitsPlainIncludeDirsFromTheRest) {
  IncludeSplit split;
  ASSERT_TRUE(split_include_dirs(
      {"-Ia", "-fPIC", "-I", "/x/b", "-isystem", "-Inot-an-include", "-iquote", "q"}, &split));
  EXPECT_EQ(split.include_dirs, (std::vector<std::string>{"a", "/x/b"}));
  EXPECT_TRUE(split.system_dirs.empty());
  EXPECT_EQ(split.rest,
            (std::vector<std::string>{"-fPIC", "-isystem", "-Inot-an-include", "-iquote", "q"}));
  // Absolute plain -isystem dirs, joined or not, are split out in order;
  // relative ones, clang's -isystem-after and an -isystem that is another
  // option's value stay in the rest.
  ASSERT_TRUE(
      split_include_dirs({"-isystem", "/s/one", "-Ia", "-isystem/s/two/.", "-isystem", "rel",
                          "-isystem-after", "/s/after", "-Xanalyzer", "-isystem", "/s/x"},
                         &split));
  EXPECT_EQ(split.include_dirs, (std::vector<std::string>{"a"}));
  EXPECT_EQ(split.system_dirs, (std::vector<std::string>{"/s/one", "/s/two/."}));
  EXPECT_EQ(split.rest, (std::vector<std::string>{"-isystem", "rel", "-isystem-after", "/s/after",
                                                  "-Xanalyzer", "-isystem", "/s/x"}));
  // "." and ".." parts are printed as given by both compilers.
  ASSERT_TRUE(split_include_dirs(
      {"-isystem", "/s/../t", "-Ia/./b", "-Ia/../b", "-I./a", "-I.", "-I..", "-isystem", "/s/t/.."},
      &split));
  EXPECT_EQ(split.include_dirs, (std::vector<std::string>{"a/./b", "a/../b", "./a", ".", ".."}));
  EXPECT_EQ(split.system_dirs, (std::vector<std::string>{"/s/../t", "/s/t/.."}));
  EXPECT_TRUE(split.rest.empty());
  for (std::vector<std::string> kept : std::vector<std::vector<std::string>>{
           {"-isystem", "/s/"},
           {"-isystem/s//t"},
       }) {
    ASSERT_TRUE(split_include_dirs(kept, &split)) << kept[0];
    EXPECT_TRUE(split.system_dirs.empty()) << kept[0];
  }
  for (std::vector<std::string> refused : std::vector<std::vector<std::string>>{
           {"-I=a"},
           {"-I$SYSROOT/a"},
           {"-I", "-"},
           {"-Ia/"},
           {"-Ia//b"},
           {"-I"},
           {"-I-"},
           {"--include-directory=a"},
           {"-iprefix", "/p/", "-iwithprefixbefore", "a"},
           {"-Fframeworks"},
           {"-working-directory", "/x", "-Ia"},
           // An -I right after an option that may take it as its value.
           {"-Xanalyzer", "-Ia", "-fcolor-diagnostics"},
           {"-Xarch_x86_64", "-Ia", "-m64"},
           {"-Xopenmp-target", "-Ia", "-m64"},
           {"-mllvm", "-Ia"},
           {"-unknown-option", "-Ia"},
       }) {
    EXPECT_FALSE(split_include_dirs(refused, &split)) << refused[0] << " " << refused[1];
  }
  // Options that take no value, and values of known options, leave it alone.
  for (std::vector<std::string> accepted : std::vector<std::vector<std::string>>{
           {"-m64", "-Ia"},
           {"-march=x86-64", "-Ia"},
           {"-pthread", "-Ia"},
           {"-nostdinc", "-Ia"},
           {"-isystem", "s", "-Ia"},
           {"-Ia", "-Ib"},
           {"-I", "a", "-Ib"},
       }) {
    EXPECT_TRUE(split_include_dirs(accepted, &split)) << accepted[0] << " " << accepted[1];
  }
}

// clang's CCC_OVERRIDE_OPTIONS may rewrite the command's -I flags, so no list
// is derived while it is set.
TEST(DerivedSearchList, OverrideOptionsStopDerivation) {
  const char* old = std::getenv("CCC_OVERRIDE_OPTIONS");
  std::string saved = old ? old : "";
  ::setenv("CCC_OVERRIDE_OPTIONS", "#x-Ia", 1);
  EXPECT_TRUE(search_path_environment_set());
  if (old) {
    ::setenv("CCC_OVERRIDE_OPTIONS", saved.c_str(), 1);
  } else {
    ::unsetenv("CCC_OVERRIDE_OPTIONS");
  }
}

// Variables that change what the compiler writes (diagnostics, side
// outputs, a second compile) are part of keys.
TEST(DerivedSearchList, OutputChangingVariablesCount) {
  for (const char* name : {"GCC_COMPARE_DEBUG", "GCC_EXTRA_DIAGNOSTIC_OUTPUT", "GCC_URLS",
                           "TERM_URLS", "DEPENDENCIES_OUTPUT", "SUNPRO_DEPENDENCIES",
                           "CC_PRINT_HEADERS", "CC_PRINT_OPTIONS", "CC_LOG_DIAGNOSTICS"}) {
    const char* old = std::getenv(name);
    std::string saved = old ? old : "";
    ::unsetenv(name);
    const std::string without = relevant_environment();
    ::setenv(name, "1", 1);
    EXPECT_NE(relevant_environment(), without) << name;
    if (old) {
      ::setenv(name, saved.c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
}

// Every variable that adds search dirs stops derivation and is part of keys:
// the Objective-C++ one too.
TEST(DerivedSearchList, EveryIncludePathVariableCounts) {
  for (const char* name : {"CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "OBJC_INCLUDE_PATH",
                           "OBJCPLUS_INCLUDE_PATH"}) {
    const char* old = std::getenv(name);
    std::string saved = old ? old : "";
    ::unsetenv(name);
    const std::string without = relevant_environment();
    ::setenv(name, "/nowhere", 1);
    EXPECT_TRUE(search_path_environment_set()) << name;
    EXPECT_NE(relevant_environment(), without) << name;
    if (old) {
      ::setenv(name, saved.c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
}

// A base whose dirs have since become one directory (a symlink) is no base:
// the compiler would now drop one of them.
TEST(DerivedSearchList, RefusesABaseWhoseDirsBecameTheSame) {
  TestDir dir;
  std::filesystem::create_directories(dir.at("x"));
  std::filesystem::create_directories(dir.at("y"));
  std::filesystem::create_directories(dir.at("inc"));
  SearchList base;
  base.bracket_dirs = {dir.at("x"), dir.at("y")};
  SearchList derived;
  std::string why;
  ASSERT_TRUE(derive_search_list(base, {dir.at("inc")}, {}, &derived, &why)) << why;
  EXPECT_EQ(derived.bracket_dirs,
            (std::vector<std::string>{dir.at("inc"), dir.at("x"), dir.at("y")}));
  std::filesystem::remove(dir.at("y"));
  std::filesystem::create_directory_symlink(dir.at("x"), dir.at("y"));
  EXPECT_FALSE(derive_search_list(base, {dir.at("inc")}, {}, &derived, &why));
}

// One compiler, one language, one temp tree of directories to name.
class DerivedAgainstCompiler : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (search_path_environment_set()) GTEST_SKIP() << "CPATH or a similar variable is set";
    if (base::find_program(GetParam()).empty()) GTEST_SKIP() << GetParam() << " not installed";
    auto id = compiler_identity(nullptr, GetParam());
    ASSERT_TRUE(id.ok()) << id.message();
    ASSERT_NE(id->kind, CompilerKind::kUnknown);
    identity_ = *id;
    for (const char* d : {"a", "b", "c", "q", "s", "after", "sub/inner"}) {
      std::filesystem::create_directories(dir_.at(d));
    }
    dir_.write("plain_file", "");
    std::filesystem::create_directory_symlink("/usr/include", dir_.at("sys_link"));
    std::filesystem::create_directory_symlink(dir_.at("a"), dir_.at("a_link"));
    ASSERT_EQ(::chdir(dir_.path().c_str()), 0);
  }

  // Derives the list for `args` and compares it with the compiler's answer.
  // Returns whether derivation accepted the command.
  bool check(const std::vector<std::string>& args, const char* source) {
    std::vector<std::string> argv = {GetParam()};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"-c", source});
    compiler::CompileCommand cmd = compiler::parse_compile_command(argv);
    EXPECT_EQ(cmd.uncacheable, "");
    SearchList derived;
    bool accepted = derived_search_list(nullptr, identity_, cmd, dir_.path(), &derived);
    base::Result<SearchList> asked =
        asked_search_list(nullptr, identity_, cmd.language, cmd.search_args, dir_.path());
    EXPECT_TRUE(asked.ok()) << asked.message();
    if (accepted && asked.ok()) {
      EXPECT_EQ(derived.quote_dirs, asked->quote_dirs) << describe(args, source);
      EXPECT_EQ(derived.bracket_dirs, asked->bracket_dirs) << describe(args, source);
      // The same dirs missing (the order of the compiler's report differs
      // between gcc and clang and means nothing).
      std::vector<std::string> derived_missing = derived.missing_dirs;
      std::vector<std::string> asked_missing = asked->missing_dirs;
      std::sort(derived_missing.begin(), derived_missing.end());
      std::sort(asked_missing.begin(), asked_missing.end());
      EXPECT_EQ(derived_missing, asked_missing) << describe(args, source);
    }
    return accepted;
  }

  std::string describe(const std::vector<std::string>& args, const char* source) {
    std::string s = GetParam();
    for (const std::string& a : args) s += " " + a;
    return s + " " + source;
  }

  void expect_accepted(const std::vector<std::string>& args) {
    for (const char* source : {"x.c", "x.cpp"}) {
      EXPECT_TRUE(check(args, source)) << "refused: " << describe(args, source);
    }
  }
  void expect_refused(const std::vector<std::string>& args) {
    for (const char* source : {"x.c", "x.cpp"}) {
      EXPECT_FALSE(check(args, source)) << "accepted: " << describe(args, source);
    }
  }

  TestDir dir_;
  CompilerIdentity identity_;
};

TEST_P(DerivedAgainstCompiler, AcceptedListsAreTheCompilersOwn) {
  expect_accepted({});
  expect_accepted({"-I" + dir_.at("a"), "-I", dir_.at("b"), "-I" + dir_.at("c")});
  expect_accepted({"-Ic", "-I", "a", "-Isub/inner", "-Ib"});
  expect_accepted({"-Ia_link"});
  // Dot parts, printed as given; ".." climbs out of a symlink as the kernel
  // resolves it, not lexically.
  expect_accepted({"-I./a", "-Isub/../b", "-Isub/inner/..", "-I.", "-Ia_link/../c"});
  expect_accepted({"-fPIC", "-Ia", "-m64", "-Ib"});
  expect_accepted({"-Ia", "-march=x86-64", "-Ib", "-fno-plt"});
  expect_accepted({"-iquote", "q", "-Ia", "-isystem", "s", "-Ib", "-idirafter", "after"});
  expect_accepted({"-isystem", dir_.at("s"), "-I" + dir_.at("b"), "-iquote", dir_.at("q")});
  expect_accepted({"-nostdinc", "-Ia", "-Ib"});
  // -isystem dirs go after every -I dir, wherever they stand.
  expect_accepted({"-isystem", dir_.at("s"), "-Ia", "-isystem" + dir_.at("c"), "-Ib"});
  expect_accepted({"-isystem", dir_.at("c"), "-isystem", dir_.at("s")});
  expect_accepted({"-isystem", dir_.at("s"), "-idirafter", "after", "-nostdinc", "-Ia"});
  expect_accepted({"-isystem", "/dev", "-Ia"});  // the base question's probe dir
  expect_accepted(
      {"-Ia", "-isystem", dir_.at("s") + "/.", "-isystem", dir_.at("sub") + "/./inner"});
  // Dirs that do not exist are left out, wherever they stand.
  expect_accepted({"-Ia", "-Inonexistent"});
  expect_accepted({"-Inonexistent", "-Ia", "-Inosuch/inner"});
  expect_accepted({"-Inosuch/../a"});
  expect_accepted({"-Ia", "-isystem", dir_.at("nonexistent"), "-isystem", dir_.at("s")});
  expect_accepted({"-I" + dir_.at("nonexistent"), "-isystem", dir_.at("nonexistent")});
}

TEST_P(DerivedAgainstCompiler, RefusesWhatTheCompilerDropsOrRewrites) {
  expect_refused({"-I/usr/include"});
  expect_refused({"-Isys_link"});
  expect_refused({"-Ia", "-Ia"});
  expect_refused({"-Ia", "-Ia_link"});
  expect_refused({"-Ia", "-I" + dir_.at("a")});
  expect_refused({"-Iplain_file"});
  expect_refused({"-Ia/"});
  expect_refused({"-Ia", "-I./a"});
  expect_refused({"-Ia", "-Isub/../a"});
  expect_refused({"-Ia", "-isystem", "a"});
  expect_refused({"-iquote", "b", "-Ib"});
  expect_refused({"-idirafter", "c", "-Ic"});
  // An -isystem dir that is an -I dir, another -isystem dir or a system dir,
  // or that is not a directory.
  expect_refused({"-isystem", dir_.at("a"), "-Ia"});
  expect_refused({"-isystem", dir_.at("s"), "-isystem", dir_.at("s")});
  expect_refused({"-isystem", dir_.at("a"), "-isystem", dir_.at("a_link")});
  expect_refused({"-isystem", "/usr/include"});
  expect_refused({"-isystem", dir_.at("sys_link")});
  expect_refused({"-isystem", dir_.at("plain_file")});
  expect_refused({"-isystem", dir_.at("a") + "/.", "-Ia"});
  // A path through a file is no missing dir (gcc stops with an error).
  compiler::CompileCommand through_file =
      compiler::parse_compile_command({GetParam(), "-Ia", "-Iplain_file/inner", "-c", "x.c"});
  SearchList unused;
  EXPECT_FALSE(derived_search_list(nullptr, identity_, through_file, dir_.path(), &unused));
}

// The refusals above matter: putting the -I dirs first without the checks
// gives a list the compiler does not print.
TEST_P(DerivedAgainstCompiler, NaiveDerivationWouldBeWrong) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"-I/usr/include"}, {"-Ia", "-Ia_link"}}) {
    std::vector<std::string> argv = {GetParam()};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"-c", "x.c"});
    compiler::CompileCommand cmd = compiler::parse_compile_command(argv);
    IncludeSplit split;
    ASSERT_TRUE(split_include_dirs(cmd.search_args, &split));
    auto probed = probed_base_search_list(nullptr, identity_, cmd.language, split.rest, ".");
    ASSERT_TRUE(probed.ok());
    SearchList base;
    ASSERT_TRUE(strip_probe(*probed, &base));
    std::vector<std::string> naive = split.include_dirs;
    naive.insert(naive.end(), base.bracket_dirs.begin(), base.bracket_dirs.end());
    auto asked = asked_search_list(nullptr, identity_, cmd.language, cmd.search_args, ".");
    ASSERT_TRUE(asked.ok());
    EXPECT_NE(naive, asked->bracket_dirs) << describe(args, "x.c");
  }
}

// The identity's single run per language (-dM -E -v -I probe) says what the
// two separate runs say: the same macros, and once the probe is taken out the
// same search list.
TEST_P(DerivedAgainstCompiler, OneIdentityRunAnswersBothQuestions) {
  for (const char* lang : {"c", "c++"}) {
    base::ProcessResult macros =
        base::run_captured({GetParam(), "-x", lang, "-dM", "-E", "/dev/null"}, true);
    base::ProcessResult list =
        base::run_captured({GetParam(), "-x", lang, "-E", "-v", "/dev/null"}, true);
    base::ProcessResult both = base::run_captured(
        {GetParam(), "-x", lang, "-dM", "-E", "-v", "-I", std::string(kProbeDir), "/dev/null"},
        true);
    ASSERT_EQ(macros.exit_code, 0);
    ASSERT_EQ(both.exit_code, 0);
    EXPECT_FALSE(macros.out.empty());
    EXPECT_EQ(both.out, macros.out) << lang;
    SearchList alone, probed, stripped;
    ASSERT_TRUE(parse_search_list(list.err, &alone));
    ASSERT_TRUE(parse_search_list(both.err, &probed));
    EXPECT_FALSE(probe_dropped(both.err));
    ASSERT_TRUE(strip_probe(probed, &stripped));
    EXPECT_EQ(stripped, alone) << lang;
  }
}

// Through a store, as the scan and the launcher use it: the identity leaves
// the bare base in the search memo, and lists derived from it are memoized
// and equal to the compiler's own.
TEST_P(DerivedAgainstCompiler, DerivedThroughTheStoreAreTheCompilersOwn) {
  cache::StoreOptions options;
  options.dir = dir_.at("cache");
  auto store = cache::Store::open(options);
  ASSERT_TRUE(store.ok()) << store.message();
  auto id = compiler_identity(store->get(), GetParam());
  ASSERT_TRUE(id.ok()) << id.message();
  EXPECT_EQ(id->hash, identity_.hash);
  // Any question to this "compiler" fails: only memos and derivation answer.
  CompilerIdentity mute = *id;
  mute.program = dir_.at("no-such-compiler");
  for (const char* source : {"x.c", "x.cpp"}) {
    compiler::CompileCommand cmd = compiler::parse_compile_command(
        {GetParam(), "-Ib", "-isystem", dir_.at("s"), "-I" + dir_.at("a"), "-Ic", "-c", source});
    EXPECT_TRUE(probed_base_search_list(store->get(), mute, cmd.language, {}, dir_.path()).ok());
    auto list = search_list_for(store->get(), mute, cmd, dir_.path());
    ASSERT_TRUE(list.ok()) << list.message();
    auto truth = asked_search_list(nullptr, *id, cmd.language, cmd.search_args, dir_.path());
    ASSERT_TRUE(truth.ok()) << truth.message();
    EXPECT_EQ(*list, *truth) << source;
    ASSERT_GE(list->bracket_dirs.size(), 4u);
    EXPECT_EQ(list->bracket_dirs[0], "b");
    // The -isystem dir after every -I dir: derived, not asked (the mute
    // compiler cannot answer).
    EXPECT_EQ(list->bracket_dirs[3], dir_.at("s"));
    // Memoized like an asked list: found again with no base to derive from.
    BaseLookup no_base = [](const std::vector<std::string>&) -> base::Result<SearchList> {
      return base::Status::error("no base");
    };
    auto again = search_list_for(store->get(), mute, cmd, dir_.path(), &no_base);
    ASSERT_TRUE(again.ok()) << again.message();
    EXPECT_EQ(*again, *truth);
    // A command whose -I cannot be derived is asked, and asking fails here.
    compiler::CompileCommand dup =
        compiler::parse_compile_command({GetParam(), "-Ia", "-Ia", "-c", source});
    EXPECT_FALSE(search_list_for(store->get(), mute, dup, dir_.path()).ok());
  }
}

// Machine B keeps the answer machine A's gcc gave to a base question of
// flags only (it travels in a remote closure memo) where every dir it
// lists is a directory and every dir it found missing is missing: B's lists
// are then derived from it with no question to its compiler, and are the
// compiler's own. An answer that does not hold on B is not kept.
TEST_P(DerivedAgainstCompiler, AnotherMachinesBaseAnswerIsKeptWhereItHolds) {
  auto open = [&](const std::string& name) {
    cache::StoreOptions options;
    options.dir = dir_.at(name);
    auto store = cache::Store::open(options);
    EXPECT_TRUE(store.ok()) << store.message();
    return std::move(store.value());
  };
  std::unique_ptr<cache::Store> a = open("cache-a"), b = open("cache-b"), c = open("cache-c");
  CompilerIdentity mute = identity_;
  mute.program = dir_.at("no-such-compiler");
  const CompileCommand cmd =
      parse_compile_command({GetParam(), "-ffast-math", "-I" + dir_.at("a"), "-Ib", "-c", "x.cpp"});
  ASSERT_EQ(shareable_base_rest(cmd), std::vector<std::string>{"-ffast-math"});
  // A rest naming a path, or a value apart, or none at all: not shared.
  for (std::vector<std::string> args : {std::vector<std::string>{"--sysroot=/"},
                                        {"-isystem", "s"},
                                        {"-iwithprefix", "x"},
                                        {"-specs=x"},
                                        {"-no-canonical-prefixes"},
                                        {"-fplugin=x.so"},
                                        {}}) {
    std::vector<std::string> argv = {GetParam()};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"-Ib", "-c", "x.cpp"});
    EXPECT_FALSE(shareable_base_rest(parse_compile_command(argv))) << describe(args, "x.cpp");
  }
  EXPECT_FALSE(shareable_base_answer(a.get(), identity_, cmd, dir_.path()));
  auto truth = search_list_for(a.get(), identity_, cmd, dir_.path());
  ASSERT_TRUE(truth.ok()) << truth.message();
  std::optional<SearchList> answer = shareable_base_answer(a.get(), identity_, cmd, dir_.path());
  std::string why;
  if (identity_.kind != CompilerKind::kGcc) {
    // clang's answers stay where they were asked.
    EXPECT_FALSE(answer);
    EXPECT_FALSE(remember_shared_base_answer(b.get(), mute, cmd, dir_.path(), *truth, &why));
    return;
  }
  ASSERT_TRUE(answer);
  EXPECT_FALSE(search_list_for(b.get(), mute, cmd, dir_.path()).ok());  // B's own: asked
  ASSERT_TRUE(remember_shared_base_answer(b.get(), mute, cmd, dir_.path(), *answer, &why)) << why;
  auto derived = search_list_for(b.get(), mute, cmd, dir_.path());
  ASSERT_TRUE(derived.ok()) << derived.message();
  EXPECT_EQ(*derived, *truth);
  // A listed dir that is no directory here, a missing one that exists here.
  SearchList gone = *answer, appeared = *answer;
  gone.bracket_dirs.push_back(dir_.at("gone"));
  appeared.missing_dirs.push_back(dir_.at("c"));
  EXPECT_FALSE(remember_shared_base_answer(c.get(), mute, cmd, dir_.path(), gone, &why));
  EXPECT_NE(why.find("is no directory here"), std::string::npos) << why;
  EXPECT_FALSE(remember_shared_base_answer(c.get(), mute, cmd, dir_.path(), appeared, &why));
  EXPECT_NE(why.find("exists here"), std::string::npos) << why;
  EXPECT_FALSE(search_list_for(c.get(), mute, cmd, dir_.path()).ok());
}

// A derived list that left out a dir that does not exist holds until that
// dir appears: then it is derived again, with the dir in its place.
TEST_P(DerivedAgainstCompiler, ADerivedListWithAMissingDirIsDerivedAgainWhenItAppears) {
  cache::StoreOptions options;
  options.dir = dir_.at("cache");
  auto store = cache::Store::open(options);
  ASSERT_TRUE(store.ok()) << store.message();
  for (const char* source : {"x.c", "x.cpp"}) {
    const std::string later = std::string("later_") + source;
    compiler::CompileCommand cmd =
        compiler::parse_compile_command({GetParam(), "-Ia", "-I" + later, "-Ib", "-c", source});
    auto before = search_list_for(store->get(), identity_, cmd, dir_.path());
    ASSERT_TRUE(before.ok()) << before.message();
    ASSERT_GE(before->bracket_dirs.size(), 2u);
    EXPECT_EQ(before->bracket_dirs[0], "a");
    EXPECT_EQ(before->bracket_dirs[1], "b");
    EXPECT_NE(std::find(before->missing_dirs.begin(), before->missing_dirs.end(), later),
              before->missing_dirs.end());
    std::filesystem::create_directory(dir_.at(later));
    auto after = search_list_for(store->get(), identity_, cmd, dir_.path());
    ASSERT_TRUE(after.ok()) << after.message();
    auto truth = asked_search_list(nullptr, identity_, cmd.language, cmd.search_args, dir_.path());
    ASSERT_TRUE(truth.ok()) << truth.message();
    EXPECT_EQ(after->bracket_dirs, truth->bracket_dirs) << source;
    ASSERT_GE(after->bracket_dirs.size(), 3u);
    EXPECT_EQ(after->bracket_dirs[1], later);
  }
}

// A list whose compiler dropped a search dir that is the same directory as
// another only through a symlink (that dir may become one of its own) is
// memoized with the pair when the compiler is gcc, which names each dir it
// drops; clang's is not memoized. Dropped spellings of the same path are
// harmless.
TEST_P(DerivedAgainstCompiler, ListsWithADuplicateThroughASymlinkKeepThePair) {
  const bool gcc = std::string(GetParam()) == "g++";
  auto asked = [&](const std::vector<std::string>& args, const char* source) {
    std::vector<std::string> argv = {GetParam()};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"-c", source});
    compiler::CompileCommand cmd = compiler::parse_compile_command(argv);
    auto list = asked_search_list(nullptr, identity_, cmd.language, cmd.search_args, dir_.path());
    EXPECT_TRUE(list.ok()) << list.message();
    return list.ok() ? *list : SearchList{{}, {}, {}, {}, false};
  };
  auto memoizable = [&](const std::vector<std::string>& args, const char* source) {
    SearchList list = asked(args, source);
    return list.memoizable && list.same_dirs.empty();
  };
  // Memoized with gcc, keeping the pair; not with clang.
  auto paired = [&](const std::vector<std::string>& args, const char* source) {
    SearchList list = asked(args, source);
    return gcc ? list.memoizable && !list.same_dirs.empty() && same_dirs_hold(list.same_dirs)
               : !list.memoizable;
  };
  for (const char* source : {"x.c", "x.cpp"}) {
    SCOPED_TRACE(source);
    EXPECT_TRUE(memoizable({}, source));
    EXPECT_TRUE(memoizable({"-Ia", "-Ib"}, source));
    EXPECT_TRUE(memoizable({"-Ia", "-Ia"}, source));
    EXPECT_TRUE(memoizable({"-I./a/", "-Ia", "-I", "a//"}, source));
    EXPECT_TRUE(memoizable({"-I/usr/include", "-isystem", "/usr/include"}, source));
    EXPECT_TRUE(memoizable({"-Ia_link", "-Ib"}, source));
    EXPECT_TRUE(memoizable({"-Ia", "-I" + dir_.at("a")}, source));
    EXPECT_TRUE(memoizable({"-I" + dir_.at("a_link"), "-I" + dir_.at("a_link")}, source));
    EXPECT_TRUE(paired({"-Ia", "-Ia_link"}, source));
    EXPECT_TRUE(paired({"-Ia_link", "-Ia"}, source));
    EXPECT_TRUE(paired({"-isystem", "a", "-iquote", "q", "-Ia_link"}, source));
    EXPECT_TRUE(paired({"-Isys_link"}, source));
    // The second sys_link and the builtin /usr/include are dropped; clang
    // names sys_link both times.
    EXPECT_TRUE(paired({"-isystem", "sys_link", "-isystem", "sys_link"}, source));
    EXPECT_TRUE(
        paired({"-isystem", "sys_link", "-idirafter", "c", "-isystem", "sys_link"}, source));
    EXPECT_TRUE(paired({"-Ia", "-Ib/../a"}, source));
  }
  // Through a store: gcc's list is remembered while the pair holds, and
  // not once the link names another directory; clang's never is.
  cache::StoreOptions options;
  options.dir = dir_.at("cache");
  auto store = cache::Store::open(options);
  ASSERT_TRUE(store.ok()) << store.message();
  CompilerIdentity mute = identity_;
  mute.program = dir_.at("no-such-compiler");
  compiler::CompileCommand kept =
      compiler::parse_compile_command({GetParam(), "-Ia", "-Ib", "-c", "x.cpp"});
  compiler::CompileCommand dropped =
      compiler::parse_compile_command({GetParam(), "-Ia", "-Ia_link", "-c", "x.cpp"});
  for (const compiler::CompileCommand* cmd : {&kept, &dropped}) {
    ASSERT_TRUE(search_list_for(store->get(), identity_, *cmd, dir_.path()).ok());
  }
  EXPECT_TRUE(search_list_for(store->get(), mute, kept, dir_.path()).ok());
  EXPECT_EQ(search_list_for(store->get(), mute, dropped, dir_.path()).ok(), gcc);
  ASSERT_EQ(::unlink(dir_.at("a_link").c_str()), 0);
  ASSERT_EQ(::symlink("b", dir_.at("a_link").c_str()), 0);
  // Not the remembered list: a_link is a directory of its own now (two
  // distinct -I dirs, derived without asking).
  auto now = search_list_for(store->get(), mute, dropped, dir_.path());
  ASSERT_TRUE(now.ok()) << now.message();
  EXPECT_TRUE(now->same_dirs.empty());
  EXPECT_EQ(
      std::count_if(now->bracket_dirs.begin(), now->bracket_dirs.end(),
                    [](const std::string& d) { return d.find("a_link") != std::string::npos; }),
      1);
}

// The code-generation flags compile_command.cpp leaves out of the search
// arguments: the compiler's list is the same with them as without.
TEST_P(DerivedAgainstCompiler, CodegenFlagsLeftOutChangeNoList) {
  std::vector<std::string> flags(compiler::search_neutral_flags().begin(),
                                 compiler::search_neutral_flags().end());
  flags.push_back("-fvisibility=hidden");
  std::vector<std::string> argv = {GetParam()};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-c", "x.cpp"});
  EXPECT_TRUE(compiler::parse_compile_command(argv).search_args.empty());
  for (compiler::Language lang : {compiler::Language::kC, compiler::Language::kCxx}) {
    auto bare = asked_search_list(nullptr, identity_, lang, {}, dir_.path());
    ASSERT_TRUE(bare.ok());
    for (const std::string& flag : flags) {
      auto with = asked_search_list(nullptr, identity_, lang, {flag}, dir_.path());
      ASSERT_TRUE(with.ok()) << flag;
      EXPECT_EQ(*with, *bare) << flag;
    }
  }
}

TEST(CompilerIdentity, GccInstallationDirsFromClangReport) {
  const char* text =
      "clang version 14.0.6\n"
      "Found candidate GCC installation: /usr/bin/../lib/gcc/x86_64-linux-gnu/11\n"
      "Found candidate GCC installation: /usr/bin/../lib/gcc/x86_64-linux-gnu/12\n"
      "Found candidate GCC installation: /opt/t/lib/gcc/aarch64-linux-gnu/9\n"
      "Selected GCC installation: /usr/bin/../lib/gcc/x86_64-linux-gnu/12\n";
  EXPECT_EQ(gcc_installation_dirs(text),
            (std::vector<std::string>{"/usr/bin/../lib/gcc/x86_64-linux-gnu", "/usr/bin/../lib/gcc",
                                      "/opt/t/lib/gcc/aarch64-linux-gnu", "/opt/t/lib/gcc"}));
  EXPECT_TRUE(gcc_installation_dirs("Found candidate GCC installation: 12\n").empty());
}

// clang picks the newest GCC installation beside its own install for its
// libstdc++ headers: installing a newer one changes what it compiles with,
// though its binary stays the same, so the remembered identity must not hold.
TEST(CompilerIdentity, ClangIdentityChangesWhenANewerGccIsInstalled) {
  const char* real_clang = "/usr/lib/llvm-14/bin/clang";
  const char* crtbegin = "/usr/lib/gcc/x86_64-linux-gnu/12/crtbegin.o";
  if (::access(real_clang, X_OK) != 0 || ::access(crtbegin, R_OK) != 0) {
    GTEST_SKIP() << "needs clang 14 and gcc 12 at their Debian paths";
  }
  TestDir dir;
  namespace fs = std::filesystem;
  fs::create_directories(dir.at("t/bin"));
  fs::create_symlink(real_clang, dir.at("t/bin/clang++"));
  auto install_gcc = [&](const char* version) {
    const std::string lib = dir.at(std::string("t/lib/gcc/x86_64-linux-gnu/") + version);
    fs::create_directories(lib);
    fs::copy_file(crtbegin, lib + "/crtbegin.o");
    fs::create_directories(dir.at(std::string("t/include/c++/") + version));
  };
  install_gcc("12");
  sleep(2);  // settled signatures: the identity is remembered
  cache::StoreOptions options;
  options.dir = dir.at("cache");
  auto store = cache::Store::open(options);
  ASSERT_TRUE(store.ok()) << store.message();
  auto first = compiler_identity(store->get(), dir.at("t/bin/clang++"));
  ASSERT_TRUE(first.ok()) << first.message();
  ASSERT_EQ(first->kind, CompilerKind::kClang);
  EXPECT_FALSE(first->watched_dirs.empty());
  auto again = compiler_identity(store->get(), dir.at("t/bin/clang++"));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->hash, first->hash);
  install_gcc("13");
  auto after = compiler_identity(store->get(), dir.at("t/bin/clang++"));
  ASSERT_TRUE(after.ok()) << after.message();
  EXPECT_NE(after->hash, first->hash);
}

// A command that makes clang look for GCC installations elsewhere (its own
// --sysroot) gets a list that is not remembered: the identity does not watch
// those dirs.
TEST(CompilerIdentity, ListsOfCommandsWithTheirOwnGccInstallationsAreNotRemembered) {
  const char* crtbegin = "/usr/lib/gcc/x86_64-linux-gnu/12/crtbegin.o";
  if (base::find_program("clang++-14").empty() || ::access(crtbegin, R_OK) != 0) {
    GTEST_SKIP() << "needs clang++-14 and gcc 12";
  }
  auto id = compiler_identity(nullptr, "clang++-14");
  ASSERT_TRUE(id.ok()) << id.message();
  TestDir dir;
  std::filesystem::create_directories(dir.at("r/usr/lib/gcc/x86_64-linux-gnu/12"));
  std::filesystem::copy_file(crtbegin, dir.at("r/usr/lib/gcc/x86_64-linux-gnu/12/crtbegin.o"));
  for (compiler::Language lang : {compiler::Language::kC, compiler::Language::kCxx}) {
    auto plain = asked_search_list(nullptr, *id, lang, {}, dir.path());
    ASSERT_TRUE(plain.ok()) << plain.message();
    EXPECT_TRUE(plain->memoizable);
    auto rooted = asked_search_list(nullptr, *id, lang, {"--sysroot=/"}, dir.path());
    ASSERT_TRUE(rooted.ok()) << rooted.message();
    EXPECT_TRUE(rooted->memoizable);  // the same dirs, spelled otherwise
    auto own = asked_search_list(nullptr, *id, lang, {"--sysroot=" + dir.at("r")}, dir.path());
    ASSERT_TRUE(own.ok()) << own.message();
    EXPECT_FALSE(own->memoizable);
  }
}

INSTANTIATE_TEST_SUITE_P(Compilers, DerivedAgainstCompiler, ::testing::Values("g++", "clang++-14"),
                         [](const auto& info) {
                           return info.param == "g++" ? std::string("gcc") : std::string("clang");
                         });

}  // namespace
}  // namespace lexpack::compiler
