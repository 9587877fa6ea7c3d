// The linker's own options, as they reach it through -Wl, and -Xlinker: the
// files they make it read that its dependency file does not list (its @files,
// --retain-symbols-file), the directories it searches, and the options that
// make a link uncacheable.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lexpack::link {

// What the linker words of one link say.
struct LinkerOptions {
  // Files read that ld's --dependency-file leaves out: keyed by content.
  std::vector<std::string> files;
  // Directories searched for a library a shared library needs (-rpath-link,
  // -rpath, -R DIR) and -L directories named inside a linker @file (which
  // the driver's -### does not show), in order.
  std::vector<std::string> search_dirs;
  // A linker script may name files (INCLUDE, INPUT, GROUP) that ld looks
  // for in the working directory first.
  bool has_script = false;
  std::string uncacheable;  // empty when cacheable: a short reason otherwise
};

// Reads the linker words of a command in order (each word of -Wl,a,b and
// each -Xlinker argument). A linker @file is read as ld reads it (blanks
// separate words, quotes group, a backslash escapes, nested @files); one
// that cannot be read makes the link uncacheable.
class LinkerOptionReader {
 public:
  void add(std::string_view word);
  // True when an option waits for its argument in the next linker word.
  bool pending() const { return !pending_.empty(); }
  const LinkerOptions& result() const { return result_; }
  LinkerOptions& result() { return result_; }

 private:
  void take_argument(std::string_view option, std::string_view value);
  void add_response_file(std::string_view path);

  std::string pending_;  // the option whose argument comes next
  int response_files_ = 0;
  LinkerOptions result_;
};

}  // namespace lexpack::link
