// Relocation is textual and exact: the part of a path that names the
// checkout is swapped for a reference to the working directory, and every
// other byte is kept, so a restored depfile is the one the compiler writes.
#include "base/relocation.h"

#include <cctype>
#include <vector>

namespace lexpack::base {
namespace {

bool is_path_char(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  if (u >= 0x80) return false;
  if (std::isalnum(u)) return true;
  switch (c) {
    case '.':
    case '_':
    case '-':
    case '+':
    case '~':
    case '/':
    case '@':
    case '%':
    case '#':
      return true;
    default:
      return false;
  }
}

std::vector<std::string_view> components(std::string_view path) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    size_t j = i;
    while (j < path.size() && path[j] != '/') ++j;
    if (j > i) out.push_back(path.substr(i, j - i));
    i = j;
  }
  return out;
}

// True when an ANSI escape sequence (ESC '[', its digits and ';', a final
// letter) ends just before `at`: a colored diagnostic (-fdiagnostics-color,
// which CMake's Ninja builds often ask for) has one right before each path.
bool follows_escape(std::string_view text, size_t at) {
  if (at < 3 || !std::isalpha(static_cast<unsigned char>(text[at - 1]))) return false;
  size_t k = at - 1;
  while (k > 0 && (std::isdigit(static_cast<unsigned char>(text[k - 1])) || text[k - 1] == ';')) {
    --k;
  }
  return k >= 2 && text[k - 1] == '[' && text[k - 2] == '\x1b';
}

// Where `base_dir` starts a path in `text` at or after `from`; npos if nowhere.
size_t find_path_start(std::string_view text, std::string_view base_dir, size_t from) {
  while (true) {
    size_t at = text.find(base_dir, from);
    if (at == std::string_view::npos) return at;
    size_t end = at + base_dir.size();
    bool starts = at == 0 || !is_path_char(text[at - 1]) || follows_escape(text, at);
    bool ends = end == text.size() || text[end] == '/' || !is_path_char(text[end]);
    if (starts && ends) return at;
    from = at + 1;
  }
}

// Length of the prefix of `token` made of the first `n` components of cwd
// that it shares, and that count.
size_t shared_prefix(std::string_view token, const std::vector<std::string_view>& cwd,
                     size_t* shared) {
  size_t i = 0, n = 0, end = 0;
  while (n < cwd.size()) {
    if (i >= token.size() || token[i] != '/') break;
    size_t j = i;
    while (j < token.size() && token[j] == '/') ++j;
    size_t k = j;
    while (k < token.size() && token[k] != '/') ++k;
    if (token.substr(j, k - j) != cwd[n]) break;
    ++n;
    end = k;
    i = k;
  }
  *shared = n;
  return end;
}

}  // namespace

bool path_is_under(std::string_view path, std::string_view dir) {
  if (dir.empty() || path.substr(0, dir.size()) != dir) return false;
  if (dir == "/") return !path.empty() && path[0] == '/';
  return path.size() == dir.size() || path[dir.size()] == '/';
}

std::string relative_to(std::string_view path, std::string_view cwd) {
  std::vector<std::string_view> c = components(cwd);
  size_t shared = 0;
  size_t end = shared_prefix(path, c, &shared);
  std::string out;
  for (size_t i = shared; i < c.size(); ++i) out += i + 1 < c.size() ? "../" : "..";
  std::string_view rest = path.substr(end);
  while (!rest.empty() && rest.front() == '/') rest.remove_prefix(1);
  if (!rest.empty()) {
    if (!out.empty()) out += '/';
    out += rest;
  }
  return out.empty() ? "." : out;
}

bool relocate_text(std::string_view text, std::string_view base_dir, std::string_view cwd,
                   std::string* out) {
  out->clear();
  if (text.find(kRelocationMarker) != std::string_view::npos) return false;
  std::vector<std::string_view> c = components(cwd);
  size_t pos = 0;
  while (true) {
    size_t at = find_path_start(text, base_dir, pos);
    if (at == std::string_view::npos) break;
    size_t stop = at;
    while (stop < text.size() && is_path_char(text[stop])) ++stop;
    std::string_view token = text.substr(at, stop - at);
    size_t shared = 0;
    size_t prefix = shared_prefix(token, c, &shared);
    out->append(text.substr(pos, at - pos));
    out->append(kRelocationMarker);
    out->append(std::to_string(c.size() - shared));
    out->push_back('\x01');
    out->append(token.substr(prefix));
    pos = stop;
  }
  out->append(text.substr(pos));
  // Whatever still names base_dir was written in a form not recognized above.
  std::string_view rewritten = *out;
  size_t at = rewritten.find(base_dir);
  while (at != std::string_view::npos) {
    size_t end = at + base_dir.size();
    if (end == rewritten.size() || rewritten[end] == '/' || !is_path_char(rewritten[end])) {
      return false;
    }
    at = rewritten.find(base_dir, at + 1);
  }
  return true;
}

bool restore_text(std::string_view text, std::string_view cwd, std::string* out) {
  out->clear();
  std::vector<std::string_view> c = components(cwd);
  size_t pos = 0;
  while (true) {
    size_t at = text.find(kRelocationMarker, pos);
    if (at == std::string_view::npos) break;
    size_t digits = at + kRelocationMarker.size();
    size_t end = text.find('\x01', digits);
    if (end == std::string_view::npos || end == digits || end - digits > 4) return false;
    size_t up = 0;
    for (size_t i = digits; i < end; ++i) {
      if (text[i] < '0' || text[i] > '9') return false;
      up = up * 10 + size_t(text[i] - '0');
    }
    if (up > c.size()) return false;
    out->append(text.substr(pos, at - pos));
    std::string ancestor;
    for (size_t i = 0; i + up < c.size(); ++i) {
      ancestor += '/';
      ancestor += c[i];
    }
    size_t next = end + 1;
    bool rest_follows = next < text.size() && text[next] == '/';
    if (ancestor.empty() && !rest_follows) ancestor = "/";
    out->append(ancestor);
    pos = next;
  }
  out->append(text.substr(pos));
  return true;
}

}  // namespace lexpack::base
