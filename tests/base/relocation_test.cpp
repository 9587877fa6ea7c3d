// Relocation must round-trip exactly: text relocated in one checkout and
// restored in another is what a compiler there writes.
#include "base/relocation.h"

#include <gtest/gtest.h>

namespace lexpack::base {
namespace {

TEST(Relocation, PathIsUnderWholeComponents) {
  EXPECT_TRUE(path_is_under("/home/a/proj/x.h", "/home/a/proj"));
  EXPECT_TRUE(path_is_under("/home/a/proj", "/home/a/proj"));
  EXPECT_FALSE(path_is_under("/home/a/project/x.h", "/home/a/proj"));
  EXPECT_FALSE(path_is_under("../x.h", "/home/a/proj"));
}

TEST(Relocation, RelativeToWorkingDirectory) {
  EXPECT_EQ(relative_to("/home/a/proj/src/x.cpp", "/home/a/proj/build"), "../src/x.cpp");
  EXPECT_EQ(relative_to("/home/a/proj/build/x.o", "/home/a/proj/build"), "x.o");
  EXPECT_EQ(relative_to("/home/a/proj/build", "/home/a/proj/build"), ".");
  EXPECT_EQ(relative_to("/home/a/proj", "/home/a/proj/build"), "..");
  EXPECT_EQ(relative_to("/home/c/x.h", "/home/a/proj/build"), "../../../c/x.h");
  // Written components are kept as written.
  EXPECT_EQ(relative_to("/home/a/proj/build/../inc", "/home/a/proj/build"), "../inc");
  EXPECT_EQ(relative_to("/home/a/projx/y", "/home/a/proj/build"), "../../projx/y");
}

TEST(Relocation, DepfileRoundTripsIntoAnotherCheckout) {
  std::string a =
      "x.o: /home/a/proj/src/x.cpp /home/a/proj/build/../inc/y.h \\\n /usr/include/stdio.h\n";
  std::string stored;
  ASSERT_TRUE(relocate_text(a, "/home/a/proj", "/home/a/proj/build", &stored));
  EXPECT_EQ(stored.find("/home/a"), std::string::npos);
  std::string b;
  ASSERT_TRUE(restore_text(stored, "/srv/ci/w7/proj/build", &b));
  EXPECT_EQ(b,
            "x.o: /srv/ci/w7/proj/src/x.cpp /srv/ci/w7/proj/build/../inc/y.h \\\n "
            "/usr/include/stdio.h\n");
  std::string same;
  ASSERT_TRUE(restore_text(stored, "/home/a/proj/build", &same));
  EXPECT_EQ(same, a);
}

TEST(Relocation, MessagesWithQuotesAndPositions) {
  std::string a =
      "/home/a/proj/src/x.cpp:3:5: warning: \xe2\x80\x98/home/a/proj\xe2\x80\x99 here\n";
  std::string stored, b;
  ASSERT_TRUE(relocate_text(a, "/home/a/proj", "/home/a/proj/build", &stored));
  ASSERT_TRUE(restore_text(stored, "/x/proj/build", &b));
  EXPECT_EQ(b, "/x/proj/src/x.cpp:3:5: warning: \xe2\x80\x98/x/proj\xe2\x80\x99 here\n");
}

TEST(Relocation, ColoredMessagesPathsAfterEscapes) {
  // -fdiagnostics-color=always: gcc's and clang's escapes end in a letter
  // right before the path.
  std::string a =
      "\x1b[01m\x1b[K/home/a/proj/src/x.cpp:3:5:\x1b[m\x1b[K warning\n"
      "\x1b[0m\x1b[1m/home/a/proj/src/y.h:1:2: \x1b[0;1;35mwarning: \x1b[0m\n";
  std::string stored, b;
  ASSERT_TRUE(relocate_text(a, "/home/a/proj", "/home/a/proj/build", &stored));
  EXPECT_EQ(stored.find("/home/a"), std::string::npos);
  ASSERT_TRUE(restore_text(stored, "/x/proj/build", &b));
  EXPECT_EQ(b,
            "\x1b[01m\x1b[K/x/proj/src/x.cpp:3:5:\x1b[m\x1b[K warning\n"
            "\x1b[0m\x1b[1m/x/proj/src/y.h:1:2: \x1b[0;1;35mwarning: \x1b[0m\n");
  // A letter that ends no escape still joins the word: refused.
  EXPECT_FALSE(relocate_text("[1K/home/a/proj/y.h", "/home/a/proj", "/home/a/proj/b", &stored));
}

TEST(Relocation, BaseDirAboveTheCheckout) {
  // base_dir /home holds both checkouts and a library beside them.
  std::string a = "/home/a/proj/src/x.cpp /home/lib/z.h";
  std::string stored, b;
  ASSERT_TRUE(relocate_text(a, "/home", "/home/a/proj/build", &stored));
  ASSERT_TRUE(restore_text(stored, "/home/b/proj/build", &b));
  EXPECT_EQ(b, "/home/b/proj/src/x.cpp /home/lib/z.h");
}

TEST(Relocation, NotAPathStartIsLeftAndRefused) {
  std::string stored;
  // A longer name that only begins like base_dir is not a path under it.
  ASSERT_TRUE(relocate_text("/home/a/projx/y.h", "/home/a/proj", "/home/a/proj/b", &stored));
  EXPECT_EQ(stored, "/home/a/projx/y.h");
  // Embedded in a word: left as is, so the text is refused.
  EXPECT_FALSE(relocate_text("abc/home/a/proj/y.h", "/home/a/proj", "/home/a/proj/b", &stored));
  // Text that already holds the marker cannot be told apart: refused.
  EXPECT_FALSE(relocate_text(std::string(kRelocationMarker) + "1\x01/x", "/home/a/proj",
                             "/home/a/proj/b", &stored));
}

TEST(Relocation, RestoreRejectsMalformedReferences) {
  std::string out;
  EXPECT_FALSE(restore_text(std::string(kRelocationMarker) + "9\x01/x", "/a/b", &out));
  EXPECT_FALSE(restore_text(std::string(kRelocationMarker) + "x\x01/x", "/a/b", &out));
  EXPECT_FALSE(restore_text(std::string(kRelocationMarker) + "1", "/a/b", &out));
  ASSERT_TRUE(restore_text("plain text", "/a/b", &out));
  EXPECT_EQ(out, "plain text");
}

}  // namespace
}  // namespace lexpack::base
