// The macro table against a plain map under many defines, redefines and
// undefs (growth and deletion from an open-addressed table).
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

#include "preprocessor/macro_table.h"

namespace lexpack::preprocessor {
namespace {

std::shared_ptr<const Macro> make(const std::string& name, int value) {
  std::string err;
  std::optional<Macro> m = parse_definition(name + " " + std::to_string(value), &err);
  EXPECT_TRUE(m) << err;
  return std::make_shared<const Macro>(std::move(*m));
}

TEST(MacroTable, AgreesWithAMapUnderDefinesAndUndefs) {
  MacroTable table;
  std::map<std::string, std::shared_ptr<const Macro>> want;
  std::mt19937 rng(7);
  // Few distinct names so that redefines, undefs of defined names and long
  // probe runs (after growth to several thousand entries) all happen.
  for (int step = 0; step < 200000; ++step) {
    const std::string name = "NAME_" + std::to_string(rng() % (step < 100000 ? 6000 : 300));
    if (rng() % 3 == 0) {
      table.undefine(name);
      want.erase(name);
    } else {
      std::shared_ptr<const Macro> m = make(name, step);
      table.define(m);
      want[name] = m;
    }
    if (step % 997 == 0) {
      ASSERT_EQ(table.size(), want.size()) << "step " << step;
      for (int i = 0; i < 6000; ++i) {
        const std::string probe = "NAME_" + std::to_string(i);
        auto it = want.find(probe);
        const Macro* got = table.find(probe);
        ASSERT_EQ(got, it == want.end() ? nullptr : it->second.get()) << probe << " step " << step;
      }
    }
  }
  table.undefine("NAME_0");
  for (auto& [name, m] : want) table.undefine(name);
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.find("NAME_1"), nullptr);
}

}  // namespace
}  // namespace lexpack::preprocessor
