// `lexpack explain -C BUILD [OUTPUT...]`: why the last `lexpack ninja` build
// of BUILD compiled what it compiled. Its misses and their causes come from
// the build's record (ninja_integration/build_record.h): the same line as the
// build's summary, and with outputs named, each one's own cause.
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>

#include <algorithm>
#include <cstdio>

#include "base/file_util.h"
#include "cache/config/config.h"
#include "cli/commands.h"
#include "ninja_integration/build_counts.h"
#include "ninja_integration/build_record.h"
#include "ninja_integration/build_summary.h"

namespace lexpack::cli {
namespace {

int fail(const std::string& message) {
  std::fprintf(stderr, "lexpack: error: %s\n", message.c_str());
  return 1;
}

// "N misses: ..." over `misses`, as the build's summary says it.
std::string causes_line(const std::vector<ninja_integration::BuildMiss>& misses) {
  std::vector<std::string_view> names;
  names.reserve(misses.size());
  for (const auto& m : misses) names.push_back(ninja_integration::miss_cause_name(m.cause));
  return ninja_integration::format_miss_causes(ninja_integration::summarize_misses(names));
}

}  // namespace

int explain_build(const std::vector<std::string>& args) {
  if (args.size() < 2 || args[0] != "-C") {
    return fail("usage: lexpack explain -C BUILD [OUTPUT...]");
  }
  char real[PATH_MAX];
  if (!::realpath(args[1].c_str(), real)) return fail(args[1] + ": no such directory");
  // The configured cache directory is all it needs of the store.
  const cache::Config config = cache::load_config("");
  if (config.dir.empty())
    return fail("no cache directory: set LEXPACK_DIR, XDG_CACHE_HOME or HOME");
  const std::string record = ninja_integration::build_dir_record(config.dir, real);
  if (::access(record.c_str(), F_OK) != 0) {
    return fail(std::string("no build of ") + real + " through `lexpack ninja` with this cache");
  }
  auto misses = ninja_integration::read_build_misses(record);
  if (!misses.ok()) return fail(misses.message());
  // A build that compiled nothing leaves the record before it: say which.
  struct stat st {};
  if (::stat(record.c_str(), &st) == 0) {
    char when[64] = "";
    struct tm local {};
    if (::localtime_r(&st.st_mtime, &local)) std::strftime(when, sizeof when, "%F %T", &local);
    std::fprintf(stderr, "lexpack: the last build of %s that compiled something, ended %s\n", real,
                 when);
  }
  if (args.size() == 2) {
    std::string line = causes_line(*misses);
    std::printf("%s\n", line.empty() ? "lexpack: the last build missed no compile" : line.c_str());
    return 0;
  }
  for (size_t i = 2; i < args.size(); ++i) {
    const std::string output = base::absolute_path(args[i], real);
    auto it = std::find_if(misses->begin(), misses->end(),
                           [&](const auto& m) { return m.output == output; });
    if (it == misses->end()) {
      std::printf("%s: not a miss of the last build (a hit, not run, or not a compile)\n",
                  args[i].c_str());
    } else {
      std::printf("%s: missed: %s\n", args[i].c_str(), it->cause.c_str());
    }
  }
  return 0;
}

}  // namespace lexpack::cli
