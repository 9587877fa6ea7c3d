// A TU that reaches __has_include through a macro (`#define HAS(x)
// __has_include(x)`, a portability idiom of many libraries) is cacheable
// once its conditionals are evaluated: this runs the preprocessor over it
// with the compiler's own predefined macros and builtin answers, so every
// question the compiler asks is asked and recorded in the closure.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cache/store.h"
#include "closure/dependency_closure.h"
#include "closure/macro_arguments.h"
#include "compiler/compile_command.h"
#include "compiler/identify_compiler.h"
#include "lexer/kernel.h"
#include "preprocessor/result.h"

namespace lexpack::closure {

class ScanFileCache;

// What a whole-build scan shares between the evaluations of its TUs: each
// file's bytes and lexer scan (read once per scan, not once per TU), and the
// compiler's answers per identity and arguments. Thread-safe.
class EvaluationShare {
 public:
  EvaluationShare();
  ~EvaluationShare();
  // Takes the bytes and lexer scans of the files the scan's walk read
  // (ScanFileCache::find_lexed) instead of reading and lexing them again.
  void use_walked(ScanFileCache* walked);
  // Takes over the header evaluations and the files' bytes of `from` (made
  // at `from_made_ns` on the file clock, before it read any file) whose
  // files had settled by then: each such file's stat signature changes with
  // any later write, so what is kept by it stays true however long it is
  // kept. The server keeps its evaluations across the changes it is told
  // of so.
  void carry_headers(EvaluationShare* from, int64_t from_made_ns);
  // The header evaluations kept.
  size_t header_traces() const;
  struct Impl;
  std::unique_ptr<Impl> impl;
};

// One TU's evaluation as a scan uses it: the preprocessor's result, and the
// file each of its handles stands for.
struct EvaluatedTu {
  bool ran = false;  // false: the evaluation did not run to the end (see `error`)
  std::string error;
  preprocessor::Result result;
  std::vector<Resolution> handles;  // by FileHandle
};

class CompilerPresenceEvaluator : public PresenceEvaluator {
 public:
  // `store` (may be null) remembers the compiler's answers per identity and
  // arguments; `cwd` is the compile's working directory.
  CompilerPresenceEvaluator(cache::Store* store, const compiler::CompilerIdentity& identity,
                            const compiler::CompileCommand& command, std::string cwd,
                            const lexer::Kernel* kernel);

  std::string evaluate(const Resolution& source, const std::vector<Resolution>& forced,
                       const Ask& ask) override;

  // Makes this evaluator run for every TU (a scan's exact dependencies),
  // sharing files and answers through `share` (may be null) and leaving the
  // last evaluation in `*out`.
  void evaluate_every_tu(EvaluationShare* share, EvaluatedTu* out) {
    share_ = share;
    out_ = out;
  }
  // Shares files, answers and header evaluations through `share` without
  // evaluating every TU (the server's evaluations of launchers' closures).
  void share_with(EvaluationShare* share) { share_ = share; }
  bool every_tu() const override { return out_ != nullptr; }
  std::vector<Resolution> computed_includes() const override { return computed_; }
  std::shared_ptr<const preprocessor::MacroReads> macro_reads() const override { return reads_; }
  std::vector<base::StatSignature> entered_files() const override { return entered_; }

 private:
  // The stdc-predef.h among `forced` (if any): its bytes, and whether it
  // has no directive that reads another file (then it alone, not the
  // include directories, is what they change in the compiler's answers).
  // A file that cannot be read reads one, for all this can tell.
  struct Predef {
    std::string bytes;
    bool reads_no_file = true;
  };
  Predef inspect_predef(const std::vector<Resolution>& forced) const;

  cache::Store* store_;
  const compiler::CompilerIdentity& identity_;
  const compiler::CompileCommand& command_;
  std::string cwd_;
  const lexer::Kernel* kernel_;
  EvaluationShare* share_ = nullptr;
  EvaluatedTu* out_ = nullptr;
  std::vector<Resolution> computed_;                       // of the last exact evaluation
  std::vector<base::StatSignature> entered_;               // of the last exact evaluation
  std::shared_ptr<const preprocessor::MacroReads> reads_;  // of the last evaluation
};

// gcc's implicit stdc-predef.h among the files read before the source (the
// first, when found), or null.
const Resolution* stdc_predef(const std::vector<Resolution>& forced);

}  // namespace lexpack::closure
