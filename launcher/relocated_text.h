// Text a relocated entry stores (depfile, compiler messages) names paths under
// base_dir relative to the working directory; a hit writes it back naming the
// checkout at hand. Shared by the launcher and the server.
#pragma once

#include <string>
#include <string_view>

namespace lexpack::launcher {

// Paths in `bytes` as this checkout names them (a no-op on text stored
// without relocation). False on a malformed relocated path.
bool restore_paths(std::string_view bytes, const std::string& cwd, std::string* out);
// A depfile keyed relative under base_dir, and back in this checkout's form
// (wrapped as the compiler that wrote it wraps lines).
bool relocate_depfile(std::string_view bytes, const std::string& base_dir, const std::string& cwd,
                      std::string* out);
bool restore_depfile(std::string_view bytes, const std::string& cwd, std::string* out);

}  // namespace lexpack::launcher
