// The note `lexpack ninja` prints when compiles went through another
// launcher: its grammar follows the count, and it says how to stop that
// launcher under CMake and under Meson.
#include <gtest/gtest.h>

#include <string>

#include "ninja_integration/ninja_wrapper.h"

namespace lexpack::ninja_integration {
namespace {

TEST(LauncherHint, NothingWhenNoCompileWentThroughAnother) {
  EXPECT_EQ(launcher_hint({}), "");
}

TEST(LauncherHint, OneCompileIsSingular) {
  std::string said = launcher_hint({1, "/usr/bin/ccache"});
  EXPECT_NE(said.find("1 compile already went through another launcher (/usr/bin/ccache) and was "
                      "left to it; to cache it,"),
            std::string::npos)
      << said;
}

TEST(LauncherHint, ManyArePluralAndMesonIsNamed) {
  std::string said = launcher_hint({6, "sccache"});
  EXPECT_NE(said.find("6 compiles already went through another launcher (sccache) and were left "
                      "to it; to cache them,"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("CMAKE_<LANG>_COMPILER_LAUNCHER"), std::string::npos) << said;
  EXPECT_NE(said.find("Meson"), std::string::npos) << said;
}

}  // namespace
}  // namespace lexpack::ninja_integration
