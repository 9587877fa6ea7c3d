// lexpack-bench-lexer: how fast each lexer kernel scans real headers, side by
// side with clang's own minimizer on the same bytes. All files are loaded into
// memory first, so the figures measure lexing, not I/O.
//
//   lexpack-bench-lexer --files-from LIST [--runs N] [--primitives] [--kernel K] [--no-clang]
//
// --kernel K times only that kernel and --no-clang leaves out clang's
// minimizer (for profiling one kernel; no comparison is printed then).
//
// Prints one line per figure:
//   kernel=<name> files=<n> bytes=<n> seconds=<s> mbps=<x> directives=<n>
//   ratio kernel=<name> vs=<baseline> x=<r>
//   primitive=<p> kernel=<name> bytes=<n> seconds=<s> mbps=<x>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "lexer/kernel.h"
#include "lexer/scanner.h"
#include "lexer/token_text.h"
#if defined(LEXPACK_HAVE_CLANG_MINIMIZER)
#include "bench/lexer/clang_minimizer.h"
#endif

namespace {

using lexpack::lexer::Kernel;

struct Options {
  std::string files_from;
  int runs = 5;
  bool primitives = false;
  std::string only_kernel;  // empty: every available kernel
  bool clang = true;
};

struct Corpus {
  std::vector<std::string> files;
  size_t bytes = 0;
  size_t skipped = 0;
};

struct Timing {
  double seconds = 0;   // best run
  size_t checksum = 0;  // result of the work, so it cannot be optimized away
};

bool parse_args(int argc, char** argv, Options* opt, std::string* err) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&](const char* name) -> const char* {
      if (i + 1 >= argc) {
        *err = std::string(name) + " needs a value";
        return nullptr;
      }
      return argv[++i];
    };
    if (arg == "--files-from") {
      const char* v = value("--files-from");
      if (!v) return false;
      opt->files_from = v;
    } else if (arg == "--runs") {
      const char* v = value("--runs");
      if (!v) return false;
      opt->runs = std::atoi(v);
      if (opt->runs < 1) {
        *err = "--runs must be at least 1, got '" + std::string(v) + "'";
        return false;
      }
    } else if (arg == "--primitives") {
      opt->primitives = true;
    } else if (arg == "--kernel") {
      const char* v = value("--kernel");
      if (!v) return false;
      opt->only_kernel = v;
    } else if (arg == "--no-clang") {
      opt->clang = false;
    } else {
      *err = "unknown argument '" + std::string(arg) + "'";
      return false;
    }
  }
  if (opt->files_from.empty()) {
    *err = "missing --files-from LIST (one path per line)";
    return false;
  }
  return true;
}

bool load_corpus(const std::string& list_path, Corpus* corpus, std::string* err) {
  std::ifstream list(list_path);
  if (!list) {
    *err = list_path + ": cannot open file list";
    return false;
  }
  std::string path;
  while (std::getline(list, path)) {
    if (path.empty()) continue;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      ++corpus->skipped;
      continue;
    }
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    corpus->bytes += bytes.size();
    corpus->files.push_back(std::move(bytes));
  }
  return true;
}

// Best wall time of `runs` passes of fn over the whole corpus.
Timing best_of(int runs, const std::function<size_t()>& fn) {
  Timing t;
  for (int r = 0; r < runs; ++r) {
    const auto start = std::chrono::steady_clock::now();
    const size_t sum = fn();
    const std::chrono::duration<double> d = std::chrono::steady_clock::now() - start;
    if (r == 0 || d.count() < t.seconds) t.seconds = d.count();
    t.checksum = sum;
  }
  return t;
}

double mbps(size_t bytes, double seconds) {
  return seconds > 0 ? bytes / seconds / 1e6 : 0;
}

void print_scan(const char* name, const Corpus& c, const Timing& t) {
  std::printf("kernel=%s files=%zu bytes=%zu seconds=%.4f mbps=%.1f directives=%zu\n", name,
              c.files.size(), c.bytes, t.seconds, mbps(c.bytes, t.seconds), t.checksum);
}

void print_primitive(const char* primitive, const char* name, const Corpus& c, const Timing& t) {
  std::printf("primitive=%s kernel=%s bytes=%zu seconds=%.4f mbps=%.1f result=%zu\n", primitive,
              name, c.bytes, t.seconds, mbps(c.bytes, t.seconds), t.checksum);
}

// The primitives alone, driven the way a scanner drives them: find_any4 and
// find_quad restart after each hit, count_lines runs over whole files.
void bench_primitives(const Kernel& k, const Corpus& c, int runs) {
  const char needles[4] = {'#', '/', '"', '\''};
  const lexpack::lexer::QuadSearch& search = lexpack::lexer::prepass_search();
  print_primitive("find_any4", k.name, c, best_of(runs, [&] {
                    size_t hits = 0;
                    for (const std::string& f : c.files) {
                      const char* end = f.data() + f.size();
                      for (const char* p = k.find_any4(f.data(), end, needles); p != end;
                           p = k.find_any4(p + 1, end, needles)) {
                        ++hits;
                      }
                    }
                    return hits;
                  }));
  print_primitive("find_quad", k.name, c, best_of(runs, [&] {
                    size_t hits = 0;
                    for (const std::string& f : c.files) {
                      const char* end = f.data() + f.size();
                      for (const char* p = k.find_quad(f.data(), end, search); p != end;
                           p = k.find_quad(p + 1, end, search)) {
                        ++hits;
                      }
                    }
                    return hits;
                  }));
  print_primitive("count_lines", k.name, c, best_of(runs, [&] {
                    size_t lines = 0;
                    for (const std::string& f : c.files) {
                      lines += k.count_lines(f.data(), f.data() + f.size());
                    }
                    return lines;
                  }));
}

// The token text (lexer/token_text.h) a token key reads of a changed file,
// against the fastest directive scan of the same corpus (`scan_seconds`).
void bench_token_text(const Corpus& corpus, int runs, const std::string& scan_name,
                      double scan_seconds) {
  size_t unsure = 0, text_bytes = 0;
  const Timing text = best_of(runs, [&] {
    std::string out;
    unsure = text_bytes = 0;
    for (const std::string& f : corpus.files) {
      if (lexpack::lexer::token_text(f, &out)) {
        text_bytes += out.size();
      } else {
        ++unsure;
      }
    }
    return text_bytes;
  });
  std::printf(
      "pass=token-text files=%zu bytes=%zu seconds=%.4f mbps=%.1f text_bytes=%zu unsure=%zu\n",
      corpus.files.size(), corpus.bytes, text.seconds, mbps(corpus.bytes, text.seconds), text_bytes,
      unsure);
  if (text.seconds > 0) {
    std::printf("ratio pass=token-text vs=%s x=%.2f\n", scan_name.c_str(),
                scan_seconds / text.seconds);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  std::string err;
  if (!parse_args(argc, argv, &opt, &err)) {
    std::fprintf(stderr, "lexpack-bench-lexer: error: %s\n", err.c_str());
    std::fprintf(stderr,
                 "usage: lexpack-bench-lexer --files-from LIST [--runs N] [--primitives] [--kernel "
                 "K] [--no-clang]\n");
    return 2;
  }
  Corpus corpus;
  if (!load_corpus(opt.files_from, &corpus, &err)) {
    std::fprintf(stderr, "lexpack-bench-lexer: error: %s\n", err.c_str());
    return 1;
  }
  if (corpus.skipped) {
    std::fprintf(stderr, "lexpack-bench-lexer: skipped %zu unreadable files\n", corpus.skipped);
  }

  std::vector<const Kernel*> kernels = lexpack::lexer::available_kernels();
  if (!opt.only_kernel.empty()) {
    const Kernel* k = lexpack::lexer::find_kernel(opt.only_kernel, &err);
    if (!k) {
      std::fprintf(stderr, "lexpack-bench-lexer: error: --kernel: %s\n", err.c_str());
      return 2;
    }
    kernels = {k};
  }

  // The contestants run in turns, one pass each per round, and each keeps its
  // best pass: a change of machine load during the run then touches all of
  // them alike instead of whichever one was running, so ratios hold up.
  struct Contestant {
    std::string name;
    std::function<size_t()> pass;
    Timing best;
  };
  std::vector<Contestant> contestants;
  for (const Kernel* k : kernels) {
    contestants.push_back({k->name,
                           [&corpus, k] {
                             // One result reused for every file, as clang's
                             // minimizer reuses its output buffers below.
                             size_t directives = 0;
                             lexpack::lexer::ScanResult result;
                             for (const std::string& f : corpus.files) {
                               lexpack::lexer::scan_into(f, *k, &result);
                               directives += result.directives.size();
                             }
                             return directives;
                           },
                           {}});
  }
#if defined(LEXPACK_HAVE_CLANG_MINIMIZER)
  lexpack::bench::ClangMinimizer clang;
  if (opt.clang) {
    contestants.push_back({"clang-minimizer",
                           [&corpus, &clang] {
                             size_t tokens = 0;
                             for (const std::string& f : corpus.files) tokens += clang.minimize(f);
                             return tokens;
                           },
                           {}});
  }
#endif
  for (int r = 0; r < opt.runs; ++r) {
    for (Contestant& c : contestants) {
      const Timing t = best_of(1, c.pass);
      if (r == 0 || t.seconds < c.best.seconds) c.best = t;
    }
  }

  const Contestant* baseline = nullptr;
  for (const Contestant& c : contestants) {
    if (c.name == "clang-minimizer") {
      std::printf("kernel=clang-minimizer files=%zu bytes=%zu seconds=%.4f mbps=%.1f tokens=%zu\n",
                  corpus.files.size(), corpus.bytes, c.best.seconds,
                  mbps(corpus.bytes, c.best.seconds), c.best.checksum);
      baseline = &c;
    } else {
      print_scan(c.name.c_str(), corpus, c.best);
    }
  }
  // Without clang, the SIMD kernels are compared with the scalar reference.
  if (!baseline && contestants.size() > 1 && contestants.front().name == "scalar")
    baseline = &contestants.front();
  for (const Contestant& c : contestants) {
    if (baseline && &c != baseline && c.best.seconds > 0) {
      std::printf("ratio kernel=%s vs=%s x=%.2f\n", c.name.c_str(), baseline->name.c_str(),
                  baseline->best.seconds / c.best.seconds);
    }
  }

  const Contestant* fastest = nullptr;
  for (const Contestant& c : contestants) {
    if (c.name != "clang-minimizer" && (!fastest || c.best.seconds < fastest->best.seconds)) {
      fastest = &c;
    }
  }
  if (fastest) bench_token_text(corpus, opt.runs, fastest->name, fastest->best.seconds);

  if (opt.primitives) {
    for (const Kernel* k : kernels) bench_primitives(*k, corpus, opt.runs);
  }
  return 0;
}
