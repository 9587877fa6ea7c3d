// Reads the effective configuration: defaults, then lexpack.conf in the cache
// directory, then LEXPACK_* variables. Never fails: bad values become warnings.
#include "cache/config/config.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace lexpack::cache {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return (v && *v) ? v : nullptr;
}

std::optional<bool> parse_bool(std::string_view v) {
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  return std::nullopt;
}

struct Setting {
  const char* key;
  const char* env_name;
};
constexpr Setting kSettings[] = {
    {"max_size", "LEXPACK_MAXSIZE"},
    {"pack_size", "LEXPACK_PACK_SIZE"},
    {"sync", "LEXPACK_SYNC"},
    {"umask", "LEXPACK_UMASK"},
    {"remote_secret", "LEXPACK_REMOTE_SECRET"},
    {"server_idle", "LEXPACK_SERVER_IDLE"},
    {"base_dir", "LEXPACK_BASE_DIR"},
    {"remote_storage", "LEXPACK_REMOTE_STORAGE"},
    {"prefix_command", "LEXPACK_PREFIX_COMMAND"},
};

// "900", "90s", "15m", "1h": seconds.
std::optional<uint64_t> parse_seconds(std::string_view v) {
  uint64_t n = 0, unit = 1;
  size_t i = 0;
  for (; i < v.size() && v[i] >= '0' && v[i] <= '9'; ++i) {
    if (n > (uint64_t(1) << 40)) return std::nullopt;
    n = n * 10 + uint64_t(v[i] - '0');
  }
  if (i == 0) return std::nullopt;
  std::string_view suffix = v.substr(i);
  if (suffix == "m") {
    unit = 60;
  } else if (suffix == "h") {
    unit = 3600;
  } else if (!suffix.empty() && suffix != "s") {
    return std::nullopt;
  }
  return n * unit;
}

// Applies one value; returns an empty string or the reason it was refused.
std::string apply(Config* config, std::string_view key, std::string_view value) {
  if (key == "max_size") {
    auto size = parse_size(value);
    if (!size || *size == 0) return "expected a size like 5G or 500M";
    config->max_size = *size;
    return "";
  }
  if (key == "pack_size") {
    auto size = parse_size(value);
    if (!size || *size < kMinPackSize || *size > kMaxPackSize) {
      return "expected a size between 64Ki and 4Gi";
    }
    config->pack_size = *size;
    return "";
  }
  if (key == "sync") {
    auto b = parse_bool(value);
    if (!b) return "expected true or false";
    config->sync = *b;
    return "";
  }
  if (key == "umask") {
    auto mask = parse_umask(value);
    if (!mask) return "expected an octal umask like 002 or 027";
    config->umask = *mask;
    return "";
  }
  if (key == "remote_secret") {
    if (value.size() < 16) {
      config->remote_secret_error =
          "remote_secret is shorter than 16 characters: the remote caches are off until it is "
          "fixed";
      return "expected a secret of at least 16 characters (the remote caches are off)";
    }
    config->remote_secret = std::string(value);
    config->remote_secret_error.clear();
    return "";
  }
  if (key == "server_idle") {
    auto seconds = parse_seconds(value);
    if (!seconds || *seconds == 0) return "expected a duration like 900, 90s, 15m or 1h";
    config->server_idle_s = *seconds;
    return "";
  }
  if (key == "prefix_command") {
    config->prefix_command = std::string(value);
    return "";
  }
  if (key == "remote_storage") {
    config->remote_storage = std::string(value);  // parsed by cache/remote, which reports errors
    return "";
  }
  if (key == "base_dir") {
    std::string dir(value);
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    if (dir.empty()) {
      config->base_dir.clear();
      return "";
    }
    if (dir.front() != '/' || dir == "/") return "expected an absolute directory other than /";
    // Depfiles escape these, so paths holding them could not be relocated.
    if (dir.find_first_of(" \t\\$#:\"'") != std::string::npos) {
      return "a directory whose name has no spaces, quotes, '\\', '$', '#' or ':'";
    }
    config->base_dir = dir;
    return "";
  }
  return "unknown key";
}

std::string show(const Config& config, std::string_view key) {
  if (key == "max_size") return format_size(config.max_size);
  if (key == "pack_size") return format_size(config.pack_size);
  if (key == "umask") {
    if (!config.umask) return "(the process umask)";
    char buf[8];
    std::snprintf(buf, sizeof buf, "%03o", *config.umask);
    return buf;
  }
  if (key == "remote_secret") return config.remote_secret.empty() ? "(none)" : "(set)";
  if (key == "server_idle") return std::to_string(config.server_idle_s) + "s";
  if (key == "base_dir") return config.base_dir;
  if (key == "remote_storage") return mask_credentials(config.remote_storage);
  if (key == "prefix_command") return config.prefix_command;
  return config.sync ? "true" : "false";
}

}  // namespace

std::string mask_credentials(std::string_view text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t scheme = text.find("://", i);
    if (scheme == std::string_view::npos) break;
    size_t auth_start = scheme + 3;
    size_t end = text.find_first_of(" \t\n|/", auth_start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view authority = text.substr(auth_start, end - auth_start);
    size_t at = authority.rfind('@');
    out.append(text.substr(i, auth_start - i));
    if (at != std::string_view::npos) {
      std::string_view userinfo = authority.substr(0, at);
      size_t colon = userinfo.find(':');
      out.append(colon == std::string_view::npos
                     ? "********"
                     : std::string(userinfo.substr(0, colon)) + ":********");
      out.append(authority.substr(at));
    } else {
      out.append(authority);
    }
    i = end;
  }
  out.append(text.substr(i));
  return out;
}

std::string default_cache_dir() {
  if (const char* d = env("LEXPACK_DIR")) return d;
  if (const char* x = env("XDG_CACHE_HOME")) return std::string(x) + "/lexpack";
  if (const char* h = env("HOME")) return std::string(h) + "/.cache/lexpack";
  return "";
}

Config load_config(std::string_view dir_override) {
  Config config;
  std::string dir_source;
  if (!dir_override.empty()) {
    config.dir = std::string(dir_override);
    dir_source = "option";
  } else if (env("LEXPACK_DIR")) {
    config.dir = env("LEXPACK_DIR");
    dir_source = "environment LEXPACK_DIR";
  } else {
    config.dir = default_cache_dir();
    dir_source = env("XDG_CACHE_HOME") ? "environment XDG_CACHE_HOME" : "environment HOME";
  }
  while (config.dir.size() > 1 && config.dir.back() == '/') config.dir.pop_back();
  config.entries.push_back({"dir", config.dir, dir_source});

  std::string sources[std::size(kSettings)];
  for (auto& s : sources) s = "default";

  if (!config.dir.empty()) {
    std::string path = config.dir + "/" + kConfigFileName;
    std::ifstream in(path);
    std::string line;
    int line_no = 0;
    while (in && std::getline(in, line)) {
      ++line_no;
      std::string_view l = trim(line);
      if (l.empty() || l.front() == '#') continue;
      std::string where = path + ":" + std::to_string(line_no);
      size_t eq = l.find('=');
      if (eq == std::string_view::npos) {
        config.warnings.push_back(where + ": expected `key = value`, got `" + std::string(l) + "`");
        continue;
      }
      std::string_view key = trim(l.substr(0, eq));
      std::string_view value = trim(l.substr(eq + 1));
      std::string why = apply(&config, key, value);
      if (!why.empty()) {
        config.warnings.push_back(where + ": " + std::string(key) + " = " + std::string(value) +
                                  ": " + why + "; ignored");
        continue;
      }
      for (size_t i = 0; i < std::size(kSettings); ++i) {
        if (key == kSettings[i].key) sources[i] = where;
      }
    }
  }

  for (size_t i = 0; i < std::size(kSettings); ++i) {
    const char* v = env(kSettings[i].env_name);
    if (!v) continue;
    std::string why = apply(&config, kSettings[i].key, v);
    if (!why.empty()) {
      config.warnings.push_back(std::string("environment ") + kSettings[i].env_name + "=" + v +
                                ": " + why + "; ignored");
      continue;
    }
    sources[i] = std::string("environment ") + kSettings[i].env_name;
  }
  if (const char* v = env("LEXPACK_FOLLOW_SYMLINKS")) {
    auto b = parse_bool(v);
    if (b) {
      config.follow_symlinks = *b;
    } else {
      config.warnings.push_back(std::string("environment LEXPACK_FOLLOW_SYMLINKS=") + v +
                                ": expected true or false; ignored");
    }
  }
  for (size_t i = 0; i < std::size(kSettings); ++i) {
    config.entries.push_back({kSettings[i].key, show(config, kSettings[i].key), sources[i]});
  }
  return config;
}

std::optional<uint64_t> parse_size(std::string_view text) {
  text = trim(text);
  size_t digits = 0;
  bool dot = false;
  while (digits < text.size() &&
         ((text[digits] >= '0' && text[digits] <= '9') || (!dot && text[digits] == '.'))) {
    if (text[digits] == '.') dot = true;
    ++digits;
  }
  if (digits == 0 || digits > 24) return std::nullopt;
  std::string number(text.substr(0, digits));
  std::string_view suffix = trim(text.substr(digits));
  if (!suffix.empty() && (suffix.back() == 'B' || suffix.back() == 'b')) suffix.remove_suffix(1);
  double unit = 1;
  if (!suffix.empty()) {
    bool binary = suffix.size() == 2 && (suffix[1] == 'i');
    if (suffix.size() > 2 || (suffix.size() == 2 && !binary)) return std::nullopt;
    double base = binary ? 1024.0 : 1000.0;
    switch (suffix[0]) {
      case 'k':
      case 'K':
        unit = base;
        break;
      case 'M':
        unit = base * base;
        break;
      case 'G':
        unit = base * base * base;
        break;
      case 'T':
        unit = base * base * base * base;
        break;
      default:
        return std::nullopt;
    }
  }
  char* end = nullptr;
  double value = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size() || !std::isfinite(value)) return std::nullopt;
  double bytes = value * unit;
  if (bytes < 0 || bytes >= 1.8e19) return std::nullopt;
  if (!dot && unit == 1) return std::strtoull(number.c_str(), nullptr, 10);
  return static_cast<uint64_t>(bytes);
}

std::optional<uint32_t> parse_umask(std::string_view text) {
  text = trim(text);
  if (text.empty() || text.size() > 4) return std::nullopt;
  uint32_t mask = 0;
  for (char c : text) {
    if (c < '0' || c > '7') return std::nullopt;
    mask = mask * 8 + static_cast<uint32_t>(c - '0');
  }
  if (mask > 0777) return std::nullopt;
  return mask;
}

std::string format_size(uint64_t bytes) {
  char buf[32];
  if (bytes >= 1'000'000'000ull && bytes % 100'000'000ull == 0) {
    std::snprintf(buf, sizeof buf, "%.1fG", bytes / 1e9);
  } else if (bytes % (1ull << 30) == 0 && bytes > 0) {
    std::snprintf(buf, sizeof buf, "%lluGi", static_cast<unsigned long long>(bytes >> 30));
  } else if (bytes % (1ull << 20) == 0 && bytes > 0) {
    std::snprintf(buf, sizeof buf, "%lluMi", static_cast<unsigned long long>(bytes >> 20));
  } else if (bytes % (1ull << 10) == 0 && bytes > 0) {
    std::snprintf(buf, sizeof buf, "%lluKi", static_cast<unsigned long long>(bytes >> 10));
  } else {
    std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(bytes));
  }
  return buf;
}

}  // namespace lexpack::cache
