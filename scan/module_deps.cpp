// Module declarations and imports come only from each TU's own source: a
// module declaration cannot come from a header, and the P1689 rule of a TU
// names what the TU itself provides and imports.
#include "scan/module_deps.h"

#include <algorithm>

#include "base/file_stat.h"
#include "base/file_util.h"
#include "base/json_string.h"
#include "lexer/scanner.h"

namespace lexpack::scan {
namespace {

void add_import(ModuleDeps* deps, ModuleRequirement r) {
  if (std::find(deps->imports.begin(), deps->imports.end(), r) == deps->imports.end())
    deps->imports.push_back(std::move(r));
}

std::string rule_json(const TuScan& tu, const ModuleDeps& deps) {
  std::string out = "    {\n      \"primary-output\": " + base::json_string(tu.output);
  if (!deps.provides.empty()) {
    out += ",\n      \"provides\": [{\"logical-name\": " + base::json_string(deps.provides) +
           ", \"source-path\": " + base::json_string(tu.deps.empty() ? tu.source : tu.deps[0]) +
           ", \"is-interface\": " + (deps.is_interface ? "true" : "false") + "}]";
  }
  out += ",\n      \"requires\": [";
  for (size_t i = 0; i < deps.imports.size(); ++i) {
    const ModuleRequirement& r = deps.imports[i];
    out += i ? ", " : "";
    out += "{\"logical-name\": " + base::json_string(r.logical_name);
    if (r.lookup == LookupMethod::kIncludeAngle) out += ", \"lookup-method\": \"include-angle\"";
    if (r.lookup == LookupMethod::kIncludeQuote) out += ", \"lookup-method\": \"include-quote\"";
    out += "}";
  }
  return out + "]\n    }";
}

}  // namespace

ModuleDeps module_deps(const lexer::ScanResult& scan, const std::vector<uint32_t>* taken_lines) {
  ModuleDeps deps;
  std::string module;  // the primary module name of this unit
  for (const lexer::Directive& d : scan.directives) {
    if (taken_lines &&
        (d.kind == lexer::DirectiveKind::kModuleDecl ||
         d.kind == lexer::DirectiveKind::kModuleImport) &&
        std::find(taken_lines->begin(), taken_lines->end(), d.line) == taken_lines->end()) {
      continue;
    }
    std::string_view text = scan.text(d);
    if (d.kind == lexer::DirectiveKind::kModuleDecl) {
      if (text.empty() || text.front() == ':') continue;  // `module;`, `module :private;`
      module = std::string(text.substr(0, text.find(':')));
      bool partition = text.find(':') != std::string_view::npos;
      if (partition || d.exported) {
        deps.provides = std::string(text);
        deps.is_interface = d.exported;
      } else {
        add_import(&deps, {module, LookupMethod::kByName});
      }
    } else if (d.kind == lexer::DirectiveKind::kModuleImport) {
      if (d.header_unit) {
        add_import(&deps, {std::string(text),
                           d.angled ? LookupMethod::kIncludeAngle : LookupMethod::kIncludeQuote});
      } else if (!text.empty() && text.front() == ':') {
        if (!module.empty()) add_import(&deps, {module + std::string(text), LookupMethod::kByName});
      } else if (!text.empty()) {
        add_import(&deps, {std::string(text), LookupMethod::kByName});
      }
    }
  }
  return deps;
}

base::Result<std::string> format_p1689(const ScanReport& report, const lexer::Kernel& kernel) {
  std::string out = "{\n  \"version\": 1,\n  \"revision\": 0,\n  \"rules\": [";
  bool first = true;
  for (const TuScan& tu : report.tus) {
    if (!tu.skipped.empty()) continue;
    const std::string path =
        tu.deps.empty() ? base::absolute_path(tu.source, tu.directory) : std::string(tu.deps[0]);
    base::Result<std::string> bytes = base::read_file(path);
    if (!bytes.ok()) return base::Status::error(path + ": " + bytes.message());
    out += first ? "\n" : ",\n";
    first = false;
    out += rule_json(tu, module_deps(lexer::scan(*bytes, kernel),
                                     tu.modules_exact ? &tu.module_lines : nullptr));
  }
  return out + "\n  ]\n}\n";
}

}  // namespace lexpack::scan
