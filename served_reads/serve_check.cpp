// The check after a compile with served reads: the plugin hands the compiler
// bytes straight from the pack mappings, unchecked, so before the object is
// stored every served blob is read again from its pack and hashed.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "base/file_util.h"
#include "served_reads/serve_reads.h"

namespace lexpack::served_reads {

bool ServedReads::served_bytes_intact(std::string* why) const {
  std::map<std::string, int> packs;  // path -> descriptor checked to be the pack served
  auto close_all = [&] {
    for (auto& [path, fd] : packs) {
      if (fd >= 0) ::close(fd);
    }
  };
  std::string bytes;
  for (const Served& s : served_) {
    auto it = packs.find(s.pack_path);
    if (it == packs.end()) {
      int fd = ::open(s.pack_path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      struct stat st;
      if (fd >= 0 && (::fstat(fd, &st) != 0 || uint64_t(st.st_dev) != s.pack_dev ||
                      uint64_t(st.st_ino) != s.pack_ino)) {
        ::close(fd);
        fd = -1;
      }
      it = packs.emplace(s.pack_path, fd).first;
    }
    if (it->second < 0 || !base::pread_all(it->second, s.offset, s.size, &bytes) ||
        cache::hash_bytes(bytes) != s.id) {
      *why = s.path + " was served from " + s.pack_path + " at offset " + std::to_string(s.offset) +
             ", whose bytes changed during the compile";
      close_all();
      return false;
    }
  }
  close_all();
  return true;
}

}  // namespace lexpack::served_reads
