// The .ninja_deps layout: "# ninjadeps\n", int32 version (4), then records
// each led by a uint32 size whose top bit marks a deps record. A path record
// is the path, NUL-padded to 4 bytes, and ~id; a deps record is the output id,
// a 64-bit mtime and the input ids.
#include "ninja_integration/ninja_deps_reader.h"

#include <cstdint>
#include <cstring>

#include "base/file_stat.h"
#include "base/file_util.h"

namespace lexpack::ninja_integration {
namespace {

constexpr char kSignature[] = "# ninjadeps\n";
constexpr size_t kSignatureSize = sizeof(kSignature) - 1;
constexpr int32_t kVersion = 4;
constexpr uint32_t kMaxRecordSize = (1u << 19) - 1;  // ninja's own limit

uint32_t load_u32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

}  // namespace

base::Result<NinjaDeps> read_ninja_deps(const std::string& path) {
  base::Result<std::string> read = base::read_file(path);
  if (!read.ok()) return read.status();
  const std::string& bytes = *read;
  if (bytes.size() < kSignatureSize + 4 || bytes.compare(0, kSignatureSize, kSignature) != 0) {
    return base::Status::error(path + ": not a ninja deps log");
  }
  int32_t version = int32_t(load_u32(bytes.data() + kSignatureSize));
  if (version != kVersion) {
    return base::Status::error(path + ": deps log version " + std::to_string(version) +
                               " (only version 4 is read)");
  }
  std::vector<std::string> paths;
  std::map<int32_t, std::vector<int32_t>> deps;  // output id -> input ids
  size_t pos = kSignatureSize + 4;
  while (pos + 4 <= bytes.size()) {
    uint32_t head = load_u32(bytes.data() + pos);
    bool is_deps = head & 0x80000000u;
    uint32_t size = head & 0x7FFFFFFFu;
    if (size > kMaxRecordSize || size % 4 != 0) {
      return base::Status::error(path + ": offset " + std::to_string(pos) + ": bad record size " +
                                 std::to_string(size));
    }
    if (pos + 4 + size > bytes.size()) break;  // truncated tail
    const char* rec = bytes.data() + pos + 4;
    if (is_deps) {
      if (size < 12) {
        return base::Status::error(path + ": offset " + std::to_string(pos) +
                                   ": deps record too short");
      }
      int32_t out = int32_t(load_u32(rec));
      std::vector<int32_t> inputs;
      for (uint32_t i = 12; i < size; i += 4) inputs.push_back(int32_t(load_u32(rec + i)));
      deps[out] = std::move(inputs);
    } else {
      if (size < 4) {
        return base::Status::error(path + ": offset " + std::to_string(pos) +
                                   ": path record too short");
      }
      size_t len = size - 4;
      while (len > 0 && rec[len - 1] == '\0') --len;
      uint32_t checksum = load_u32(rec + size - 4);
      if (~checksum != uint32_t(paths.size())) {
        return base::Status::error(path + ": offset " + std::to_string(pos) +
                                   ": path record with a bad id");
      }
      paths.emplace_back(rec, len);
    }
    pos += 4 + size;
  }
  NinjaDeps result;
  for (const auto& [out, inputs] : deps) {
    if (out < 0 || size_t(out) >= paths.size()) continue;
    std::vector<std::string>& list = result[paths[size_t(out)]];
    for (int32_t in : inputs) {
      if (in >= 0 && size_t(in) < paths.size()) list.push_back(paths[size_t(in)]);
    }
  }
  return result;
}

}  // namespace lexpack::ninja_integration
