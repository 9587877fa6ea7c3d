// A fresh temporary directory per test, removed with everything in it when
// the test ends. Shared by the cache tests.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

namespace lexpack::cache::testing {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "lexpack-test-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data()) ? pattern : std::string();
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace lexpack::cache::testing
