// Temporary directories for tests, under TMPDIR (or /tmp).
#include "tests/support/test_dir.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace lexpack::testing {

TestDir::TestDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/lexpack-test-XXXXXX";
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

std::string TestDir::real_path() const {
  std::error_code ec;
  std::filesystem::path real = std::filesystem::canonical(path_, ec);
  if (ec) throw std::runtime_error("cannot resolve " + path_);
  return real.string();
}

TestDir::~TestDir() {
  std::error_code ec;
  std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::add, ec);
  std::filesystem::remove_all(path_, ec);
}

void TestDir::write(std::string_view relative, std::string_view content) const {
  std::filesystem::path p = at(relative);
  std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << content;
}

std::string TestDir::read(std::string_view relative) const {
  std::ifstream in(at(relative), std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool TestDir::exists(std::string_view relative) const {
  return std::filesystem::exists(at(relative));
}

void TestDir::remove(std::string_view relative) const {
  std::error_code ec;
  std::filesystem::remove_all(at(relative), ec);
}

std::string shell_quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out.push_back(c);
    }
  }
  return out + "'";
}

base::ProcessResult shell_in(const TestDir& dir, const std::string& env,
                             const std::string& command) {
  return base::run_captured(
      {"/bin/sh", "-c",
       "cd " + shell_quote(dir.path()) + " || exit 99; export " + env + "; " + command},
      true);
}

}  // namespace lexpack::testing
