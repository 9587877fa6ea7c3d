// Files named by computed includes join the closure when the evaluation is
// exact: walked like direct includes (their own includes too), with content
// in the key and their search candidates among the failed probes. An
// inexact evaluation leaves them to the depfile, as before.
#include <gtest/gtest.h>

#include <algorithm>

#include "closure/action_key.h"
#include "closure/dependency_closure.h"
#include "closure/file_state.h"
#include "lexer/kernel.h"
#include "tests/lexer/scan_test_util.h"
#include "tests/support/test_dir.h"

namespace lexpack::closure {
namespace {

using lexer::testing::kernel;

// Stands for the preprocessor: asks the one computed include of m.cpp
// (`#include PICK`, PICK being <impl/a.h>) and says whether it was exact.
class FakeEvaluator : public PresenceEvaluator {
 public:
  explicit FakeEvaluator(bool exact) : exact_(exact) {}
  std::string evaluate(const Resolution& source, const std::vector<Resolution>&,
                       const Ask& ask) override {
    ++runs;
    computed_.clear();
    Resolution r = ask("impl/a.h", true, false, source);
    if (r.found) computed_.push_back(r);
    return exact_ ? "" : "a condition the evaluator cannot know";
  }
  std::vector<Resolution> computed_includes() const override { return computed_; }
  int runs = 0;

 private:
  bool exact_;
  std::vector<Resolution> computed_;
};

struct Project {
  lexpack::testing::TestDir d;
  compiler::SearchList list;
  compiler::CompileCommand cmd;
  Project() {
    d.write("first/.keep", "");
    d.write("inc/sel.h", "#define PICK <impl/a.h>\n");
    d.write("inc/impl/a.h", "#include <impl/nested.h>\n#define A 1\n");
    d.write("inc/impl/nested.h", "#define N 1\n");
    d.write("m.cpp", "#include <sel.h>\n#include PICK\nint v() { return A + N; }\n");
    list.bracket_dirs = {d.at("first"), d.at("inc")};
    cmd.source = d.at("m.cpp");
  }
  Closure closure(PresenceEvaluator* presence) {
    FileStates files(nullptr, kernel());
    auto c = compute_closure(&files, cmd, list, compiler::CompilerKind::kGcc, d.path(), presence);
    EXPECT_TRUE(c.ok()) << c.message();
    return c.ok() ? std::move(c.value()) : Closure();
  }
};

const ClosureFile* find(const Closure& c, const std::string& path) {
  for (const ClosureFile& f : c.files) {
    if (f.path == path) return &f;
  }
  return nullptr;
}

bool has_probe(const Closure& c, const std::string& path) {
  return std::find(c.failed_probes.begin(), c.failed_probes.end(), path) != c.failed_probes.end();
}

TEST(ComputedIncludeClosure, ExactEvaluationWalksTheNamedFiles) {
  Project p;
  FakeEvaluator exact(true);
  Closure c = p.closure(&exact);
  EXPECT_EQ(exact.runs, 1);
  EXPECT_TRUE(c.computed_evaluated);
  EXPECT_FALSE(c.has_computed_include);
  EXPECT_TRUE(c.unsure.empty()) << c.unsure;
  for (const char* name : {"inc/impl/a.h", "inc/impl/nested.h"}) {
    const ClosureFile* f = find(c, p.d.at(name));
    ASSERT_NE(f, nullptr) << name;
    EXPECT_FALSE(f->presence_only) << name;
    EXPECT_FALSE(f->content == cache::Hash128{}) << name;
  }
  // The computed include's candidate before the one found, and that of the
  // include in the file it named: both under first/impl, which is missing,
  // so named once by it.
  EXPECT_TRUE(has_probe(c, p.d.at("first/impl") + "/"));
  EXPECT_FALSE(has_probe(c, p.d.at("first/impl/a.h")));
  EXPECT_FALSE(has_probe(c, p.d.at("first/impl/nested.h")));
}

TEST(ComputedIncludeClosure, EditingAFileReachedThroughItChangesTheKey) {
  Project p;
  FakeEvaluator exact(true);
  compiler::CompilerIdentity identity;
  cache::Hash128 before = action_key(identity, p.cmd, p.d.path(), p.closure(&exact));
  p.d.write("inc/impl/nested.h", "#define N 2\n");
  EXPECT_FALSE(action_key(identity, p.cmd, p.d.path(), p.closure(&exact)) == before);
}

TEST(ComputedIncludeClosure, InexactEvaluationLeavesThemToTheDepfile) {
  Project p;
  FakeEvaluator inexact(false);
  Closure c = p.closure(&inexact);
  EXPECT_EQ(inexact.runs, 1);
  EXPECT_FALSE(c.computed_evaluated);
  EXPECT_TRUE(c.has_computed_include);
  EXPECT_TRUE(c.unsure.empty()) << c.unsure;  // cached, with the self-check's payload
  EXPECT_EQ(find(c, p.d.at("inc/impl/nested.h")), nullptr);
  const ClosureFile* a = find(c, p.d.at("inc/impl/a.h"));
  if (a) {
    EXPECT_TRUE(a->presence_only);
  }

  Closure plain = p.closure(nullptr);
  EXPECT_TRUE(plain.has_computed_include);
  EXPECT_EQ(find(plain, p.d.at("inc/impl/a.h")), nullptr);
}

TEST(ComputedIncludeClosure, NoComputedIncludeNoEvaluation) {
  Project p;
  p.d.write("m.cpp", "#include <sel.h>\n#include <impl/a.h>\n");
  FakeEvaluator exact(true);
  Closure c = p.closure(&exact);
  EXPECT_EQ(exact.runs, 0);
  EXPECT_FALSE(c.has_computed_include);
  EXPECT_FALSE(c.computed_evaluated);
  EXPECT_NE(find(c, p.d.at("inc/impl/nested.h")), nullptr);
}

}  // namespace
}  // namespace lexpack::closure
