// The action key changes with every input that can change the object (the
// compiler, each argument, the source, each closure file's name and content,
// each failed candidate, the working directory when debug info records it)
// and stays the same for what cannot (file dates, the order the walk met
// files in, the working directory of a compile without debug info or with
// it mapped away).
#include "closure/action_key.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace lexpack::closure {
namespace {

// One compile with its closure; the views of the closure point into `names`.
struct Compile {
  compiler::CompilerIdentity identity;
  compiler::CompileCommand command;
  std::string cwd = "/src/project";
  std::vector<std::string> names = {"a.cpp", "inc/h.h", "inc/p.h", "inc/missing.h"};
  Closure closure;

  explicit Compile(std::vector<std::string> argv = {"g++", "-O2", "-Iinc", "-c", "a.cpp", "-o",
                                                    "a.o"}) {
    identity.kind = compiler::CompilerKind::kGcc;
    identity.program = "/usr/bin/g++";
    identity.version = "g++ (Debian 12.2.0-14) 12.2.0";
    identity.hash = cache::Hash128{11, 12};
    command = compiler::parse_compile_command(argv);
    reset_closure();
  }
  Compile(const Compile&) = delete;
  void reset_closure() {
    closure = Closure{};
    closure.files.push_back({names[0], stat(1), cache::Hash128{1, 1}, false, {}});
    closure.files.push_back({names[1], stat(2), cache::Hash128{2, 2}, false, {}});
    closure.files.push_back({names[2], stat(3), cache::Hash128{}, true, {}});
    closure.failed_probes.push_back(names[3]);
    closure.failed_probe_dirs.push_back(0);
  }
  static base::StatSignature stat(uint64_t ino) {
    base::StatSignature s;
    s.dev = 1;
    s.ino = ino;
    s.size = 100;
    s.mtime_ns = 1700000000'000000000;
    return s;
  }
  cache::Hash128 key() const { return action_key(identity, command, cwd, closure); }
};

TEST(ActionKey, SameInputsSameKey) {
  Compile a, b;
  EXPECT_TRUE(a.key() == b.key());
  EXPECT_FALSE(a.key() == cache::Hash128{});
}

// The key of a fixed compile, as every version made it: a change of how the
// key is hashed (not of what it rests on) would make every cached entry
// unreachable, and must be a decision (kActionFormat), not a side effect.
TEST(ActionKey, AFixedCompileKeepsItsKey) {
  Compile c;
  for (int i = 0; i < 40; ++i) c.names.push_back("inc/n" + std::to_string(i) + ".h");
  c.reset_closure();  // its views into the names made again
  for (int i = 0; i < 40; ++i) {
    c.closure.failed_probes.push_back(c.names[4 + i]);
    c.closure.failed_probe_dirs.push_back(0);
  }
  EXPECT_EQ(c.key().hex(), "88006b9eccf474bc378af98ef1dbe9d9");
}

TEST(ActionKey, EachInputOfTheObjectChangesIt) {
  const cache::Hash128 base_key = Compile().key();
  struct Change {
    const char* what;
    std::function<void(Compile&)> apply;
  };
  std::vector<Change> changes = {
      {"compiler hash lo", [](Compile& c) { c.identity.hash.lo ^= 1; }},
      {"compiler hash hi", [](Compile& c) { c.identity.hash.hi ^= 1; }},
      {"an argument", [](Compile& c) { c.command.args[0] = "-O3"; }},
      {"an argument added", [](Compile& c) { c.command.args.push_back("-DX=1"); }},
      {"argument order", [](Compile& c) { std::swap(c.command.args[0], c.command.args[1]); }},
      {"argument boundary",
       [](Compile& c) {
         c.command.args[0] = "-O";
         c.command.args[1] = "2-Iinc";
       }},
      {"the source", [](Compile& c) { c.command.source = "b.cpp"; }},
      {"a file's content", [](Compile& c) { c.closure.files[1].content.lo ^= 1; }},
      {"a file's path",
       [](Compile& c) {
         c.names[1] = "inc/other.h";
         c.closure.files[1].path = c.names[1];
       }},
      {"presence turned into content",
       [](Compile& c) {
         c.closure.files[2].presence_only = false;
         c.closure.files[2].content = cache::Hash128{3, 3};
       }},
      {"a file added",
       [](Compile& c) {
         c.closure.files.push_back({c.names[3], Compile::stat(4), {4, 4}, false, {}});
       }},
      {"a file dropped", [](Compile& c) { c.closure.files.pop_back(); }},
      {"a present file's content counted",
       [](Compile& c) {
         std::swap(c.closure.files[1].presence_only, c.closure.files[2].presence_only);
         std::swap(c.closure.files[1].content, c.closure.files[2].content);
       }},
      {"a failed candidate added",
       [](Compile& c) {
         c.closure.failed_probes.push_back(c.names[1]);
         c.closure.failed_probe_dirs.push_back(1);
       }},
      {"no failed candidate",
       [](Compile& c) {
         c.closure.failed_probes.clear();
         c.closure.failed_probe_dirs.clear();
       }},
  };
  for (const Change& change : changes) {
    Compile c;
    change.apply(c);
    EXPECT_FALSE(c.key() == base_key) << change.what;
  }
}

TEST(ActionKey, WhatCannotChangeTheObjectLeavesIt) {
  const cache::Hash128 base_key = Compile().key();
  {
    Compile c;  // no debug info: the object does not record the directory
    c.cwd = "/elsewhere";
    EXPECT_TRUE(c.key() == base_key);
  }
  {
    Compile c;  // dates and inodes are not content
    for (ClosureFile& f : c.closure.files) {
      f.stat.mtime_ns += 5'000'000'000;
      f.stat.ino += 100;
    }
    EXPECT_TRUE(c.key() == base_key);
  }
  {
    // The order the walk met files and failed candidates in (an evaluation
    // replaying a recorded header asks its includes before it replays them).
    static const std::string other_probe = "inc/other.h";
    Compile c;
    std::swap(c.closure.files[1], c.closure.files[2]);
    c.closure.failed_probes.insert(c.closure.failed_probes.begin(), other_probe);
    c.closure.failed_probe_dirs.push_back(0);
    Compile d;
    d.closure.failed_probes.push_back(other_probe);
    d.closure.failed_probe_dirs.push_back(0);
    EXPECT_TRUE(c.key() == d.key());
    EXPECT_FALSE(c.key() == base_key);
  }
  {
    Compile c;  // how the identity was found, beyond its hash
    c.identity.program = "/opt/bin/g++";
    c.identity.version = "other";
    EXPECT_TRUE(c.key() == base_key);
  }
}

TEST(ActionKey, WorkingDirectoryCountsOnlyWhenDebugInfoRecordsIt) {
  const std::vector<std::string> argv = {"g++", "-g", "-c", "a.cpp", "-o", "a.o"};
  Compile debug(argv), moved(argv);
  moved.cwd = "/elsewhere";
  EXPECT_FALSE(debug.key() == moved.key());

  const std::vector<std::string> mapped_argv = {
      "g++", "-g", "-fdebug-prefix-map=/src/project=.", "-c", "a.cpp", "-o", "a.o"};
  Compile mapped(mapped_argv), mapped_moved(mapped_argv);
  mapped_moved.cwd = "/src/project/sub";  // still under the mapped prefix
  EXPECT_TRUE(mapped.key() == mapped_moved.key());
  mapped_moved.cwd = "/src/projectx";  // not under it
  EXPECT_FALSE(mapped.key() == mapped_moved.key());
}

TEST(ActionKey, EnvironmentThatChangesSearchOrDatesChangesIt) {
  const cache::Hash128 base_key = Compile().key();
  ASSERT_EQ(setenv("CPATH", "/some/include", 1), 0);
  cache::Hash128 with_cpath = Compile().key();
  unsetenv("CPATH");
  EXPECT_FALSE(with_cpath == base_key);
  ASSERT_EQ(setenv("LEXPACK_UNRELATED_VARIABLE", "1", 1), 0);
  EXPECT_TRUE(Compile().key() == base_key);
  unsetenv("LEXPACK_UNRELATED_VARIABLE");
}

TEST(TranslationUnitKey, NamesTheInvocationNotItsInputs) {
  Compile a;
  cache::Hash128 tu = translation_unit_key(a.identity, a.command, a.cwd);
  Compile edited;
  edited.closure.files[1].content.lo ^= 1;
  EXPECT_TRUE(translation_unit_key(edited.identity, edited.command, edited.cwd) == tu);
  // Unlike the action key, the directory always counts: relative includes
  // resolve from it.
  EXPECT_FALSE(translation_unit_key(a.identity, a.command, "/elsewhere") == tu);
  Compile other_args({"g++", "-O0", "-Iinc", "-c", "a.cpp", "-o", "a.o"});
  EXPECT_FALSE(translation_unit_key(other_args.identity, other_args.command, a.cwd) == tu);
  EXPECT_FALSE(tu == a.key());
}

TEST(DatedKey, DiffersFromTheKeyAndIsStableWithinADay) {
  cache::Hash128 key = Compile().key();
  cache::Hash128 dated = dated_key(key);
  EXPECT_FALSE(dated == key);
  EXPECT_TRUE(dated_key(key) == dated);
  EXPECT_FALSE(dated_key(cache::Hash128{key.lo ^ 1, key.hi}) == dated);
}

// The order a key takes digests in is their value's (hi, then lo), at every
// size: many equal `hi`s (a run sorted by `lo`), one `hi` byte the same in
// all (a pass left out), and duplicates.
TEST(SortKeyDigests, GivesTheOrderOfTheirValues) {
  uint64_t state = 88172645463325252ull;
  auto next = [&] {  // xorshift64: the same values on every run
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (size_t n : {0, 1, 5, 2047, 2048, 9000}) {
    std::vector<cache::Hash128> digests(n);
    for (size_t i = 0; i < n; ++i) {
      const uint64_t hi = i % 7 == 0 ? 42 : (next() & ~(uint64_t(0xff) << 16));
      digests[i] = {i % 11 == 0 ? 7 : next(), hi};
    }
    if (n > 3) digests[n - 1] = digests[1];
    std::vector<cache::Hash128> want = digests;
    std::stable_sort(want.begin(), want.end(),
                     [](const cache::Hash128& a, const cache::Hash128& b) {
                       return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo;
                     });
    sort_key_digests(&digests);
    ASSERT_EQ(digests.size(), want.size());
    for (size_t i = 0; i < n; ++i) {
      ASSERT_TRUE(digests[i].lo == want[i].lo && digests[i].hi == want[i].hi) << n << " at " << i;
    }
  }
}

}  // namespace
}  // namespace lexpack::closure
