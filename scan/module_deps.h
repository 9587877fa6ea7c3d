// C++20 module dependencies of each TU for `lexpack scan --format p1689`: the
// module a TU provides and the modules and header units it imports, taken
// from the lexer's module directives, written as P1689R5 JSON for CMake.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "lexer/kernel.h"
#include "lexer/scan_result.h"
#include "scan/build_scan.h"

namespace lexpack::scan {

enum class LookupMethod { kByName, kIncludeAngle, kIncludeQuote };

struct ModuleRequirement {
  std::string logical_name;  // "m", "m:part" (partitions named in full), or a header name
  LookupMethod lookup = LookupMethod::kByName;
  bool operator==(const ModuleRequirement&) const = default;
};

struct ModuleDeps {
  std::string provides;  // empty: the TU is not a module interface or partition
  bool is_interface = false;
  std::vector<ModuleRequirement> imports;  // in source order, without repeats
  bool operator==(const ModuleDeps&) const = default;
};

// From one source file's scan. An implementation unit (`module m;`) imports
// `m`; `import :p;` inside module `m` names `m:p`; `module;` and
// `module :private;` provide nothing. `taken_lines`, when given, keeps only
// the directives on those lines (the ones in taken branches).
ModuleDeps module_deps(const lexer::ScanResult& scan,
                       const std::vector<uint32_t>* taken_lines = nullptr);

// {"version": 1, "revision": 0, "rules": [...]}, one rule per scanned TU, with
// each TU's source read and lexed again (module directives live in it); an
// exact TU lists only the lines in taken branches, another every one.
base::Result<std::string> format_p1689(const ScanReport& report, const lexer::Kernel& kernel);

}  // namespace lexpack::scan
