// The relocation rules on their own: which prefix maps make a path safe to
// name relative, and that keys of two checkouts agree exactly when they may.
#include "closure/key_relocation.h"

#include <gtest/gtest.h>

#include "closure/action_key.h"

namespace lexpack::closure {
namespace {

struct Checkout {
  std::string top, cwd, source, header, probe;
  Closure closure;
  explicit Checkout(const std::string& t)
      : top(t),
        cwd(t + "/build"),
        source(t + "/src/x.cpp"),
        header(t + "/inc/u.h"),
        probe(t + "/src/u.h") {
    closure.files.push_back({source, {}, cache::Hash128{1, 2}, false, {}});
    closure.files.push_back({header, {}, cache::Hash128{3, 4}, false, {}});
    closure.files.push_back({"/usr/include/stdio.h", {}, cache::Hash128{5, 6}, false, {}});
    closure.failed_probes.push_back(probe);
  }
  compiler::CompileCommand parse(const std::string& flags) const {
    std::vector<std::string> argv = {"g++", "-O2"};
    size_t i = 0;
    while (i < flags.size()) {
      size_t j = flags.find(' ', i);
      if (j == std::string::npos) j = flags.size();
      if (j > i) argv.push_back(flags.substr(i, j - i));
      i = j + 1;
    }
    for (std::string a :
         {"-I" + top + "/inc", std::string("-c"), source, std::string("-o"), std::string("x.o")}) {
      argv.push_back(a);
    }
    return compiler::parse_compile_command(argv);
  }
};

compiler::CompilerIdentity identity() {
  compiler::CompilerIdentity id;
  id.hash = cache::Hash128{7, 8};
  return id;
}

cache::Hash128 key(const Checkout& c, const std::string& flags, const std::string& base_dir,
                   KeyRelocation* out = nullptr) {
  compiler::CompileCommand cmd = c.parse(flags);
  KeyRelocation r = decide_relocation(cmd, c.cwd, c.closure, base_dir);
  if (out) *out = r;
  return action_key(identity(), cmd, c.cwd, c.closure, r);
}

const Checkout kA("/home/ann/code/proj");
const Checkout kB("/srv/ci/7/proj");

std::string map_of(const Checkout& c) {
  return "-ffile-prefix-map=" + c.top + "=.";
}

TEST(KeyRelocation, CoveredCheckoutsShareTheKey) {
  KeyRelocation r;
  cache::Hash128 a = key(kA, map_of(kA), kA.top, &r);
  EXPECT_TRUE(r.relocated) << r.not_relocatable;
  EXPECT_EQ(a, key(kB, map_of(kB), kB.top));
  EXPECT_EQ(r.name(kA.source), "../src/x.cpp");
  EXPECT_EQ(r.name("/usr/include/stdio.h"), "/usr/include/stdio.h");
  std::vector<std::string> args = relocated_args(kA.parse(map_of(kA)), r);
  // The map's old prefix is named from the working directory, with the
  // directories between them (what the map writes into the object).
  EXPECT_NE(std::find(args.begin(), args.end(), std::string("-ffile-prefix-map=..=.\0build", 28)),
            args.end());
  EXPECT_NE(std::find(args.begin(), args.end(), "-I../inc"), args.end());
  // With -g too, since -ffile-prefix-map covers debug info.
  EXPECT_EQ(key(kA, "-g " + map_of(kA), kA.top), key(kB, "-g " + map_of(kB), kB.top));
}

TEST(KeyRelocation, ContentAndProbesStillDecide) {
  Checkout b2("/srv/ci/7/proj");
  b2.closure.files[1].content = cache::Hash128{9, 9};
  EXPECT_NE(key(kA, map_of(kA), kA.top), key(b2, map_of(b2), b2.top));
  Checkout b3("/srv/ci/7/proj");
  b3.probe = b3.top + "/other/u.h";
  b3.closure.failed_probes[0] = b3.probe;
  EXPECT_NE(key(kA, map_of(kA), kA.top), key(b3, map_of(b3), b3.top));
}

TEST(KeyRelocation, UncoveredPathsKeepTheKeyAbsolute) {
  KeyRelocation r;
  key(kA, "", kA.top, &r);
  EXPECT_FALSE(r.relocated);
  EXPECT_EQ(r.not_relocatable.rfind("__FILE__ may record " + kA.source, 0), 0u)
      << r.not_relocatable;
  EXPECT_NE(key(kA, "", kA.top), key(kB, "", kB.top));
  // Macro map only, with -g: debug info records the paths.
  std::string macro_a = "-g -fmacro-prefix-map=" + kA.top + "=.";
  key(kA, macro_a, kA.top, &r);
  EXPECT_FALSE(r.relocated);
  EXPECT_NE(r.not_relocatable.find("-g records the working directory"), std::string::npos);
  // A map whose old prefix is outside base_dir rewrites each checkout
  // differently: not a cover.
  key(kA, "-ffile-prefix-map=/home=/x", kA.top, &r);
  EXPECT_FALSE(r.relocated);
  // A path value the compiler may copy into the object.
  key(kA, map_of(kA) + " -DDATA=" + kA.top + "/data", kA.top, &r);
  EXPECT_FALSE(r.relocated);
  EXPECT_NE(r.not_relocatable.find("-DDATA="), std::string::npos) << r.not_relocatable;
  // A map to a path under base_dir.
  key(kA, "-ffile-prefix-map=" + kA.top + "=" + kA.top + "/x", kA.top, &r);
  EXPECT_FALSE(r.relocated);
}

TEST(KeyRelocation, OffWithoutBaseDirAndDistinctFromAbsoluteKeys) {
  KeyRelocation r;
  cache::Hash128 plain = key(kA, map_of(kA), "", &r);
  EXPECT_FALSE(r.relocated);
  EXPECT_TRUE(r.not_relocatable.empty());
  EXPECT_EQ(plain, action_key(identity(), kA.parse(map_of(kA)), kA.cwd, kA.closure));
  EXPECT_NE(plain, key(kA, map_of(kA), kA.top));
  // base_dir above both checkouts relocates as well.
  Checkout a2("/home/ann/proj"), b2("/home/bob/proj");
  EXPECT_EQ(key(a2, map_of(a2), "/home"), key(b2, map_of(b2), "/home"));
}

// A map whose old prefix lies above the checkouts (base_dir itself) writes
// each checkout's own directories into __FILE__ and debug info ("./ann/proj/
// src/x.cpp"): the keys must differ, or one checkout gets the other's
// object. The same checkout's path under another name of its build
// directory differs as well; two checkouts named alike below the map share
// the key.
TEST(KeyRelocation, AMapAboveTheCheckoutKeysWhatLiesBelowIt) {
  Checkout a("/home/ann/proj"), b("/home/bob/proj"), c("/srv/ann/proj");
  const std::string above = "-ffile-prefix-map=/home=.";
  KeyRelocation r;
  const cache::Hash128 ka = key(a, above, "/home", &r);
  EXPECT_TRUE(r.relocated) << r.not_relocatable;
  EXPECT_NE(ka, key(b, above, "/home"));
  EXPECT_NE(key(a, "-g " + above, "/home"), key(b, "-g " + above, "/home"));
  // A trailing slash on the map changes nothing.
  EXPECT_NE(key(a, "-ffile-prefix-map=/home/=.", "/home"),
            key(b, "-ffile-prefix-map=/home/=.", "/home"));
  // Below the map, /home/ann/proj and /srv/ann/proj are alike.
  EXPECT_EQ(key(a, "-ffile-prefix-map=/home=.", "/home"),
            key(c, "-ffile-prefix-map=/srv=.", "/srv"));
  // Mapping the checkouts' tops still shares the key.
  EXPECT_EQ(key(a, map_of(a), "/home"), key(b, map_of(b), "/home"));
}

// What explain suggests names no directory above the checkout.
TEST(KeyRelocation, TheSuggestedMapIsTheCheckoutsTop) {
  KeyRelocation r;
  key(kA, "", "/home", &r);
  EXPECT_FALSE(r.relocated);
  EXPECT_NE(r.not_relocatable.find("add -ffile-prefix-map=TOP=. with TOP the checkout's top"),
            std::string::npos)
      << r.not_relocatable;
}

TEST(KeyRelocation, TranslationUnitKeyNamesTheBaseDir) {
  compiler::CompileCommand cmd = kA.parse("");
  EXPECT_NE(translation_unit_key(identity(), cmd, kA.cwd),
            translation_unit_key(identity(), cmd, kA.cwd, kA.top));
}

}  // namespace
}  // namespace lexpack::closure
