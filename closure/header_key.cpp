#include "closure/header_key.h"

#include <cstring>

#include "base/file_stat.h"

namespace lexpack::closure {
namespace {

// After the path and a NUL: where it was found, then its stat, mtime and
// ctime last, as their bytes (fixed width, so no two keys differ in one
// number and compare equal).
constexpr size_t kNumbers = 6;

}  // namespace

std::string header_key(const Resolution& where) {
  const int64_t numbers[kNumbers] = {int64_t(where.chain_index),   int64_t(where.stat.dev),
                                     int64_t(where.stat.ino),      int64_t(where.stat.size),
                                     int64_t(where.stat.mtime_ns), int64_t(where.stat.ctime_ns)};
  std::string key;
  key.reserve(where.path.size() + 1 + sizeof numbers);
  key.append(where.path).push_back('\0');
  key.append(reinterpret_cast<const char*>(numbers), sizeof numbers);
  return key;
}

bool header_key_settled(std::string_view key, int64_t now) {
  if (key.size() < kNumbers * sizeof(int64_t) + 1 || key[key.size() - kNumbers * 8 - 1] != '\0') {
    return false;
  }
  base::StatSignature sig;
  std::memcpy(&sig.mtime_ns, key.data() + key.size() - 2 * sizeof(int64_t), sizeof(int64_t));
  std::memcpy(&sig.ctime_ns, key.data() + key.size() - sizeof(int64_t), sizeof(int64_t));
  return base::signature_is_settled(sig, now);
}

}  // namespace lexpack::closure
