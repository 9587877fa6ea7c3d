#include "preprocessor/preprocessor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "lexer/scanner.h"
#include "memory_host.h"

namespace lexpack::preprocessor {
namespace {

using testing::MemoryHost;

class Pp : public ::testing::Test {
 protected:
  // Runs main.cc and returns the entered files (in order, once each).
  std::string run(const std::string& main, std::vector<std::string> defines = {}) {
    host.add("main.cc", main);
    Preprocessor pp(host, options);
    std::string err;
    if (!predefined.empty()) {
      EXPECT_TRUE(pp.predefine(predefined, &err)) << err;
    }
    for (const std::string& d : defines) EXPECT_TRUE(pp.define(d, &err)) << err;
    pp.run_file(host.handle("main.cc"), EntryKind::kMain);
    result = pp.take_result();
    std::string out;
    for (FileHandle h : result.unique_files()) {
      if (!out.empty()) out += ' ';
      out += host.path(h);
    }
    return out;
  }

  MemoryHost host;
  Options options = Options::gcc();
  std::string predefined = "#define __cplusplus 201703L\n#define __GNUC__ 12\n";
  Result result;
};

TEST_F(Pp, NestedConditionals) {
  host.add("inc/a.h", "");
  host.add("inc/b.h", "");
  host.add("inc/c.h", "");
  EXPECT_EQ(run("#if 1\n#if 0\n#include <a.h>\n#else\n#include <b.h>\n#endif\n#elif 1\n"
                "#include <c.h>\n#endif\n"),
            "main.cc inc/b.h");
  EXPECT_TRUE(result.exact());
}

// Definitions parsed once per file (FileContent::defines, as a scan shares
// them across TUs) decide exactly as definitions parsed on each entry.
TEST_F(Pp, DefinitionsParsedOnceDecideTheSame) {
  host.add("inc/cfg_a.h", "");
  host.add("inc/cfg_b.h", "");
  host.add("inc/cfg.h",
           "#define PICK(x) <cfg_##x.h>\n#define CFG PICK(b)\n#define BAD(\n#define E\n");
  const std::string main = "#include <cfg.h>\n#include CFG\n#ifdef E\n#include <cfg_a.h>\n#endif\n";
  const std::string each = run(main);
  const Result first = result;
  host.parse_defines_once = true;
  EXPECT_EQ(run(main), each);
  EXPECT_EQ(each, "main.cc inc/cfg.h inc/cfg_b.h inc/cfg_a.h");
  EXPECT_EQ(result.reason(), first.reason());
  EXPECT_FALSE(result.exact());  // the #define that does not parse
}

// A shared file's definitions are parsed when first asked for, once
// whichever thread asks: every TU gets the same definition object.
TEST(ParsedDefinesTest, EachDefinitionIsParsedOnceWhenAskedFor) {
  const std::string bytes = "#define A 1\n#define BAD(\n#if X\n#define B(x) x\n#endif\n";
  const lexer::ScanResult scan = lexer::scan(bytes, lexer::scalar_kernel());
  ASSERT_EQ(scan.directives.size(), 5u);
  ParsedDefines defines(bytes, scan);
  ASSERT_EQ(defines.size(), 5u);
  std::string err;
  std::shared_ptr<const Macro> b1, b2;
  std::thread other([&] {
    std::string e;
    b2 = defines.get(3, &e);
  });
  b1 = defines.get(3, &err);
  other.join();
  ASSERT_NE(b1, nullptr) << err;
  EXPECT_EQ(b1, b2);
  EXPECT_EQ(b1->name, "B");
  EXPECT_TRUE(b1->function_like);
  EXPECT_EQ(defines.get(0, &err), defines.get(0, &err));
  EXPECT_EQ(defines.get(1, &err), nullptr);  // does not parse
  EXPECT_FALSE(err.empty());
  err.clear();
  EXPECT_EQ(defines.get(2, &err), nullptr);  // #if
  EXPECT_FALSE(err.empty());
}

// Many threads asking for the same definitions at once (the first ones of
// each while another parses it): one object each, and a definition that does
// not parse gives every thread its error.
TEST(ParsedDefinesTest, ThreadsAskingAtOnceShareOneParse) {
  std::string bytes;
  constexpr size_t kDefines = 400;
  for (size_t i = 0; i < kDefines; ++i) {
    bytes += i % 7 == 3
                 ? "#define BAD" + std::to_string(i) + "(\n"
                 : "#define M" + std::to_string(i) + "(a, b) a ## b + " + std::to_string(i) + "\n";
  }
  const lexer::ScanResult scan = lexer::scan(bytes, lexer::scalar_kernel());
  ASSERT_EQ(scan.directives.size(), kDefines);
  ParsedDefines defines(bytes, scan);
  constexpr size_t kThreads = 8;
  std::vector<std::vector<std::shared_ptr<const Macro>>> got(kThreads);
  std::vector<std::vector<std::string>> errors(kThreads);
  std::atomic<size_t> ready{0};
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ++ready;
      while (ready.load() < kThreads) std::this_thread::yield();
      for (size_t i = 0; i < kDefines; ++i) {
        std::string err;
        got[t].push_back(defines.get(i, &err));
        errors[t].push_back(err);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < kDefines; ++i) {
    for (size_t t = 0; t < kThreads; ++t) {
      EXPECT_EQ(got[t][i], got[0][i]) << i;
      EXPECT_EQ(errors[t][i], errors[0][i]) << i;
    }
    if (i % 7 == 3) {
      EXPECT_EQ(got[0][i], nullptr) << i;
      EXPECT_FALSE(errors[0][i].empty()) << i;
    } else {
      ASSERT_NE(got[0][i], nullptr) << i << ": " << errors[0][i];
      EXPECT_EQ(got[0][i]->name, "M" + std::to_string(i));
    }
  }
}

TEST_F(Pp, ElifAfterTakenBranchIsNotEvaluated) {
  host.add("inc/a.h", "");
  host.add("inc/b.h", "");
  // A taken branch stops the group: the broken #elif is never evaluated.
  EXPECT_EQ(
      run("#if 1\n#include <a.h>\n#elif 1/0\n#include <b.h>\n#else\n#include <b.h>\n#endif\n"),
      "main.cc inc/a.h");
  EXPECT_TRUE(result.exact()) << result.reason();
  EXPECT_EQ(run("#ifdef NOPE\n#include <a.h>\n#elifndef NOPE\n#include <b.h>\n#endif\n"),
            "main.cc inc/b.h");
}

TEST_F(Pp, DefineUndefAndCommandMacros) {
  host.add("inc/v2.h", "");
  host.add("inc/v1.h", "");
  host.add("inc/f.h", "");
  const std::string src =
      "#if VERSION >= 2 && FEATURE(3) == 6\n#include <v2.h>\n#else\n#include <v1.h>\n#endif\n"
      "#undef VERSION\n#ifndef VERSION\n#include <f.h>\n#endif\n";
  EXPECT_EQ(run(src, {"VERSION=2", "FEATURE(x)=x*2"}), "main.cc inc/v2.h inc/f.h");
  EXPECT_EQ(run(src, {"VERSION=1", "FEATURE(x)=x*2"}), "main.cc inc/v1.h inc/f.h");
  EXPECT_TRUE(result.exact());
}

TEST_F(Pp, PredefinedMacrosDecide) {
  host.add("inc/gnu.h", "");
  host.add("inc/other.h", "");
  EXPECT_EQ(run("#if defined(__GNUC__) && __GNUC__ >= 10 && __cplusplus >= 201703L\n"
                "#include <gnu.h>\n#else\n#include <other.h>\n#endif\n"),
            "main.cc inc/gnu.h");
}

TEST_F(Pp, DefinedProducedByExpansion) {
  host.add("inc/yes.h", "");
  host.add("inc/no.h", "");
  EXPECT_EQ(run("#define HAVE_X defined(X)\n#define X\n#if HAVE_X\n#include <yes.h>\n#else\n"
                "#include <no.h>\n#endif\n"),
            "main.cc inc/yes.h");
  EXPECT_TRUE(result.exact());
}

TEST_F(Pp, RecursiveMacrosDoNotExpandForever) {
  host.add("inc/a.h", "");
  host.add("inc/b.h", "");
  EXPECT_EQ(run("#define A B + 1\n#define B A\n#if A\n#include <a.h>\n#else\n#include <b.h>\n"
                "#endif\n"),
            "main.cc inc/a.h");  // A -> B + 1 -> A + 1 (A painted) -> 0 + 1
}

TEST_F(Pp, ComputedIncludes) {
  host.add("inc/cfg.h", "");
  host.add("inc/sub/cfg_impl.h", "");
  host.add("local.h", "");
  EXPECT_EQ(run("#define CFG <cfg.h>\n#include CFG\n"
                "#define CAT(a, b) a ## b\n#define STR(x) #x\n#define XSTR(x) STR(x)\n"
                "#define IMPL(n) <sub/CAT(n, _impl).h>\n#include IMPL(cfg)\n"
                "#include XSTR(local.h)\n"),
            "main.cc inc/cfg.h inc/sub/cfg_impl.h local.h");
  EXPECT_TRUE(result.exact()) << result.reason();
  ASSERT_EQ(result.includes.size(), 3u);
  EXPECT_TRUE(result.includes[0].computed);
  EXPECT_TRUE(result.includes[0].angled);
  EXPECT_FALSE(result.includes[2].angled);
}

TEST_F(Pp, ComputedIncludeNotExpanded) {
  EXPECT_EQ(run("#include NOT_A_MACRO\n"), "main.cc");
  EXPECT_FALSE(result.exact());
  EXPECT_TRUE(result.needs_compiler());
  EXPECT_NE(result.reason().find("computed include not expanded"), std::string::npos);
}

TEST_F(Pp, HasIncludeEveryWay) {
  host.add("inc/gen.h", "");
  host.add("inc/yes1.h", "");
  host.add("inc/yes2.h", "");
  host.add("inc/yes3.h", "");
  host.add("inc/yes4.h", "");
  host.add("inc/no.h", "");
  const std::string src =
      "#define HASINC __has_include\n#define HASINC2 HASINC\n"
      "#define X_HAS_INCLUDE(x) __has_include(x)\n#define CAT(a, b) a ## b\n"
      "#if HASINC(<gen.h>)\n#include <yes1.h>\n#else\n#include <no.h>\n#endif\n"
      "#if HASINC2(\"gen.h\")\n#include <yes2.h>\n#else\n#include <no.h>\n#endif\n"
      "#if X_HAS_INCLUDE(<gen.h>)\n#include <yes3.h>\n#else\n#include <no.h>\n#endif\n"
      "#if CAT(__has_, include)(<gen.h>) && !__has_include(<absent.h>)\n#include <yes4.h>\n"
      "#else\n#include <no.h>\n#endif\n";
  EXPECT_EQ(run(src), "main.cc inc/yes1.h inc/yes2.h inc/yes3.h inc/yes4.h");
  EXPECT_TRUE(result.exact()) << result.reason();
  ASSERT_EQ(result.has_includes.size(), 5u);
  EXPECT_EQ(result.has_includes[4].name, "absent.h");
  EXPECT_FALSE(result.has_includes[4].answer);
}

TEST_F(Pp, HasIncludeNextSearchesAfterTheIncluder) {
  MemoryHost two({"a", "b"});
  two.add("a/w.h", "#if __has_include_next(<w.h>)\n#include_next <w.h>\n#endif\n");
  two.add("b/w.h", "");
  two.add("main.cc", "#include <w.h>\n");
  Preprocessor pp(two, Options::gcc());
  pp.run_file(two.handle("main.cc"), EntryKind::kMain);
  const Result& r = pp.result();
  ASSERT_EQ(r.unique_files().size(), 3u);
  EXPECT_EQ(two.path(r.unique_files()[2]), "b/w.h");
  EXPECT_TRUE(r.has_includes.at(0).next);
  EXPECT_TRUE(r.exact());
}

TEST_F(Pp, IncludeGuardsAndPragmaOnce) {
  host.add("inc/g.h", "#ifndef G_H\n#define G_H\n#include <x.h>\n#endif\n");
  host.add("inc/o.h", "#pragma once\n#include <y.h>\n");
  host.add("inc/x.h", "");
  host.add("inc/y.h", "");
  EXPECT_EQ(run("#include <g.h>\n#include <o.h>\n#include <g.h>\n#include <o.h>\n"),
            "main.cc inc/g.h inc/x.h inc/o.h inc/y.h");
  int processed_g = 0;
  for (const FileEntry& e : result.files) {
    if (host.path(e.file) == "inc/g.h" && e.processed) ++processed_g;
  }
  EXPECT_EQ(processed_g, 1);
  EXPECT_EQ(result.files.size(), 7u);  // main.cc, then each include
}

TEST_F(Pp, UnknownBuiltinTakesEveryBranch) {
  host.add("inc/a.h", "");
  host.add("inc/b.h", "");
  host.add("inc/c.h", "");
  const std::string src =
      "#if __has_builtin(__builtin_foo)\n#include <a.h>\n#elif 0\n#include <c.h>\n#else\n"
      "#include <b.h>\n#endif\n";
  EXPECT_EQ(run(src), "main.cc inc/a.h inc/b.h");
  EXPECT_FALSE(result.exact());
  EXPECT_NE(result.reason().find("unknown __has_builtin(__builtin_foo)"), std::string::npos);
  host.answers["__has_builtin(__builtin_foo)"] = 0;
  EXPECT_EQ(run(src), "main.cc inc/b.h");
  EXPECT_TRUE(result.exact());
  // Not needed when the answer cannot matter.
  const std::string feature =
      "#if defined(__clang__) && __has_feature(x)\n#include <a.h>\n#endif\n";
  options = Options::clang();
  EXPECT_EQ(run(feature), "main.cc");
  EXPECT_TRUE(result.exact());
  // GCC 12 has no __has_feature: `0(x)` is a syntax error there.
  options = Options::gcc();
  EXPECT_EQ(run(feature), "main.cc inc/a.h");
  EXPECT_EQ(result.inexact.at(0).kind, Inexact::kConditionError);
}

// Which query operators exist depends on the language, as measured with GCC
// 12 and clang 14: `defined(op)` answers that, and the dialect is told by
// the predefined macros.
TEST_F(Pp, QueryOperatorsOfEachLanguage) {
  using D = Options::Dialect;
  auto has = [](const Options& o, const char* name) { return o.builtins.count(name) == 1; };
  EXPECT_TRUE(has(Options::gcc(D::kC), "__has_attribute"));
  EXPECT_TRUE(has(Options::gcc(D::kC), "__has_cpp_attribute"));
  EXPECT_TRUE(has(Options::gcc(D::kCxx), "__has_c_attribute"));
  EXPECT_FALSE(has(Options::gcc(D::kAssembly), "__has_attribute"));
  EXPECT_FALSE(has(Options::gcc(D::kAssembly), "__has_builtin"));
  EXPECT_TRUE(has(Options::gcc(D::kAssembly), "__has_include"));
  EXPECT_TRUE(has(Options::clang(D::kCxx), "__has_cpp_attribute"));
  EXPECT_FALSE(has(Options::clang(D::kCxx), "__has_c_attribute"));
  EXPECT_TRUE(has(Options::clang(D::kC), "__has_c_attribute"));
  EXPECT_FALSE(has(Options::clang(D::kC), "__has_cpp_attribute"));
  EXPECT_TRUE(has(Options::clang(D::kAssembly), "__has_builtin"));
  const std::string gcc_asm = "#define __GNUC__ 12\n#define __ASSEMBLER__ 1\n";
  EXPECT_FALSE(has(Options::for_predefined(gcc_asm), "__has_attribute"));
  EXPECT_TRUE(has(Options::for_predefined("#define __GNUC__ 12\n"), "__has_attribute"));
  const std::string clang_c = "#define __clang__ 1\n#define __STDC__ 1\n";
  EXPECT_TRUE(has(Options::for_predefined(clang_c), "__has_c_attribute"));
  EXPECT_TRUE(has(Options::for_predefined(clang_c + "#define __cplusplus 201703L\n"),
                  "__has_cpp_attribute"));
  // In assembly gcc has no __has_attribute: the branch for its absence is
  // taken, and no compiler question is needed.
  host.add("inc/a.h", "");
  host.add("inc/b.h", "");
  options = Options::gcc(D::kAssembly);
  EXPECT_EQ(run("#if defined(__has_attribute)\n#include <a.h>\n#else\n#include <b.h>\n#endif\n"),
            "main.cc inc/b.h");
  EXPECT_TRUE(result.exact());
}

TEST_F(Pp, IfErrorTakesEveryBranch) {
  host.add("inc/a.h", "");
  host.add("inc/b.h", "");
  EXPECT_EQ(run("#if 1 / 0\n#include <a.h>\n#else\n#include <b.h>\n#endif\n"),
            "main.cc inc/a.h inc/b.h");
  EXPECT_FALSE(result.exact());
  EXPECT_EQ(result.inexact[0].kind, Inexact::kConditionError);
  EXPECT_NE(result.reason().find("main.cc:1:"), std::string::npos);
}

TEST_F(Pp, MacrosOfFallbackBranchesAreUncertain) {
  host.add("inc/one.h", "");
  host.add("inc/two.h", "");
  // Which MODE holds depends on the unknown builtin; both headers must count.
  const std::string src =
      "#if __has_builtin(x)\n#define MODE 1\n#else\n#define MODE 2\n#endif\n"
      "#if MODE == 1\n#include <one.h>\n#else\n#include <two.h>\n#endif\n";
  EXPECT_EQ(run(src), "main.cc inc/one.h inc/two.h");
  // A certain redefinition makes it certain again.
  EXPECT_EQ(run(src + "#undef MODE\n#define MODE 3\n#if MODE == 3\n#endif\n"),
            "main.cc inc/one.h inc/two.h");
  EXPECT_EQ(result.inexact.size(), 2u);
}

TEST_F(Pp, GuardDefinedInFallbackDoesNotSkip) {
  host.add("inc/g.h", "#ifndef G_H\n#define G_H\n#if FOO\n#include <a.h>\n#endif\n#endif\n");
  host.add("inc/a.h", "");
  // g.h first read in a fallback branch while FOO is 0; then for certain with FOO 1.
  EXPECT_EQ(run("#if __has_builtin(x)\n#include <g.h>\n#endif\n#define FOO 1\n#include <g.h>\n"),
            "main.cc inc/g.h inc/a.h");
  host.add("inc/o.h", "#pragma once\n#if FOO\n#include <a.h>\n#endif\n");
  EXPECT_EQ(run("#if __has_builtin(x)\n#include <o.h>\n#endif\n#define FOO 1\n#include <o.h>\n"),
            "main.cc inc/o.h inc/a.h");
}

TEST_F(Pp, ModuleLinesInTakenBranchesOnly) {
  EXPECT_EQ(run("export module m;\n#if 0\nimport a;\n#else\nimport b;\n#endif\n"), "main.cc");
  ASSERT_EQ(result.modules.size(), 2u);
  EXPECT_TRUE(result.modules[0].declaration);
  EXPECT_EQ(result.modules[1].name, "b");
}

TEST_F(Pp, ForcedIncludesAndImacrosShareTheMacroTable) {
  host.add("cfg.h", "#define WANT_A 1\n");
  host.add("inc/a.h", "");
  host.add("main.cc", "#if WANT_A\n#include <a.h>\n#endif\n");
  Preprocessor pp(host, Options::gcc());
  pp.run_file(host.handle("cfg.h"), EntryKind::kImacros);
  pp.run_file(host.handle("main.cc"), EntryKind::kMain);
  ASSERT_EQ(pp.result().unique_files().size(), 3u);
  EXPECT_EQ(pp.result().files[0].how, EntryKind::kImacros);
}

TEST_F(Pp, DefineWithSplicesAndComments) {
  host.add("inc/a.h", "");
  EXPECT_EQ(
      run("#define F(x) /* c */ x \\\n  + 1 // tail\n#if F(1) == 2\n#include <a.h>\n#endif\n"),
      "main.cc inc/a.h");
}

TEST_F(Pp, MissingIncludeIsReported) {
  EXPECT_EQ(run("#include <absent.h>\n"), "main.cc");
  EXPECT_FALSE(result.exact());
  EXPECT_EQ(result.inexact[0].kind, Inexact::kMissingInclude);
}

}  // namespace
}  // namespace lexpack::preprocessor
