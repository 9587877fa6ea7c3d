// Stable spellings of directive kinds, used by JSON output and messages.
#include "lexer/scan_result.h"

namespace lexpack::lexer {

std::string_view kind_name(DirectiveKind kind) {
  switch (kind) {
    case DirectiveKind::kInclude:
      return "include";
    case DirectiveKind::kIncludeNext:
      return "include_next";
    case DirectiveKind::kImport:
      return "import";
    case DirectiveKind::kHasInclude:
      return "has_include";
    case DirectiveKind::kHasIncludeNext:
      return "has_include_next";
    case DirectiveKind::kDefine:
      return "define";
    case DirectiveKind::kUndef:
      return "undef";
    case DirectiveKind::kIf:
      return "if";
    case DirectiveKind::kIfdef:
      return "ifdef";
    case DirectiveKind::kIfndef:
      return "ifndef";
    case DirectiveKind::kElif:
      return "elif";
    case DirectiveKind::kElifdef:
      return "elifdef";
    case DirectiveKind::kElifndef:
      return "elifndef";
    case DirectiveKind::kElse:
      return "else";
    case DirectiveKind::kEndif:
      return "endif";
    case DirectiveKind::kPragmaOnce:
      return "pragma_once";
    case DirectiveKind::kModuleDecl:
      return "module";
    case DirectiveKind::kModuleImport:
      return "module_import";
  }
  return "unknown";
}

}  // namespace lexpack::lexer
