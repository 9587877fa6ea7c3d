// Compile databases: compile_commands.json as CMake writes it, or the one
// `ninja -t compdb` prints for a build directory. `lexpack scan` and
// `lexpack warm` work from its entries.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace lexpack::scan {

struct CompdbEntry {
  std::string directory;          // absolute
  std::string file;               // as written in the entry
  std::string output;             // empty when the entry has none
  std::vector<std::string> argv;  // argv[0] is the compiler (launchers removed)
  // The first launcher removed that is not lexpack (ccache, sccache,
  // distcc): `lexpack ninja` leaves such a compile to it. Empty otherwise.
  std::string launcher;
};

// Parses the JSON text of a compile database; `name` is used in errors
// ("compile_commands.json: offset 120: expected ','").
base::Result<std::vector<CompdbEntry>> parse_compdb(std::string_view json, const std::string& name);

// Reads a compile_commands.json file.
base::Result<std::vector<CompdbEntry>> read_compdb(const std::string& path);

// Runs `ninja -C build_dir -t compdb` and parses what it prints.
base::Result<std::vector<CompdbEntry>> compdb_from_ninja(const std::string& build_dir);

// Splits a command line the way /bin/sh would for plain words and quotes
// (no expansions). False when a quote is not closed.
bool split_command(std::string_view command, std::vector<std::string>* words);

}  // namespace lexpack::scan
