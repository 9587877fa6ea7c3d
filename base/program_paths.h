// Where the running program is, and the preloaded plugin installed beside it:
// `lexpack ninja` preloads it into ninja, the launcher into a compiler whose
// reads it serves.
#pragma once

#include <string>

namespace lexpack::base {

// The absolute path of the running program.
std::string self_executable();

// The plugin to preload: LEXPACK_PLUGIN if set, else liblexpack_plugin.so in
// the lib/ folder beside the bin/ folder that holds `self_exe`. Empty when the
// file is not there.
std::string find_plugin(const std::string& self_exe);

}  // namespace lexpack::base
