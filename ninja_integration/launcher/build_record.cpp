// The record is a plain text file, one 32-digit hex key per line after a
// "# build directory: DIR" line, so that every compile of a parallel build can
// append to it without a lock.
#include "ninja_integration/launcher/build_record.h"

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

namespace lexpack::launcher {

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

base::Result<std::string> start_build_record(const std::string& cache_dir,
                                             const std::string& build_dir) {
  std::string dir = cache_dir + "/builds";
  if (::mkdir(cache_dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return base::Status::error(cache_dir + ": cannot create: " + std::strerror(errno));
  }
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return base::Status::error(dir + ": cannot create: " + std::strerror(errno));
  }
  std::string path = dir + "/" + std::to_string(::getpid()) + ".keys";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return base::Status::error(path + ": cannot create: " + std::strerror(errno));
  bool written = base::write_all(fd, header(build_dir));
  ::close(fd);
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
  // renamed into place, so that a reader never sees it half there.
  std::string by_dir = build_dir_record(cache_dir, build_dir);
  std::string linked = record + ".dir";
  ::unlink(linked.c_str());
  if (::link(record.c_str(), linked.c_str()) != 0 ||
      ::rename(linked.c_str(), by_dir.c_str()) != 0) {
    ::unlink(linked.c_str());
    return base::Status::error(by_dir + ": cannot replace: " + std::strerror(errno));
  }
  std::string last = last_build_record(cache_dir);
  if (::rename(record.c_str(), last.c_str()) != 0) {
    return base::Status::error(last + ": cannot replace: " + std::strerror(errno));
  }
  return {};
}

void note_build_use(const cache::ActionKey& key) {
  const char* path = std::getenv(kBuildRecordEnv);
  if (!path || !*path) return;
  int fd = ::open(path, O_WRONLY | O_APPEND | O_CLOEXEC);  // no O_CREAT: the build owns it
  if (fd < 0) return;
  std::string line = key.hex() + "\n";
  ssize_t n;
  do {
    n = ::write(fd, line.data(), line.size());
  } while (n < 0 && errno == EINTR);
  ::close(fd);
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

}  // namespace lexpack::launcher
