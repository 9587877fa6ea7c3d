// The record is a plain text file, one 32-digit hex key per line after a
// "# build directory: DIR" line, so that every compile of a parallel build can
// append to it without a lock.
#include "ninja_integration/build_record.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

#include "base/file_stat.h"
#include "base/file_util.h"
#include "base/process.h"
#include "cache/cache_files.h"

namespace lexpack::ninja_integration {

namespace {

constexpr std::string_view kDirLine = "# build directory: ";

std::string header(const std::string& build_dir) {
  return std::string(kDirLine) + build_dir + "\n";
}

}  // namespace

std::string last_build_record(const std::string& cache_dir) {
  return cache_dir + "/builds/last.keys";
}

std::string build_dir_record(const std::string& cache_dir, const std::string& build_dir) {
  return cache_dir + "/builds/dir-" + cache::hash_bytes(build_dir).hex() + ".keys";
}

namespace {

// builds/ as a checked handle (never a symlink someone else planted).
base::Result<int> open_builds_dir(const std::string& cache_dir, const cache::FileModes& modes) {
  auto top = cache::open_cache_dir(AT_FDCWD, cache_dir, true, modes);
  if (!top.ok()) return top.status();
  auto dir = cache::open_cache_dir(*top, "builds", true, modes);
  ::close(*top);
  if (!dir.ok()) return base::Status::error(cache_dir + "/" + dir.message());
  return dir;
}

}  // namespace

base::Result<std::string> start_build_record(const std::string& cache_dir,
                                             const std::string& build_dir,
                                             const cache::FileModes& modes) {
  auto dir = open_builds_dir(cache_dir, modes);
  if (!dir.ok()) return dir.status();
  std::string name = std::to_string(::getpid()) + ".keys";
  std::string path = cache_dir + "/builds/" + name;
  auto fd = cache::open_cache_file(*dir, name, O_WRONLY | O_CREAT | O_TRUNC, modes, path);
  ::close(*dir);
  if (!fd.ok()) return fd.status();
  bool written = base::write_all(*fd, header(build_dir));
  ::close(*fd);
  if (!written) return base::Status::error(path + ": cannot write: " + std::strerror(errno));
  return path;
}

base::Status finish_build_record(const std::string& cache_dir, const std::string& record,
                                 const std::string& build_dir) {
  struct stat st;
  if (::stat(record.c_str(), &st) != 0) {
    return base::Status::error(record + ": " + std::strerror(errno));
  }
  if (uint64_t(st.st_size) <= header(build_dir).size()) {
    ::unlink(record.c_str());
    return {};
  }
  // The directory's record first, through a second name of the same file
  // renamed into place, so that a reader never sees it half there; all of it
  // under a checked handle on builds/.
  auto dir = open_builds_dir(cache_dir, cache::FileModes{});
  if (!dir.ok()) return dir.status();
  const std::string name = record.substr(record.rfind('/') + 1);
  const std::string by_dir = build_dir_record(cache_dir, build_dir);
  const std::string by_dir_name = by_dir.substr(by_dir.rfind('/') + 1);
  const std::string linked = name + ".dir";
  ::unlinkat(*dir, linked.c_str(), 0);
  if (::linkat(*dir, name.c_str(), *dir, linked.c_str(), 0) != 0 ||
      ::renameat(*dir, linked.c_str(), *dir, by_dir_name.c_str()) != 0) {
    int err = errno;
    ::unlinkat(*dir, linked.c_str(), 0);
    ::close(*dir);
    return base::Status::error(by_dir + ": cannot replace: " + std::strerror(err));
  }
  std::string last = last_build_record(cache_dir);
  int rc = ::renameat(*dir, name.c_str(), *dir, "last.keys");
  int err = errno;
  ::close(*dir);
  if (rc != 0) return base::Status::error(last + ": cannot replace: " + std::strerror(err));
  return {};
}

void note_build_use(const cache::ActionKey& key) {
  const char* path = std::getenv(kBuildRecordEnv);
  if (!path || !*path) return;
  base::append_line(path, key.hex() + "\n");  // the build made the file
}

namespace {
constexpr std::string_view kMissLine = "# miss ";
}  // namespace

void note_build_miss(const std::string& output, std::string_view cause) {
  const char* path = std::getenv(kBuildRecordEnv);
  if (!path || !*path || output.find_first_of("\t\n") != std::string::npos) return;
  std::string line = std::string(kMissLine) + output + "\t";
  for (char c : cause) line += c == '\n' ? ' ' : c;
  base::append_line(path, line + "\n");
}

base::Result<std::vector<BuildMiss>> read_build_misses(const std::string& path) {
  base::Result<std::string> read = base::read_file(path);
  if (!read.ok()) return base::Status::error(read.message());
  std::vector<BuildMiss> misses;
  const std::string& bytes = *read;
  for (size_t pos = 0; pos < bytes.size();) {
    size_t end = bytes.find('\n', pos);
    if (end == std::string::npos) break;  // a torn last line is left out
    std::string_view line(bytes.data() + pos, end - pos);
    pos = end + 1;
    if (!line.starts_with(kMissLine)) continue;
    line.remove_prefix(kMissLine.size());
    size_t tab = line.find('\t');
    if (tab == std::string_view::npos) continue;
    misses.push_back({std::string(line.substr(0, tab)), std::string(line.substr(tab + 1))});
  }
  return misses;
}

base::Result<std::vector<cache::ActionKey>> read_build_record(const std::string& path,
                                                              std::string* build_dir) {
  base::Result<std::string> read = base::read_file(path);
  if (!read.ok()) {
    return base::Status::error(read.message() + " (no build through `lexpack ninja` yet?)");
  }
  if (build_dir) build_dir->clear();
  const std::string& bytes = *read;
  std::vector<cache::ActionKey> keys;
  std::set<std::string> seen;
  size_t line_no = 0;
  for (size_t pos = 0; pos < bytes.size();) {
    size_t end = bytes.find('\n', pos);
    if (end == std::string::npos) end = bytes.size();
    std::string line = bytes.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.empty()) continue;
    if (line[0] == '#') {
      if (build_dir && line.starts_with(kDirLine)) *build_dir = line.substr(kDirLine.size());
      continue;
    }
    cache::ActionKey key;
    if (!cache::Hash128::from_hex(line, &key)) {
      return base::Status::error(path + ":" + std::to_string(line_no) + ": not an action key");
    }
    if (seen.insert(line).second) keys.push_back(key);
  }
  return keys;
}

}  // namespace lexpack::ninja_integration
