// Parsing the compiler's -E -v search list report, and its encoding.
#include "ninja_integration/search_list.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace lexpack::ninja {
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
  for (CompilerKind kind : {CompilerKind::kGcc, CompilerKind::kClang}) {
    SCOPED_TRACE(int(kind));
    EXPECT_TRUE(only_by_spelling("", {}, kind));
    EXPECT_TRUE(only_by_spelling(builtin, {"-I", "inc/", "-iquote", "./q", "-I./gone"}, kind));
    EXPECT_TRUE(only_by_spelling(builtin, {"-Iinc", "-I.//inc/.", "-isystem/usr/include"}, kind));
    EXPECT_TRUE(only_by_spelling("", {"-Iinc", "--include-directory=inc"}, kind));
    EXPECT_TRUE(only_by_spelling(builtin, {"-I" + std::string(cwd) + "/inc", "-Iinc"}, kind));
    // A dir of the command's own under a name of its own was dropped.
    EXPECT_FALSE(only_by_spelling("", {"-Iinc", "-Ilink"}, kind));
    EXPECT_FALSE(only_by_spelling("", {"-idirafter", "other"}, kind));
    EXPECT_FALSE(only_by_spelling("", {"-cxx-isystem", "other"}, kind));
    EXPECT_FALSE(only_by_spelling("", {"--include-directory-after=other"}, kind));
    // A reported name that is no listed path.
    EXPECT_FALSE(only_by_spelling("ignoring duplicate directory \"link\"\n", {"-Iinc"}, kind));
    EXPECT_FALSE(only_by_spelling("ignoring duplicate directory \"inc/../inc\"\n", {}, kind));
    // Without any duplicate, other sources of dirs do not matter.
    EXPECT_TRUE(
        only_by_spelling("", {"-iprefix", "/p/", "-iwithprefix", "x", "--sysroot=s"}, kind));
  }
  // gcc names what it dropped: a listed name is harmless whatever else adds
  // dirs. clang's name may be the kept dir's: other sources of dirs, or a
  // kept dir reached through a symlink, leave the dropped one unknown.
  const std::string kept_inc = "ignoring duplicate directory \"./inc\"\n";
  for (std::vector<std::string> args : {std::vector<std::string>{"-Iinc", "-iwithprefix", "x"},
                                        {"-Iinc", "-stdlib++-isystemb"},
                                        {"-Iinc", "--include-with-prefix-before=b"},
                                        {"-Iinc", "--sysroot=sr"},
                                        {"-Iinc", "-resource-dir=r"},
                                        {"-Iinc", "--gcc-toolchain=t"}}) {
    EXPECT_TRUE(only_by_spelling(kept_inc, args, CompilerKind::kGcc)) << args[1];
    EXPECT_FALSE(only_by_spelling(kept_inc, args, CompilerKind::kClang)) << args[1];
  }
  // "./inc" does not exist here: not reached through no symlink, so clang
  // needs the command to name it twice alike.
  EXPECT_FALSE(only_by_spelling(kept_inc, {"-Iinc"}, CompilerKind::kClang));
  EXPECT_TRUE(only_by_spelling(kept_inc, {"-Iinc", "-I./inc/"}, CompilerKind::kClang));
  EXPECT_TRUE(only_by_spelling(builtin, {"-I/usr/include"}, CompilerKind::kClang));
}

TEST(SearchList, RejectsTruncatedReport) {
  SearchList list;
  EXPECT_FALSE(parse_search_list("#include <...> search starts here:\n /usr/include\n", &list));
}

}  // namespace
}  // namespace lexpack::ninja
