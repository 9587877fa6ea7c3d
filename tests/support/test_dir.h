// A fresh temporary directory per test, removed afterwards, with helpers to
// write and read files in it. The one temp-dir helper of every test suite.
#pragma once

#include <string>
#include <string_view>

#include "base/process.h"

namespace lexpack::testing {

class TestDir {
 public:
  TestDir();
  ~TestDir();
  TestDir(const TestDir&) = delete;
  TestDir& operator=(const TestDir&) = delete;

  const std::string& path() const { return path_; }
  // The path with every symlink resolved (TMPDIR may be one): what a
  // compiler's realpath-based output names.
  std::string real_path() const;
  std::string at(std::string_view relative) const { return path_ + "/" + std::string(relative); }
  // Writes `content` to `relative`, creating parent directories.
  void write(std::string_view relative, std::string_view content) const;
  std::string read(std::string_view relative) const;
  bool exists(std::string_view relative) const;
  void remove(std::string_view relative) const;

 private:
  std::string path_;
};

// Single-quotes `s` for /bin/sh.
std::string shell_quote(std::string_view s);

// Runs `command` with /bin/sh in `dir`, `env` ("NAME=value" words for the
// shell, quoted by the caller) exported; stdin is /dev/null.
base::ProcessResult shell_in(const TestDir& dir, const std::string& env,
                             const std::string& command);

}  // namespace lexpack::testing
