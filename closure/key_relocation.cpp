// Outputs may hold paths in three ways: the depfile and the compiler's
// messages (stored relocated, see base/relocation.h), __FILE__ (unless a
// macro prefix map rewrites it) and debug info (unless a debug prefix map
// does). The lexer does not report __FILE__, so every closure file under
// base_dir must be covered by a macro map; with -g by a debug map as well.
#include "closure/key_relocation.h"

#include <array>

#include "base/file_util.h"
#include "base/relocation.h"
#include "closure/relocated_content.h"

namespace lexpack::closure {
namespace {

using Maps = std::vector<std::pair<std::string, std::string>>;

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

// Flags whose value names a file or directory, joined or separate.
constexpr std::array<std::string_view, 10> kPathFlags = {
    "-isystem", "-iquote", "-idirafter", "-include", "-imacros", "-I", "-o", "-MF", "-MT", "-MQ"};
constexpr std::array<std::string_view, 3> kMapFlags = {
    "-ffile-prefix-map=", "-fdebug-prefix-map=", "-fmacro-prefix-map="};

// A map rewrites `path` the same way in every checkout: some map covers it,
// and every map gcc could pick (a textual prefix) lies under base_dir.
bool covered(std::string_view path, const Maps& maps, std::string_view base_dir) {
  bool any = false;
  for (const auto& [from, to] : maps) {
    if (from.empty() || !starts_with(path, from)) continue;
    if (!base::path_is_under(from, base_dir)) return false;
    if (base::path_is_under(path, from) || from.back() == '/') any = true;
  }
  return any;
}

// The map to add: the old prefix is the checkout's top directory (what
// lies between it and the working directory is part of the key, and is the
// same in every checkout of one project).
std::string suggestion(std::string_view base_dir) {
  return "; add -ffile-prefix-map=TOP=. with TOP the checkout's top directory (under " +
         std::string(base_dir) + ")";
}

// Empty when `path` can be named relative; else why not.
std::string path_blocker(std::string_view path, const compiler::CompileCommand& command,
                         std::string_view base_dir) {
  if (!base::path_is_under(path, base_dir)) return "";
  if (!covered(path, command.macro_prefix_maps, base_dir)) {
    return "__FILE__ may record " + std::string(path) + suggestion(base_dir);
  }
  if (command.debug_info && !covered(path, command.prefix_maps, base_dir)) {
    return "-g records " + std::string(path) + suggestion(base_dir);
  }
  return "";
}

// Calls `f(index, prefix, value)` for each argument that carries a path the
// key may rename; returns the first other argument naming base_dir.
template <typename F>
std::string visit_args(const compiler::CompileCommand& command, std::string_view base_dir, F f) {
  const std::vector<std::string>& a = command.args;
  std::string blocker;
  for (size_t i = 0; i < a.size(); ++i) {
    std::string_view arg = a[i];
    bool handled = false;
    for (std::string_view flag : kPathFlags) {
      if (arg == flag && i + 1 < a.size()) {
        f(i + 1, std::string_view(), std::string_view(a[i + 1]));
        ++i;
        handled = true;
      } else if (arg.size() > flag.size() && starts_with(arg, flag) &&
                 (flag.size() <= 3 || arg[flag.size()] == '/')) {
        f(i, arg.substr(0, flag.size()), arg.substr(flag.size()));
        handled = true;
      }
      if (handled) break;
    }
    if (handled) continue;
    for (std::string_view flag : kMapFlags) {
      if (!starts_with(arg, flag)) continue;
      std::string_view map = arg.substr(flag.size());
      size_t eq = map.find('=');
      if (eq == std::string_view::npos) break;
      std::string_view to = map.substr(eq + 1);
      if (to.find(base_dir) != std::string_view::npos && blocker.empty()) {
        blocker = "the prefix map " + std::string(arg) + " maps to a path under base_dir";
      }
      // The old prefix is renamed; the rest (`=new`) is kept as written.
      f(i, arg.substr(0, flag.size()), map.substr(0, eq));
      handled = true;
      break;
    }
    if (handled) continue;
    if (arg == command.source) {
      f(i, std::string_view(), arg);
      continue;
    }
    if (arg.find(base_dir) != std::string_view::npos && blocker.empty()) {
      blocker = "the argument " + std::string(arg) + " names a path under base_dir";
    }
  }
  return blocker;
}

// Fills r->relocated_contents (r's base_dir and cwd set); why not, else.
std::string relocate_contents(const Closure& closure, KeyRelocation* r) {
  auto rename = [r](std::string_view path) { return base::relative_to(path, r->cwd); };
  for (size_t i = 0; i < closure.files.size(); ++i) {
    const ClosureFile& f = closure.files[i];
    if (!f.absolute_includes || f.presence_only) continue;
    const std::string path = base::absolute_path(std::string(f.path), r->cwd);
    base::Result<std::string> bytes = base::read_file(path);
    if (!bytes.ok() || !(cache::hash_bytes(*bytes) == f.content)) {
      return std::string(f.path) + " changed while its key was made";
    }
    const cache::Hash128 content = relocated_content(*bytes, r->base_dir, rename);
    if (!(content == f.content)) r->relocated_contents.emplace_back(i, content);
  }
  return "";
}

}  // namespace

const cache::Hash128& KeyRelocation::content_of(size_t index, const cache::Hash128& content) const {
  for (const auto& [i, relocated] : relocated_contents) {
    if (i == index) return relocated;
  }
  return content;
}

std::string KeyRelocation::name(std::string_view path) const {
  std::string storage;
  return std::string(name_in(path, &storage));
}

std::string_view KeyRelocation::name_in(std::string_view path, std::string* storage) const {
  if (!relocated || !base::path_is_under(path, base_dir)) return path;
  *storage = base::relative_to(path, cwd);
  return *storage;
}

KeyRelocation decide_relocation(const compiler::CompileCommand& command, const std::string& cwd,
                                const Closure& closure, std::string_view base_dir) {
  KeyRelocation r;
  r.base_dir = std::string(base_dir);
  r.cwd = cwd;
  if (base_dir.empty()) return r;
  std::string why =
      visit_args(command, base_dir, [](size_t, std::string_view, std::string_view) {});
  if (why.empty() && command.split_dwarf && base::path_is_under(command.output, base_dir)) {
    why = "-gsplit-dwarf records the .dwo path " + command.output;
  }
  if (why.empty() && command.debug_info && !command.has_debug_compilation_dir &&
      (!base::path_is_under(cwd, base_dir) || !covered(cwd, command.prefix_maps, base_dir))) {
    why = "-g records the working directory" + suggestion(base_dir);
  }
  if (why.empty()) why = path_blocker(command.source, command, base_dir);
  for (const ClosureFile& f : closure.files) {
    if (!why.empty()) break;
    why = path_blocker(f.path, command, base_dir);
  }
  if (why.empty()) why = relocate_contents(closure, &r);
  if (why.empty() && command.makes_pch) {
    r.pch_maker_relocatable = true;
    why =
        "a precompiled header records the paths of the headers it holds (its users' keys name "
        "the compile that made it, and are relocated)";
  }
  r.not_relocatable = why;
  r.relocated = why.empty();
  return r;
}

std::vector<std::string> relocated_args(const compiler::CompileCommand& command,
                                        const KeyRelocation& relocation) {
  std::vector<std::string> out = command.args;
  if (!relocation.relocated) return out;
  visit_args(command, relocation.base_dir,
             [&](size_t i, std::string_view prefix, std::string_view value) {
               if (!base::path_is_under(value, relocation.base_dir)) return;
               std::string_view whole = command.args[i];
               std::string_view after = whole.substr(prefix.size() + value.size());
               out[i] = std::string(prefix) + relocation.name(value) + std::string(after);
               // A map whose old prefix is the working directory or above it
               // writes the directories between them into the object (its
               // `..` in the key does not name them): they are keyed too.
               std::string_view from = value;
               while (from.size() > 1 && from.back() == '/') from.remove_suffix(1);
               const bool map = !prefix.empty() && prefix.back() == '=';
               if (map && base::path_is_under(relocation.cwd, from)) {
                 out[i] += '\0';
                 out[i] += base::relative_to(relocation.cwd, from);
               }
             });
  return out;
}

}  // namespace lexpack::closure
