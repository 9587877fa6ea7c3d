// The self-check of a miss: a depfile that names only closure files leaves
// nothing to keep; a file the scan did not reach is kept with its content and
// the candidates around it (and counted as a disagreement unless a computed
// include or a __has_include question explains it); a depfile that cannot be
// read or names a vanished file makes the result unsure.
#include "launcher/self_check.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "lexer/kernel.h"
#include "tests/lexer/scan_test_util.h"
#include "tests/support/test_dir.h"

namespace lexpack::launcher {
namespace {

using lexer::testing::kernel;

// m.cpp includes "a.h"; the search list is first/ then second/.
struct Project {
  lexpack::testing::TestDir d;
  compiler::SearchList list;
  compiler::CompileCommand cmd;
  closure::Closure closure;
  explicit Project(std::string_view source = "#include \"a.h\"\n") {
    d.write("m.cpp", source);
    d.write("a.h", "int a;\n");
    d.write("first/.keep", "");
    d.write("second/extra.h", "int extra;\n");
    list.bracket_dirs = {d.at("first"), d.at("second")};
    cmd = compiler::parse_compile_command({"g++", "-c", d.at("m.cpp"), "-o", d.at("m.o")});
    closure::FileStates files(nullptr, kernel());
    auto c = closure::compute_closure(&files, cmd, list, compiler::CompilerKind::kGcc, d.path());
    EXPECT_TRUE(c.ok()) << c.message();
    closure = std::move(c.value());
  }
  SelfCheckResult check(const std::string& depfile) {
    closure::FileStates files(nullptr, kernel());
    return self_check(depfile, closure, list, &files, d.path());
  }
  std::string depfile(const std::vector<std::string>& deps) const {
    std::string text = d.at("m.o") + ":";
    for (const std::string& dep : deps) text += " \\\n  " + dep;
    return text + "\n";
  }
  std::string check_payload_now(const ActionPayload& p) {
    closure::FileStates files(nullptr, kernel());
    return launcher::check_payload(p, &files, d.path());
  }
};

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(SelfCheck, AgreeingDepfileKeepsNothing) {
  Project p;
  SelfCheckResult r = p.check(p.depfile({p.d.at("m.cpp"), p.d.at("a.h")}));
  EXPECT_EQ(r.unsure, "");
  EXPECT_TRUE(r.disagreements.empty());
  EXPECT_TRUE(r.payload.extra_files.empty());
  EXPECT_TRUE(r.payload.present_probes.empty());
}

// Each file the depfile names comes back with the signature found, as the
// depfile spells it: the checks after the compile take it from there.
TEST(SelfCheck, NamesEachDepfileFileWithItsSignature) {
  Project p;
  SelfCheckResult r = p.check(p.depfile({p.d.at("m.cpp"), p.d.at("a.h")}));
  ASSERT_EQ(r.named.size(), 2u);
  for (const auto& [path, sig] : r.named) {
    base::StatSignature now;
    ASSERT_TRUE(base::stat_file(path, &now)) << path;
    EXPECT_EQ(sig, now) << path;
  }
  EXPECT_EQ(r.named[1].first, p.d.at("a.h"));
}

TEST(SelfCheck, FileTheScanMissedIsKeptWithItsCandidates) {
  Project p;
  const std::string extra = p.d.at("second/extra.h");
  SelfCheckResult r = p.check(p.depfile({p.d.at("m.cpp"), p.d.at("a.h"), extra}));
  EXPECT_EQ(r.unsure, "");
  ASSERT_EQ(r.payload.extra_files.size(), 1u);
  EXPECT_EQ(r.payload.extra_files[0].path, extra);
  EXPECT_TRUE(r.payload.extra_files[0].content == cache::hash_bytes("int extra;\n"));
  EXPECT_EQ(r.disagreements, std::vector<std::string>{extra});
  // The same name in the search directory before it was missing: it must stay so.
  EXPECT_FALSE(contains(r.payload.present_probes, p.d.at("first/extra.h")));
  EXPECT_EQ(p.check_payload_now(r.payload), "");
  p.d.write("first/extra.h", "int shadow;\n");
  EXPECT_EQ(p.check_payload_now(r.payload), "appeared: " + p.d.at("first/extra.h"));
  p.d.remove("first/extra.h");
  p.d.write("second/extra.h", "int extra2;\n");
  EXPECT_EQ(p.check_payload_now(r.payload), "changed: " + extra);
}

TEST(SelfCheck, PresentCandidateMustStayPresent) {
  Project p;
  p.d.write("first/extra.h", "int first;\n");  // exists, but the compiler read second/'s
  const std::string extra = p.d.at("second/extra.h");
  SelfCheckResult r = p.check(p.depfile({p.d.at("m.cpp"), extra}));
  ASSERT_EQ(r.unsure, "");
  EXPECT_TRUE(contains(r.payload.present_probes, p.d.at("first/extra.h")));
  EXPECT_EQ(p.check_payload_now(r.payload), "");
  p.d.remove("first/extra.h");
  EXPECT_EQ(p.check_payload_now(r.payload), "missing: " + p.d.at("first/extra.h"));
}

TEST(SelfCheck, ComputedIncludeExplainsTheExtraFile) {
  Project p("#define H \"a.h\"\n#include H\n");
  ASSERT_TRUE(p.closure.has_computed_include);
  SelfCheckResult r = p.check(p.depfile({p.d.at("m.cpp"), p.d.at("a.h")}));
  EXPECT_EQ(r.unsure, "");
  EXPECT_TRUE(r.disagreements.empty());
  ASSERT_EQ(r.payload.extra_files.size(), 1u);
  EXPECT_EQ(r.payload.extra_files[0].path, p.d.at("a.h"));
}

TEST(SelfCheck, UnreadableOrVanishedDepfileIsUnsure) {
  Project p;
  EXPECT_NE(p.check("no colon here\n").unsure, "");
  SelfCheckResult r = p.check(p.depfile({p.d.at("m.cpp"), p.d.at("gone.h")}));
  EXPECT_EQ(r.unsure, "depfile names a file that is gone: " + p.d.at("gone.h"));
}

}  // namespace
}  // namespace lexpack::launcher
