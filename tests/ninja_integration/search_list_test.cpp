// Parsing the compiler's -E -v search list report, and its encoding.
#include "ninja_integration/search_list.h"

#include <gtest/gtest.h>

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
// command's own dirs must each be listed (by some spelling) too.
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
  auto only_by_spelling = [&](const std::string& messages, std::vector<std::string> args) {
    return duplicates_only_by_spelling(list, messages + tail, args);
  };
  const std::string builtin = "ignoring duplicate directory \"/usr/include\"\n";
  EXPECT_TRUE(only_by_spelling("", {}));
  EXPECT_TRUE(only_by_spelling(builtin, {"-I", "inc/", "-iquote", "./q", "-I./gone"}));
  EXPECT_TRUE(only_by_spelling(builtin, {"-Iinc", "-I.//inc/.", "-isystem/usr/include"}));
  EXPECT_TRUE(only_by_spelling("", {"-I-", "-Iinc", "--include-directory=inc"}));
  // gcc: the dropped dir by its own name.
  EXPECT_FALSE(only_by_spelling("ignoring duplicate directory \"link\"\n", {"-Iinc", "-Ilink"}));
  EXPECT_FALSE(only_by_spelling("ignoring duplicate directory \"inc/../inc\"\n", {}));
  // clang: the kept dir's name; the command says which one went.
  EXPECT_FALSE(only_by_spelling("ignoring duplicate directory \"./inc\"\n", {"-Iinc", "-Ilink"}));
  EXPECT_FALSE(only_by_spelling("", {"-idirafter", "other"}));
  EXPECT_FALSE(only_by_spelling("", {"-cxx-isystem", "other"}));
  EXPECT_FALSE(only_by_spelling("", {"--include-directory-after=other"}));
  // Dirs built from pieces cannot be matched by spelling: any duplicate counts.
  EXPECT_TRUE(only_by_spelling("", {"-iprefix", "/p/", "-iwithprefix", "x"}));
  EXPECT_FALSE(only_by_spelling(builtin, {"-iprefix", "/p/", "-iwithprefix", "x"}));
}

TEST(SearchList, RejectsTruncatedReport) {
  SearchList list;
  EXPECT_FALSE(parse_search_list("#include <...> search starts here:\n /usr/include\n", &list));
}

}  // namespace
}  // namespace lexpack::ninja
