// Requests and replies survive the wire; broken frames are refused; the
// socket's directory is private or not used.
#include "server/protocol.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "tests/support/test_dir.h"

namespace lexpack::server {
namespace {

TEST(Protocol, RequestRoundTrip) {
  Request r;
  r.kind = RequestKind::kCompile;
  r.version = protocol_version();
  r.argv = {"g++", "-c", "a.cpp", std::string("x\0y", 3)};
  r.cwd = "/src";
  r.env = {"PATH=/usr/bin", "CPATH="};
  r.umask = 027;
  Request back;
  ASSERT_TRUE(decode_request(encode_request(r), &back));
  EXPECT_EQ(back.argv, r.argv);
  EXPECT_EQ(back.env, r.env);
  EXPECT_EQ(back.cwd, r.cwd);
  EXPECT_EQ(back.umask, 027u);
  std::string bytes = encode_request(r);
  EXPECT_FALSE(decode_request(bytes.substr(0, bytes.size() - 1), &back));
  EXPECT_FALSE(decode_request(bytes + "x", &back));
}

// A build's compiles to check ahead travel in one request; a compile's own
// request (as lexpack-client writes it) carries none.
TEST(Protocol, PrepareRequestRoundTrip) {
  Request r;
  r.kind = RequestKind::kPrepare;
  r.version = protocol_version();
  r.cwd = "/";
  r.compiles = {{"/b", {"g++", "-c", "a.cpp", "-o", "a.o"}}, {"/b/sub", {"cc", "-c", "x.c"}}};
  Request back;
  std::string bytes = encode_request(r);
  ASSERT_TRUE(decode_request(bytes, &back));
  EXPECT_EQ(back.kind, RequestKind::kPrepare);
  ASSERT_EQ(back.compiles.size(), 2u);
  EXPECT_EQ(back.compiles[1].cwd, "/b/sub");
  EXPECT_EQ(back.compiles[0].argv, r.compiles[0].argv);
  EXPECT_FALSE(decode_request(bytes.substr(0, bytes.size() - 1), &back));
  r.compiles.clear();
  ASSERT_TRUE(decode_request(encode_request(r), &back));
  EXPECT_TRUE(back.compiles.empty());
}

TEST(Protocol, ReplyRoundTrip) {
  Reply r;
  r.kind = ReplyKind::kHit;
  r.exit_code = 0;
  r.out = "o";
  r.err = "warning: x\n";
  r.renames = {{"a.o.tmp", "/b/a.o"}};
  Reply back;
  ASSERT_TRUE(decode_reply(encode_reply(r), &back));
  EXPECT_EQ(back.kind, ReplyKind::kHit);
  EXPECT_EQ(back.err, r.err);
  ASSERT_EQ(back.renames.size(), 1u);
  EXPECT_EQ(back.renames[0].to, "/b/a.o");
  EXPECT_FALSE(decode_reply(std::string("\x09", 1), &back));
  // A scan's reply: an answer per compile, and the paths they name.
  r.kind = ReplyKind::kInfo;
  r.renames.clear();
  r.answers = {"", "a1"};
  r.paths = {"/usr/include/stdio.h"};
  ASSERT_TRUE(decode_reply(encode_reply(r), &back));
  EXPECT_EQ(back.answers, r.answers);
  EXPECT_EQ(back.paths, r.paths);
  r.answers.clear();
  ASSERT_TRUE(decode_reply(encode_reply(r), &back));
  EXPECT_TRUE(back.answers.empty());
  EXPECT_TRUE(back.paths.empty());
}

TEST(Protocol, VersionNamesThisBinary) {
  EXPECT_EQ(protocol_version(), protocol_version());
  EXPECT_NE(protocol_version().find(' '), std::string::npos);
}

TEST(Protocol, SocketDirectoryFitsAndIsPrivate) {
  testing::TestDir dir;
  std::string short_dir = server_dir(dir.path());
  EXPECT_EQ(short_dir, dir.path() + "/server-" + std::to_string(::geteuid()));
  std::string long_cache = dir.path() + "/" + std::string(150, 'c');
  std::string fallback = server_dir(long_cache);
  ASSERT_FALSE(fallback.empty());
  EXPECT_LT(socket_path(fallback).size(), 100u);
  EXPECT_NE(fallback, server_dir(long_cache + "x"));  // one per cache directory

  EXPECT_TRUE(ensure_private_dir(short_dir));
  struct stat st {};
  ASSERT_EQ(::stat(short_dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::chmod(short_dir.c_str(), 0755), 0);
  EXPECT_FALSE(ensure_private_dir(short_dir));  // others could reach the socket
}

}  // namespace
}  // namespace lexpack::server
