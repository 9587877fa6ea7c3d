// Parsing the compiler's -E -v search list report, and its encoding.
#include "compiler/search_list.h"

#include <gtest/gtest.h>
#include <stdio.h>
#include <unistd.h>

#include "tests/support/test_dir.h"

namespace lexpack::compiler {
namespace {

TEST(SearchList, ParsesGccReport) {
  const char* text =
      "ignoring duplicate directory \"/usr/include/x86_64-linux-gnu/c++/12\"\n"
      "ignoring nonexistent directory \"nope\"\n"
      "#include \"...\" search starts here:\n"
      " q\n"
      "#include <...> search starts here:\n"
      " inc\n"
      " /usr/include/c++/12\n"
      " /usr/include\n"
      "End of search list.\n";
  SearchList list;
  ASSERT_TRUE(parse_search_list(text, &list));
  EXPECT_EQ(list.quote_dirs, (std::vector<std::string>{"q"}));
  EXPECT_EQ(list.bracket_dirs,
            (std::vector<std::string>{"inc", "/usr/include/c++/12", "/usr/include"}));
  EXPECT_EQ(list.missing_dirs, (std::vector<std::string>{"nope"}));
  SearchList back;
  ASSERT_TRUE(decode_search_list(encode_search_list(list), &back));
  EXPECT_EQ(back, list);
  EXPECT_FALSE(decode_search_list(encode_search_list(list).substr(3), &back));
}

// gcc skips a search dir that is a plain file with a warning, not as
// "nonexistent": it is a skipped dir all the same (if it becomes a directory,
// the compiler will search it).
TEST(SearchList, GccNotADirectoryIsASkippedDir) {
  const char* text =
      "cc1plus: warning: afile: not a directory\n"
      "cc1plus: warning: command-line option '-Wx' is not for C++\n"
      "#include <...> search starts here:\n"
      " /usr/include\n"
      "End of search list.\n";
  SearchList list;
  ASSERT_TRUE(parse_search_list(text, &list));
  EXPECT_EQ(list.missing_dirs, (std::vector<std::string>{"afile"}));
  EXPECT_EQ(list.bracket_dirs, (std::vector<std::string>{"/usr/include"}));
}

// gcc names the duplicate it dropped; clang may name the dir it kept, so the
// command's own dirs must each be listed (by some spelling) too, and every
// other source of dirs known.
TEST(SearchList, DuplicatesOnlyBySpelling) {
  const std::string tail =
      "#include \"...\" search starts here:\n"
      " q\n"
      "#include <...> search starts here:\n"
      " ./inc\n"
      " /usr/include\n"
      "End of search list.\n";
  SearchList list;
  ASSERT_TRUE(parse_search_list(tail, &list));
  list.missing_dirs = {"gone/"};
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof cwd), nullptr);
  auto only_by_spelling = [&](const std::string& messages, std::vector<std::string> args,
                              CompilerKind kind) {
    return duplicates_only_by_spelling(list, messages + tail, args, kind);
  };
  const std::string builtin = "ignoring duplicate directory \"/usr/include\"\n";
  const std::string link = "ignoring duplicate directory \"link\"\n";
  for (CompilerKind kind : {CompilerKind::kGcc, CompilerKind::kClang}) {
    SCOPED_TRACE(int(kind));
    // Nothing dropped: whatever the command.
    EXPECT_TRUE(only_by_spelling("", {}, kind));
    EXPECT_TRUE(
        only_by_spelling("", {"-Iinc", "-Ilink", "-iwithprefix", "x", "--sysroot=s"}, kind));
    // A dir of the command's own under a name of its own was dropped.
    EXPECT_FALSE(only_by_spelling(builtin, {"-Iinc", "-Ilink"}, kind));
    EXPECT_FALSE(only_by_spelling(builtin, {"-idirafter", "other"}, kind));
    EXPECT_FALSE(only_by_spelling(builtin, {"-cxx-isystem", "other"}, kind));
    EXPECT_FALSE(only_by_spelling(builtin, {"--include-directory-after=other"}, kind));
    EXPECT_FALSE(only_by_spelling(builtin, {"-iwithprefix", "x"}, kind));
    // A reported name that is no listed path.
    EXPECT_FALSE(only_by_spelling(link, {"-Iinc"}, kind));
    EXPECT_FALSE(only_by_spelling("ignoring duplicate directory \"inc/../inc\"\n", {}, kind));
  }
  // gcc names each dir it dropped: listed spellings of the same path.
  for (std::vector<std::string> args :
       {std::vector<std::string>{"-I", "inc/", "-iquote", "./q", "-I./gone"},
        {"-Iinc", "-I.//inc/.", "-isystem/usr/include"},
        {"-Iinc", "--include-directory=inc"},
        {"-I" + std::string(cwd) + "/inc", "-Iinc"}}) {
    EXPECT_TRUE(only_by_spelling(builtin, args, CompilerKind::kGcc)) << args[1];
  }
  // gcc names what it dropped: a listed name is harmless whatever else added
  // dirs. clang's name may be the kept dir's: every dir of its cc1 command
  // must be listed, else one (a builtin, CPATH's) was dropped under its own.
  const std::string kept_inc = "ignoring duplicate directory \"./inc\"\n";
  auto cc1 = [](const std::string& dirs) {
    return " \"/usr/lib/llvm-14/bin/clang\" -cc1 -triple x86_64-pc-linux-gnu -E " + dirs +
           " -iquote q -I gone -internal-externc-isystem /usr/include -o - -x c++ /dev/null\n";
  };
  auto clang = [&](const std::string& messages, const std::string& dirs) {
    return duplicates_only_by_spelling(list, cc1(dirs) + messages + tail, {"-Iinc"},
                                       CompilerKind::kClang);
  };
  EXPECT_TRUE(only_by_spelling(kept_inc, {"-Iinc"}, CompilerKind::kGcc));
  EXPECT_FALSE(only_by_spelling(kept_inc, {"-Iinc"}, CompilerKind::kClang));  // no cc1 line
  EXPECT_TRUE(clang(kept_inc, "-I inc -I ./inc/"));
  EXPECT_TRUE(clang(kept_inc, "-I \"./inc\" -I" + std::string(cwd) + "/inc"));
  EXPECT_TRUE(clang(builtin, "-I inc -I /usr/include"));
  EXPECT_FALSE(clang(kept_inc, "-I inc -I link"));
  EXPECT_FALSE(clang(kept_inc, "-I inc -I/elsewhere"));  // as CPATH comes
  EXPECT_FALSE(clang(kept_inc, "-I inc -cxx-isystem link"));
  EXPECT_FALSE(clang(kept_inc, "-I inc -internal-isystem /opt/tool/include/c++/12"));
  EXPECT_FALSE(clang(kept_inc, "-I inc -iprefix /p/ -iwithprefix x"));
  EXPECT_FALSE(clang(kept_inc, "-I \"li\\\"nk\""));
  EXPECT_TRUE(clang("", "-I inc -I link"));  // nothing was dropped
  // A listed (or missing) dir that is not on the cc1 line was added by cc1
  // itself (targets other than Linux): its drops cannot be seen.
  auto clang_without_builtins = [&](const std::string& dirs) {
    const std::string line =
        " \"/usr/lib/llvm-14/bin/clang\" -cc1 -triple x86_64-unknown-unknown " + dirs +
        " -isysroot R -o - -x c /dev/null\n";
    return duplicates_only_by_spelling(list, line + kept_inc + tail, {"-Iinc"},
                                       CompilerKind::kClang);
  };
  EXPECT_FALSE(clang_without_builtins("-I inc -iquote q"));
  EXPECT_TRUE(clang_without_builtins("-I inc -iquote q -I /usr/include -I gone"));
}

TEST(SearchList, RejectsTruncatedReport) {
  SearchList list;
  EXPECT_FALSE(parse_search_list("#include <...> search starts here:\n /usr/include\n", &list));
}

}  // namespace
}  // namespace lexpack::compiler

namespace lexpack::compiler {
namespace {

// gcc drops a dir that is a listed one under another path (through "..", a
// symlink): with room for pairs, each such dir is paired with the listed
// directory it is, checked to be the same directory, and kept in the memo.
TEST(SearchList, GccDropsTheSameDirectoryUnderAnotherPath) {
  lexpack::testing::TestDir d;
  d.write("inc/.keep", "");
  d.write("other/.keep", "");
  d.write("elsewhere/.keep", "");
  SearchList list;
  list.bracket_dirs = {d.at("inc"), "/usr/include"};
  const std::string dropped = d.at("other/../inc");
  const std::string report = "ignoring duplicate directory \"" + dropped + "\"\n";
  std::vector<SearchList::SameDir> pairs;
  EXPECT_TRUE(duplicates_only_by_spelling(list, report, {"-I" + d.at("inc"), "-I" + dropped},
                                          CompilerKind::kGcc, &pairs));
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].dropped, dropped);
  EXPECT_EQ(pairs[0].kept, d.at("inc"));
  EXPECT_TRUE(same_dirs_hold(pairs));
  // Without room for pairs, or with clang, as before: not memoizable.
  EXPECT_FALSE(duplicates_only_by_spelling(list, report, {}, CompilerKind::kGcc));
  EXPECT_FALSE(duplicates_only_by_spelling(list, report, {}, CompilerKind::kClang, &pairs));
  // A dropped dir that is no listed directory is not harmless.
  std::vector<SearchList::SameDir> none;
  EXPECT_FALSE(duplicates_only_by_spelling(
      list, "ignoring duplicate directory \"" + d.at("elsewhere") + "\"\n", {}, CompilerKind::kGcc,
      &none));
  // Kept in the encoding.
  list.same_dirs = pairs;
  SearchList back;
  ASSERT_TRUE(decode_search_list(encode_search_list(list), &back));
  EXPECT_EQ(back, list);
  // Once "other" is a symlink elsewhere, other/../inc is another directory.
  ASSERT_EQ(::rename(d.at("other").c_str(), d.at("gone").c_str()), 0);
  ASSERT_EQ(::symlink(d.at("elsewhere/sub").c_str(), d.at("other").c_str()), 0);
  d.write("elsewhere/sub/.keep", "");
  d.write("elsewhere/inc/.keep", "");
  EXPECT_FALSE(same_dirs_hold(pairs));
}

}  // namespace
}  // namespace lexpack::compiler
