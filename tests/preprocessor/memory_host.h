// A Host over an in-memory file map for the preprocessor's tests: quoted
// includes search the includer's directory first, then the -iquote-like
// quote dirs; angled ones search the -I-like dirs; include_next continues
// after the directory the includer was found in. No filesystem involved.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lexer/kernel.h"
#include "lexer/scanner.h"
#include "preprocessor/host.h"
#include "preprocessor/preprocessor.h"

namespace lexpack::preprocessor::testing {

class MemoryHost : public Host {
 public:
  // dirs: the angled search path ("" is the root of the map).
  explicit MemoryHost(std::vector<std::string> dirs = {"inc"}) : dirs_(std::move(dirs)) {}

  void add(const std::string& path, std::string bytes) {
    files_[path] = std::move(bytes);
    auto it = handles_.find(path);
    if (it != handles_.end()) scans_.erase(it->second);
  }

  FileHandle handle(const std::string& path) {
    auto it = handles_.find(path);
    if (it != handles_.end()) return it->second;
    const FileHandle h = static_cast<FileHandle>(paths_.size());
    paths_.push_back(path);
    handles_[path] = h;
    return h;
  }
  const std::string& path(FileHandle h) const { return paths_[h]; }

  std::optional<FileHandle> resolve(std::string_view name, bool angled, bool is_next,
                                    FileHandle includer) override {
    ++resolves;
    const std::string& from = paths_[includer];
    const size_t slash = from.rfind('/');
    const std::string includer_dir = slash == std::string::npos ? "" : from.substr(0, slash);
    if (!angled && !is_next) {
      const std::string p = join(includer_dir, std::string(name));
      if (files_.count(p)) return handle(p);
    }
    size_t start = 0;
    if (is_next) {
      auto it = found_in_.find(includer);
      if (it != found_in_.end()) start = it->second + 1;
    }
    for (size_t i = start; i < dirs_.size(); ++i) {
      const std::string p = join(dirs_[i], std::string(name));
      if (files_.count(p)) {
        const FileHandle h = handle(p);
        found_in_[h] = i;
        return h;
      }
    }
    return std::nullopt;
  }

  std::optional<FileContent> content(FileHandle file) override {
    auto it = files_.find(paths_[file]);
    if (it == files_.end()) return std::nullopt;
    auto& scan = scans_[file];
    if (!scan) {
      scan = std::make_unique<lexer::ScanResult>(lexer::scan(it->second, lexer::scalar_kernel()));
    }
    const ParsedDefines* defines = nullptr;
    if (parse_defines_once) {
      auto& parsed = defines_[file];
      if (!parsed) parsed = std::make_unique<ParsedDefines>(it->second, *scan);
      defines = parsed.get();
    }
    return FileContent{it->second, scan.get(), paths_[file], defines};
  }

  // The path, where it was found and its bytes: the same key exactly when
  // a scan could share the file's evaluation.
  std::string file_key(FileHandle file) override {
    if (file >= paths_.size()) return {};
    auto it = files_.find(paths_[file]);
    if (it == files_.end()) return {};
    auto dir = found_in_.find(file);
    return paths_[file] + '\0' + (dir == found_in_.end() ? "-" : std::to_string(dir->second)) +
           '\0' + it->second;
  }

  std::optional<intmax_t> builtin_query(std::string_view op, std::string_view arg) override {
    auto it = answers.find(std::string(op) + "(" + std::string(arg) + ")");
    if (it == answers.end()) return std::nullopt;
    return it->second;
  }

  std::map<std::string, intmax_t> answers;  // "__has_builtin(x)" -> value
  bool parse_defines_once = false;          // give FileContent::defines, as a scan does
  int resolves = 0;

 private:
  static std::string join(const std::string& dir, const std::string& name) {
    return dir.empty() ? name : dir + "/" + name;
  }

  std::vector<std::string> dirs_;
  std::map<std::string, std::string> files_;
  std::map<std::string, FileHandle> handles_;
  std::vector<std::string> paths_;
  std::map<FileHandle, size_t> found_in_;
  std::map<FileHandle, std::unique_ptr<lexer::ScanResult>> scans_;
  std::map<FileHandle, std::unique_ptr<ParsedDefines>> defines_;
};

}  // namespace lexpack::preprocessor::testing
