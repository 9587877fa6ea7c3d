// The remote_storage syntax (ccache's) and that credentials never show.
#include "cache/remote/remote_spec.h"

#include <gtest/gtest.h>

namespace lexpack::cache::remote {
namespace {

TEST(RemoteSpec, ParsesUrlsAndAttributes) {
  auto specs = parse_remote_storage(
      "redis://:s3cret@cache.example:6380/2|connect-timeout=50 "
      "http://ci:pw@files.example/lexpack/|layout=bazel|read-only|operation-timeout=2000");
  ASSERT_TRUE(specs.ok()) << specs.message();
  ASSERT_EQ(specs->size(), 2u);
  const RemoteSpec& r = (*specs)[0];
  EXPECT_EQ(r.scheme, Scheme::kRedis);
  EXPECT_EQ(r.host, "cache.example");
  EXPECT_EQ(r.port, 6380);
  EXPECT_EQ(r.db, 2);
  EXPECT_EQ(r.password, "s3cret");
  EXPECT_EQ(r.connect_timeout_ms, 50);
  EXPECT_FALSE(r.read_only);
  const RemoteSpec& h = (*specs)[1];
  EXPECT_EQ(h.scheme, Scheme::kHttp);
  EXPECT_EQ(h.port, 80);
  EXPECT_EQ(h.path, "/lexpack");
  EXPECT_EQ(h.user, "ci");
  EXPECT_EQ(h.layout, Layout::kBazel);
  EXPECT_TRUE(h.read_only);
  EXPECT_EQ(h.operation_timeout_ms, 2000);
  auto tls = parse_remote_spec("https://cache.example/c|ca-file=/etc/team-ca.pem");
  ASSERT_TRUE(tls.ok()) << tls.message();
  EXPECT_EQ(tls->scheme, Scheme::kHttps);
  EXPECT_EQ(tls->port, 443);
  EXPECT_EQ(tls->ca_file, "/etc/team-ca.pem");
  EXPECT_FALSE(parse_remote_spec("https://cache.example/c|ca-file=").ok());
}

TEST(RemoteSpec, ErrorsNameTheEntryWithoutItsPassword) {
  auto bad = parse_remote_storage("redis://u:topsecret@h:1|colour=blue");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("unknown attribute colour"), std::string::npos) << bad.message();
  EXPECT_EQ(bad.message().find("topsecret"), std::string::npos) << bad.message();
  EXPECT_FALSE(parse_remote_storage("ftp://h/x").ok());
  EXPECT_FALSE(parse_remote_storage("redis://h:99999").ok());
  EXPECT_FALSE(parse_remote_storage("http://h/x|layout=flat").ok());
}

TEST(RemoteSpec, MaskHidesEveryPassword) {
  EXPECT_EQ(mask_credentials("redis://:pw@h:1 http://u:pw2@x/y|read-only https://x/z"),
            "redis://:********@h:1 http://u:********@x/y|read-only https://x/z");
  EXPECT_EQ(mask_credentials("http://token@x/y"), "http://********@x/y");
}

}  // namespace
}  // namespace lexpack::cache::remote
