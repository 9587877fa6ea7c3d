// Reading whole files and the path arithmetic of include search: joining as
// the compiler joins, and normalizing without allocating per component.
#include "base/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "base/process.h"

namespace lexpack::base {

bool pread_all(int fd, uint64_t offset, uint64_t size, std::string* out) {
  out->resize(size);
  uint64_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd, out->data() + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<uint64_t>(n);
  }
  return true;
}

Result<std::string> read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::error("cannot open " + path + ": " + std::strerror(errno));
  struct stat st;
  std::string bytes;
  if (::fstat(fd, &st) == 0 && st.st_size > 0) bytes.reserve(size_t(st.st_size));
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Status failed = Status::error("cannot read " + path + ": " + std::strerror(errno));
      ::close(fd);
      return failed;
    }
    if (n == 0) break;
    bytes.append(buf, size_t(n));
  }
  ::close(fd);
  return bytes;
}

std::string working_dir() {
  const char* pwd = std::getenv("PWD");
  struct stat a, b;
  if (pwd && pwd[0] == '/' && ::stat(pwd, &a) == 0 && ::stat(".", &b) == 0 &&
      a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
    return pwd;
  }
  std::string buf(4096, '\0');
  if (!::getcwd(buf.data(), buf.size())) return {};
  buf.resize(std::strlen(buf.c_str()));
  return buf;
}

std::string absolute_path(const std::string& path, const std::string& cwd) {
  if (!path.empty() && path[0] == '/') return path;
  if (path.empty()) return cwd;
  return cwd + "/" + path;
}

std::string normal_path(const std::string& path, const std::string& dir) {
  std::string abs = absolute_path(path, dir);
  size_t last = abs.rfind('/');
  std::string_view tail = last == std::string::npos ? std::string_view() : abs.substr(last + 1);
  // The common case by hand (lexically_normal allocates per component): an
  // absolute path not starting with "//" whose last component is a name.
  if (abs.size() < 2 || abs[0] != '/' || abs[1] == '/' || tail.empty() || tail == "." ||
      tail == "..") {
    return std::filesystem::path(abs).lexically_normal().string();
  }
  std::string out;
  out.reserve(abs.size());
  for (size_t i = 0; i < abs.size();) {
    size_t end = abs.find('/', i);
    if (end == std::string::npos) end = abs.size();
    std::string_view part(abs.data() + i, end - i);
    if (part == "..") {
      out.resize(out.rfind('/') == std::string::npos ? 0 : out.rfind('/'));
    } else if (!part.empty() && part != ".") {
      out.push_back('/');
      out.append(part);
    }
    i = end + 1;
  }
  return out;
}

bool append_line(int fd, std::string_view line) {
  ssize_t n;
  do {
    n = ::write(fd, line.data(), line.size());
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(line.size());
}

bool append_line(const std::string& path, std::string_view line) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = append_line(fd, line);
  ::close(fd);
  return ok;
}

bool write_file_atomically(const std::string& path, std::string_view bytes, unsigned mode) {
  // Unique per process and per call: threads of one process may write the
  // same file at once.
  static std::atomic<unsigned> serial{0};
  const std::string temp =
      path + "." + std::to_string(::getpid()) + "." + std::to_string(serial++) + ".tmp";
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode_t(mode));
  if (fd < 0) return false;
  bool ok = write_all(fd, bytes);
  if (::close(fd) != 0) ok = false;
  if (ok && ::rename(temp.c_str(), path.c_str()) == 0) return true;
  ::unlink(temp.c_str());
  return false;
}

std::string join_path(std::string_view dir, std::string_view name) {
  if (dir.empty() || (!name.empty() && name[0] == '/')) return std::string(name);
  std::string out(dir);
  if (out.back() != '/') out.push_back('/');
  out.append(name);
  return out;
}

std::string_view dir_of(std::string_view path) {
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return {};
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace lexpack::base
