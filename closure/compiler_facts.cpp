// Asking the compiler for its predefined macros and builtin answers: see
// compiler_facts.h.
#include "closure/compiler_facts.h"

#include <stdlib.h>
#include <unistd.h>

#include "base/file_util.h"
#include "base/process.h"

namespace lexpack::closure {
namespace {

constexpr std::string_view kAnswerMacro = "__lexpack_answer_";

// The text of a file that asks `questions` of the compiler's preprocessor.
std::string question_file(const std::vector<std::string>& questions) {
  std::string out;
  for (size_t i = 0; i < questions.size(); ++i) {
    const std::string macro = std::string(kAnswerMacro) + std::to_string(i);
    out += "#if " + questions[i] + "\n#define " + macro + " 1\n#else\n#define " + macro +
           " 0\n#endif\n";
  }
  return out;
}

}  // namespace

base::Result<CompilerFacts> ask_compiler(const compiler::CompilerIdentity& identity,
                                         const compiler::CompileCommand& command,
                                         const std::vector<std::string>& arguments,
                                         const std::vector<std::string>& questions) {
  const char* tmp = getenv("TMPDIR");
  std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/lexpack-questions-XXXXXX";
  int fd = mkstemp(path.data());
  if (fd < 0) return base::Status::error("cannot create a temporary file in " + path);
  const std::string text = question_file(questions);
  const bool written = base::write_all(fd, text);
  ::close(fd);
  std::vector<std::string> argv = {identity.program};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  argv.insert(argv.end(),
              {"-dM", "-E", "-x", std::string(compiler::language_name(command.language)), path});
  // Predefined macros and builtin answers do not depend on the working
  // directory (no file of the command is read: -include is left out).
  base::ProcessResult r;
  if (written) r = base::run_captured(argv, true);
  ::unlink(path.c_str());
  if (!written) return base::Status::error("cannot write " + path);
  if (!r.started || r.exit_code != 0) {
    return base::Status::error("the compiler's -dM run failed: " + r.error + r.err.substr(0, 200));
  }
  CompilerFacts facts;
  size_t pos = 0;
  while (pos < r.out.size()) {
    size_t end = r.out.find('\n', pos);
    if (end == std::string::npos) end = r.out.size();
    std::string_view line(r.out.data() + pos, end - pos);
    pos = end + 1;
    constexpr std::string_view kDefine = "#define ";
    if (line.starts_with(std::string(kDefine) + std::string(kAnswerMacro))) {
      std::string_view rest = line.substr(kDefine.size() + kAnswerMacro.size());
      size_t space = rest.find(' ');
      if (space == std::string_view::npos) continue;
      size_t index = std::stoul(std::string(rest.substr(0, space)));
      if (index < questions.size()) facts.answers[questions[index]] = rest.substr(space + 1) == "1";
      continue;
    }
    facts.predefined.append(line).push_back('\n');
  }
  if (facts.answers.size() != questions.size()) {
    return base::Status::error("the compiler did not answer every builtin question");
  }
  return facts;
}

std::string encode_facts(const CompilerFacts& f) {
  std::string out = std::to_string(f.answers.size()) + "\n";
  for (const auto& [q, a] : f.answers) out += q + "\n" + std::to_string(a) + "\n";
  return out + f.predefined;
}

bool decode_facts(std::string_view bytes, CompilerFacts* f) {
  auto line = [&](std::string* out) {
    size_t end = bytes.find('\n');
    if (end == std::string_view::npos) return false;
    out->assign(bytes.substr(0, end));
    bytes.remove_prefix(end + 1);
    return true;
  };
  std::string count, q, a;
  if (!line(&count)) return false;
  size_t n = 0;
  for (char c : count) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + size_t(c - '0');
  }
  for (size_t i = 0; i < n; ++i) {
    if (!line(&q) || !line(&a) || (a != "0" && a != "1")) return false;
    f->answers[q] = a == "1";
  }
  f->predefined.assign(bytes);
  return true;
}

}  // namespace lexpack::closure
