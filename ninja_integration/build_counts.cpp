// Per-build counts: a text file of "name delta" lines appended by each
// launcher run of the build and summed by `lexpack ninja` at its end.
#include "ninja_integration/build_counts.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/file_util.h"

namespace lexpack::ninja_integration {

base::Result<std::string> start_build_counts() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/lexpack-build-XXXXXX";
  int fd = ::mkostemp(pattern.data(), O_CLOEXEC);
  if (fd < 0) return base::Status::error(pattern + ": cannot create: " + std::strerror(errno));
  ::close(fd);
  return pattern;
}

namespace {

// One "name delta" line, one O_APPEND write. Names of up to `max_name` bytes.
void append_count(std::string_view name, int64_t delta, size_t max_name) {
  // Opened once per process: a launcher run counts a few times at most.
  static int fd = [] {
    const char* path = std::getenv(kBuildCountsEnv);
    if (!path || !*path) return -1;
    return ::open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);  // the build made it
  }();
  if (fd < 0 || name.empty() || name.size() > max_name ||
      name.find('\n') != std::string_view::npos) {
    return;
  }
  base::append_line(fd, std::string(name) + " " + std::to_string(delta) + "\n");
}

}  // namespace

void note_build_count(std::string_view name, int64_t delta) {
  append_count(name, delta, 64);
}

std::string_view miss_cause_name(std::string_view launcher_cause) {
  if (launcher_cause.starts_with("changed: ")) return launcher_cause.substr(9);
  if (launcher_cause == "never compiled with these arguments") return "new";
  return "other";
}

void note_miss_cause(std::string_view launcher_cause) {
  // A path up to what one small write appends whole.
  append_count(std::string(kMissCausePrefix) + std::string(miss_cause_name(launcher_cause)), 1,
               1024);
}

std::optional<Counters> read_build_counts(const std::string& path) {
  base::Result<std::string> read = base::read_file(path);
  if (!read.ok()) return std::nullopt;
  const std::string& bytes = read.value();
  Counters counts;
  size_t pos = 0;
  while (pos < bytes.size()) {
    size_t end = bytes.find('\n', pos);
    if (end == std::string::npos) break;  // a torn last line is left out
    std::string line = bytes.substr(pos, end - pos);
    pos = end + 1;
    size_t space = line.rfind(' ');
    if (space == std::string::npos || space == 0) continue;
    char* stop = nullptr;
    long long delta = std::strtoll(line.c_str() + space + 1, &stop, 10);
    if (stop == line.c_str() + space + 1 || *stop != '\0') continue;
    counts[line.substr(0, space)] += delta;
  }
  return counts;
}

}  // namespace lexpack::ninja_integration
