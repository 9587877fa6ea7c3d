// Scanning one TU of a build, as scan_build() asks it of each worker: its
// memo, else its walk and its evaluation, and the compiler questions (who a
// compiler is, its search lists) asked once per scan for all of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/once_map.h"
#include "base/status.h"
#include "base/view_map.h"
#include "cache/store.h"
#include "closure/dependency_closure.h"
#include "closure/file_state.h"
#include "closure/presence_evaluation.h"
#include "closure/scan_file_cache.h"
#include "compiler/compile_command.h"
#include "compiler/identify_compiler.h"
#include "compiler/search_list.h"
#include "lexer/kernel.h"
#include "scan/build_scan.h"
#include "scan/compdb.h"
#include "scan/scan_memo.h"

namespace lexpack::scan {

// Path -> size of each file a scan reached, looked up by view.
using FileSizes = base::ViewMap<uint64_t>;

void note_size(FileSizes* sizes, std::string_view path, uint64_t size);

// The per-TU scan of one scan_build(), shared by its worker threads.
class Scanner {
 public:
  Scanner(cache::Store* store, const lexer::Kernel* kernel) : store_(store), kernel_(kernel) {}

  // The files `walked` holds are read and lexed once for the walk and the
  // evaluation of every TU.
  void share_files(std::shared_ptr<closure::ScanFileCache> walked);

  // Asks every compiler and every search list the entries will need, all at
  // once: each question runs the compiler (tens of ms), and asked on demand
  // they stall the walk at the first TU of every target.
  void ask_ahead(const std::vector<CompdbEntry>& entries, const std::vector<size_t>& group,
                 const std::string& dir);

  // The identity of every compiler `cmds` name, asked at once.
  void ask_identities(const std::vector<compiler::CompileCommand>& cmds, const std::string& dir);

  // The key of the group memo of the entries `group` names (all of directory
  // `dir`): every entry's translation unit key (its compiler's identity, its
  // arguments, its directory), source and output, in order. Each entry's key
  // goes to `tu_keys`. nullopt when an entry has no memo of its own (not a
  // compile, or no known compiler).
  std::optional<std::string> group_key(const std::vector<CompdbEntry>& entries,
                                       const std::vector<size_t>& group, const std::string& dir,
                                       std::vector<std::string>* tu_keys);

  // Runs the tasks, up to kMaxQuestionsAtOnce at a time, this thread being
  // one of the runners: when the store already holds the answers (a warm
  // scan), one question takes no new thread.
  static void run_all(std::vector<std::function<void()>>* tasks);

  // An entry as the server's answer gives it (nullopt: not an answer).
  // Its deps are views into `paths`, which it keeps.
  static std::optional<TuScan> from_known(
      const CompdbEntry& e, std::string_view bytes,
      const std::shared_ptr<const std::vector<std::string>>& paths, FileSizes* sizes);

  // How much of a TU's scan one call does.
  enum class Pass {
    kWalk,      // its memo, else its walk only (nullopt: left for kEvaluate)
    kEvaluate,  // after kWalk: the rest (the walk again, over the built graph)
  };

  // Scans one entry; `sizes` collects path -> size of every file a memo
  // answered for (the files of a walk are the shared graph's nodes).
  std::optional<TuScan> scan(const CompdbEntry& e, closure::FileStates* files, DirStatCache* dirs,
                             FileSizes* sizes, Pass pass);

 private:
  // The TU's scan memo, when nothing its last closure rests on has changed.
  std::optional<TuScan> answer_from_memo(const TuScan& tu, const CompdbEntry& e,
                                         const std::string& key, closure::FileStates* files,
                                         DirStatCache* dirs, FileSizes* sizes);

  static TuScan skip(TuScan tu, std::string why);
  // `compiler` as the command names it, from `dir` (the working directory):
  // a relative path with a slash names a different binary in each directory.
  base::Result<compiler::CompilerIdentity> identity_of(const std::string& compiler,
                                                       const std::string& dir);
  // Each distinct search list is asked once per scan, even when several
  // threads need it at the same moment (each question runs the compiler).
  static std::string question_key(const compiler::CompilerIdentity& identity,
                                  compiler::Language language, const std::vector<std::string>& args,
                                  const std::string& cwd);
  static std::string search_key(const compiler::CompilerIdentity& identity,
                                const compiler::CompileCommand& cmd, const std::string& cwd);
  base::Result<compiler::SearchList> search_list_of(const compiler::CompilerIdentity& identity,
                                                    const compiler::CompileCommand& cmd,
                                                    const std::string& cwd, const std::string& key);
  // A base question's answer (derived_search_list.h), asked once per scan.
  static std::string base_key(const compiler::CompilerIdentity& identity,
                              compiler::Language language, const std::vector<std::string>& rest,
                              const std::string& cwd);
  base::Result<compiler::SearchList> base_of(const compiler::CompilerIdentity& identity,
                                             compiler::Language language,
                                             const std::vector<std::string>& rest,
                                             const std::string& cwd);

  static constexpr size_t kMaxQuestionsAtOnce = 16;
  static constexpr std::string_view kGroupKeyFormat = "lexpack-scan-group-1";
  cache::Store* store_;
  const lexer::Kernel* kernel_;
  std::shared_ptr<const closure::ScanFileCache> walked_;  // share_files()
  closure::EvaluationShare share_;
  base::OnceMap<base::Result<compiler::CompilerIdentity>> identities_;
  base::OnceMap<base::Result<compiler::SearchList>> search_lists_;
  base::OnceMap<base::Result<compiler::SearchList>> bases_;
};

}  // namespace lexpack::scan
