// The two writers, as gcc (libcpp mkdeps.cc, 72 columns) and clang
// (DependencyFile.cpp, 75 columns) implement them; names are kept escaped as
// written, so their lengths are the ones the compilers counted.
#include "base/depfile_flow.h"

#include <vector>

namespace lexpack::base {
namespace {

struct Rule {
  std::vector<std::string> targets, deps;
  std::string_view rest;  // after the rule's final newline
  bool ok = false;
};

Rule split(std::string_view text) {
  Rule r;
  std::vector<std::string> tokens;
  std::string cur;
  size_t i = 0;
  bool ended = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {
      ++i;
      if (!cur.empty()) tokens.push_back(std::move(cur));
      cur.clear();
      continue;
    }
    if (c == '\\' && i + 1 < text.size()) {
      cur += c;
      cur += text[++i];
      continue;
    }
    if (c == '\n') {
      ended = true;
      ++i;
      break;
    }
    if (c == ' ' || c == '\t') {
      if (!cur.empty()) tokens.push_back(std::move(cur));
      cur.clear();
      continue;
    }
    cur += c;
  }
  if (!ended) return r;
  if (!cur.empty()) tokens.push_back(std::move(cur));
  size_t t = 0;
  for (; t < tokens.size(); ++t) {
    if (!tokens[t].empty() && tokens[t].back() == ':') break;
  }
  if (t == tokens.size()) return r;
  r.targets.assign(tokens.begin(), tokens.begin() + long(t) + 1);
  r.targets.back().pop_back();
  if (r.targets.back().empty()) r.targets.pop_back();
  r.deps.assign(tokens.begin() + long(t) + 1, tokens.end());
  r.rest = text.substr(i);
  r.ok = !r.targets.empty();
  return r;
}

std::string write_gcc(const Rule& r) {
  std::string out;
  unsigned col = 0;
  auto name = [&](const std::string& n) {
    if (col) {
      if (col + n.size() > 72) {
        out += " \\\n";
        col = 0;
      }
      ++col;
      out += ' ';
    }
    col += unsigned(n.size());
    out += n;
  };
  for (const std::string& t : r.targets) name(t);
  out += ':';
  ++col;
  for (const std::string& d : r.deps) name(d);
  out += '\n';
  out += r.rest;
  return out;
}

std::string write_clang(const Rule& r) {
  std::string out;
  unsigned col = 0;
  for (const std::string& t : r.targets) {
    unsigned n = unsigned(t.size());
    if (col == 0) {
      col += n;
    } else if (col + n + 2 > 75) {
      col = n + 2;
      out += " \\\n  ";
    } else {
      col += n + 1;
      out += ' ';
    }
    out += t;
  }
  out += ':';
  col += 1;
  for (const std::string& d : r.deps) {
    unsigned n = unsigned(d.size());
    if (col + (n + 1) + 2 > 75) {
      out += " \\\n ";
      col = 2;
    }
    out += ' ';
    out += d;
    col += n + 1;
  }
  out += '\n';
  out += r.rest;
  return out;
}

}  // namespace

DepfileFlow detect_depfile_flow(std::string_view depfile) {
  Rule r = split(depfile);
  if (!r.ok) return DepfileFlow::kNone;
  if (write_gcc(r) == depfile) return DepfileFlow::kGcc;
  if (write_clang(r) == depfile) return DepfileFlow::kClang;
  return DepfileFlow::kNone;
}

std::string reflow_depfile(std::string_view depfile, DepfileFlow flow) {
  Rule r = split(depfile);
  if (!r.ok || flow == DepfileFlow::kNone) return std::string(depfile);
  return flow == DepfileFlow::kGcc ? write_gcc(r) : write_clang(r);
}

}  // namespace lexpack::base
