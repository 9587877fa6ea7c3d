// Large single writes into a fresh temporary file, then rename(2). The old
// output is unlinked first: ext4 flushes a file renamed over an existing one
// (auto_da_alloc), which made replacing an object cost milliseconds.
#include "ninja_integration/output_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "ninja_integration/process.h"

namespace lexpack::ninja {

bool write_file_atomic(const std::string& path, std::string_view bytes, std::string* err) {
  std::string tmp = path + ".lexpack-tmp-" + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    *err = "cannot create " + tmp + ": " + std::strerror(errno);
    return false;
  }
  bool ok = write_all(fd, bytes);
  int saved = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    saved = errno;
  }
  if (!ok) {
    *err = "cannot write " + tmp + ": " + std::strerror(saved);
    ::unlink(tmp.c_str());
    return false;
  }
  // Readers never see a partial file either way; between the two calls they
  // see no file, which is less than a compiler writing in place shows them.
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    *err = "cannot replace " + path + ": " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return false;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    *err = "cannot rename " + tmp + " to " + path + ": " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace lexpack::ninja
