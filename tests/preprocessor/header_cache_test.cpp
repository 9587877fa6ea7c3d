// The header cache must be exact: a translation unit that replays a header's
// recorded evaluation gets the same result as one that evaluates it, and a
// header entered with a different macro state on a name it reads (through a
// condition, a computed include or __has_include) is evaluated again.
#include "preprocessor/header_cache.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "memory_host.h"
#include "preprocessor/preprocessor.h"

namespace lexpack::preprocessor {
namespace {

using testing::MemoryHost;

class HeaderCacheTest : public ::testing::Test {
 protected:
  struct Run {
    std::string summary;  // what the result says, handles spelled as paths
    size_t replayed = 0;
    size_t evaluated = 0;
    bool needs_compiler = false;
  };

  // Runs `main` as main.cc with `defines`, with the cache when `cached`.
  Run run(const std::string& main, const std::vector<std::string>& defines, bool cached) {
    host.add("main.cc", main);
    Preprocessor pp(host, Options::gcc());
    std::string err;
    EXPECT_TRUE(pp.predefine("#define __cplusplus 201703L\n", &err)) << err;
    if (cached) pp.use_header_cache(&cache, "context");
    for (const std::string& d : defines) EXPECT_TRUE(pp.define(d, &err)) << err;
    pp.run_file(host.handle("main.cc"), EntryKind::kMain);
    const Result& r = pp.result();
    Run out;
    out.replayed = pp.headers_replayed();
    out.evaluated = pp.headers_evaluated();
    out.needs_compiler = r.needs_compiler();
    std::string& s = out.summary;
    for (const FileEntry& f : r.files) {
      s += "file " + host.path(f.file) + " from " + (f.includer ? host.path(*f.includer) : "-") +
           ":" + std::to_string(f.line) + (f.processed ? "" : " skipped") + "\n";
    }
    for (const IncludeQuestion& q : r.includes) {
      s += "include " + q.name + " in " + host.path(q.includer) + " -> " +
           (q.answer ? host.path(*q.answer) : "none") + "\n";
    }
    for (const IncludeQuestion& q : r.has_includes) {
      s += "has_include " + q.name + " -> " + (q.answer ? host.path(*q.answer) : "none") + "\n";
    }
    for (const ModuleLine& m : r.modules) s += "module " + m.name + "\n";
    for (const InexactReason& i : r.inexact) s += "inexact " + i.message + "\n";
    for (const char* name : {"MODE", "RESULT", "P_VAL", "LEVEL"}) {
      const Macro* m = pp.macros().find(name);
      s += std::string(name) + "=" +
           (m ? spell(m->body.data(), m->body.data() + m->body.size()) : "-") + "\n";
    }
    return out;
  }

  // Runs each TU with the cache shared by all of them, and checks each
  // against the same TU evaluated without it; returns the cached runs.
  std::vector<Run> run_all(
      const std::vector<std::pair<std::string, std::vector<std::string>>>& tus) {
    std::vector<Run> out;
    for (const auto& [main, defines] : tus) {
      Run plain = run(main, defines, false);
      Run cached = run(main, defines, true);
      EXPECT_EQ(cached.summary, plain.summary) << "main.cc:\n" << main;
      out.push_back(cached);
    }
    return out;
  }

  MemoryHost host;
  HeaderCache cache;
};

TEST_F(HeaderCacheTest, ADifferentDefineTakesTheOtherBranch) {
  host.add("inc/h.h",
           "#ifndef H_H\n#define H_H\n#ifdef FAST\n#include <fast.h>\n#define RESULT fast\n"
           "#else\n#include <slow.h>\n#define RESULT slow\n#endif\n#endif\n");
  host.add("inc/fast.h", "");
  host.add("inc/slow.h", "");
  const std::string main = "#include <h.h>\n";
  std::vector<Run> runs = run_all({{main, {"FAST"}}, {main, {}}, {main, {"FAST"}}, {main, {}}});
  EXPECT_NE(runs[0].summary, runs[1].summary);
  EXPECT_EQ(runs[0].replayed, 0u);
  EXPECT_EQ(runs[1].replayed, 0u);  // FAST is an input: the first trace does not apply
  EXPECT_GT(runs[2].replayed, 0u);
  EXPECT_GT(runs[3].replayed, 0u);
  EXPECT_EQ(runs[3].evaluated, 0u);
}

// What the TU looked up, replayed headers' reads included: a source edit of
// a name outside them changes nothing evaluated (closure/closure_snapshot.h).
TEST_F(HeaderCacheTest, MacroReadsHoldWhatReplayedHeadersRead) {
  host.add("inc/h.h", "#ifndef H_H\n#define H_H\n#ifdef FAST\n#include <fast.h>\n#endif\n#endif\n");
  host.add("inc/fast.h", "");
  host.add("main.cc", "#define UNREAD 1\n#include <h.h>\n#if defined(MAIN_READ)\n#endif\n");
  for (int round = 0; round < 2; ++round) {
    Preprocessor pp(host, Options::gcc());
    pp.use_header_cache(&cache, "context");
    pp.run_file(host.handle("main.cc"), EntryKind::kMain);
    EXPECT_EQ(pp.headers_replayed() > 0, round == 1);
    const MacroReads& reads = pp.macro_reads();
    for (const char* name : {"FAST", "H_H", "MAIN_READ"}) {
      EXPECT_TRUE(reads.may_have_read(macro_name_hash(name))) << name << " round " << round;
    }
    EXPECT_FALSE(reads.may_have_read(macro_name_hash("UNREAD"))) << round;
    EXPECT_FALSE(reads.may_have_read(macro_name_hash("NEVER_NAMED"))) << round;
  }
}

// Without the questions' names (a closure evaluation reads only answers),
// evaluated or replayed: the same questions and answers, the names of
// computed includes kept, the others empty.
TEST_F(HeaderCacheTest, QuestionsWithoutNamesHaveTheSameAnswers) {
  host.add("inc/h.h",
           "#ifndef H_H\n#define H_H\n#include <a.h>\n#define NAME <b.h>\n#include NAME\n"
           "#if __has_include(<c.h>)\n#endif\n#endif\n");
  host.add("inc/a.h", "");
  host.add("inc/b.h", "");
  host.add("d.h", "");
  host.add("main.cc", "#include <h.h>\n#include \"d.h\"\n");
  auto questions = [&](const std::vector<IncludeQuestion>& qs) {
    std::string s;
    for (const IncludeQuestion& q : qs) {
      s += host.path(q.includer) + ":" + std::to_string(q.line) +
           (q.computed ? " computed " : " ") + (q.answer ? host.path(*q.answer) : "none") + "\n";
    }
    return s;
  };
  std::string with_names;
  for (int round = 0; round < 3; ++round) {
    Options options = Options::gcc();
    options.keep_question_names = round == 0;
    Preprocessor pp(host, options);
    if (round < 2) pp.use_header_cache(&cache, "context");  // the last evaluates h.h again
    pp.run_file(host.handle("main.cc"), EntryKind::kMain);
    EXPECT_EQ(pp.headers_replayed() > 0, round == 1) << round;
    const Result& r = pp.result();
    const std::string asked = questions(r.includes) + questions(r.has_includes);
    ASSERT_EQ(r.includes.size(), 4u) << round;
    ASSERT_EQ(r.has_includes.size(), 1u) << round;
    if (round == 0) {
      with_names = asked;
      EXPECT_EQ(r.includes[0].name, "h.h");
      EXPECT_EQ(r.has_includes[0].name, "c.h");
      continue;
    }
    EXPECT_EQ(asked, with_names) << round;
    for (const IncludeQuestion& q : r.includes) EXPECT_EQ(q.name, q.computed ? "b.h" : "") << round;
    EXPECT_EQ(r.has_includes[0].name, "") << round;
  }
}

TEST_F(HeaderCacheTest, APriorDefineInTheSourceIsAnInput) {
  host.add("inc/h.h",
           "#if MODE == 2\n#include <two.h>\n#elif MODE == 3\n#include <three.h>\n#endif\n");
  host.add("inc/two.h", "");
  host.add("inc/three.h", "");
  std::vector<Run> runs = run_all({{"#define MODE 2\n#include <h.h>\n", {}},
                                   {"#define MODE 3\n#include <h.h>\n", {}},
                                   {"#define MODE 2\n#include <h.h>\n", {}},
                                   {"#define MODE (1 + 1)\n#include <h.h>\n", {}}});
  EXPECT_NE(runs[0].summary, runs[1].summary);
  EXPECT_EQ(runs[1].replayed, 0u);
  EXPECT_GT(runs[2].replayed, 0u);
  EXPECT_EQ(runs[3].evaluated, 1u);  // another definition, even of the same value
}

TEST_F(HeaderCacheTest, AMacroReadOnlyByAComputedInclude) {
  host.add("inc/h.h", "#include CFG\n");
  host.add("inc/a.h", "#define RESULT a\n");
  host.add("inc/b.h", "#define RESULT b\n");
  const std::string main = "#include <h.h>\n";
  std::vector<Run> runs = run_all({{main, {"CFG=<a.h>"}},
                                   {main, {"CFG=\"b.h\""}},
                                   {main, {"CFG=<a.h>"}},
                                   {"#define CFG <b.h>\n#include <h.h>\n", {}}});
  EXPECT_NE(runs[0].summary, runs[1].summary);
  EXPECT_EQ(runs[1].replayed, 0u);
  EXPECT_GT(runs[2].replayed, 0u);
  EXPECT_EQ(runs[3].replayed, 0u);
}

TEST_F(HeaderCacheTest, AMacroReadOnlyByHasInclude) {
  host.add("inc/h.h",
           "#define HAS(x) __has_include(x)\n#if HAS(HDR)\n#include HDR\n#define RESULT yes\n"
           "#else\n#define RESULT no\n#endif\n");
  host.add("inc/x.h", "");
  const std::string main = "#include <h.h>\n";
  std::vector<Run> runs = run_all(
      {{main, {"HDR=<x.h>"}}, {main, {"HDR=<y.h>"}}, {main, {"HDR=<x.h>"}}, {main, {"HDR=<y.h>"}}});
  EXPECT_NE(runs[0].summary, runs[1].summary);
  EXPECT_EQ(runs[1].replayed, 0u);
  EXPECT_GT(runs[2].replayed, 0u);
  EXPECT_GT(runs[3].replayed, 0u);
  // A file a __has_include names that appears between two TUs: the
  // question is asked again before a replay, and the header evaluated anew.
  host.add("inc/y.h", "");
  Run plain = run(main, {"HDR=<y.h>"}, false);
  Run cached = run(main, {"HDR=<y.h>"}, true);
  EXPECT_NE(plain.summary.find("include y.h in inc/h.h -> inc/y.h"), std::string::npos);
  EXPECT_EQ(cached.summary, plain.summary);
}

TEST_F(HeaderCacheTest, AGuardDefinedBeforeTheHeaderIsAnInput) {
  host.add("inc/g.h", "#ifndef G_H\n#define G_H\n#define MODE g\n#endif\n");
  host.add("inc/h.h", "#include <g.h>\n#ifdef MODE\n#define RESULT with_mode\n#endif\n");
  std::vector<Run> runs = run_all({{"#include <g.h>\n#undef MODE\n#include <h.h>\n", {}},
                                   {"#include <h.h>\n", {}},
                                   {"#include <g.h>\n#undef MODE\n#include <h.h>\n", {}},
                                   {"#include <h.h>\n", {}}});
  EXPECT_NE(runs[0].summary, runs[1].summary);
  EXPECT_GT(runs[2].replayed, 0u);
  EXPECT_GT(runs[3].replayed, 0u);
}

TEST_F(HeaderCacheTest, PragmaOnceStateIsAnInput) {
  host.add("inc/p.h", "#pragma once\n#define P_VAL 1\n");
  host.add("inc/h.h", "#include <p.h>\n#ifdef P_VAL\n#define RESULT p\n#endif\n");
  std::vector<Run> runs = run_all({{"#include <h.h>\n", {}},
                                   {"#include <p.h>\n#undef P_VAL\n#include <h.h>\n", {}},
                                   {"#include <p.h>\n#include <h.h>\n", {}},
                                   {"#include <h.h>\n", {}},
                                   {"#include <p.h>\n#undef P_VAL\n#include <h.h>\n", {}}});
  EXPECT_NE(runs[0].summary, runs[1].summary);
  EXPECT_GT(runs[3].replayed, 0u);
  EXPECT_GT(runs[4].replayed, 0u);
}

TEST_F(HeaderCacheTest, IncludeLevelIsAnInputWhenRead) {
  host.add("inc/h.h",
           "#if __INCLUDE_LEVEL__ == 1\n#define LEVEL one\n#else\n#define LEVEL deeper\n#endif\n");
  host.add("inc/w.h", "#include <h.h>\n");
  std::vector<Run> runs = run_all({{"#include <h.h>\n", {}},
                                   {"#include <w.h>\n", {}},
                                   {"#include <h.h>\n", {}},
                                   {"#include <w.h>\n", {}}});
  EXPECT_NE(runs[0].summary, runs[1].summary);
  EXPECT_GT(runs[2].replayed, 0u);
  EXPECT_GT(runs[3].replayed, 0u);
}

TEST_F(HeaderCacheTest, BuiltinAnswersAreInputs) {
  host.add("inc/h.h", "#if __has_builtin(__builtin_foo)\n#define RESULT foo\n#endif\n");
  host.answers["__has_builtin(__builtin_foo)"] = 1;
  const std::string main = "#include <h.h>\n";
  Run first = run_all({{main, {}}})[0];
  host.answers["__has_builtin(__builtin_foo)"] = 0;
  Run second = run_all({{main, {}}})[0];
  EXPECT_NE(first.summary, second.summary);
  EXPECT_EQ(second.replayed, 0u);
}

TEST_F(HeaderCacheTest, NestedHeadersReplayWithTheirIncluder) {
  host.add("inc/top.h", "#include <mid.h>\n#if RESULT == 2\n#include <two.h>\n#endif\n");
  host.add("inc/mid.h", "#include <leaf.h>\n#define RESULT LEAF\n");
  host.add("inc/leaf.h", "#ifdef MODE\n#define LEAF 2\n#else\n#define LEAF 1\n#endif\n");
  host.add("inc/two.h", "");
  std::vector<Run> runs = run_all({{"#include <top.h>\n", {}},
                                   {"#include <top.h>\n", {"MODE"}},
                                   {"#include <top.h>\n", {}},
                                   {"#include <top.h>\n", {"MODE"}}});
  EXPECT_NE(runs[0].summary, runs[1].summary);
  EXPECT_EQ(runs[1].replayed, 0u);  // MODE is read by leaf.h, so it is top.h's input too
  EXPECT_EQ(runs[2].evaluated, 0u);
  EXPECT_EQ(runs[3].evaluated, 0u);
}

// A trace kept only while every file it replays is: dropping a nested
// header's file drops each includer's trace that replays it.
TEST_F(HeaderCacheTest, KeepOnlyDropsEveryTraceThatReachesADroppedFile) {
  host.add("inc/top.h", "#include <mid.h>\n#include <other.h>\n");
  host.add("inc/mid.h", "#include <leaf.h>\n");
  host.add("inc/leaf.h", "#define RESULT 1\n");
  host.add("inc/other.h", "#define MODE 2\n");
  std::vector<Run> runs = run_all({{"#include <top.h>\n", {}}});
  ASSERT_EQ(runs[0].evaluated, 4u);
  ASSERT_EQ(cache.trace_count(), 4u);
  std::vector<std::string> asked;
  cache.keep_only([&](std::string_view key) {
    asked.emplace_back(key.substr(0, key.find('\0')));
    return key.substr(0, key.find('\0')) != "inc/leaf.h";
  });
  EXPECT_EQ(cache.trace_count(), 1u);  // other.h's: it enters nothing
  std::sort(asked.begin(), asked.end());
  EXPECT_EQ(asked, (std::vector<std::string>{"inc/leaf.h", "inc/mid.h", "inc/other.h",
                                             "inc/top.h"}));  // each file asked once
  runs = run_all({{"#include <top.h>\n", {}}});
  EXPECT_EQ(runs[0].evaluated, 3u);
  EXPECT_EQ(runs[0].replayed, 1u);
  cache.keep_only([](std::string_view) { return true; });
  EXPECT_EQ(cache.trace_count(), 4u);
  EXPECT_EQ(run_all({{"#include <top.h>\n", {}}})[0].evaluated, 0u);
}

// A server keeps its cache for as long as it runs: a trace no TU used in
// kUnusedCarries carries is dropped, one replayed meanwhile (directly or
// nested in its includer's) is kept.
TEST_F(HeaderCacheTest, KeepOnlyDropsTracesLongUnused) {
  host.add("inc/top.h", "#include <mid.h>\n");
  host.add("inc/mid.h", "#define MODE 1\n");
  host.add("inc/old.h", "#define RESULT 2\n");
  run_all({{"#include <top.h>\n#include <old.h>\n", {}}});
  ASSERT_EQ(cache.trace_count(), 3u);
  auto all = [](std::string_view) { return true; };
  for (uint32_t i = 0; i < HeaderCache::kUnusedCarries; ++i) {
    cache.keep_only(all);
    EXPECT_EQ(run_all({{"#include <top.h>\n", {}}})[0].evaluated, 0u);
  }
  EXPECT_EQ(cache.trace_count(), 3u);  // old.h's last use is kUnusedCarries carries back
  cache.keep_only(all);
  EXPECT_EQ(cache.trace_count(), 2u);  // top.h's and mid.h's, replayed within top.h's
  EXPECT_EQ(run_all({{"#include <top.h>\n#include <mid.h>\n", {}}})[0].evaluated, 0u);
}

// A key's list full: the variant used least recently gives its place to a
// new one, unless every one was used since the last carry.
TEST(HeaderCacheVariants, AFullKeyReplacesOneUnusedSinceTheLastCarry) {
  HeaderCache cache;
  const uint64_t key = HeaderCache::key(cache.intern("context"), cache.intern("file"));
  std::vector<std::shared_ptr<const HeaderTrace>> added;
  for (size_t i = 0; i < HeaderCache::kMaxVariants; ++i) {
    added.push_back(std::make_shared<HeaderTrace>());
    cache.add(key, added.back());
  }
  cache.keep_only([](std::string_view) { return true; });
  for (size_t i = 1; i < added.size(); ++i) cache.used(*added[i]);  // all but the first
  auto later = std::make_shared<HeaderTrace>();
  cache.add(key, later);
  std::vector<std::shared_ptr<const HeaderTrace>> kept = cache.find(key);
  ASSERT_EQ(kept.size(), HeaderCache::kMaxVariants);
  EXPECT_NE(std::find(kept.begin(), kept.end(), later), kept.end());
  EXPECT_EQ(std::find(kept.begin(), kept.end(), added[0]), kept.end());
  // Every one used since the carry: a new variant is not kept.
  auto last = std::make_shared<HeaderTrace>();
  cache.add(key, last);
  kept = cache.find(key);
  EXPECT_EQ(kept.size(), HeaderCache::kMaxVariants);
  EXPECT_EQ(std::find(kept.begin(), kept.end(), last), kept.end());
}

TEST_F(HeaderCacheTest, InexactEvaluationsAreNotShared) {
  host.add("inc/h.h", "#if __has_builtin(__builtin_unknown)\n#include <a.h>\n#endif\n");
  host.add("inc/a.h", "");
  std::vector<Run> runs = run_all({{"#include <h.h>\n", {}}, {"#include <h.h>\n", {}}});
  EXPECT_EQ(runs[1].replayed, 0u);
}

// TUs whose include directories differ share one cache (the scan keys it
// without them): a header replays where it and every header it enters find
// their includes alike, and is evaluated again, not handed to the
// compiler, where a nested header finds another file.
TEST(HeaderCacheAcrossSearchLists, NestedIncludesFoundElsewhereAreEvaluatedAgain) {
  const std::vector<std::vector<std::string>> lists = {
      {"a", "common"}, {"b", "common"}, {"a2", "common"}, {"b", "common"}};
  auto make_host = [](const std::vector<std::string>& dirs) {
    auto host = std::make_unique<MemoryHost>(dirs);
    host->add("main.cc", "#include <top.h>\n#if X == 2\n#include <two.h>\n#endif\n");
    host->add("common/top.h", "#include <mid.h>\n#include \"near.h\"\n");
    host->add("common/near.h", "#define NEAR 1\n");
    host->add("common/mid.h", "#include <cfg.h>\n#define MID X\n");
    host->add("common/two.h", "");
    host->add("a/cfg.h", "#define X 1\n");
    host->add("a2/cfg.h", "#define X 1\n");  // the same bytes at another path
    host->add("b/cfg.h", "#define X 2\n");
    return host;
  };
  auto summary = [](MemoryHost& host, const Preprocessor& pp) {
    std::string s;
    for (const FileEntry& f : pp.result().files) s += host.path(f.file) + "\n";
    const Macro* x = pp.macros().find("X");
    s += x ? spell(x->body.data(), x->body.data() + x->body.size()) : "-";
    return s;
  };
  HeaderCache cache;
  std::vector<size_t> replayed, evaluated;
  for (const std::vector<std::string>& dirs : lists) {
    std::unique_ptr<MemoryHost> plain_host = make_host(dirs);
    Preprocessor plain(*plain_host, Options::gcc());
    plain.run_file(plain_host->handle("main.cc"), EntryKind::kMain);

    std::unique_ptr<MemoryHost> host = make_host(dirs);
    Preprocessor pp(*host, Options::gcc());
    pp.use_header_cache(&cache, "same context");
    pp.run_file(host->handle("main.cc"), EntryKind::kMain);
    EXPECT_TRUE(pp.result().exact()) << dirs[0] << ": " << pp.result().reason();
    EXPECT_FALSE(pp.result().needs_compiler()) << dirs[0];
    EXPECT_EQ(summary(*host, pp), summary(*plain_host, plain)) << dirs[0];
    replayed.push_back(pp.headers_replayed());
    evaluated.push_back(pp.headers_evaluated());
  }
  // b/cfg.h is not a/cfg.h, nor is a2/cfg.h: top.h, mid.h and cfg.h are
  // evaluated again (near.h, which includes nothing, replays).
  EXPECT_EQ(evaluated[1], 4u);  // with two.h
  EXPECT_EQ(replayed[1], 1u);
  EXPECT_EQ(evaluated[2], 3u);
  EXPECT_EQ(replayed[2], 1u);
  // The same files as the second TU: everything replays.
  EXPECT_EQ(evaluated[3], 0u);
  EXPECT_EQ(replayed[3], 5u);
}

}  // namespace
}  // namespace lexpack::preprocessor

namespace lexpack::preprocessor {
namespace {

std::vector<std::string> input_names(const HeaderTrace& t) {
  std::vector<std::string> out;
  for (const auto& [name, macro] : t.inputs.macros) out.emplace_back(name);
  return out;
}

// The recorder directly: a name is an input of each recording that read it
// before anything inside it wrote it, once, also when inner recordings that
// read it ended in between.
TEST(TraceRecorderTest, InputsOfNestedRecordings) {
  using V = std::vector<std::string>;
  TraceRecorder r;
  r.looked_up("OUTSIDE", nullptr);  // no recording: nobody's input
  r.begin(0);                       // A
  r.looked_up("X", nullptr);
  r.begin(1);  // B
  r.looked_up("X", nullptr);
  r.looked_up("Y", nullptr);
  r.wrote("Z");
  r.looked_up("Z", nullptr);  // written inside B first: no one's input
  std::shared_ptr<HeaderTrace> b = r.end();
  r.begin(1);  // C, after B: reads Y and X again
  r.looked_up("Y", nullptr);
  r.looked_up("X", nullptr);
  r.begin(2);  // D inside C
  r.looked_up("Y", nullptr);
  r.wrote("W");
  std::shared_ptr<HeaderTrace> d = r.end();
  r.looked_up("W", nullptr);  // written by D, inside C and A: no one's input
  std::shared_ptr<HeaderTrace> c = r.end();
  r.looked_up("Y", nullptr);  // A has it already (through B)
  r.wrote("X");
  r.begin(1);  // E after A wrote X: X is E's input only
  r.looked_up("X", nullptr);
  r.looked_up("X", nullptr);
  std::shared_ptr<HeaderTrace> e = r.end();
  std::shared_ptr<HeaderTrace> a = r.end();
  EXPECT_EQ(input_names(*a), (V{"X", "Y"}));
  EXPECT_EQ(input_names(*b), (V{"X", "Y"}));
  EXPECT_EQ(input_names(*c), (V{"Y", "X"}));
  EXPECT_EQ(input_names(*d), (V{"Y"}));
  EXPECT_EQ(input_names(*e), (V{"X"}));
  r.begin(0);  // a later recording, after the stack was empty
  r.looked_up("W", nullptr);
  r.looked_up("X", nullptr);
  EXPECT_EQ(input_names(*r.end()), (V{"W", "X"}));
}

// Headers and contexts are looked up by number: equal strings share one,
// others never do, and a TU of another context (another compiler or working
// directory) does not replay what this one recorded.
TEST(HeaderCacheNumbers, ContextsAndFilesAreNumberedByTheirStrings) {
  HeaderCache cache;
  EXPECT_EQ(cache.intern(""), 0u);
  const uint32_t a = cache.intern(std::string("a.h\0") + "1,2");
  EXPECT_NE(a, 0u);
  EXPECT_EQ(cache.intern(std::string("a.h\0") + "1,2"), a);
  EXPECT_NE(cache.intern(std::string("a.h\0") + "1,3"), a);
  EXPECT_NE(HeaderCache::key(1, 2), HeaderCache::key(2, 1));

  auto run = [&cache](const std::string& context) {
    MemoryHost host;
    host.add("main.cc", "#include \"h.h\"\n");
    host.add("h.h", "#define H 1\n");
    Preprocessor pp(host, Options::gcc());
    pp.use_header_cache(&cache, context);
    pp.run_file(host.handle("main.cc"), EntryKind::kMain);
    return std::make_pair(pp.headers_evaluated(), pp.headers_replayed());
  };
  EXPECT_EQ(run("one"), std::make_pair(size_t(1), size_t(0)));
  EXPECT_EQ(run("one"), std::make_pair(size_t(0), size_t(1)));
  EXPECT_EQ(run("two"), std::make_pair(size_t(1), size_t(0)));
}

}  // namespace
}  // namespace lexpack::preprocessor
