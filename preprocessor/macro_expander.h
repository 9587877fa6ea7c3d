// Macro expansion of one directive's tokens (C++ [cpp.replace]) with Prosser's
// hide-set algorithm: object-like and function-like macros, variadic ones,
// `#`, `##`, __VA_OPT__, GNU `, ## __VA_ARGS__`, empty arguments, and the
// operators a #if condition adds (`defined`, __has_include, __has_builtin...).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "preprocessor/hide_set.h"
#include "preprocessor/macro_table.h"
#include "preprocessor/token.h"

namespace lexpack::preprocessor {

// Names the compiler itself defines (never in `-dM -E` output): what
// `defined(NAME)` sees and what a condition asks outside the macro table.
enum class BuiltinKind : uint8_t {
  kNone,
  kObject,      // __LINE__, __FILE__, __COUNTER__, ...: expands to a value
  kQuery,       // __has_builtin(x), __has_attribute(x), __has_feature(x), ...
  kHasInclude,  // __has_include, __has_include_next
};

// What expansion needs from the directive driver.
class ExpansionHooks {
 public:
  virtual ~ExpansionHooks() = default;
  virtual BuiltinKind builtin_kind(std::string_view name) const = 0;
  // The value of a kObject builtin (a token spelling), nullopt if unknown.
  virtual std::optional<std::string> builtin_value(std::string_view name) = 0;
  // The answer to a kQuery builtin, nullopt if unknown.
  virtual std::optional<intmax_t> builtin_query(std::string_view name,
                                                std::string_view argument) = 0;
  // __has_include / __has_include_next: the same search an include makes.
  virtual bool has_include(std::string_view name, bool angled, bool next) = 0;
};

class MacroExpander {
 public:
  enum class Mode : uint8_t {
    kPlain,      // a computed #include
    kCondition,  // #if / #elif: defined and the builtin operators are evaluated
  };

  MacroExpander(const MacroTable& table, HideSets& hide_sets, ExpansionHooks& hooks)
      : table_(table), hide_sets_(hide_sets), hooks_(hooks) {}

  // Expands `in` completely into *out. false with error() set on what the
  // compiler rejects or what this expander does not support.
  bool expand(Tokens in, Mode mode, Tokens* out);

  const std::string& error() const { return error_; }
  // True when the expansion read a name MacroTable::is_uncertain reports.
  bool read_uncertain() const { return read_uncertain_; }
  // True when a builtin had no answer (its token is TokenKind::kUnknown).
  bool unknown_builtin() const { return unknown_builtin_; }

 private:
  // `stack` holds the input still to read, next token at the back.
  bool expand_stack(Tokens* stack, bool top, Tokens* out);
  bool expand_one(const Macro& m, Token name, Tokens* stack);
  bool collect_args(const Macro& m, Tokens* stack, std::vector<Tokens>* args, uint32_t* rparen);
  bool substitute(const Macro& m, const std::vector<Tokens>& args,
                  std::vector<std::optional<Tokens>>* expanded, size_t begin, size_t end,
                  Tokens* out);
  const Tokens* expanded_arg(const std::vector<Tokens>& args,
                             std::vector<std::optional<Tokens>>* expanded, size_t index);
  bool paste(Token* lhs, const Token& rhs);
  bool operator_defined(Tokens* stack, Tokens* out);
  bool operator_has_include(const Token& name, Tokens* stack, Tokens* out);
  bool operator_query(const Token& name, Tokens* stack, Tokens* out);
  bool balanced_group(Tokens* stack, const std::string& what, Tokens* inner);
  bool fail(std::string message);
  void note_lookup(std::string_view name);
  void count_counter(bool top, Token* t);

  const MacroTable& table_;
  HideSets& hide_sets_;
  ExpansionHooks& hooks_;
  Mode mode_ = Mode::kPlain;
  std::string error_;
  bool read_uncertain_ = false;
  bool unknown_builtin_ = false;
  uint16_t counters_ = 0;       // __COUNTER__ expansions numbered so far
  bool counters_lost_ = false;  // one was met where its order is not known
  size_t budget_ = 0;           // tokens produced before expansion is called runaway
};

// A token with a number's spelling, for operators that evaluate to one.
Token number_token(intmax_t value, bool space_before);

}  // namespace lexpack::preprocessor
