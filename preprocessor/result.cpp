// Small queries over a Result, shared by the scan and the launcher.
#include "preprocessor/result.h"

#include <unordered_set>

namespace lexpack::preprocessor {

bool Result::needs_compiler() const {
  for (const InexactReason& r : inexact) {
    if (r.kind == Inexact::kComputedInclude) return true;
  }
  return false;
}

std::string Result::reason() const {
  return inexact.empty() ? std::string() : inexact.front().message;
}

std::vector<FileHandle> Result::unique_files() const {
  std::vector<FileHandle> out;
  std::unordered_set<FileHandle> seen;
  for (const FileEntry& e : files) {
    if (seen.insert(e.file).second) out.push_back(e.file);
  }
  return out;
}

}  // namespace lexpack::preprocessor
