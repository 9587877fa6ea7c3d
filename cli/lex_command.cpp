// `lexpack lex`: runs the directive scanner over files and prints what it
// found, as text or JSON lines, so a person can check the lexer by eye.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/scan_result_json.h"
#include "lexer/kernel.h"
#include "lexer/scanner.h"

namespace lexpack::cli {
namespace {

// A read-only view of a whole file; mapped when it has bytes.
class MappedFile {
 public:
  bool open(const std::string& path, std::string* err) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      *err = path + ": " + std::strerror(errno);
      return false;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      *err = path + ": not a regular file";
      ::close(fd);
      return false;
    }
    size_ = static_cast<size_t>(st.st_size);
    if (size_ > 0) {
      void* m = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (m == MAP_FAILED) {
        *err = path + ": mmap: " + std::strerror(errno);
        ::close(fd);
        return false;
      }
      data_ = static_cast<const char*>(m);
    }
    ::close(fd);
    return true;
  }
  ~MappedFile() {
    if (data_) munmap(const_cast<char*>(data_), size_);
  }
  std::string_view bytes() const { return {data_ ? data_ : "", size_}; }

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
};

void print_text(const std::string& file, const lexer::ScanResult& r) {
  std::printf("%s:\n", file.c_str());
  for (const lexer::Directive& d : r.directives) {
    std::printf("  %u: %s", d.line, std::string(lexer::kind_name(d.kind)).c_str());
    const std::string text(r.text(d));
    if (!text.empty()) {
      if (d.computed) {
        std::printf(" %s (computed)", text.c_str());
      } else if (d.angled) {
        std::printf(" <%s>", text.c_str());
      } else {
        std::printf(" %s", text.c_str());
      }
    }
    std::printf("\n");
  }
  if (!r.include_guard.empty()) std::printf("  include guard: %s\n", r.include_guard.c_str());
  if (r.uses_date || r.uses_time || r.uses_timestamp) {
    std::printf("  uses:%s%s%s\n", r.uses_date ? " __DATE__" : "", r.uses_time ? " __TIME__" : "",
                r.uses_timestamp ? " __TIMESTAMP__" : "");
  }
  for (const lexer::Diagnostic& d : r.diagnostics)
    std::printf("  %s:%u: %s\n", file.c_str(), d.line, d.message.c_str());
}

}  // namespace

void add_lex_command(CLI::App& app, int* exit_code) {
  struct Options {
    std::vector<std::string> files;
    std::string files_from;
    std::string kernel;
    bool json = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("lex", "Print the directives the lexer finds in files");
  cmd->add_option("files", opts->files, "Files to scan");
  cmd->add_option("--files-from", opts->files_from, "Read file names, one per line, from LIST");
  cmd->add_option("--kernel", opts->kernel, "Force a kernel: scalar, sse2, avx2, neon");
  cmd->add_flag("--json", opts->json, "One JSON object per file");
  cmd->callback([opts, exit_code] {
    std::string err;
    const lexer::Kernel* kernel =
        opts->kernel.empty() ? lexer::default_kernel(&err) : lexer::find_kernel(opts->kernel, &err);
    if (!kernel) {
      std::fprintf(stderr, "lexpack: error: %s\n", err.c_str());
      *exit_code = 2;
      return;
    }
    std::vector<std::string> files = opts->files;
    if (!opts->files_from.empty()) {
      std::ifstream list(opts->files_from);
      if (!list) {
        std::fprintf(stderr, "lexpack: error: cannot read file list %s\n",
                     opts->files_from.c_str());
        *exit_code = 2;
        return;
      }
      for (std::string line; std::getline(list, line);)
        if (!line.empty()) files.push_back(line);
    }
    if (files.empty()) {
      std::fprintf(stderr, "lexpack: error: lex: no files given\n");
      *exit_code = 2;
      return;
    }
    lexer::ScanResult r;  // reused for every file
    for (const std::string& file : files) {
      MappedFile mapped;
      if (!mapped.open(file, &err)) {
        std::fprintf(stderr, "lexpack: error: %s\n", err.c_str());
        *exit_code = 1;
        continue;
      }
      lexer::scan_into(mapped.bytes(), *kernel, &r);
      if (opts->json) {
        std::string line = to_json(file, r);
        line.push_back('\n');
        std::fwrite(line.data(), 1, line.size(), stdout);
      } else {
        print_text(file, r);
      }
    }
  });
}

}  // namespace lexpack::cli
