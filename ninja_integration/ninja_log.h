// Reads ninja's .ninja_log (text, versions 5 and 6): the outputs of the
// edges ninja ran in this build directory. `lexpack ninja` asks it whether
// any output ninja built is missing, before it asks ninja for the compile
// database (a whole parse of the manifest, every build).
#pragma once

#include <string>

namespace lexpack::ninja_integration {

// True when the build directory's .ninja_log can be read, is no older than
// its build.ninja, and every output it lists is there: ninja built each
// output once and none was removed since. False when that is not known
// (no log, an unknown version, a manifest written after the last build) or
// not so; an output the log names that ninja no longer builds counts too.
bool every_logged_output_exists(const std::string& build_dir);

}  // namespace lexpack::ninja_integration
