// What explain compares: the arguments that decide the object against the last
// stored compile of the same output, and the closure kept for explain only.
#include "launcher/launcher_impl.h"

namespace lexpack::launcher::detail {
namespace {

// The arguments that decide the object: without the depfile options, which
// change only the depfile's name and targets, and the output name.
std::vector<std::string> object_arguments(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view a = args[i];
    if (a == "-MD" || a == "-MMD" || a == "-MP") continue;
    if (a == "-MF" || a == "-MT" || a == "-MQ" || a == "-o") {
      ++i;
      continue;
    }
    if (a.starts_with("-MF") || a.starts_with("-MT") || a.starts_with("-MQ") ||
        (a.starts_with("-o") && !a.starts_with("-obj"))) {  // not clang's -objcmt-...
      continue;
    }
    out.emplace_back(a);
  }
  return out;
}

}  // namespace

std::string encode_args(const compiler::CompileCommand& c) {
  base::VarintWriter w;
  w.str(c.compiler);
  w.u64(c.args.size());
  for (const std::string& a : c.args) w.str(a);
  return w.take();
}

bool decode_args(std::string_view bytes, std::vector<std::string>* out) {
  base::VarintReader r(bytes);
  std::string compiler;
  uint64_t n = 0;
  if (!r.str(&compiler) || !r.u64(&n) || n > bytes.size()) return false;
  out->push_back(compiler);
  for (uint64_t i = 0; i < n; ++i) {
    std::string a;
    if (!r.str(&a)) return false;
    out->push_back(std::move(a));
  }
  return r.done();
}

void Launcher::drop_explain_memo(const cache::Hash128& tu) {
  bool present = store_->visit_memo(kExplainMemoTable, tu.hex(),
                                    [&](std::string_view bytes) { present = !bytes.empty(); });
  if (present) store_->put_memo(kExplainMemoTable, tu.hex(), "");
}

// A command from compile_commands.json lacks the depfile options the build
// passes (CMake leaves them out there): when the last stored compile of this
// output differs from it only in those, that compile is the one explained.
void Launcher::adopt_build_command() {
  std::optional<std::string> last =
      store_->get_memo("last", base::absolute_path(cmd_.output, cwd_));
  std::vector<std::string> before;
  if (!last || !decode_args(*last, &before)) return;
  std::vector<std::string> now = {cmd_.compiler};
  now.insert(now.end(), cmd_.args.begin(), cmd_.args.end());
  if (before == now || object_arguments(before) != object_arguments(now)) return;
  note("explaining the build's compile of this output (it differs only in depfile options)");
  argv_ = before;
  cmd_ = compiler::parse_compile_command(argv_);
}

bool Launcher::last_compile(std::vector<std::string>* before, std::vector<std::string>* now) {
  std::optional<std::string> last =
      store_->get_memo("last", base::absolute_path(cmd_.output, cwd_));
  if (!last || !decode_args(*last, before)) return false;
  *now = {cmd_.compiler};
  now->insert(now->end(), cmd_.args.begin(), cmd_.args.end());
  // Depfile options and the output name do not change the object.
  if (*before != *now) {
    *before = object_arguments(*before);
    *now = object_arguments(*now);
  }
  return true;
}

bool Launcher::compiled_before_with_these_arguments() {
  std::vector<std::string> before, now;
  return last_compile(&before, &now) && before == now;
}

std::string Launcher::describe_arg_change() {
  std::vector<std::string> before, now;
  if (!last_compile(&before, &now)) return "no earlier compile of this output is known";
  if (before == now) return "arguments unchanged since the last stored compile of this output";
  std::string out = "arguments changed since the last stored compile of this output:";
  for (const std::string& a : before) {
    if (std::find(now.begin(), now.end(), a) == now.end()) out += " -[" + a + "]";
  }
  for (const std::string& a : now) {
    if (std::find(before.begin(), before.end(), a) == before.end()) out += " +[" + a + "]";
  }
  if (out.back() == ':') out += " their order";
  return out;
}

}  // namespace lexpack::launcher::detail
