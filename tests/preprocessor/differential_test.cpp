// Differential test: random directive-only projects written to a temporary
// directory, the files the preprocessor enters compared with what `g++ -M`
// and `clang++-14 -M` report. Exact results must match exactly; results
// that fell back must list every file the compiler reads.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "lexer/kernel.h"
#include "lexer/scanner.h"
#include "preprocessor/preprocessor.h"

namespace lexpack::preprocessor {
namespace {

namespace fs = std::filesystem;

// Runs a shell command; its stdout, and its exit status in *status.
std::string run_command(const std::string& command, int* status) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (!p) {
    *status = -1;
    return out;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  *status = pclose(p);
  return out;
}

bool have(const std::string& compiler) {
  int status = 0;
  run_command("command -v " + compiler + " >/dev/null 2>&1", &status);
  return status == 0;
}

// The files of a make rule as canonical paths (relative ones taken from
// root); with only_under_root, just those inside root.
std::set<std::string> rule_deps(const std::string& rule, const fs::path& root,
                                bool only_under_root) {
  std::set<std::string> out;
  const size_t colon = rule.find(':');
  if (colon == std::string::npos) return out;
  std::istringstream in(rule.substr(colon + 1));
  std::string word;
  const std::string prefix = fs::weakly_canonical(root).string() + "/";
  while (in >> word) {
    if (word == "\\") continue;
    const std::string p = fs::weakly_canonical(root / word).string();
    if (!only_under_root || p.rfind(prefix, 0) == 0) out.insert(p);
  }
  return out;
}

// A Host over real directories: quoted includes look in the includer's
// directory first, then every one of `dirs` (relative ones taken from root);
// include_next continues after the directory the includer was found in.
// Handles name canonical paths.
class DirectoryHost : public Host {
 public:
  DirectoryHost(const fs::path& root, std::vector<std::string> dirs) : root_(root) {
    for (const std::string& d : dirs) dirs_.push_back(fs::weakly_canonical(root / d));
  }

  FileHandle handle(const fs::path& path) {
    const std::string p = fs::weakly_canonical(root_ / path).string();
    auto [it, inserted] = handles_.try_emplace(p, static_cast<FileHandle>(paths_.size()));
    if (inserted) paths_.push_back(p);
    return it->second;
  }
  const std::string& path(FileHandle h) const { return paths_[h]; }

  std::optional<FileHandle> resolve(std::string_view name, bool angled, bool is_next,
                                    FileHandle includer) override {
    const fs::path from(paths_[includer]);
    if (!angled && !is_next && fs::is_regular_file(from.parent_path() / name))
      return handle(from.parent_path() / name);
    size_t start = 0;
    if (is_next) {
      auto it = found_in_.find(includer);
      if (it != found_in_.end()) start = it->second + 1;
    }
    for (size_t i = start; i < dirs_.size(); ++i) {
      if (fs::is_regular_file(dirs_[i] / name)) {
        const FileHandle h = handle(dirs_[i] / name);
        found_in_.try_emplace(h, i);
        return h;
      }
    }
    return std::nullopt;
  }

  std::optional<FileContent> content(FileHandle file) override {
    auto& slot = files_[file];
    if (!slot) {
      std::ifstream in(paths_[file], std::ios::binary);
      if (!in) return std::nullopt;
      slot = std::make_unique<Loaded>();
      slot->bytes.assign(std::istreambuf_iterator<char>(in), {});
      std::string err;
      slot->scan = lexer::scan(slot->bytes, *lexer::default_kernel(&err));
    }
    return FileContent{slot->bytes, &slot->scan, paths_[file]};
  }

  // The path and where it was found (the files do not change during a test).
  std::string file_key(FileHandle file) override {
    if (file >= paths_.size()) return {};
    auto it = found_in_.find(file);
    return paths_[file] + '\0' + (it == found_in_.end() ? "-" : std::to_string(it->second));
  }

  // Answers __has_builtin and the like by asking the compiler once per question.
  std::optional<intmax_t> builtin_query(std::string_view op, std::string_view arg) override {
    if (compiler_.empty() || arg.find('\'') != std::string_view::npos) return std::nullopt;
    const std::string question = std::string(op) + "(" + std::string(arg) + ")";
    auto [it, inserted] = answers_.try_emplace(question, std::nullopt);
    if (inserted) {
      int status = 0;
      const std::string out =
          run_command("printf '#if " + question + "\\nyes\\n#else\\nno\\n#endif\\n' | " +
                          compiler_ + " -E -P -x c++ - 2>/dev/null",
                      &status);
      if (status == 0 && out.find("yes") != std::string::npos) it->second = 1;
      if (status == 0 && out.find("no") != std::string::npos) it->second = 0;
      ++questions;
    }
    return it->second;
  }

  std::string compiler_;  // when set, builtin questions go to it
  int questions = 0;

 private:
  struct Loaded {
    std::string bytes;
    lexer::ScanResult scan;
  };
  fs::path root_;
  std::vector<fs::path> dirs_;
  std::map<std::string, FileHandle> handles_;
  std::vector<std::string> paths_;
  std::map<FileHandle, size_t> found_in_;
  std::map<FileHandle, std::unique_ptr<Loaded>> files_;
  std::map<std::string, std::optional<intmax_t>> answers_;
};

// Random directive-only sources. Header i includes only headers j > i, so
// no include cycle can arise; names h<n>..h<n+2> never exist.
class Generator {
 public:
  static constexpr int kHeaders = 6;
  static constexpr int kMacros = 5;

  explicit Generator(uint32_t seed) : rng_(seed) {}

  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  bool chance(int percent) { return pick(100) < percent; }

  std::string header_name(bool may_be_absent) {
    return "h" + std::to_string(pick(kHeaders + (may_be_absent ? 3 : 0))) + ".h";
  }

  std::string has_include() {
    const std::string h = header_name(true);
    switch (pick(6)) {
      case 0:
        return "__has_include(<" + h + ">)";
      case 1:
        return "__has_include(\"" + h + "\")";
      case 2:
        return "HAS(<" + h + ">)";
      case 3:
        return "W(<" + h + ">)";
      case 4:
        return "CAT(__has_, include)(<" + h + ">)";
      default:
        return "HAS2(\"" + h + "\")";
    }
  }

  // special: `defined` and __has_include may appear. Not inside macro
  // arguments or macro bodies: an argument is expanded before it is
  // substituted, which leaves `defined` without its name (an error in both
  // compilers).
  std::string expr(int depth, bool special = true) {
    static const char* const kAtoms[] = {"0",
                                         "1",
                                         "2",
                                         "3",
                                         "7",
                                         "0u",
                                         "1u",
                                         "100",
                                         "0x10",
                                         "'a'",
                                         "-1",
                                         "4294967296",
                                         "18446744073709551615",
                                         "'\\n'"};
    static const char* const kOps[] = {
        "+", "-", "*", "<", ">", "<=", ">=", "==", "!=", "&&", "||", "&", "|", "^", "<<", ">>"};
    int choice = depth >= 3 ? pick(5) : pick(13);
    if (!special && (choice == 3 || choice == 4 || choice == 12)) choice = 2;
    switch (choice) {
      case 0:
      case 1:
        return kAtoms[pick(std::size(kAtoms))];
      case 2:
        return "M" + std::to_string(pick(kMacros));
      case 3:
        return chance(50) ? "defined(M" + std::to_string(pick(kMacros)) + ")"
                          : "defined M" + std::to_string(pick(kMacros));
      case 4:
        return chance(5) ? "__has_builtin(__builtin_unknown_thing)" : has_include();
      case 5:
        return std::string(pick(3) == 0 ? "!"
                           : pick(2)    ? "-"
                                        : "~") +
               "(" + expr(depth + 1, special) + ")";
      case 6:
      case 7:
      case 8: {
        const std::string op = kOps[pick(std::size(kOps))];
        const std::string rhs =
            op == "<<" || op == ">>" ? std::to_string(pick(8)) : expr(depth + 1, special);
        return "(" + expr(depth + 1, special) + " " + op + " " + rhs + ")";
      }
      case 9:
        return "(" + expr(depth + 1, special) + (pick(2) ? " / " : " % ") +
               std::to_string(1 + pick(5)) + ")";
      case 10:
        return "(" + expr(depth + 1, special) + " ? " + expr(depth + 1, special) + " : " +
               expr(depth + 1, special) + ")";
      case 11:
        return "F(" + expr(depth + 1, false) + ", " + expr(depth + 1, false) + ")";
      default:
        return "IS_DEF_M0";
    }
  }

  std::string include(int self) {
    const int first = self + 1;
    if (first >= kHeaders) return "";
    const int j = first + pick(kHeaders - first);
    const std::string h = "h" + std::to_string(j) + ".h";
    switch (pick(5)) {
      case 0:
        return "#include \"" + h + "\"\n";
      case 1:
        return "#include <" + h + ">\n";
      case 2:
        return "#define INC <" + h + ">\n#include INC\n";
      case 3:
        return "#include XSTR(" + h + ")\n";
      default:
        return "#include HDR(" + std::to_string(j) + ")\n";
    }
  }

  void statements(std::string* out, int self, int depth, int count) {
    for (int k = 0; k < count; ++k) {
      const int what = depth >= 3 ? pick(4) : pick(7);
      const std::string m = "M" + std::to_string(pick(kMacros));
      switch (what) {
        case 0:
          *out += "#define " + m + " " + expr(1, false) + "\n";
          break;
        case 1:
          *out += "#undef " + m + "\n";
          break;
        case 2:
        case 3:
          *out += include(self);
          break;
        default: {
          const int form = pick(4);
          *out += form == 0   ? "#ifdef " + m + "\n"
                  : form == 1 ? "#ifndef " + m + "\n"
                              : "#if " + expr(0) + "\n";
          statements(out, self, depth + 1, 1 + pick(3));
          if (chance(40)) {
            *out += "#elif " + expr(0) + "\n";
            statements(out, self, depth + 1, 1 + pick(2));
          }
          if (chance(50)) {
            *out += "#else\n";
            statements(out, self, depth + 1, 1 + pick(2));
          }
          *out += "#endif\n";
        }
      }
    }
  }

  std::string file(int self) {
    std::string body;
    statements(&body, self, 0, 3 + pick(5));
    if (self < 0) {
      return "#define HAS __has_include\n#define HAS2 HAS\n#define W(x) __has_include(x)\n"
             "#define CAT(a, b) a ## b\n#define STR(x) #x\n#define XSTR(x) STR(x)\n"
             "#define HDR(n) <h ## n.h>\n#define F(a, b) ((a) + 2 * (b))\n"
             "#define IS_DEF_M0 defined(M0)\n" +
             body + "int main() {}\n";
    }
    const std::string guard = "H" + std::to_string(self) + "_GUARD";
    switch (pick(3)) {
      case 0:
        return "#ifndef " + guard + "\n#define " + guard + "\n" + body + "#endif\n";
      case 1:
        return "#pragma once\n" + body;
      default:
        return body;
    }
  }

 private:
  std::mt19937 rng_;
};

struct Compiler {
  std::string command;
  std::string predefined;
  bool lists_has_include;  // clang's -M also lists files __has_include found
};

std::vector<Compiler> installed_compilers() {
  std::vector<Compiler> compilers;
  for (const auto& [cmd, lists] : {std::pair{"g++", false}, std::pair{"clang++-14", true}}) {
    if (!have(cmd)) continue;
    int status = 0;
    const std::string dm =
        run_command(std::string(cmd) + " -std=gnu++17 -dM -E -x c++ /dev/null", &status);
    if (status != 0) continue;
    compilers.push_back({std::string(cmd) + " -std=gnu++17", dm, lists});
  }
  return compilers;
}

struct Tally {
  int exact = 0;
  int fallback = 0;
  int failed_compiles = 0;
  int from_compiler = 0;  // with a header cache: a replay found another file
};

// Compares the evaluation of dir/main (with -Iinc) with the compiler's -M;
// with `cache`, over `shared` (a host every main of dir shares).
void compare(const fs::path& dir, const Compiler& cc, const std::string& label, Tally* tally,
             const std::string& main = "main.cc", DirectoryHost* shared = nullptr,
             HeaderCache* cache = nullptr) {
  int status = 0;
  const std::string rule = run_command(
      "cd '" + dir.string() + "' && " + cc.command + " -Iinc -M " + main + " 2>/dev/null", &status);
  DirectoryHost own(dir, {"inc"});
  DirectoryHost& host = shared ? *shared : own;
  Preprocessor pp(host, Options::for_predefined(cc.predefined));
  std::string err;
  ASSERT_TRUE(pp.predefine(cc.predefined, &err)) << err;
  if (cache) pp.use_header_cache(cache, cc.command);
  pp.run_file(host.handle(main), EntryKind::kMain);
  const Result& r = pp.result();
  const std::string where = label + " (" + dir.string() + "), " + cc.command +
                            (r.exact() ? ", exact" : ", fallback: " + r.reason());
  if (status != 0) {
    // The compiler rejected the source; the evaluation must not claim exactness.
    ++tally->failed_compiles;
    if (r.exact()) {
      const std::string why = run_command(
          "cd '" + dir.string() + "' && " + cc.command + " -Iinc -M main.cc 2>&1 | grep error:",
          &status);
      ADD_FAILURE() << where << ": the compiler failed: " << why;
    }
    return;
  }
  std::set<std::string> ours;
  for (FileHandle h : r.unique_files()) ours.insert(host.path(h));
  if (cc.lists_has_include) {
    for (const IncludeQuestion& q : r.has_includes) {
      if (q.answer) ours.insert(host.path(*q.answer));
    }
  }
  if (cache && r.needs_compiler() && r.reason().find("resolves differently") != std::string::npos) {
    // A nested header found at another place than in the recording (this
    // host keeps where a file was first found): the scan asks the compiler.
    ++tally->from_compiler;
    return;
  }
  const std::set<std::string> theirs = rule_deps(rule, dir, true);
  if (r.exact()) {
    ++tally->exact;
    EXPECT_EQ(ours, theirs) << where;
  } else {
    ++tally->fallback;
    for (const std::string& f : theirs) EXPECT_TRUE(ours.count(f)) << where << ": misses " << f;
  }
}

fs::path make_temp_dir() {
  char tmpl[] = "/tmp/lexpack-pp-diff-XXXXXX";
  const char* made = mkdtemp(tmpl);
  return made ? fs::path(made) : fs::path();
}

// One conformance case: main.cc and the headers under inc/.
struct Case {
  const char* name;
  const char* main;
  std::vector<std::pair<const char*, const char*>> headers;
  bool exact;  // what the evaluation must report
};

const std::vector<Case>& conformance_cases() {
  static const std::vector<Case> cases = {
      {"nested conditionals",
       "#if 1\n#if 0\n#include <a.h>\n#elif 2 > 1\n#include <b.h>\n#endif\n#else\n#include "
       "<c.h>\n#endif\n",
       {{"a.h", ""}, {"b.h", ""}, {"c.h", ""}},
       true},
      {"#elif after a taken branch",
       "#define X 1\n#if X\n#include <a.h>\n#elif X / 0\n#include <b.h>\n#endif\n",
       {{"a.h", ""}, {"b.h", ""}},
       true},
      {"arithmetic and promotions",
       "#if -1 < 0u\n#include <a.h>\n#endif\n#if (0 ? 1u : -1) > 0 && -1 / 2 == 0 && "
       "'\\xff' < 0 && 18446744073709551615 == -1\n#include <b.h>\n#endif\n",
       {{"a.h", ""}, {"b.h", ""}},
       true},
      {"defined produced by expansion",
       "#define X\n#define HAVE_X defined(X)\n#define HAVE_Y defined Y\n#if HAVE_X && "
       "!HAVE_Y\n#include <a.h>\n#endif\n",
       {{"a.h", ""}},
       true},
      {"recursive macros do not expand",
       "#define A B + 1\n#define B A\n#define C C\n#define D(x) x + D\n#if A == 1 && !C && D(2) "
       "== 2\n#include <a.h>\n#else\n#include <b.h>\n#endif\n",
       {{"a.h", ""}, {"b.h", ""}},
       true},
      {"## forming a header name",
       "#define CAT(a, b) a ## b\n#define XCAT(a, b) CAT(a, b)\n#define HDR(n) <XCAT(n, "
       "_impl).h>\n#include HDR(cfg)\n",
       {{"cfg_impl.h", ""}},
       true},
      {"__VA_OPT__ and GNU comma",
       "#define E\n#define O(a, ...) a __VA_OPT__(+ 1)\n#define G(a, args...) F(a , ## "
       "args)\n#define F(...) (0 __VA_OPT__(+ 2))\n#if O(1) == 1 && O(1, 2) == 2 && O(1, E) == 1 "
       "&& G(1) == 2 && G(1, 2) == 2\n#include <a.h>\n#endif\n",
       {{"a.h", ""}},
       true},
      {"empty arguments",
       "#define F(a, b) a + b + 1\n#define Z() 3\n#if F(,) == 1 && F(2,) == 3 && Z() == "
       "3\n#include <a.h>\n#endif\n",
       {{"a.h", ""}},
       true},
      {"computed includes angled and quoted",
       "#define CFG <cfg.h>\n#include CFG\n#define STR(x) #x\n#define XSTR(x) STR(x)\n#include "
       "XSTR(local.h)\n#define Q \"q.h\"\n#include Q\n",
       {{"cfg.h", ""}, {"local.h", ""}, {"q.h", ""}},
       true},
      {"__has_include through alias, alias of alias, wrapper, paste",
       "#define HASINC __has_include\n#define HASINC2 HASINC\n#define X_HAS_INCLUDE(x) "
       "__has_include(x)\n#define CAT(a, b) a ## b\n#if HASINC(<gen.h>)\n#include "
       "<a.h>\n#endif\n#if HASINC2(\"gen.h\")\n#include <b.h>\n#endif\n#if "
       "X_HAS_INCLUDE(<nope.h>)\n#include <c.h>\n#endif\n#if CAT(__has_, "
       "include)(<gen.h>)\n#include <d.h>\n#endif\n",
       {{"gen.h", ""}, {"a.h", ""}, {"b.h", ""}, {"c.h", ""}, {"d.h", ""}},
       true},
      {"include guards and #pragma once",
       "#include <g.h>\n#include <o.h>\n#include <g.h>\n#include <o.h>\n#ifdef G_H\n#include "
       "<a.h>\n#endif\n",
       {{"g.h", "#ifndef G_H\n#define G_H\n#include <x.h>\n#endif\n"},
        {"o.h", "#pragma once\n#include <y.h>\n"},
        {"x.h", ""},
        {"y.h", ""},
        {"a.h", ""}},
       true},
      {"predefined macros",
       "#if defined(__GNUC__) && __cplusplus >= 201703L && __SIZEOF_POINTER__ == 8\n#include "
       "<a.h>\n#endif\n#ifdef __clang__\n#include <b.h>\n#endif\n",
       {{"a.h", ""}, {"b.h", ""}},
       true},
      {"__COUNTER__ compared with itself",
       "int a = __COUNTER__;\nint b = __COUNTER__ + __COUNTER__;\n#define C __COUNTER__\n#if "
       "defined(__COUNTER__) && (__COUNTER__ + 1 == __COUNTER__ + 0)\n#include <a.h>\n#else\n"
       "#include <b.h>\n#endif\n#if C - C == -1 && 2 * __COUNTER__ < 2 * C\n#include "
       "<c.h>\n#endif\n#if __COUNTER__ == __COUNTER__\n#include <d.h>\n#endif\n",
       {{"a.h", ""}, {"b.h", ""}, {"c.h", ""}, {"d.h", ""}},
       true},
      {"__COUNTER__ read for its value falls back",
       "int a = __COUNTER__;\n#if __COUNTER__ == 1\n#include <a.h>\n#else\n#include "
       "<b.h>\n#endif\n",
       {{"a.h", ""}, {"b.h", ""}},
       false},
      {"__COUNTER__ in a macro argument falls back",
       "#define ID(x) x\n#if ID(__COUNTER__) + 1 == __COUNTER__\n#include <a.h>\n#else\n"
       "#include <b.h>\n#endif\n",
       {{"a.h", ""}, {"b.h", ""}},
       false},
      {"unknown builtin falls back",
       "#if __has_builtin(__builtin_not_asked)\n#include <a.h>\n#else\n#include "
       "<b.h>\n#endif\n",
       {{"a.h", ""}, {"b.h", ""}},
       false},
  };
  return cases;
}

TEST(PreprocessorDifferential, ConformanceCasesMatchTheCompilers) {
  const std::vector<Compiler> compilers = installed_compilers();
  if (compilers.empty()) GTEST_SKIP() << "neither g++ nor clang++-14 is installed";
  const fs::path base = make_temp_dir();
  ASSERT_FALSE(base.empty());
  int index = 0;
  for (const Case& c : conformance_cases()) {
    const fs::path dir = base / std::to_string(index++);
    fs::create_directories(dir / "inc");
    std::ofstream(dir / "main.cc") << c.main;
    for (const auto& [name, text] : c.headers) std::ofstream(dir / "inc" / name) << text;
    for (const Compiler& cc : compilers) {
      Tally tally;
      compare(dir, cc, c.name, &tally);
      EXPECT_EQ(tally.failed_compiles, 0) << c.name << " with " << cc.command;
      EXPECT_EQ(tally.exact, c.exact ? 1 : 0) << c.name << " with " << cc.command;
    }
  }
  if (!::testing::Test::HasFailure()) fs::remove_all(base);
}

TEST(PreprocessorDifferential, GeneratedProjectsMatchTheCompilers) {
  const std::vector<Compiler> compilers = installed_compilers();
  if (compilers.empty()) GTEST_SKIP() << "neither g++ nor clang++-14 is installed";
  const char* env = std::getenv("LEXPACK_PP_DIFF_CASES");
  const int cases = env ? std::atoi(env) : 300;
  const fs::path base = make_temp_dir();
  ASSERT_FALSE(base.empty());
  Generator gen(20240611);
  Tally tally;
  for (int c = 0; c < cases; ++c) {
    const fs::path dir = base / std::to_string(c);
    fs::create_directories(dir / "inc");
    std::ofstream(dir / "main.cc") << gen.file(-1);
    for (int h = 0; h < Generator::kHeaders; ++h)
      std::ofstream(dir / "inc" / ("h" + std::to_string(h) + ".h")) << gen.file(h);
    for (const Compiler& cc : compilers) compare(dir, cc, "case " + std::to_string(c), &tally);
    if (!::testing::Test::HasFailure()) fs::remove_all(dir);
  }
  if (!::testing::Test::HasFailure()) fs::remove_all(base);
  std::printf("differential: %d cases x %zu compilers: %d exact, %d fallback, %d failed compiles\n",
              cases, compilers.size(), tally.exact, tally.fallback, tally.failed_compiles);
  EXPECT_GT(tally.exact, tally.fallback);  // the generator must mostly produce evaluable inputs
}

// Several sources over the same headers, each with its own macro state on
// entering them, evaluated with one header cache: a header's recorded
// evaluation is replayed only where it holds, so every source still matches
// the compiler.
TEST(PreprocessorDifferential, SharedHeaderEvaluationsMatchTheCompilers) {
  const std::vector<Compiler> compilers = installed_compilers();
  if (compilers.empty()) GTEST_SKIP() << "neither g++ nor clang++-14 is installed";
  const char* env = std::getenv("LEXPACK_PP_DIFF_CASES");
  const int cases = (env ? std::atoi(env) : 300) / 4;
  constexpr int kMains = 6;
  const fs::path base = make_temp_dir();
  ASSERT_FALSE(base.empty());
  Generator gen(20261202);
  Tally tally;
  size_t replayed = 0;
  for (int c = 0; c < cases; ++c) {
    const fs::path dir = base / std::to_string(c);
    fs::create_directories(dir / "inc");
    for (int m = 0; m < kMains; ++m)
      std::ofstream(dir / ("main" + std::to_string(m) + ".cc")) << gen.file(-1);
    for (int h = 0; h < Generator::kHeaders; ++h)
      std::ofstream(dir / "inc" / ("h" + std::to_string(h) + ".h")) << gen.file(h);
    for (const Compiler& cc : compilers) {
      DirectoryHost host(dir, {"inc"});
      HeaderCache cache;
      for (int m = 0; m < kMains; ++m) {
        const std::string main = "main" + std::to_string(m) + ".cc";
        compare(dir, cc, "case " + std::to_string(c) + " " + main, &tally, main, &host, &cache);
      }
      // How often a later source replayed a header: the cache must be used.
      Preprocessor again(host, Options::for_predefined(cc.predefined));
      std::string err;
      ASSERT_TRUE(again.predefine(cc.predefined, &err)) << err;
      again.use_header_cache(&cache, cc.command);
      again.run_file(host.handle("main0.cc"), EntryKind::kMain);
      replayed += again.headers_replayed();
    }
    if (!::testing::Test::HasFailure()) fs::remove_all(dir);
  }
  if (!::testing::Test::HasFailure()) fs::remove_all(base);
  std::printf(
      "shared headers: %d cases x %d sources: %d exact, %d fallback, %d from the compiler, %zu "
      "replayed\n",
      cases, kMains, tally.exact, tally.fallback, tally.from_compiler, replayed);
  EXPECT_GT(tally.exact, tally.fallback);
  EXPECT_LT(tally.from_compiler * 20, tally.exact);  // rare
  EXPECT_GT(replayed, 0u);
}

// The compiler's angled search directories, from `-E -v`.
std::vector<std::string> system_dirs(const std::string& compiler) {
  int status = 0;
  const std::string out = run_command(compiler + " -x c++ -E -v /dev/null 2>&1", &status);
  std::vector<std::string> dirs;
  std::istringstream in(out);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind("#include <...> search starts here:", 0) == 0) {
      inside = true;
    } else if (line.rfind("End of search list.", 0) == 0) {
      inside = false;
    } else if (inside && line.size() > 1 && line[0] == ' ') {
      dirs.push_back(line.substr(1));
    }
  }
  return dirs;
}

// A translation unit of real standard library headers: every file the
// compiler reads, system headers included, with builtin questions asked of
// the compiler (as the caller of the Host is meant to).
TEST(PreprocessorDifferential, StandardLibraryTranslationUnit) {
  const std::vector<Compiler> compilers = installed_compilers();
  if (compilers.empty()) GTEST_SKIP() << "neither g++ nor clang++-14 is installed";
  const fs::path dir = make_temp_dir();
  ASSERT_FALSE(dir.empty());
  std::ofstream(dir / "main.cc")
      << "#include <vector>\n#include <map>\n#include <string>\n"
         "#include <iostream>\n#include <memory>\n#include <algorithm>\n"
         "#include <functional>\n#include <optional>\n#include <variant>\n"
         "#include <filesystem>\n#include <thread>\n#include <cstdio>\n";
  for (const Compiler& cc : compilers) {
    int status = 0;
    const std::string rule =
        run_command("cd '" + dir.string() + "' && " + cc.command + " -M main.cc", &status);
    ASSERT_EQ(status, 0) << cc.command;
    DirectoryHost host(dir, system_dirs(cc.command));
    host.compiler_ = cc.command;
    Preprocessor pp(host, Options::for_predefined(cc.predefined));
    std::string err;
    ASSERT_TRUE(pp.predefine(cc.predefined, &err)) << err;
    const bool gcc = !cc.lists_has_include;
    if (gcc && fs::exists("/usr/include/stdc-predef.h"))  // GCC's implicit -include
      pp.run_file(host.handle("/usr/include/stdc-predef.h"), EntryKind::kForced);
    pp.run_file(host.handle("main.cc"), EntryKind::kMain);
    // Again with every scan and builtin answer cached in the host: the
    // evaluation's own cost.
    Preprocessor again(host, Options::for_predefined(cc.predefined));
    ASSERT_TRUE(again.predefine(cc.predefined, &err)) << err;
    const auto start = std::chrono::steady_clock::now();
    if (gcc && fs::exists("/usr/include/stdc-predef.h"))
      again.run_file(host.handle("/usr/include/stdc-predef.h"), EntryKind::kForced);
    again.run_file(host.handle("main.cc"), EntryKind::kMain);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(again.result().unique_files(), pp.result().unique_files());
    const Result& r = pp.result();
    std::set<std::string> ours;
    for (FileHandle h : r.unique_files()) ours.insert(host.path(h));
    if (cc.lists_has_include) {
      for (const IncludeQuestion& q : r.has_includes) {
        if (q.answer) ours.insert(host.path(*q.answer));
      }
    }
    const std::set<std::string> theirs = rule_deps(rule, dir, false);
    for (const std::string& f : theirs) EXPECT_TRUE(ours.count(f)) << cc.command << " misses " << f;
    size_t extra = 0;
    for (const std::string& f : ours) extra += theirs.count(f) ? 0 : 1;
    if (r.exact()) {
      EXPECT_EQ(extra, 0u) << cc.command;
    }
    std::printf(
        "%s: %zu files (compiler %zu, %zu extra), %s, %d builtin questions asked of the "
        "compiler, evaluation %.1f ms with scans and answers cached\n",
        cc.command.c_str(), ours.size(), theirs.size(), extra,
        r.exact() ? "exact" : ("not exact: " + r.reason()).c_str(), host.questions, ms);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lexpack::preprocessor
