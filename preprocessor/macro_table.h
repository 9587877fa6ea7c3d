// The macro table of one translation unit: definitions from the compiler's
// predefined macros, the command's -D/-U and #define/#undef, plus which names
// the evaluation can no longer be sure of (defined or undefined in a branch
// that was taken only as a fallback).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "lexer/scan_result.h"
#include "preprocessor/macro_reads.h"
#include "preprocessor/token.h"

namespace lexpack::preprocessor {

// The hash every table of macro names uses, so that one computed for a
// lookup serves the others.
inline size_t macro_name_hash(std::string_view name) {
  return std::hash<std::string_view>{}(name);
}

// A macro name and its macro_name_hash, computed once per lookup or write.
struct MacroName {
  MacroName(std::string_view n) : name(n), hash(macro_name_hash(n)) {}
  MacroName(const char* n) : MacroName(std::string_view(n)) {}
  MacroName(std::string_view n, size_t h) : name(n), hash(h) {}
  std::string_view name;
  size_t hash;
};

struct Macro {
  std::string name;
  uint32_t id = 0;       // intern_macro_name(name): what hide sets hold
  size_t name_hash = 0;  // macro_name_hash(name), set with id (name_macro)
  bool function_like = false;
  bool variadic = false;            // the last parameter takes the variable arguments
  std::vector<std::string> params;  // "__VA_ARGS__" for a plain `...`
  Tokens body;                      // the replacement list

  // The index of `name` in params, or -1.
  int param_index(std::string_view name) const;
};

// Parses the text of a definition after `#define`: "NAME body", "NAME(a,b) body".
// Line splices must be gone; comments may remain. Returns nullopt with *err
// set when the compiler would reject it.
std::optional<Macro> parse_definition(std::string_view text, std::string* err);

std::optional<Macro> parse_definition_tokens(Tokens tokens, std::string* err);

// A whole #define directive as raw input bytes, from its '#' to the end of
// its replacement list (line splices and comments still in it): the span the
// lexer reports as Directive::offset .. body_offset + body_size.
std::optional<Macro> parse_define_directive(std::string_view raw, std::string* err);

// A -D argument: "NAME" (defines NAME as 1), "NAME=VALUE", "NAME(a,b)=VALUE".
std::optional<Macro> parse_command_definition(std::string_view arg, std::string* err);

// Every `#define NAME ...` line of `g++ -dM -E` style text, parsed; other
// lines are ignored. *err names the first line that does not parse (must
// start empty).
std::vector<std::shared_ptr<const Macro>> parse_predefined(std::string_view text, std::string* err);

// The id of a macro name, the same for every call with that name in this
// process (thread-safe), so that one parsed definition serves every table.
uint32_t intern_macro_name(std::string_view name);

// Sets `m`'s id and name_hash from its name.
void name_macro(Macro* m);

// `name`'s bytes as interned by intern_macro_name: kept until the process
// ends (thread-safe).
std::string_view stable_macro_name(std::string_view name);

// A file's #define directives by directive index, each parsed when first
// asked for (thread-safe), for callers that give one file to many
// translation units: each table shares the definition instead of a copy,
// and a definition in a branch no TU takes is never parsed.
class ParsedDefines {
 public:
  // `bytes` and `scan` (the lexer's scan of them) must outlive this.
  ParsedDefines(std::string_view bytes, const lexer::ScanResult& scan);
  ParsedDefines(const ParsedDefines&) = delete;
  ParsedDefines& operator=(const ParsedDefines&) = delete;

  size_t size() const { return size_; }
  // The definition of directive `index` (a #define), or null with *err
  // when it does not parse.
  std::shared_ptr<const Macro> get(size_t index, std::string* err) const;

 private:
  // Parsed once: the thread that moves `state` from kNotParsed to kParsing
  // parses, another that asks meanwhile yields until kParsed (a parse takes
  // microseconds). Not std::call_once: glibc's ends every first call with
  // a futex wake, a system call per #define of a scan (tens of thousands).
  enum State : uint8_t { kNotParsed, kParsing, kParsed };
  struct Slot {
    std::atomic<uint8_t> state{kNotParsed};
    std::shared_ptr<const Macro> macro;
    std::string error;
  };
  std::string_view bytes_;
  const lexer::ScanResult* scan_;
  size_t size_;
  std::unique_ptr<Slot[]> slots_;
};

// Told of every lookup and write of a table it watches (a header cache
// records which names a header reads); `found` is null when not defined.
class MacroObserver {
 public:
  virtual ~MacroObserver() = default;
  virtual void looked_up(MacroName name, const std::shared_ptr<const Macro>* found) = 0;
  virtual void wrote(MacroName name) = 0;
};

class MacroTable {
 public:
  // The id of a name, the same for every call with that name.
  static uint32_t intern(std::string_view name) { return intern_macro_name(name); }

  const Macro* find(std::string_view name) const;
  // The same without telling the observer.
  const std::shared_ptr<const Macro>* find_quiet(MacroName name) const;
  void set_observer(MacroObserver* observer) { observer_ = observer; }
  // Every name find() looks up is added to `reads` from now on.
  void collect_reads(MacroReads* reads) { reads_ = reads; }
  void define(Macro macro);
  void define(std::shared_ptr<const Macro> macro);
  void undefine(std::string_view name);

  // Every `#define NAME ...` line of `g++ -dM -E` style text. Other lines are
  // ignored; a definition that does not parse sets *err (the others still apply).
  bool define_predefined(std::string_view text, std::string* err);

  // Names whose definition is not certain (see the file comment).
  void set_uncertain(std::string_view name, bool uncertain);
  bool is_uncertain(std::string_view name) const {
    return !uncertain_.empty() && uncertain_.find(name) != uncertain_.end();
  }
  bool any_uncertain() const { return !uncertain_.empty(); }

  size_t size() const { return macros_.size(); }

 private:
  // Looked up by view: a lookup builds no string (most names are longer
  // than a string's inline buffer, and every identifier is looked up).
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return macro_name_hash(s); }
  };

  // The definitions by name, open addressing (linear probing, deletion by
  // backward shift): an entry is the definition's pointer and its name's
  // hash, the name is the definition's own, so a define allocates nothing
  // but a rare growth and a table is freed in one piece. A translation unit
  // defines thousands of names, most of them by copying a shared pointer.
  class Slots {
   public:
    const std::shared_ptr<const Macro>* find(MacroName name) const;
    void put(std::shared_ptr<const Macro> macro, size_t hash);
    void erase(MacroName name);
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }

   private:
    struct Slot {
      size_t hash = 0;
      std::shared_ptr<const Macro> macro;  // null: free
    };
    // The slot holding `name`, or the free slot where it would go.
    size_t probe(std::string_view name, size_t hash) const;
    void grow();
    std::vector<Slot> slots_;  // a power of two long, at most 3/4 full
    size_t size_ = 0;
  };
  Slots macros_;
  std::unordered_set<std::string, NameHash, std::equal_to<>> uncertain_;
  MacroObserver* observer_ = nullptr;
  MacroReads* reads_ = nullptr;
};

}  // namespace lexpack::preprocessor
