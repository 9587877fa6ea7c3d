// One place for the steps from a parsed command to its action key, so that
// the launcher and a prefetch ahead of the build cannot disagree on a key.
#include "launcher/compile_key.h"

#include "closure/action_key.h"
#include "closure/presence_evaluation.h"
#include "compiler/derived_search_list.h"

namespace lexpack::launcher {

base::Result<CompileKey> compute_compile_key(cache::Store* store, bool writable,
                                             closure::FileStates* files,
                                             const compiler::CompilerIdentity& identity,
                                             const compiler::CompileCommand& cmd,
                                             const std::string& cwd, const std::string& base_dir,
                                             const lexer::Kernel* kernel) {
  auto list = compiler::search_list_for(store, identity, cmd, cwd);
  if (!list.ok()) return base::Status::error("search list: " + list.message());
  CompileKey out;
  out.list = std::move(list.value());
  closure::CompilerPresenceEvaluator presence(writable ? store : nullptr, identity, cmd, cwd,
                                              kernel);
  auto closure = closure::compute_closure(files, cmd, out.list, identity.kind, cwd, &presence);
  if (!closure.ok()) return base::Status::error("dependency scan: " + closure.message());
  out.closure = std::move(closure.value());
  out.relocation = closure::decide_relocation(cmd, cwd, out.closure, base_dir);
  out.key = closure::action_key(identity, cmd, cwd, out.closure, out.relocation);
  return out;
}

}  // namespace lexpack::launcher
