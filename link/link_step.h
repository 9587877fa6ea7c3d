// What an archive or link command line does: `ar` (q or r, deterministic),
// `ranlib`, or a gcc/clang driver link, its output, and why it cannot be
// cached. Anything not recognised is uncacheable and runs as it is.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "link/linker_options.h"

namespace lexpack::link {

// kRemove: CMake's `cmake -E rm -f FILE...` before an archive is made, done
// in process rather than by starting cmake (most of an archive hit's time).
enum class StepKind { kNone, kArchive, kRanlib, kLink, kRemove };

struct LinkStep {
  StepKind kind = StepKind::kNone;
  std::string tool;               // argv[0] as given
  std::vector<std::string> args;  // argv[1..]
  std::string output;             // the archive, the -o file of a link, the first file removed
  // Files named on the command line that the step reads: archive members,
  // the archive of ranlib, the inputs of a link (objects, archives, scripts).
  std::vector<std::string> inputs;
  // What the linker words (-Wl, -Xlinker, their @files) and the script
  // arguments of a link say: files to key beyond the dependency file,
  // directories searched, whether a linker script is given.
  LinkerOptions linker;
  // The -flto option of an LTO link (its compiles run in the link), or empty.
  std::string lto;
  std::string uncacheable;  // empty when cacheable: a short reason otherwise
};

// "ar", "<triple>-ar"; "ranlib", "<triple>-ranlib".
bool is_archiver_name(std::string_view base);
bool is_ranlib_name(std::string_view base);
// gcc, g++, cc, c++, clang, clang++ with optional triple prefix and version.
bool is_driver_name(std::string_view base);

// Driver options taking a separate argument that is not an input file
// ("-L", "-l", "-T", "-u", ...).
bool driver_option_takes_argument(std::string_view a);

// StepKind::kNone when argv is not an archive, ranlib, driver link step or
// exactly `cmake -E rm -f FILE...` (FILE plain paths)
// (for instance a compile: the caller handles those).
// A driver link's @file arguments are read (relative to this process's
// working directory) and replaced by their words; the step's args hold them.
LinkStep parse_link_step(const std::vector<std::string>& argv);

// The words of a response file, as gcc and clang split it.
std::vector<std::string> split_response_file(std::string_view text);

}  // namespace lexpack::link
