// The settings: size parsing, base_dir and directory resolution, and the
// precedence of environment over config file over defaults.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

#include "cache/config/config.h"
#include "tests/support/test_dir.h"

namespace lexpack::cache {
namespace {

TEST(Config, ParseSize) {
  EXPECT_EQ(parse_size("123"), 123u);
  EXPECT_EQ(parse_size("5G"), 5'000'000'000u);
  EXPECT_EQ(parse_size("5GB"), 5'000'000'000u);
  EXPECT_EQ(parse_size("64Ki"), 65536u);
  EXPECT_EQ(parse_size("1.5M"), 1'500'000u);
  EXPECT_EQ(parse_size("2Gi"), 2ull << 30);
  EXPECT_FALSE(parse_size(""));
  EXPECT_FALSE(parse_size("G"));
  EXPECT_FALSE(parse_size("5X"));
  EXPECT_FALSE(parse_size("-5"));
  EXPECT_FALSE(parse_size("99999999999999999999T"));
  EXPECT_EQ(parse_size(format_size(5'000'000'000u)), 5'000'000'000u);
  EXPECT_EQ(parse_size(format_size(256u << 20)), 256u << 20);
}

TEST(Config, EnvironmentOverridesFileOverridesDefaults) {
  testing::TestDir tmp;
  {
    std::ofstream f(tmp.at(kConfigFileName));
    f << "# comment\nmax_size = 2G\npack_size = 1Mi\nbogus line\nsync = maybe\n";
  }
  ::unsetenv("LEXPACK_MAXSIZE");
  ::unsetenv("LEXPACK_PACK_SIZE");
  ::unsetenv("LEXPACK_SYNC");
  Config c = load_config(tmp.path());
  EXPECT_EQ(c.dir, tmp.path());
  EXPECT_EQ(c.max_size, 2'000'000'000u);
  EXPECT_EQ(c.pack_size, 1u << 20);
  EXPECT_FALSE(c.sync);
  ASSERT_EQ(c.warnings.size(), 2u);
  EXPECT_NE(c.warnings[0].find(":4:"), std::string::npos) << c.warnings[0];
  EXPECT_NE(c.warnings[1].find("sync"), std::string::npos) << c.warnings[1];
  auto source_of = [&](const std::string& key) {
    for (const auto& e : c.entries) {
      if (e.key == key) return e.source;
    }
    return std::string("missing");
  };
  EXPECT_NE(source_of("max_size").find(":2"), std::string::npos);
  EXPECT_EQ(source_of("sync"), "default");

  ::setenv("LEXPACK_MAXSIZE", "300M", 1);
  c = load_config(tmp.path());
  EXPECT_EQ(c.max_size, 300'000'000u);
  EXPECT_EQ(source_of("max_size"), "environment LEXPACK_MAXSIZE");
  ::setenv("LEXPACK_MAXSIZE", "lots", 1);
  c = load_config(tmp.path());
  EXPECT_EQ(c.max_size, 2'000'000'000u);  // bad value ignored, file value stays
  ::unsetenv("LEXPACK_MAXSIZE");
}

TEST(Config, BaseDirMustBeAbsoluteAndPlain) {
  testing::TestDir tmp;
  {
    std::ofstream f(tmp.at(kConfigFileName));
    f << "base_dir = /home/dev/\n";
  }
  ::unsetenv("LEXPACK_BASE_DIR");
  Config c = load_config(tmp.path());
  EXPECT_EQ(c.base_dir, "/home/dev");
  ::setenv("LEXPACK_BASE_DIR", "relative/dir", 1);
  c = load_config(tmp.path());
  EXPECT_EQ(c.base_dir, "/home/dev");  // refused, the file's value stays
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("LEXPACK_BASE_DIR"), std::string::npos) << c.warnings[0];
  ::setenv("LEXPACK_BASE_DIR", "/with space", 1);
  EXPECT_EQ(load_config(tmp.path()).base_dir, "/home/dev");
  ::setenv("LEXPACK_BASE_DIR", "/", 1);
  EXPECT_EQ(load_config(tmp.path()).base_dir, "/home/dev");
  ::unsetenv("LEXPACK_BASE_DIR");
  {
    std::ofstream f(tmp.at(kConfigFileName));
    f << "base_dir =\n";  // empty: off
  }
  c = load_config(tmp.path());
  EXPECT_EQ(c.base_dir, "");
  EXPECT_TRUE(c.warnings.empty());
}

TEST(Config, RemoteStorageIsShownMasked) {
  testing::TestDir tmp;
  ::setenv("LEXPACK_REMOTE_STORAGE", "redis://:hunter2@h:1 http://ci:pw9@x/c|read-only", 1);
  Config c = load_config(tmp.path());
  ::unsetenv("LEXPACK_REMOTE_STORAGE");
  EXPECT_EQ(c.remote_storage, "redis://:hunter2@h:1 http://ci:pw9@x/c|read-only");
  bool shown = false;
  for (const ConfigEntry& e : c.entries) {
    if (e.key != "remote_storage") continue;
    shown = true;
    EXPECT_EQ(e.value, "redis://:********@h:1 http://ci:********@x/c|read-only");
    EXPECT_EQ(e.source, "environment LEXPACK_REMOTE_STORAGE");
  }
  EXPECT_TRUE(shown);
}

TEST(Config, DirectoryResolution) {
  ::unsetenv("LEXPACK_DIR");
  ::setenv("XDG_CACHE_HOME", "/x/cache", 1);
  EXPECT_EQ(default_cache_dir(), "/x/cache/lexpack");
  ::unsetenv("XDG_CACHE_HOME");
  ::setenv("HOME", "/home/u", 1);
  EXPECT_EQ(default_cache_dir(), "/home/u/.cache/lexpack");
  ::setenv("LEXPACK_DIR", "/y/lp", 1);
  EXPECT_EQ(default_cache_dir(), "/y/lp");
  EXPECT_EQ(load_config("").dir, "/y/lp");
  ::unsetenv("LEXPACK_DIR");
}

}  // namespace
}  // namespace lexpack::cache

namespace lexpack::cache {
namespace {

TEST(Config, UmaskAndSecretSettings) {
  EXPECT_EQ(parse_umask("002"), 02u);
  EXPECT_EQ(parse_umask("0027"), 027u);
  EXPECT_EQ(parse_umask("22"), 022u);
  EXPECT_FALSE(parse_umask("8"));
  EXPECT_FALSE(parse_umask("01777"));
  EXPECT_FALSE(parse_umask(""));
  testing::TestDir tmp;
  std::ofstream(tmp.at(kConfigFileName)) << "umask = 007\nremote_secret = short\n";
  ::unsetenv("LEXPACK_UMASK");
  ::unsetenv("LEXPACK_REMOTE_SECRET");
  Config c = load_config(tmp.path());
  EXPECT_EQ(c.umask, 07u);
  EXPECT_TRUE(c.remote_secret.empty());  // too short: a warning, not a secret
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("remote_secret"), std::string::npos);
  EXPECT_NE(c.remote_secret_error.find("remote caches are off"), std::string::npos);
  ::setenv("LEXPACK_UMASK", "002", 1);
  ::setenv("LEXPACK_REMOTE_SECRET", "sixteen or more chars", 1);
  c = load_config(tmp.path());
  ::unsetenv("LEXPACK_UMASK");
  ::unsetenv("LEXPACK_REMOTE_SECRET");
  EXPECT_EQ(c.umask, 02u);
  EXPECT_EQ(c.remote_secret, "sixteen or more chars");
  EXPECT_TRUE(c.remote_secret_error.empty());  // a good one from the environment wins
  for (const auto& e : c.entries) {
    if (e.key == "remote_secret") {
      EXPECT_EQ(e.value, "(set)");  // never shown
    }
  }
}

}  // namespace
}  // namespace lexpack::cache
