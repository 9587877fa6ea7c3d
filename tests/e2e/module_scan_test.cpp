// Tests of `lexpack scan --format p1689`: the module a TU provides and what it
// imports, from the lexer's module directives, on a small module-using compile
// database. Only the scanner's output is checked; nothing is compiled.
#include <gtest/gtest.h>

#include "base/process.h"
#include "lexer/scanner.h"
#include "scan/module_deps.h"
#include "tests/support/test_dir.h"

namespace lexpack::testing {
namespace {

scan::ModuleDeps deps_of(std::string_view source) {
  std::string err;
  const lexer::Kernel* kernel = lexer::default_kernel(&err);
  EXPECT_NE(kernel, nullptr) << err;
  return scan::module_deps(lexer::scan(source, *kernel));
}

TEST(ModuleDeps, InterfacePartitionImplementationAndImports) {
  scan::ModuleDeps m = deps_of(
      "module;\n#include <vector>\nexport module m;\nimport :part;\n"
      "export import :api;\nimport other.lib;\nimport <string>;\n"
      "import \"local.h\";\nimport other.lib;\nmodule :private;\n");
  EXPECT_EQ(m.provides, "m");
  EXPECT_TRUE(m.is_interface);
  EXPECT_EQ(m.imports, (std::vector<scan::ModuleRequirement>{
                           {"m:part", scan::LookupMethod::kByName},
                           {"m:api", scan::LookupMethod::kByName},
                           {"other.lib", scan::LookupMethod::kByName},
                           {"string", scan::LookupMethod::kIncludeAngle},
                           {"local.h", scan::LookupMethod::kIncludeQuote},
                       }));

  scan::ModuleDeps part = deps_of("module m:part;\nimport :api;\n");
  EXPECT_EQ(part.provides, "m:part");
  EXPECT_FALSE(part.is_interface);
  EXPECT_EQ(part.imports,
            (std::vector<scan::ModuleRequirement>{{"m:api", scan::LookupMethod::kByName}}));

  scan::ModuleDeps api = deps_of("export module m:api;\n");
  EXPECT_EQ(api.provides, "m:api");
  EXPECT_TRUE(api.is_interface);
  EXPECT_TRUE(api.imports.empty());

  scan::ModuleDeps impl = deps_of("module m;\nimport std.core;\n");
  EXPECT_EQ(impl.provides, "");
  EXPECT_EQ(impl.imports,
            (std::vector<scan::ModuleRequirement>{{"m", scan::LookupMethod::kByName},
                                                  {"std.core", scan::LookupMethod::kByName}}));

  scan::ModuleDeps plain =
      deps_of("#include <cstdio>\nint main() { int module = 1; return module; }\n");
  EXPECT_EQ(plain, scan::ModuleDeps{});
}

TEST(ScanP1689, ModuleUsingCompileDatabase) {
  TestDir dir;
  dir.write("m.cpp", "export module m;\nexport import :part;\nexport int m() { return 1; }\n");
  dir.write("m_part.cpp", "export module m:part;\n#include \"helper.h\"\n");
  dir.write("m_impl.cpp", "module m;\nimport :part;\n");
  dir.write("main.cpp", "import m;\nint main() { return m(); }\n");
  dir.write("helper.h", "#pragma once\n");
  std::string db = "[\n";
  const char* tus[] = {"m", "m_part", "m_impl", "main"};
  for (const char* tu : tus) {
    std::string name = tu;
    db += std::string(db.size() > 2 ? ",\n" : "") + "{\"directory\": \"" + dir.path() +
          "\", \"command\": \"g++ -std=c++20 -fmodules-ts -c " + name + ".cpp -o " + name +
          ".o\", \"file\": \"" + name + ".cpp\", \"output\": \"" + name + ".o\"}";
  }
  dir.write("compile_commands.json", db + "\n]\n");
  base::ProcessResult p =
      base::run_captured({"/bin/sh", "-c",
                          "cd " + shell_quote(dir.path()) +
                              " && LEXPACK_DIR=cache " LEXPACK_BIN
                              " scan --compdb compile_commands.json --format p1689"},
                         true);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  std::string src = dir.path() + "/";
  EXPECT_EQ(p.out,
            "{\n  \"version\": 1,\n  \"revision\": 0,\n  \"rules\": [\n"
            "    {\n      \"primary-output\": \"m.o\",\n"
            "      \"provides\": [{\"logical-name\": \"m\", \"source-path\": \"" +
                src +
                "m.cpp\", \"is-interface\": true}],\n"
                "      \"requires\": [{\"logical-name\": \"m:part\"}]\n    },\n"
                "    {\n      \"primary-output\": \"m_part.o\",\n"
                "      \"provides\": [{\"logical-name\": \"m:part\", \"source-path\": \"" +
                src +
                "m_part.cpp\", \"is-interface\": true}],\n"
                "      \"requires\": []\n    },\n"
                "    {\n      \"primary-output\": \"m_impl.o\",\n"
                "      \"requires\": [{\"logical-name\": \"m\"}, {\"logical-name\": "
                "\"m:part\"}]\n    },\n"
                "    {\n      \"primary-output\": \"main.o\",\n"
                "      \"requires\": [{\"logical-name\": \"m\"}]\n    }\n  ]\n}\n");
}

}  // namespace
}  // namespace lexpack::testing
