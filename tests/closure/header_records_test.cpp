// Header evaluations written as records and read back by a later process
// (closure/header_records.h): each TU here runs with a fresh header cache,
// as a launcher does, whose only knowledge is the records earlier TUs
// wrote. A replay from a record must give what an evaluation gives, and a
// record must not apply where the macro state, a #pragma once state, a
// builtin answer, the include depth or an include's answer differ.
#include "closure/header_records.h"

#include <gtest/gtest.h>

#include <map>

#include "preprocessor/preprocessor.h"
#include "tests/preprocessor/memory_host.h"

namespace lexpack::closure {
namespace {

using preprocessor::EntryKind;
using preprocessor::HeaderCache;
using preprocessor::HeaderTrace;
using preprocessor::Preprocessor;
using preprocessor::testing::MemoryHost;

// The store's part: records by their two names.
class MapBacking : public HeaderCache::Backing {
 public:
  std::vector<std::shared_ptr<const HeaderTrace>> load(std::string_view context,
                                                       std::string_view file,
                                                       HeaderCache& cache) override {
    auto it = records.find(name(context, file));
    if (it == records.end()) return {};
    ++loaded;
    return decode_header_traces(it->second, context, file, cache);
  }
  using Name = std::pair<std::string, std::string>;  // context, file
  static Name name(std::string_view context, std::string_view file) {
    return {std::string(context), std::string(file)};
  }
  std::map<Name, std::string> records;
  int loaded = 0;
};

class HeaderRecordsTest : public ::testing::Test {
 protected:
  struct Run {
    std::string summary;
    size_t replayed = 0;
    size_t evaluated = 0;
  };

  // Runs `main` with `defines`; `kept`: with a fresh cache over the
  // records, then writes back what it learned.
  Run run(const std::string& main, const std::vector<std::string>& defines, bool kept) {
    host.add("main.cc", main);
    HeaderCache cache;
    cache.set_backing(&backing);
    Preprocessor pp(host, preprocessor::Options::gcc());
    std::string err;
    EXPECT_TRUE(pp.predefine("#define __cplusplus 201703L\n", &err)) << err;
    if (kept) pp.use_header_cache(&cache, "context");
    for (const std::string& d : defines) EXPECT_TRUE(pp.define(d, &err)) << err;
    pp.run_file(host.handle("main.cc"), EntryKind::kMain);
    Run out;
    out.replayed = pp.headers_replayed();
    out.evaluated = pp.headers_evaluated();
    const preprocessor::Result& r = pp.result();
    for (const preprocessor::FileEntry& f : r.files) {
      out.summary += "file " + host.path(f.file) + (f.processed ? "" : " skipped") + "\n";
    }
    for (const auto* list : {&r.includes, &r.has_includes}) {
      for (const preprocessor::IncludeQuestion& q : *list) {
        out.summary += "include " + q.name + " -> " + (q.answer ? host.path(*q.answer) : "none") +
                       " at " + std::to_string(q.line) + "\n";
      }
    }
    out.summary += std::to_string(r.inexact.size()) + " inexact\n";
    for (const char* name : {"RESULT", "LEVEL", "F", "V"}) {
      const preprocessor::Macro* m = pp.macros().find(name);
      out.summary +=
          std::string(name) + "=" +
          (m ? preprocessor::spell(m->body.data(), m->body.data() + m->body.size()) : "-") + "\n";
    }
    for (HeaderCache::Unsaved& u : cache.take_unsaved()) {
      std::string bytes = encode_header_traces(u.traces, u.context, u.file, cache);
      if (!bytes.empty()) backing.records[MapBacking::name(u.context, u.file)] = bytes;
    }
    return out;
  }

  // Each TU evaluated plainly and from the records; the two must agree.
  std::vector<Run> run_all(
      const std::vector<std::pair<std::string, std::vector<std::string>>>& tus) {
    std::vector<Run> out;
    for (const auto& [main, defines] : tus) {
      Run plain = run(main, defines, false);
      Run kept = run(main, defines, true);
      EXPECT_EQ(kept.summary, plain.summary) << "main.cc:\n" << main;
      out.push_back(kept);
    }
    return out;
  }

  MemoryHost host;
  MapBacking backing;
};

TEST_F(HeaderRecordsTest, ARecordIsReplayedOnlyForTheMacroStateItRead) {
  host.add("inc/h.h",
           "#ifndef H_H\n#define H_H\n#ifdef FAST\n#include <fast.h>\n#define RESULT fast\n"
           "#else\n#include <slow.h>\n#define RESULT slow\n#endif\n"
           "#define F(a, ...) a + __VA_ARGS__ # a\n#endif\n");
  host.add("inc/fast.h", "#define V 1\n");
  host.add("inc/slow.h", "#define V \"two\" 'c' 3.0e+1 <<= x\n");
  const std::string main = "#include <h.h>\n";
  std::vector<Run> runs = run_all({{main, {"FAST"}}, {main, {}}, {main, {"FAST"}}, {main, {}}});
  EXPECT_NE(runs[0].summary, runs[1].summary);
  EXPECT_EQ(runs[1].replayed, 0u);  // FAST is an input: the first record does not apply
  EXPECT_GT(runs[2].replayed, 0u);
  EXPECT_EQ(runs[2].evaluated, 0u);
  EXPECT_EQ(runs[3].evaluated, 0u);
  EXPECT_GT(backing.loaded, 0);
}

TEST_F(HeaderRecordsTest, AChangedHeaderIsEvaluatedAgain) {
  host.add("inc/h.h", "#include <a.h>\n#define RESULT one\n");
  host.add("inc/a.h", "");
  host.add("inc/b.h", "");
  const std::string main = "#include <h.h>\n";
  run_all({{main, {}}});
  host.add("inc/h.h", "#include <b.h>\n#define RESULT two\n");
  Run after = run_all({{main, {}}})[0];
  EXPECT_NE(after.summary.find("RESULT=two"), std::string::npos) << after.summary;
  EXPECT_GT(after.evaluated, 0u);
}

TEST_F(HeaderRecordsTest, AnIncludeFoundElsewhereIsEvaluatedAgain) {
  host.add("inc/h.h", "#include \"cfg.h\"\n#include <w.h>\n");
  host.add("inc/cfg.h", "#define RESULT inc\n");
  host.add("inc/w.h", "#define V 1\n");
  const std::string main = "#include <h.h>\n";
  run_all({{main, {}}, {main, {}}});
  // A nested header changes: its own record no longer applies, the
  // includer's still does, and the result is the new one.
  host.add("inc/w.h", "#define V 2\n");
  Run after = run_all({{main, {}}})[0];
  EXPECT_NE(after.summary.find("V=2"), std::string::npos) << after.summary;
}

TEST_F(HeaderRecordsTest, PragmaOnceDepthAndBuiltinsAreInputs) {
  host.add("inc/p.h", "#pragma once\n#define V 1\n");
  host.add("inc/h.h",
           "#include <p.h>\n#ifdef V\n#define RESULT p\n#endif\n"
           "#if __INCLUDE_LEVEL__ == 1\n#define LEVEL one\n#else\n#define LEVEL deeper\n#endif\n"
           "#if __has_builtin(__builtin_foo)\n#define F foo\n#endif\n");
  host.add("inc/w.h", "#include <h.h>\n");
  host.answers["__has_builtin(__builtin_foo)"] = 1;
  std::vector<Run> runs = run_all({{"#include <h.h>\n", {}},
                                   {"#include <p.h>\n#undef V\n#include <h.h>\n", {}},
                                   {"#include <w.h>\n", {}},
                                   {"#include <h.h>\n", {}},
                                   {"#include <p.h>\n#undef V\n#include <h.h>\n", {}},
                                   {"#include <w.h>\n", {}}});
  EXPECT_NE(runs[0].summary, runs[1].summary);
  EXPECT_NE(runs[0].summary, runs[2].summary);
  EXPECT_GT(runs[3].replayed, 0u);
  EXPECT_GT(runs[4].replayed, 0u);
  EXPECT_GT(runs[5].replayed, 0u);
  host.answers["__has_builtin(__builtin_foo)"] = 0;
  Run other = run_all({{"#include <h.h>\n", {}}})[0];
  EXPECT_NE(other.summary, runs[0].summary);
}

TEST_F(HeaderRecordsTest, HasIncludeAnswersAreAskedAgain) {
  host.add("inc/h.h",
           "#if __has_include(<x.h>)\n#include <x.h>\n#define RESULT yes\n#else\n"
           "#define RESULT no\n#endif\n");
  const std::string main = "#include <h.h>\n";
  run_all({{main, {}}, {main, {}}});
  host.add("inc/x.h", "");
  Run after = run_all({{main, {}}})[0];
  EXPECT_NE(after.summary.find("RESULT=yes"), std::string::npos) << after.summary;
}

// A record read under another key, or damaged anywhere, reads as nothing.
TEST_F(HeaderRecordsTest, DamagedOrMisplacedRecordsReadAsNothing) {
  host.add("inc/h.h", "#if MODE\n#include <a.h>\n#endif\n#define F(x) x##x\n");
  host.add("inc/a.h", "#pragma once\n");
  run_all({{"#include <h.h>\n", {"MODE=1"}}});
  ASSERT_FALSE(backing.records.empty());
  HeaderCache cache;
  cache.set_backing(&backing);  // where a nested trace's record is found
  for (const auto& [name, bytes] : backing.records) {
    const auto& [context, file] = name;
    EXPECT_FALSE(decode_header_traces(bytes, context, file, cache).empty());
    EXPECT_TRUE(decode_header_traces(bytes, context + "x", file, cache).empty());
    EXPECT_TRUE(decode_header_traces(bytes, context, file + "x", cache).empty());
    for (size_t n = 0; n < bytes.size(); ++n) {
      EXPECT_TRUE(decode_header_traces(bytes.substr(0, n), context, file, cache).empty()) << n;
    }
    // Read back (nested traces found in their own records) and written
    // again: the same bytes.
    std::vector<std::shared_ptr<const HeaderTrace>> traces =
        decode_header_traces(bytes, context, file, cache);
    EXPECT_EQ(encode_header_traces(traces, context, file, cache), bytes);
    // h.h's include of a.h names a.h's own trace, found in a.h's record.
    if (file.rfind("inc/h.h", 0) == 0) {
      ASSERT_FALSE(traces.empty());
      bool nested = false;
      for (const preprocessor::HeaderOp& op : traces[0]->ops) nested = nested || op.nested;
      EXPECT_TRUE(nested);
    }
  }
}

}  // namespace
}  // namespace lexpack::closure
