#include "launcher/relocated_text.h"

#include "base/depfile_flow.h"
#include "base/relocation.h"

namespace lexpack::launcher {

bool restore_paths(std::string_view bytes, const std::string& cwd, std::string* out) {
  if (bytes.find(base::kRelocationMarker) == std::string_view::npos) {
    out->assign(bytes);
    return true;
  }
  return base::restore_text(bytes, cwd, out);
}

// A relocated depfile starts with the compiler whose line wrapping it has,
// so it is wrapped again once its paths name this checkout.
constexpr std::string_view kGccFlow = "\x01lexpack-flow:gcc\x01";
constexpr std::string_view kClangFlow = "\x01lexpack-flow:clang\x01";

bool relocate_depfile(std::string_view bytes, const std::string& base_dir, const std::string& cwd,
                      std::string* out) {
  std::string text;
  if (!base::relocate_text(bytes, base_dir, cwd, &text)) return false;
  base::DepfileFlow flow = base::detect_depfile_flow(bytes);
  *out = flow == base::DepfileFlow::kGcc     ? std::string(kGccFlow) + text
         : flow == base::DepfileFlow::kClang ? std::string(kClangFlow) + text
                                             : text;
  return true;
}

bool restore_depfile(std::string_view bytes, const std::string& cwd, std::string* out) {
  base::DepfileFlow flow = base::DepfileFlow::kNone;
  if (bytes.substr(0, kGccFlow.size()) == kGccFlow) {
    flow = base::DepfileFlow::kGcc;
    bytes.remove_prefix(kGccFlow.size());
  } else if (bytes.substr(0, kClangFlow.size()) == kClangFlow) {
    flow = base::DepfileFlow::kClang;
    bytes.remove_prefix(kClangFlow.size());
  }
  if (!restore_paths(bytes, cwd, out)) return false;
  if (flow != base::DepfileFlow::kNone) *out = base::reflow_depfile(*out, flow);
  return true;
}

}  // namespace lexpack::launcher
