// What a finished scan report becomes: Make-style rules, the JSON of
// `lexpack scan --json`, and the comparison with ninja's records (`--check`).
// Apart from the scan itself, which only fills the report.
#include <algorithm>
#include <filesystem>
#include <iterator>
#include <map>
#include <set>

#include "base/file_util.h"
#include "base/json_string.h"
#include "scan/build_scan.h"

namespace lexpack::scan {
namespace {

// Appends `s` escaped for a Make rule; plain runs are copied whole.
void append_make_escaped(std::string* out, std::string_view s) {
  size_t run = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c != ' ' && c != '#' && c != '\\' && c != '$') continue;
    out->append(s.substr(run, i - run));
    out->push_back(c == '$' ? '$' : '\\');
    run = i;
  }
  out->append(s.substr(run));
}

}  // namespace

void keep_until_exit(ScanReport report) {
  static auto* kept = new std::vector<ScanReport>();
  kept->push_back(std::move(report));
}

bool write_make(const ScanReport& report, const std::function<bool(std::string_view)>& sink) {
  // In pieces through one buffer: the rules of a large build are megabytes,
  // and one string of them would be written into fresh pages.
  constexpr size_t kPiece = 64 * 1024;
  std::string out;
  out.reserve(kPiece + 4096);
  auto pass_on = [&](size_t at_least) {
    if (out.size() < at_least) return true;
    bool ok = sink(out);
    out.clear();
    return ok;
  };
  for (const TuScan& tu : report.tus) {
    if (!tu.skipped.empty()) continue;
    append_make_escaped(&out, tu.output);
    out += ':';
    for (std::string_view d : tu.deps) {
      out += " \\\n  ";
      append_make_escaped(&out, d);
      if (!pass_on(kPiece)) return false;
    }
    out += '\n';
  }
  return pass_on(1);
}

std::string format_make(const ScanReport& report) {
  std::string out;
  write_make(report, [&](std::string_view piece) {
    out.append(piece);
    return true;
  });
  return out;
}

std::string format_json(const ScanReport& report) {
  std::string out = "{\"tus\": [";
  bool first = true;
  for (const TuScan& tu : report.tus) {
    if (!tu.skipped.empty()) continue;
    out += first ? "\n" : ",\n";
    first = false;
    out += "  {\"directory\": " + base::json_string(tu.directory) +
           ", \"source\": " + base::json_string(tu.source) +
           ", \"output\": " + base::json_string(tu.output) +
           ", \"exact\": " + (tu.exact ? "true" : "false");
    if (tu.from_compiler) out += ", \"from_compiler\": true";
    if (!tu.inexact.empty()) out += ", \"inexact\": " + base::json_string(tu.inexact);
    out += ", \"deps\": [";
    for (size_t i = 0; i < tu.deps.size(); ++i) {
      out += (i ? ", " : "") + base::json_string(tu.deps[i]);
    }
    out += "]}";
  }
  return out + "\n]}\n";
}

namespace {

// The precompiled headers the report's own TUs make, by the header they
// stand in for (X for X.gch or X.pch, absolute and normal): each with the
// files its TU read.
std::map<std::string, const TuScan*> precompiled_headers(const ScanReport& report) {
  std::map<std::string, const TuScan*> made;
  for (const TuScan& tu : report.tus) {
    if (!tu.skipped.empty() || tu.output.size() < 4) continue;
    std::string_view suffix = std::string_view(tu.output).substr(tu.output.size() - 4);
    if (suffix != ".gch" && suffix != ".pch") continue;
    made[base::normal_path(tu.output.substr(0, tu.output.size() - 4), tu.directory)] = &tu;
  }
  return made;
}

// When `tu` took a precompiled header the report makes (its header is among
// the scanned files but not among those the compiler listed, as gcc lists
// none of the files a .gch holds), the files that header's TU read are
// dropped from `extra`; returns whether it took one.
bool drop_precompiled(const TuScan& tu, const std::set<std::string>& recorded,
                      const std::map<std::string, const TuScan*>& made,
                      std::vector<std::string>* extra) {
  bool took = false;
  for (std::string_view d : tu.deps) {
    auto it = made.find(std::string(d));
    if (it == made.end() || recorded.count(it->first)) continue;
    took = true;
    const std::set<std::string_view> held(it->second->deps.begin(), it->second->deps.end());
    std::erase_if(*extra, [&](const std::string& x) { return held.count(x) != 0; });
  }
  return took;
}

}  // namespace

std::vector<CheckFinding> check_against_ninja(const ScanReport& report,
                                              const ninja_integration::NinjaDeps& deps,
                                              const std::string& build_dir, uint64_t* unrecorded,
                                              uint64_t* took_precompiled) {
  std::vector<CheckFinding> findings;
  *unrecorded = 0;
  *took_precompiled = 0;
  std::error_code ec;
  std::string base = std::filesystem::absolute(build_dir, ec).string();
  const std::map<std::string, const TuScan*> made = precompiled_headers(report);
  for (const TuScan& tu : report.tus) {
    if (!tu.skipped.empty()) continue;
    auto it = deps.find(tu.output);
    if (it == deps.end()) {
      ++*unrecorded;
      continue;
    }
    std::set<std::string> scanned(tu.deps.begin(), tu.deps.end());
    std::set<std::string> recorded;
    for (const std::string& d : it->second) recorded.insert(base::normal_path(d, base));
    CheckFinding f;
    f.output = tu.output;
    std::set_difference(recorded.begin(), recorded.end(), scanned.begin(), scanned.end(),
                        std::back_inserter(f.missed));
    std::set_difference(scanned.begin(), scanned.end(), recorded.begin(), recorded.end(),
                        std::back_inserter(f.extra));
    if (!made.empty() && !f.extra.empty() && drop_precompiled(tu, recorded, made, &f.extra)) {
      ++*took_precompiled;
    }
    if (!f.missed.empty() || !f.extra.empty()) findings.push_back(std::move(f));
  }
  return findings;
}

}  // namespace lexpack::scan
