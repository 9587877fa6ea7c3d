#include "closure/relocated_content.h"

#include <functional>
#include <vector>

#include "base/relocation.h"
#include "lexer/kernel.h"
#include "lexer/scanner.h"

namespace lexpack::closure {
namespace {

bool include_like(lexer::DirectiveKind kind) {
  using K = lexer::DirectiveKind;
  return kind == K::kInclude || kind == K::kIncludeNext || kind == K::kImport ||
         kind == K::kHasInclude || kind == K::kHasIncludeNext;
}

struct Span {
  size_t at = 0, size = 0;
  std::string name;
};

}  // namespace

cache::Hash128 relocated_content(std::string_view bytes, std::string_view base_dir,
                                 const std::function<std::string(std::string_view)>& rename) {
  lexer::ScanResult scan = lexer::scan(bytes, lexer::scalar_kernel());
  std::vector<Span> spans;
  size_t taken_until = 0;  // operands are found in order, each after the last
  for (const lexer::Directive& d : scan.directives) {
    if (!include_like(d.kind) || d.computed) continue;
    std::string_view name = scan.text(d);
    if (name.empty() || name[0] != '/' || !base::path_is_under(name, base_dir)) continue;
    std::string operand = std::string(1, d.angled ? '<' : '"') + std::string(name) +
                          std::string(1, d.angled ? '>' : '"');
    size_t from = std::max<size_t>(size_t(d.offset), taken_until);
    size_t at = bytes.find(operand, from);
    // On the directive's own line, or it is not the operand: left as bytes.
    if (at == std::string_view::npos ||
        bytes.substr(size_t(d.offset), at - size_t(d.offset)).find('\n') !=
            std::string_view::npos) {
      continue;
    }
    spans.push_back({at + 1, name.size(), rename(name)});
    taken_until = at + operand.size();
  }
  if (spans.empty()) return cache::hash_bytes(bytes);
  cache::Hasher h;
  h.field("relocated-include-operands");
  size_t done = 0;
  for (const Span& s : spans) {
    h.field(bytes.substr(done, s.at - done));
    h.field(s.name);
    done = s.at + s.size;
  }
  h.field(bytes.substr(done));
  return h.digest();
}

}  // namespace lexpack::closure
