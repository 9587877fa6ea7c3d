// JSON rendering of a ScanResult, one object per file, so that a person or a
// script can see what the lexer found (`lexpack lex --json`).
#include "cli/scan_result_json.h"

#include <cstdio>

#include "base/json_string.h"

namespace lexpack::cli {

using base::append_json_string;
using lexer::Diagnostic;
using lexer::Directive;
using lexer::DirectiveKind;
using lexer::ScanResult;

namespace {

bool is_include_like(DirectiveKind k) {
  return k == DirectiveKind::kInclude || k == DirectiveKind::kIncludeNext ||
         k == DirectiveKind::kImport || k == DirectiveKind::kHasInclude ||
         k == DirectiveKind::kHasIncludeNext || k == DirectiveKind::kModuleImport;
}

}  // namespace

std::string to_json(std::string_view file, const ScanResult& r) {
  std::string out = "{\"file\":";
  append_json_string(&out, file);
  out += ",\"directives\":[";
  bool first = true;
  for (const Directive& d : r.directives) {
    if (!first) out.push_back(',');
    first = false;
    out += "{\"kind\":\"";
    out += kind_name(d.kind);
    out += "\",\"line\":" + std::to_string(d.line) + ",\"offset\":" + std::to_string(d.offset);
    if (is_include_like(d.kind)) {
      out += ",\"header\":";
      append_json_string(&out, r.text(d));
      out += d.angled ? ",\"angled\":true" : ",\"angled\":false";
      out += d.computed ? ",\"computed\":true" : ",\"computed\":false";
    } else if (d.text_size > 0 || d.kind == DirectiveKind::kModuleDecl) {
      out += d.kind == DirectiveKind::kModuleDecl ? ",\"name\":" : ",\"text\":";
      append_json_string(&out, r.text(d));
    }
    if (d.kind == DirectiveKind::kModuleDecl || d.kind == DirectiveKind::kModuleImport)
      out += d.exported ? ",\"exported\":true" : ",\"exported\":false";
    if (d.kind == DirectiveKind::kModuleImport)
      out += d.header_unit ? ",\"header_unit\":true" : ",\"header_unit\":false";
    if (d.kind == DirectiveKind::kDefine) {
      out += ",\"body_offset\":" + std::to_string(d.body_offset) +
             ",\"body_size\":" + std::to_string(d.body_size);
    }
    out.push_back('}');
  }
  out += "],\"include_guard\":";
  append_json_string(&out, r.include_guard);
  out += r.uses_date ? ",\"uses_date\":true" : ",\"uses_date\":false";
  out += r.uses_time ? ",\"uses_time\":true" : ",\"uses_time\":false";
  out += r.uses_timestamp ? ",\"uses_timestamp\":true" : ",\"uses_timestamp\":false";
  out += ",\"diagnostics\":[";
  first = true;
  for (const Diagnostic& d : r.diagnostics) {
    if (!first) out.push_back(',');
    first = false;
    out += "{\"line\":" + std::to_string(d.line) + ",\"offset\":" + std::to_string(d.offset) +
           ",\"message\":";
    append_json_string(&out, d.message);
    out.push_back('}');
  }
  out += "]}";
  return out;
}

}  // namespace lexpack::cli
