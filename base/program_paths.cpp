// The running program's path from /proc/self/exe, and the plugin looked for
// where an install (bin/ and lib/) or a build tree (one folder) puts it.
#include "base/program_paths.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

namespace lexpack::base {
namespace {

bool is_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

std::string self_executable() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  return std::string(buf, size_t(n));
}

std::string find_plugin(const std::string& self_exe) {
  if (const char* env = std::getenv("LEXPACK_PLUGIN"); env && *env) {
    return is_file(env) ? std::string(env) : std::string();
  }
  size_t slash = self_exe.rfind('/');
  if (slash == std::string::npos) return {};
  std::string bin_dir = self_exe.substr(0, slash);
  std::string candidate = bin_dir + "/../lib/liblexpack_plugin.so";
  if (is_file(candidate)) return candidate;
  candidate = bin_dir + "/liblexpack_plugin.so";
  return is_file(candidate) ? candidate : std::string();
}

}  // namespace lexpack::base
