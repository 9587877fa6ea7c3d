// Parsing is strict (an unknown attribute or scheme is an error) so a typo
// does not silently turn the remote off; the caller shows errors masked.
#include "cache/remote/remote_spec.h"

#include <cstdlib>

namespace lexpack::cache::remote {
namespace {

bool parse_int(std::string_view s, int* out) {
  if (s.empty() || s.size() > 9) return false;
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find(sep, i);
    if (j == std::string_view::npos) j = s.size();
    out.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

}  // namespace

base::Result<RemoteSpec> parse_remote_spec(std::string_view text) {
  std::vector<std::string_view> parts = split(text, '|');
  RemoteSpec spec;
  std::string_view url = parts[0];
  spec.url = std::string(url);
  size_t sep = url.find("://");
  if (sep == std::string_view::npos) return base::Status::error("not a URL");
  std::string_view scheme = url.substr(0, sep);
  if (scheme == "redis") {
    spec.scheme = Scheme::kRedis;
    spec.port = 6379;
  } else if (scheme == "http") {
    spec.scheme = Scheme::kHttp;
    spec.port = 80;
  } else if (scheme == "https") {
    spec.scheme = Scheme::kHttps;
    spec.port = 443;
  } else {
    return base::Status::error("unknown scheme " + std::string(scheme));
  }
  std::string_view rest = url.substr(sep + 3);
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash);
  size_t at = authority.rfind('@');
  if (at != std::string_view::npos) {
    std::string_view userinfo = authority.substr(0, at);
    size_t colon = userinfo.find(':');
    spec.user = std::string(userinfo.substr(0, colon));
    if (colon != std::string_view::npos) spec.password = std::string(userinfo.substr(colon + 1));
    authority = authority.substr(at + 1);
  }
  size_t colon = authority.rfind(':');
  if (colon != std::string_view::npos && authority.find(']') == std::string_view::npos) {
    if (!parse_int(authority.substr(colon + 1), &spec.port) || spec.port <= 0 ||
        spec.port > 65535) {
      return base::Status::error("bad port");
    }
    authority = authority.substr(0, colon);
  }
  if (authority.empty()) return base::Status::error("no host");
  spec.host = std::string(authority);
  if (spec.scheme == Scheme::kRedis) {
    std::string_view db = path;
    while (!db.empty() && db.front() == '/') db.remove_prefix(1);
    if (!db.empty() && !parse_int(db, &spec.db)) return base::Status::error("bad database");
  } else {
    spec.path = std::string(path);
    while (!spec.path.empty() && spec.path.back() == '/') spec.path.pop_back();
  }
  for (size_t i = 1; i < parts.size(); ++i) {
    std::string_view attr = parts[i];
    size_t eq = attr.find('=');
    std::string_view key = attr.substr(0, eq);
    std::string_view value = eq == std::string_view::npos ? "" : attr.substr(eq + 1);
    if (key == "read-only") {
      spec.read_only = value.empty() || value == "true";
    } else if (key == "connect-timeout") {
      if (!parse_int(value, &spec.connect_timeout_ms))
        return base::Status::error("bad " + std::string(key));
    } else if (key == "operation-timeout") {
      if (!parse_int(value, &spec.operation_timeout_ms))
        return base::Status::error("bad " + std::string(key));
    } else if (key == "first-byte-timeout") {
      if (!parse_int(value, &spec.first_byte_timeout_ms) || spec.first_byte_timeout_ms <= 0)
        return base::Status::error("bad " + std::string(key) + " (milliseconds, more than 0)");
    } else if (key == "min-rate") {
      int rate = 0;
      if (!parse_int(value, &rate)) return base::Status::error("bad " + std::string(key));
      spec.min_rate = rate;
    } else if (key == "layout") {
      if (value == "subdirs") {
        spec.layout = Layout::kSubdirs;
      } else if (value == "bazel") {
        spec.layout = Layout::kBazel;
      } else {
        return base::Status::error("unknown layout " + std::string(value));
      }
    } else if (key == "ca-file") {
      if (value.empty()) return base::Status::error("bad " + std::string(key));
      spec.ca_file = std::string(value);
    } else {
      return base::Status::error("unknown attribute " + std::string(key));
    }
  }
  return spec;
}

base::Result<std::vector<RemoteSpec>> parse_remote_storage(std::string_view text) {
  std::vector<RemoteSpec> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n')) ++i;
    size_t j = text.find_first_of(" \t\n", i);
    if (j == std::string_view::npos) j = text.size();
    if (j > i) {
      std::string_view one = text.substr(i, j - i);
      auto spec = parse_remote_spec(one);
      if (!spec.ok()) {
        return base::Status::error(mask_credentials(one) + ": " + spec.message());
      }
      out.push_back(std::move(spec.value()));
    }
    i = j;
  }
  return out;
}

}  // namespace lexpack::cache::remote
