// The two writers, as gcc (libcpp mkdeps.cc, 72 columns) and clang
// (DependencyFile.cpp, 75 columns) implement them; names are kept escaped as
// written, so their lengths are the ones the compilers counted.
#include "base/depfile_flow.h"

#include <vector>

namespace lexpack::base {
namespace {

// A token is the run of text between separators as written (a character
// escaped with a backslash, a space too, belongs to it): a view of the text.
struct Rule {
  std::vector<std::string_view> targets, deps;
  std::string_view rest;  // after the rule's final newline
  bool ok = false;
};

Rule split(std::string_view text) {
  Rule r;
  std::vector<std::string_view> tokens;
  size_t begin = 0;  // of the token under way, when i > begin
  size_t i = 0;
  bool ended = false;
  auto end_token = [&](size_t end) {
    if (end > begin) tokens.push_back(text.substr(begin, end - begin));
  };
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {
      end_token(i);
      begin = ++i + 1;
      continue;
    }
    if (c == '\\' && i + 1 < text.size()) {
      ++i;
      continue;
    }
    if (c == '\n') {
      ended = true;
      break;
    }
    if (c == ' ' || c == '\t') {
      end_token(i);
      begin = i + 1;
    }
  }
  if (!ended) return r;
  end_token(i);
  ++i;
  size_t t = 0;
  for (; t < tokens.size(); ++t) {
    if (tokens[t].back() == ':') break;
  }
  if (t == tokens.size()) return r;
  r.targets.assign(tokens.begin(), tokens.begin() + long(t) + 1);
  r.targets.back().remove_suffix(1);
  if (r.targets.back().empty()) r.targets.pop_back();
  r.deps.assign(tokens.begin() + long(t) + 1, tokens.end());
  r.rest = text.substr(i);
  r.ok = !r.targets.empty();
  return r;
}

std::string write_gcc(const Rule& r, size_t size) {
  std::string out;
  out.reserve(size + size / 16);
  unsigned col = 0;
  auto name = [&](std::string_view n) {
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
  for (std::string_view t : r.targets) name(t);
  out += ':';
  ++col;
  for (std::string_view d : r.deps) name(d);
  out += '\n';
  out += r.rest;
  return out;
}

std::string write_clang(const Rule& r, size_t size) {
  std::string out;
  out.reserve(size + size / 16);
  unsigned col = 0;
  for (std::string_view t : r.targets) {
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
  for (std::string_view d : r.deps) {
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
  if (write_gcc(r, depfile.size()) == depfile) return DepfileFlow::kGcc;
  if (write_clang(r, depfile.size()) == depfile) return DepfileFlow::kClang;
  return DepfileFlow::kNone;
}

std::string reflow_depfile(std::string_view depfile, DepfileFlow flow) {
  Rule r = split(depfile);
  if (!r.ok || flow == DepfileFlow::kNone) return std::string(depfile);
  return flow == DepfileFlow::kGcc ? write_gcc(r, depfile.size()) : write_clang(r, depfile.size());
}

}  // namespace lexpack::base
