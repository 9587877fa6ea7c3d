// A small JSON reader, just enough for compile databases (objects, arrays,
// strings with escapes, numbers and literals), and the conversion of each
// entry into a compiler argv.
#include "scan/compdb.h"

#include <map>
#include <memory>

#include "base/file_stat.h"
#include "base/file_util.h"
#include "base/process.h"

namespace lexpack::scan {
namespace {

struct Json {
  enum Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = kNull;
  std::string text;  // string value, or the number as written
  std::vector<Json> items;
  std::map<std::string, Json> fields;
};

class JsonParser {
 public:
  JsonParser(std::string_view in, const std::string& name) : in_(in), name_(name) {}

  bool parse(Json* out) {
    if (!value(out, 0)) return false;
    skip();
    return pos_ == in_.size() || fail("trailing bytes after the JSON value");
  }
  const std::string& error() const { return error_; }

 private:
  bool fail(const std::string& what) {
    if (error_.empty()) error_ = name_ + ": offset " + std::to_string(pos_) + ": " + what;
    return false;
  }
  void skip() {
    while (pos_ < in_.size() &&
           (in_[pos_] == ' ' || in_[pos_] == '\n' || in_[pos_] == '\r' || in_[pos_] == '\t'))
      ++pos_;
  }
  bool literal(std::string_view word) {
    if (in_.substr(pos_, word.size()) != word) return fail("unexpected character");
    pos_ += word.size();
    return true;
  }
  static void put_utf8(uint32_t c, std::string* out) {
    if (c < 0x80) {
      *out += char(c);
    } else if (c < 0x800) {
      *out += char(0xC0 | (c >> 6));
      *out += char(0x80 | (c & 0x3F));
    } else {
      *out += char(0xE0 | (c >> 12));
      *out += char(0x80 | ((c >> 6) & 0x3F));
      *out += char(0x80 | (c & 0x3F));
    }
  }
  bool string(std::string* out) {
    ++pos_;  // opening quote
    while (pos_ < in_.size()) {
      char c = in_[pos_++];
      if (c == '"') return true;
      if (c != '\\') {
        *out += c;
        continue;
      }
      if (pos_ >= in_.size()) break;
      char e = in_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          *out += e;
          break;
        case 'b':
          *out += '\b';
          break;
        case 'f':
          *out += '\f';
          break;
        case 'n':
          *out += '\n';
          break;
        case 'r':
          *out += '\r';
          break;
        case 't':
          *out += '\t';
          break;
        case 'u': {
          if (pos_ + 4 > in_.size()) return fail("short \\u escape");
          uint32_t c16 = uint32_t(std::stoul(std::string(in_.substr(pos_, 4)), nullptr, 16));
          pos_ += 4;
          put_utf8(c16, out);
          break;
        }
        default:
          return fail("bad escape in string");
      }
    }
    return fail("unterminated string");
  }
  bool value(Json* out, int depth) {
    if (depth > 64) return fail("nested too deeply");
    skip();
    if (pos_ >= in_.size()) return fail("unexpected end of input");
    char c = in_[pos_];
    if (c == '"') {
      out->kind = Json::kString;
      return string(&out->text);
    }
    if (c == '[' || c == '{') {
      bool object = c == '{';
      out->kind = object ? Json::kObject : Json::kArray;
      ++pos_;
      skip();
      if (pos_ < in_.size() && in_[pos_] == (object ? '}' : ']')) return ++pos_, true;
      while (true) {
        skip();
        std::string key;
        if (object) {
          if (pos_ >= in_.size() || in_[pos_] != '"') return fail("expected a key");
          if (!string(&key)) return false;
          skip();
          if (pos_ >= in_.size() || in_[pos_] != ':') return fail("expected ':'");
          ++pos_;
        }
        Json item;
        if (!value(&item, depth + 1)) return false;
        if (object)
          out->fields[key] = std::move(item);
        else
          out->items.push_back(std::move(item));
        skip();
        if (pos_ < in_.size() && in_[pos_] == ',') {
          ++pos_;
          continue;
        }
        if (pos_ < in_.size() && in_[pos_] == (object ? '}' : ']')) return ++pos_, true;
        return fail(object ? "expected ',' or '}'" : "expected ',' or ']'");
      }
    }
    if (c == 't') return out->kind = Json::kBool, literal("true");
    if (c == 'f') return out->kind = Json::kBool, literal("false");
    if (c == 'n') return literal("null");
    size_t start = pos_;
    while (pos_ < in_.size() &&
           std::string_view("+-.eE0123456789").find(in_[pos_]) != std::string_view::npos)
      ++pos_;
    if (pos_ == start) return fail("unexpected character");
    out->kind = Json::kNumber;
    out->text = std::string(in_.substr(start, pos_ - start));
    return true;
  }

  std::string_view in_;
  const std::string& name_;
  size_t pos_ = 0;
  std::string error_;
};

bool is_launcher(std::string_view word) {
  std::string_view base = word.substr(word.rfind('/') + 1);
  return base == "ccache" || base == "sccache" || base == "lexpack" || base == "distcc";
}

}  // namespace

bool split_command(std::string_view command, std::vector<std::string>* words) {
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < command.size(); ++i) {
    char c = command[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words->push_back(std::move(word));
      word.clear();
      in_word = false;
    } else if (c == '\'') {
      size_t end = command.find('\'', i + 1);
      if (end == std::string_view::npos) return false;
      word += command.substr(i + 1, end - i - 1);
      i = end;
      in_word = true;
    } else if (c == '"') {
      for (++i; i < command.size() && command[i] != '"'; ++i) {
        if (command[i] == '\\' && i + 1 < command.size() &&
            std::string_view("\"\\$`").find(command[i + 1]) != std::string_view::npos)
          ++i;
        word += command[i];
      }
      if (i >= command.size()) return false;
      in_word = true;
    } else if (c == '\\' && i + 1 < command.size()) {
      word += command[++i];
      in_word = true;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words->push_back(std::move(word));
  return true;
}

base::Result<std::vector<CompdbEntry>> parse_compdb(std::string_view json,
                                                    const std::string& name) {
  Json root;
  JsonParser parser(json, name);
  if (!parser.parse(&root)) return base::Status::error(parser.error());
  if (root.kind != Json::kArray) return base::Status::error(name + ": not a JSON array");
  std::vector<CompdbEntry> entries;
  for (size_t i = 0; i < root.items.size(); ++i) {
    const Json& item = root.items[i];
    std::string where = name + ": entry " + std::to_string(i) + ": ";
    if (item.kind != Json::kObject) return base::Status::error(where + "not an object");
    auto text = [&](const char* key) {
      auto it = item.fields.find(key);
      return it != item.fields.end() && it->second.kind == Json::kString ? it->second.text
                                                                         : std::string();
    };
    CompdbEntry e;
    e.directory = text("directory");
    e.file = text("file");
    e.output = text("output");
    if (auto args = item.fields.find("arguments"); args != item.fields.end()) {
      for (const Json& a : args->second.items) e.argv.push_back(a.text);
    } else if (!split_command(text("command"), &e.argv)) {
      return base::Status::error(where + "unbalanced quotes in \"command\"");
    }
    // "cd <dir> && <compiler> ...": the directory moves, the rest is the command.
    while (e.argv.size() > 3 && e.argv[0] == "cd" && e.argv[2] == "&&") {
      e.directory = base::absolute_path(e.argv[1], e.directory);
      e.argv.erase(e.argv.begin(), e.argv.begin() + 3);
    }
    while (e.argv.size() > 1 && is_launcher(e.argv[0])) {
      const std::string_view name = std::string_view(e.argv[0]).substr(e.argv[0].rfind('/') + 1);
      if (e.launcher.empty() && name != "lexpack") e.launcher = e.argv[0];
      e.argv.erase(e.argv.begin());
    }
    if (e.argv.empty()) continue;  // ninja lists phony edges with an empty command
    if (e.directory.empty()) return base::Status::error(where + "no \"directory\"");
    entries.push_back(std::move(e));
  }
  return entries;
}

base::Result<std::vector<CompdbEntry>> read_compdb(const std::string& path) {
  base::Result<std::string> bytes = base::read_file(path);
  if (!bytes.ok()) return bytes.status();
  return parse_compdb(*bytes, path);
}

base::Result<std::vector<CompdbEntry>> compdb_from_ninja(const std::string& build_dir) {
  base::ProcessResult p = base::run_captured({"ninja", "-C", build_dir, "-t", "compdb"}, true);
  if (!p.started) return base::Status::error("cannot run ninja: " + p.error);
  if (p.exit_code != 0) {
    return base::Status::error("ninja -C " + build_dir + " -t compdb failed: " + p.err);
  }
  return parse_compdb(p.out, "ninja -C " + build_dir + " -t compdb");
}

}  // namespace lexpack::scan
