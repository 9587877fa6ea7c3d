// Each line after the "# ninja log vN" header: start, end and mtime of the
// edge's run, the output path (relative to the build directory unless
// absolute) and the command's hash, separated by tabs.
#include "ninja_integration/ninja_log.h"

#include <unistd.h>

#include <string_view>
#include <unordered_set>

#include "base/file_stat.h"
#include "base/file_util.h"

namespace lexpack::ninja_integration {

bool every_logged_output_exists(const std::string& build_dir) {
  const std::string log_path = base::join_path(build_dir, ".ninja_log");
  base::StatSignature log_sig, manifest_sig;
  if (!base::stat_file(log_path, &log_sig) ||
      !base::stat_file(base::join_path(build_dir, "build.ninja"), &manifest_sig) ||
      manifest_sig.mtime_ns > log_sig.mtime_ns) {
    return false;
  }
  base::Result<std::string> read = base::read_file(log_path);
  if (!read.ok()) return false;
  const std::string_view text = *read;
  const size_t header_end = text.find('\n');
  const std::string_view header = text.substr(0, header_end);
  if (header != "# ninja log v5" && header != "# ninja log v6") return false;
  std::unordered_set<std::string_view> checked;
  size_t at = header_end == std::string_view::npos ? text.size() : header_end + 1;
  while (at < text.size()) {
    const size_t end = text.find('\n', at);
    // A last line without its end: ninja was stopped while writing it.
    if (end == std::string_view::npos) break;
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    // The fourth of the five fields.
    size_t from = 0;
    for (int field = 0; field < 3 && from != std::string_view::npos; ++field) {
      from = line.find('\t', from);
      if (from != std::string_view::npos) ++from;
    }
    const size_t to = from == std::string_view::npos ? from : line.find('\t', from);
    if (to == std::string_view::npos || to == from) return false;
    const std::string_view output = line.substr(from, to - from);
    if (!checked.insert(output).second) continue;
    const std::string path =
        output.front() == '/' ? std::string(output) : base::join_path(build_dir, output);
    if (::access(path.c_str(), F_OK) != 0) return false;
  }
  return !checked.empty();
}

}  // namespace lexpack::ninja_integration
