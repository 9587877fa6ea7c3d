// Key derivation. Paths enter as the compiler names them (they appear in the
// depfile and in __FILE__); the working directory only when the object
// records it (debug info without a prefix map covering it).
#include "ninja_integration/closure/action_key.h"

#include <ctime>

#include "ninja_integration/compiler/search_list.h"

namespace lexpack::closure {
namespace {

void hash_command(cache::Hasher* h, const compiler::CompilerIdentity& identity,
                  const command::CompileCommand& command) {
  h->field(identity.hash.lo);
  h->field(identity.hash.hi);
  h->field(command.args.size());
  for (const std::string& a : command.args) h->field(a);
  h->field(command.source);
  h->field(compiler::relevant_environment());
}

}  // namespace

cache::Hash128 translation_unit_key(const compiler::CompilerIdentity& identity,
                                    const command::CompileCommand& command,
                                    const std::string& cwd) {
  cache::Hasher h;
  h.field("lexpack-tu-1");
  hash_command(&h, identity, command);
  h.field(cwd);
  return h.digest();
}

cache::Hash128 action_key(const compiler::CompilerIdentity& identity,
                          const command::CompileCommand& command, const std::string& cwd,
                          const Closure& closure) {
  cache::Hasher h;
  h.field(kActionFormat);
  hash_command(&h, identity, command);
  bool records_cwd = command.debug_info && !command::cwd_is_mapped(command, cwd);
  h.field(records_cwd ? cwd : std::string("-"));
  h.field(closure.files.size());
  for (const ClosureFile& f : closure.files) {
    h.field(f.path);
    h.field(f.presence_only ? std::string("present") : f.content.hex());
  }
  h.field(closure.failed_probes.size());
  for (std::string_view p : closure.failed_probes) h.field(p);
  return h.digest();
}

cache::Hash128 dated_key(const cache::Hash128& key) {
  time_t now = time(nullptr);
  struct tm local;
  localtime_r(&now, &local);
  char date[32];
  strftime(date, sizeof date, "%b %e %Y", &local);  // the form of __DATE__
  cache::Hasher h;
  h.field("dated");
  h.field(key.hex());
  h.field(date);
  return h.digest();
}

}  // namespace lexpack::closure
